"""Writing a table as CSV (for analysis) and Markdown (for reading) side by side."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["write_table"]


def write_table(rows: Sequence[dict[str, Any]], directory: Path, name: str) -> list[Path]:
    """`name.csv` and `name.md` with the same rows (Markdown floats to 2 decimals)."""
    frame = pd.DataFrame(list(rows))
    csv_path, md_path = directory / f"{name}.csv", directory / f"{name}.md"
    frame.to_csv(csv_path, index=False)
    md_path.write_text(frame.to_markdown(index=False, floatfmt=".2f") + "\n")
    return [csv_path, md_path]
