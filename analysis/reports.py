"""Writing tables and figures into a run's reports folder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only: no display is needed or wanted

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

__all__ = ["save_figure", "write_table"]


def write_table(rows: Sequence[dict[str, Any]], directory: Path, name: str) -> list[Path]:
    """`name.csv` and `name.md` with the same rows (Markdown floats to 2 decimals)."""
    frame = pd.DataFrame(list(rows))
    csv_path, md_path = directory / f"{name}.csv", directory / f"{name}.md"
    frame.to_csv(csv_path, index=False)
    md_path.write_text(frame.to_markdown(index=False, floatfmt=".2f") + "\n")
    return [csv_path, md_path]


def save_figure(figure: Figure, directory: Path, name: str) -> Path:
    """`name.png` at 150 dpi; the figure is closed so long sweeps do not hold memory."""
    path = directory / f"{name}.png"
    figure.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(figure)
    return path
