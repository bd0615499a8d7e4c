"""The sweep's combined table: `combined.csv` keeps every number at full precision for analysis;
`combined.md` shows each statistic with the n behind it (`cell_text`), as the scenario declares
in `ScenarioMetrics.summary_counts`, and an undefined one as "undefined: <reason>" where the
row records why (`<column>_undefined`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from personasim.simulation.core.summary_counts import SummaryCount
from personasim.simulation.runs.lifecycle.tables import cell_text, significant, write_table

__all__ = ["combined_cells", "write_combined"]

Cell = Callable[[Mapping[str, Any]], str | None]

COMBINED_NOTE = (
    "Each value with the n it is computed from where the run records one; undefined: the "
    "statistic has no value, with the reason; — : not part of this row. combined.csv has "
    "every number at full precision."
)


def write_combined(
    rows: Sequence[dict[str, Any]],
    directory: Path,
    labels: Sequence[str],
    counts: Mapping[str, SummaryCount] | None = None,
) -> list[Path]:
    """`combined.csv` and `combined.md` from the sweep's rows; `labels` (model, the varied
    parameters, the seed) are shown as given."""
    cells = combined_cells(rows, labels, counts or {})
    return write_table(rows, directory, "combined", cells=cells, notes=[COMBINED_NOTE])


def combined_cells(
    rows: Sequence[Mapping[str, Any]],
    labels: Sequence[str],
    counts: Mapping[str, SummaryCount],
) -> dict[str, Cell]:
    """The Markdown cell of each statistic column that has a declared n or a recorded reason
    for being undefined; other columns keep write_table's rendering."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    cells: dict[str, Cell] = {}
    for column in columns:
        if column in labels or column.endswith("_undefined"):
            continue
        count = counts.get(column)
        if count is not None or f"{column}_undefined" in columns:
            cells[column] = _cell(column, count)
    return cells


def _cell(column: str, count: SummaryCount | None) -> Cell:
    def render(row: Mapping[str, Any]) -> str | None:
        value, reason = row.get(column), row.get(f"{column}_undefined") or ""
        if count is None:
            if _missing(value):
                return f"undefined: {reason}" if reason else None
            return significant(value) if isinstance(value, float) else str(value)
        n = row.get(count.n)
        asked = row.get(count.asked) if count.asked else None
        if _missing(value):
            if n is None and not reason:
                return None  # not part of this row
            return cell_text(None, n, noun=count.noun, asked=asked, reason=reason)
        if count.percent is not None and isinstance(value, int | float):
            value = count.percent * value
        return cell_text(
            value, n, noun=count.noun, asked=asked, as_percent=count.percent is not None
        )

    return render


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
