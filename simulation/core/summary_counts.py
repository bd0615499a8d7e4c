"""What each statistic of a scenario's summary rows is counted over, so a sweep's combined
Markdown table can show every value with its n (`simulation/runs/sweeps/sweep_table.py`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SummaryCount"]


@dataclass(frozen=True)
class SummaryCount:
    """A statistic's n: the row's column `n` holds it and `noun` says what it counts
    ("decided", "graded"); `asked`, a column with the denominator before answers were left out;
    `percent`, the factor that turns the value into percentage points (100 for a share, 1 for a
    value already in points), None for a value that is not a percentage."""

    n: str
    noun: str = ""
    asked: str | None = None
    percent: float | None = None
