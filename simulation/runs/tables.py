"""Writing a table as CSV (for analysis) and Markdown (for reading) side by side."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["SIGNIFICANT_DIGITS", "significant", "write_table"]

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


def _shown(value: Any, floatfmt: str | None) -> Any:
    if isinstance(value, float) and not isinstance(value, bool):
        return significant(value) if floatfmt is None else format(value, floatfmt)
    return value


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def write_table(
    rows: Sequence[dict[str, Any]],
    directory: Path,
    name: str,
    *,
    flag: str | None = None,
    notes: Sequence[str] = (),
    floatfmt: str | None = None,
) -> list[Path]:
    """`name.csv` and `name.md` with the same rows (Markdown floats with 3 significant figures,
    or as the format spec `floatfmt`; an empty cell as —; the CSV keeps full precision).

    `flag` names a boolean column (e.g. a group too small to trust) that the CSV keeps as
    True/False and the Markdown shows as † or blank; `notes` are footnotes under the Markdown
    table (e.g. what † means).
    """
    frame = pd.DataFrame(list(rows))
    csv_path, md_path = directory / f"{name}.csv", directory / f"{name}.md"
    frame.to_csv(csv_path, index=False)
    shown = pd.DataFrame(
        {
            column: pd.Series(
                [None if _missing(v) else _shown(v, floatfmt) for v in frame[column]],
                dtype=object,
            )
            for column in frame.columns
        }
    )
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    if flag is not None and flag in shown.columns:
        shown[flag] = [MARK if value else "" for value in frame[flag]]
    align = ["right" if is_number else "left" for is_number in numeric]
    text = shown.to_markdown(index=False, missingval="—", disable_numparse=True, colalign=align)
    md_path.write_text("\n\n".join([text, *notes]) + "\n")
    return [csv_path, md_path]
