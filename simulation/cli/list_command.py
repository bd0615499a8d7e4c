"""`personasim list [SCENARIO]`: scenarios, their roles, parameters and defaults.

Built-in scenarios are listed from their shipped cards (`simulation/core/catalog.py`), so
listing imports none of their run-time code (Mesa, LangGraph, pandas, scipy).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from rich.table import Table

from personasim.simulation.cli.options import out
from personasim.simulation.core.catalog import ScenarioCard, type_label

__all__ = ["add_list_command", "type_label"]


def add_list_command(commands: Any) -> None:
    listing = commands.add_parser("list", help="scenarios, their parameters and defaults")
    listing.add_argument(
        "scenario", nargs="?", help="only this scenario: a name, or a .py file that defines one"
    )
    listing.set_defaults(handler=_list)


def _list(args: argparse.Namespace, extra: Sequence[str]) -> int:
    for card in _cards(args.scenario):
        origin = f" ({args.scenario})" if args.scenario and _is_path(args.scenario) else ""
        out.print(f"{card.name} — {card.summary}{origin}", style="bold")
        for role_name, description in card.roles:
            out.print(f"  role {role_name:<15} {description}")
        out.print(_parameters(card))
    return 0


def _parameters(card: ScenarioCard) -> Table:
    """Flag, type, default and description in aligned columns; descriptions wrap to the
    terminal's width instead of pushing the next columns out of line."""
    table = Table.grid(padding=(0, 1))
    table.add_column(width=1)  # the indent
    table.add_column(no_wrap=True)  # the flag, whole
    table.add_column(max_width=16, overflow="fold")  # a long list of choices folds
    table.add_column(max_width=12, overflow="fold")
    table.add_column(min_width=20, ratio=1)
    for p in card.params:
        table.add_row("", p.flag, p.kind, p.default, p.description)
    return table


def _cards(scenario: str | None) -> list[ScenarioCard]:
    """The cards to print: all, or the one `run SCENARIO --help` shows."""
    from personasim.simulation.cli.scenario_args import scenario_card
    from personasim.simulation.core.catalog import scenario_cards

    if scenario is None:
        return list(scenario_cards().values())
    return [scenario_card(scenario)]


def _is_path(scenario: str) -> bool:
    from personasim.simulation.runs.lifecycle.scenario_file import is_scenario_path

    return is_scenario_path(scenario)
