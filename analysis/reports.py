"""Writing tables and figures into a run's reports folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only: no display is needed or wanted

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from personasim.simulation.tables import write_table

__all__ = ["model_label", "save_figure", "write_table"]


def model_label(description: dict[str, Any]) -> str:
    """A short name for the model a run used (its manifest's `model`), for table columns."""
    if description.get("backend") == "scripted":
        drift = description.get("drift")
        return f"scripted:drift={drift:g}" if drift else "scripted"
    return str(description.get("model") or description.get("backend", "model"))


def save_figure(figure: Figure, directory: Path, name: str) -> Path:
    """`name.png` at 150 dpi; the figure is closed so long sweeps do not hold memory."""
    path = directory / f"{name}.png"
    figure.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(figure)
    return path
