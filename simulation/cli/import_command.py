"""The `personasim import` subcommand: a format's own files and options come after its name."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from personasim.simulation.core.scenario import ScenarioError, get_scenario

__all__ = ["add_import_command"]


def add_import_command(commands: Any, printer: Any) -> None:
    """Register `import SCENARIO --format NAME --out RUN_DIR [format options]`."""
    parser = commands.add_parser(
        "import",
        help="turn outputs produced elsewhere into a run directory (metrics, reports, replay)",
    )
    parser.add_argument("scenario")
    parser.add_argument("--format", dest="import_format", required=True, help="import format")
    parser.add_argument("--out", type=Path, help="run directory to create")
    parser.add_argument(
        "--no-progress", action="store_true", help="do not print each stage on stderr"
    )
    parser.set_defaults(handler=lambda args, extra: _import(args, extra, printer))


def _format_arguments(scenario: str, name: str, extra: Sequence[str]) -> argparse.Namespace:
    from personasim.simulation.runs.tools.importers import get_import_format

    get_scenario(scenario)
    fmt = get_import_format(scenario, name)
    parser = argparse.ArgumentParser(prog=f"personasim import {scenario} --format {name}")
    for flag, text in fmt.files.items():
        parser.add_argument(f"--{flag}", type=Path, help=text)
    for flag, (default, text) in fmt.options.items():
        parser.add_argument(f"--{flag}", default=default, help=text)
    values, unknown = parser.parse_known_args(list(extra))
    if unknown:
        known = ", ".join(f"--{f}" for f in (*fmt.files, *fmt.options))
        raise ScenarioError(f"unrecognized import options {' '.join(unknown)} (known: {known})")
    return values


def _import(args: argparse.Namespace, extra: Sequence[str], printer: Any) -> int:
    from personasim.simulation.runs.tools.importers import get_import_format, import_run

    fmt = get_import_format(get_scenario(args.scenario).name, args.import_format)
    values = vars(_format_arguments(args.scenario, args.import_format, extra))
    result = import_run(
        args.scenario,
        args.import_format,
        files={f: values[f.replace("-", "_")] for f in fmt.files},
        options={o: values[o.replace("-", "_")] for o in fmt.options},
        out=args.out,
        progress=not args.no_progress,
    )
    for line in result.report:
        printer.print(line)
    printer.print(f"run directory: {result.run_dir}")
    return 0
