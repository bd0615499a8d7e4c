"""`personasim list [SCENARIO]`: scenarios, their roles, parameters and defaults."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import PurePath
from types import UnionType
from typing import TYPE_CHECKING, Any, Literal, Union, get_args, get_origin

from personasim.simulation.cli.options import out

if TYPE_CHECKING:
    from personasim.simulation.core.scenario import Scenario

__all__ = ["add_list_command", "type_label"]


def add_list_command(commands: Any) -> None:
    listing = commands.add_parser("list", help="scenarios, their parameters and defaults")
    listing.add_argument(
        "scenario", nargs="?", help="only this scenario: a name, or a .py file that defines one"
    )
    listing.set_defaults(handler=_list)


def _list(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from personasim.simulation.core.scenario import list_scenarios
    from personasim.simulation.runs.scenario_file import is_scenario_path, resolve_scenario

    scenarios: dict[str, type[Scenario]]
    if args.scenario is None:
        scenarios = list_scenarios()
    else:
        scenario = resolve_scenario(args.scenario)
        scenarios = {scenario.name: scenario}
    for name, scenario in scenarios.items():
        origin = f" ({args.scenario})" if args.scenario and is_scenario_path(args.scenario) else ""
        out.print(f"{name} — {scenario.summary}{origin}", style="bold")
        for role_name, role in scenario.roles.items():
            seats = "" if role.max_models == 1 else f" ({role.arity()})"
            seats += " (optional: only when --role names it)" if role.optional else ""
            out.print(f"  role {role_name:<15} {role.description}{seats}")
        for field, info in scenario.Params.model_fields.items():
            flag = "--" + field.replace("_", "-")
            kind = type_label(info.annotation)
            default = "required" if info.is_required() else _default(info.default)
            out.print(f"  {flag:<24} {kind:<12} {default:<22} {info.description or ''}")
    return 0


def type_label(annotation: Any) -> str:
    """A parameter's type as a user types it: int, float, FILE, LIST, or the choices a|b|c."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return "|".join(map(str, args))
    if origin in (tuple, list):
        return f"{type_label(args[0])},..." if args else "LIST"
    if origin in (Union, UnionType):
        return "|".join(type_label(a) for a in args if a is not type(None))
    if isinstance(annotation, type) and issubclass(annotation, PurePath):
        return "FILE"
    return getattr(annotation, "__name__", str(annotation))


def _default(value: Any) -> str:
    if isinstance(value, tuple | list):
        return ",".join(map(str, value)) if len(value) < 3 else f"{value[0]},… ({len(value)})"
    return str(value)
