"""`personasim prompts SCENARIO`: write a scenario's shipped prompt pack, to edit and pass back
with `--prompts`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from personasim.simulation.cli.options import err
from personasim.simulation.core.scenario import ScenarioError

__all__ = ["add_prompts_command"]


def add_prompts_command(commands: Any) -> None:
    prompts = commands.add_parser(
        "prompts", help="write a scenario's prompt pack (its texts and their sources)"
    )
    prompts.add_argument("scenario")
    prompts.add_argument("--output", type=Path, help="file to write (default: standard output)")
    prompts.set_defaults(handler=_prompts)


def _prompts(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from personasim.simulation.runs.lifecycle.run_dir import RunError
    from personasim.simulation.runs.lifecycle.scenario_file import resolve_scenario

    scenario = resolve_scenario(args.scenario)
    pack = scenario.shipped_prompts()
    if pack is None:
        raise ScenarioError(f"{scenario.name} has no prompt pack")
    text = Path(pack.path).read_text(encoding="utf-8")
    if args.output is None:
        sys.stdout.write(text)
        return 0
    if args.output.exists() and args.output.is_dir():
        raise RunError(f"--output {args.output} is a directory; name a file")
    args.output.write_text(text, encoding="utf-8")
    err.print(f"{scenario.name}: {len(pack.entries)} prompts written to {args.output}")
    return 0
