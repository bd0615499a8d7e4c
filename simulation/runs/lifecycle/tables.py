"""Writing a table as CSV (for analysis) and Markdown (for reading) side by side, and the one
way a table cell shows a value with the n behind it (`cell_text`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from personasim.simulation.runs.lifecycle.atomic_files import atomic_path, write_text_atomic

__all__ = ["SIGNIFICANT_DIGITS", "cell_text", "percent", "significant", "write_table"]

MARK = "†"
SIGNIFICANT_DIGITS = 3
"""Markdown tables show 3 significant figures: a baseline of ~1e-3 at 2 decimals reads 0.00."""


def significant(value: float, digits: int = SIGNIFICANT_DIGITS) -> str:
    """`value` with `digits` significant figures, trailing zeros kept (0.500, 0.00123, 12.3);
    from 10^digits up no decimals (1234 stays 1234, not 1.23e+03); below 1e-4 in exponent form."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    magnitude = abs(value)
    if magnitude >= 10**digits:
        return f"{value:.0f}"
    if magnitude < 1e-4:
        return f"{value:.{digits - 1}e}"
    decimals = max(0, digits - 1 - math.floor(math.log10(magnitude)))
    text = f"{value:.{decimals}f}"
    if len(text.lstrip("-").replace(".", "").lstrip("0")) > digits:  # rounded up a decade
        text = f"{value:.{max(0, decimals - 1)}f}"
    return text


def percent(value: float, digits: int = 1) -> str:
    """A percentage (`value` in percentage points) in the one format tables use: "60.0%"."""
    return f"{value:.{digits}f}%"


def cell_text(
    value: float | str | None,
    n: int | None,
    *,
    noun: str = "",
    asked: int | None = None,
    as_percent: bool = False,
    digits: int | None = None,
    note: str = "",
    reason: str = "",
) -> str:
    """A table cell with the n behind it: the one place tables render a value with its n.

    With `as_percent`, `value` is in percentage points: "44.4% of 36 graded"; else a number
    (3 significant figures unless `digits`) or text: "2.86, n=36 judged". `noun` says what n
    counts; `asked`, where it differs from n, is the denominator before answers were left out:
    "11.1% of 9 graded, 12 asked". `note` follows the value (a change against a baseline, a
    mark): "44.4% (-47.2) of 36 graded". An undefined value (None or NaN) says so, with
    `reason` where given, never 0: "undefined: no graded answers (n=0 graded, 12 asked)". n None
    (published aggregates with no n): the value alone.
    """
    counted = f"{n}{f' {noun}' if noun else ''}"
    if asked is not None and asked != n:
        counted += f", {asked} asked"
    noted = f" {note}" if note else ""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        text = f"undefined: {reason}" if reason else "—"
        return f"{text}{noted}" + ("" if n is None else f" (n={counted})")
    if isinstance(value, str):
        shown = value
    elif as_percent:
        shown = percent(value, 1 if digits is None else digits)
    else:
        shown = significant(value) if digits is None else f"{value:.{digits}f}"
    if n is None:
        return f"{shown}{noted}"
    return f"{shown}{noted} of {counted}" if as_percent else f"{shown}{noted}, n={counted}"


def _shown(value: Any, floatfmt: str | None) -> Any:
    if isinstance(value, float) and not isinstance(value, bool):
        return significant(value) if floatfmt is None else format(value, floatfmt)
    return value


def _missing(value: Any) -> bool:
    """None, NaN, pd.NA or NaT: an empty cell."""
    return value is None or (pd.api.types.is_scalar(value) and bool(pd.isna(value)))


def write_table(
    rows: Sequence[dict[str, Any]],
    directory: Path,
    name: str,
    *,
    flag: str | None = None,
    notes: Sequence[str] = (),
    floatfmt: str | None = None,
    cells: Mapping[str, Callable[[Mapping[str, Any]], str | None]] | None = None,
) -> list[Path]:
    """`name.csv` and `name.md` with the same rows (Markdown floats with 3 significant figures,
    or as the format spec `floatfmt`; an empty cell as —; the CSV keeps full precision).

    `flag` names a boolean column (e.g. a group too small to trust) that the CSV keeps as
    True/False and the Markdown shows as † or blank; `notes` are footnotes under the Markdown
    table (e.g. what † means). `cells` renders a column's Markdown cells from the whole row
    (e.g. with `cell_text`: a rate with its n and denominator) while the CSV keeps the number.
    """
    rows = list(rows)
    frame = pd.DataFrame(rows)
    csv_path, md_path = directory / f"{name}.csv", directory / f"{name}.md"
    with atomic_path(csv_path) as tmp:
        frame.to_csv(tmp, index=False)
    shown = pd.DataFrame(
        {  # from the rows as given: an int column with a gap stays ints (not 12.0)
            column: pd.Series(
                [None if _missing(v := row.get(column)) else _shown(v, floatfmt) for row in rows],
                dtype=object,
            )
            for column in frame.columns
        }
    )
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    if flag is not None and flag in shown.columns:
        shown[flag] = [MARK if value else "" for value in frame[flag]]
    for column, render in (cells or {}).items():
        if column in shown.columns:
            shown[column] = pd.Series([render(row) for row in rows], dtype=object)
            numeric[list(frame.columns).index(column)] = False  # text now: aligned left
    align = ["right" if is_number else "left" for is_number in numeric]
    text = shown.to_markdown(index=False, missingval="—", disable_numparse=True, colalign=align)
    write_text_atomic(md_path, "\n\n".join([text, *notes]) + "\n")
    return [csv_path, md_path]
