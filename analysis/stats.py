"""Statistics over groups of observations, used by the per-paper metrics."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["LevelSummary", "eta_squared", "rank_levels", "summarize_levels"]


@dataclass(frozen=True)
class LevelSummary:
    level: str
    n: int
    mean: float


def summarize_levels(values: Sequence[float], groups: Sequence[str]) -> list[LevelSummary]:
    """Mean and count of `values` per group level, levels in sorted order."""
    data = np.asarray(values, dtype=float)
    labels = np.asarray(groups, dtype=object)
    return [
        LevelSummary(str(level), int(mask.sum()), float(data[mask].mean()))
        for level in sorted(set(labels.tolist()))
        for mask in [labels == level]
    ]


def rank_levels(values: Sequence[float], groups: Sequence[str]) -> list[str]:
    """Levels ordered by mean value, highest first (seed 001's behavioural ranking π*).

    Ties keep alphabetical order, so the ranking is deterministic.
    """
    summaries = summarize_levels(values, groups)
    return [s.level for s in sorted(summaries, key=lambda s: -s.mean)]


def eta_squared(values: Sequence[float], groups: Sequence[str]) -> float | None:
    """Between-group share of the total sum of squares from a one-way ANOVA.

    None when it is undefined: fewer than two levels, or no variance at all.
    """
    data = np.asarray(values, dtype=float)
    labels = np.asarray(groups, dtype=object)
    levels = set(labels.tolist())
    if len(levels) < 2 or np.all(data == data[0]):
        return None
    total = float(((data - data.mean()) ** 2).sum())
    between = sum(
        mask.sum() * (data[mask].mean() - data.mean()) ** 2
        for level in levels
        for mask in [labels == level]
    )
    return float(between / total)
