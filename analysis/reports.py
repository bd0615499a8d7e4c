"""Writing tables and figures into a run's reports folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from personasim.simulation.runs.lifecycle.atomic_files import atomic_path
from personasim.simulation.runs.lifecycle.tables import MARK

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["SMALL_MARK", "model_label", "save_figure", "small_note"]
# The table writer and its cell format are the kernel's (simulation/runs/lifecycle/tables.py):
# imported from there, never through this module.

SMALL_MARK = MARK
"""How a table's Markdown marks a row whose group is smaller than the run's `min_group_n`."""


def small_note(min_group_n: int, what: str = "members of a group") -> str:
    """The footnote explaining `SMALL_MARK` in a table: "† n < 5 (what): too few to trust"."""
    return f"{SMALL_MARK} n < {min_group_n} ({what}): too few to trust."


def model_label(description: dict[str, Any]) -> str:
    """A short name for the model a run used (its manifest's `model`), for table columns."""
    if description.get("backend") == "scripted":
        drift = description.get("drift")
        return f"scripted:drift={drift:g}" if drift else "scripted"
    return str(description.get("model") or description.get("backend", "model"))


def save_figure(figure: Figure, directory: Path, name: str) -> Path:
    """`name.png` at 150 dpi; the figure is closed so long sweeps do not hold memory."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display is needed or wanted
    import matplotlib.pyplot as plt

    path = directory / f"{name}.png"
    with atomic_path(path) as tmp:
        figure.savefig(tmp, dpi=150, bbox_inches="tight")
    plt.close(figure)
    return path
