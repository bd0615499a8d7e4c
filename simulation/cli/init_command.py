"""`personasim init NAME`: write NAME.py, a commented scenario file that runs as it is.

The file is the scaffold docs/scenarios.md is built from: a persona population (generated, or
loaded from a file), one LLM decision with its prompt and reader, a fixed-rule agent, one
metric, one table, and the scripted rule that lets `personasim run NAME.py` run offline.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from personasim.simulation.cli.options import fail, out

__all__ = ["add_init_command", "scenario_source"]

TEMPLATE = "scenario_template.txt"
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def add_init_command(commands: Any) -> None:
    init = commands.add_parser(
        "init", help="write NAME.py: a commented scenario file to start from (runs as it is)"
    )
    init.add_argument("name", help="the scenario's name, or a path ending in .py")
    init.set_defaults(handler=_init)


def scenario_source(path: Path) -> str:
    """The template filled in for the file `path`: scenario name from its stem, a class name."""
    stem = path.stem
    class_name = "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_]", stem) if part)
    text = resources.files(__package__).joinpath("data", TEMPLATE).read_text(encoding="utf-8")
    replacements = {"__NAME__": stem.lower().replace("_", "-"), "__CLASS__": class_name,
                    "__FILE__": path.name}  # fmt: skip
    for placeholder, value in replacements.items():
        text = text.replace(placeholder, value)
    return text


def _init(args: argparse.Namespace, extra: Sequence[str]) -> int:
    path = Path(args.name if args.name.endswith(".py") else f"{args.name}.py")
    if not NAME.fullmatch(path.stem):
        return fail(
            f"{args.name}: a scenario name starts with a letter and holds only letters, digits, "
            "'-' and '_'",
            2,
        )
    if path.exists():
        return fail(f"{path} already exists; choose another name (nothing was written)", 2)
    if not path.parent.is_dir():
        return fail(f"{path.parent}: no such directory", 2)
    path.write_text(scenario_source(path), encoding="utf-8")
    out.print(f"wrote {path}; run it with: personasim run {path}", markup=False)
    return 0
