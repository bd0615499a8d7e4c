"""The Markdown cells of a counterfactual table (`reports/counterfactual.md`): each statistic
with the n of personas paired behind it, p values rounded only here (`significant`; the CSV and
the metrics keep them as computed), and an undefined statistic as "undefined: <reason>" in
words. One place renders them, so the run's table and any report that shows its rows agree."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from personasim.analysis.undefined import in_words
from personasim.simulation.runs.lifecycle.tables import cell_text, significant

__all__ = ["counterfactual_cells", "mean_change_text"]

Cell = Callable[[Mapping[str, Any]], str]
PAIRS = "paired"


def mean_change_text(row: Mapping[str, Any]) -> str:
    """The mean difference with its interval and n: "+2.95 [2.85, 3.05], n=20 paired"; with no
    interval: "0 (no interval), n=20 paired" (the ci cells say why)."""
    mean = row.get("mean_difference")
    if mean is None:
        return cell_text(None, row.get("n"), noun=PAIRS, reason=_why(row, "mean_difference"))
    low, high = row.get("ci_low"), row.get("ci_high")
    if low is None or high is None:
        interval = " (no interval)"
    else:
        interval = f" [{significant(low)}, {significant(high)}]"
    return cell_text(f"{_signed(mean)}{interval}", row.get("n"), noun=PAIRS)


def counterfactual_cells(
    full: Sequence[Mapping[str, Any]], shown: Sequence[Mapping[str, Any]]
) -> dict[str, Cell]:
    """`write_table` cells for the `shown` rows (the table's columns), each rendered from its
    `full` row in the metrics (which also holds the `<stat>_undefined` reasons)."""
    behind = {id(row): whole for row, whole in zip(shown, full, strict=True)}

    def cell(render: Callable[[Mapping[str, Any]], str]) -> Cell:
        return lambda row: render(behind[id(row)])

    return {
        "mean_difference": cell(mean_change_text),
        "ci_low": cell(lambda row: _number(row, "ci_low")),
        "ci_high": cell(lambda row: _number(row, "ci_high")),
        "p": cell(lambda row: _number(row, "p")),
        "p_holm": cell(lambda row: _number(row, "p_holm")),
        "changed": cell(_changed),
    }


def _number(row: Mapping[str, Any], name: str) -> str:
    value = row.get(name)
    return f"undefined: {_why(row, name)}" if value is None else significant(value)


def _changed(row: Mapping[str, Any]) -> str:
    """The share of personas whose decision differs: "95.0% of 20 paired"."""
    share = row.get("changed")
    value = None if share is None else 100.0 * share
    return cell_text(value, row.get("n"), noun=PAIRS, as_percent=True, reason=_why(row, "changed"))


def _why(row: Mapping[str, Any], name: str) -> str:
    return in_words(row.get(f"{name}_undefined") or "not recorded")


def _signed(value: float) -> str:
    return significant(value) if value <= 0 else f"+{significant(value)}"
