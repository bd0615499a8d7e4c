"""Writing a table as CSV (for analysis) and Markdown (for reading) side by side."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["write_table"]

MARK = "†"


def write_table(
    rows: Sequence[dict[str, Any]],
    directory: Path,
    name: str,
    *,
    flag: str | None = None,
    notes: Sequence[str] = (),
    floatfmt: str = ".2f",
) -> list[Path]:
    """`name.csv` and `name.md` with the same rows (Markdown floats as `floatfmt`, 2 decimals
    unless told, e.g. ".3g" for distances of order 1e-3; an empty cell as —).

    `flag` names a boolean column (e.g. a group too small to trust) that the CSV keeps as
    True/False and the Markdown shows as † or blank; `notes` are footnotes under the Markdown
    table (e.g. what † means).
    """
    frame = pd.DataFrame(list(rows))
    csv_path, md_path = directory / f"{name}.csv", directory / f"{name}.md"
    frame.to_csv(csv_path, index=False)
    shown = frame.astype(object).where(frame.notna(), None)
    if flag is not None and flag in shown.columns:
        shown[flag] = [MARK if value else "" for value in frame[flag]]
    text = shown.to_markdown(index=False, floatfmt=floatfmt, missingval="—")
    md_path.write_text("\n\n".join([text, *notes]) + "\n")
    return [csv_path, md_path]
