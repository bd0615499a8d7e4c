"""Statistics over groups of observations, used by the per-paper metrics.

Each returns a number or `Undefined` with the reason (see `analysis.undefined`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from personasim.analysis.undefined import (
    CONSTANT,
    FEWER_THAN_2,
    NO_VALUES,
    SINGLE_LEVEL,
    ZERO_BASELINE,
    Statistic,
    Undefined,
)

__all__ = [
    "LevelSummary",
    "eta_squared",
    "holm",
    "mean_of",
    "rank_levels",
    "ratio_of",
    "sample_sd",
    "small_groups",
    "summarize_levels",
]


@dataclass(frozen=True)
class LevelSummary:
    level: str
    n: int
    mean: float


def mean_of(values: Iterable[float], empty: str = NO_VALUES) -> Statistic:
    """The mean; `Undefined(empty)` when there are no values (`empty` names what is missing)."""
    data = np.asarray(list(values), dtype=float)
    return Undefined(empty) if data.size == 0 else float(data.mean())


def sample_sd(values: Iterable[float], too_few: str = FEWER_THAN_2) -> Statistic:
    """Sample standard deviation (ddof 1); `Undefined(too_few)` with fewer than two values."""
    data = np.asarray(list(values), dtype=float)
    return Undefined(too_few) if data.size < 2 else float(data.std(ddof=1))


def ratio_of(numerator: Statistic, denominator: Statistic, what: str = "baseline") -> Statistic:
    """numerator / denominator; undefined when either is, or the denominator is zero."""
    if isinstance(numerator, Undefined):
        return numerator
    if isinstance(denominator, Undefined):
        return denominator.within(what)
    if denominator == 0:
        return Undefined(ZERO_BASELINE if what == "baseline" else f"zero {what}")
    return numerator / denominator


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's (1979) step-down adjusted p-values, in the input order: the i-th smallest p
    becomes max over j ≤ i of min(1, (m − j + 1)·p_(j)). Controls the family-wise error rate
    under any dependence between the tests (here: pairs sharing groups and users)."""
    p = np.asarray(p_values, dtype=float)
    if np.any((p < 0) | (p > 1) | np.isnan(p)):
        raise ValueError(f"p-values must lie in [0, 1]: {list(p_values)!r}")
    m = len(p)
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(stepped)
    return adjusted.tolist()


def small_groups(sizes: Mapping[str, int], min_group_n: int) -> list[str]:
    """The groups (sorted) with fewer than `min_group_n` members, to be flagged in metrics."""
    return sorted(group for group, n in sizes.items() if n < min_group_n)


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

    Ties keep alphabetical order so that the list is deterministic; it is for reading only.
    A Spearman ρ against it must use the level means (`summarize_levels`) so that tied levels
    share an average rank (see `analysis.consistency.ranking_spearman`).
    """
    summaries = summarize_levels(values, groups)
    return [s.level for s in sorted(summaries, key=lambda s: -s.mean)]


def eta_squared(values: Sequence[float], groups: Sequence[str]) -> Statistic:
    """Between-group share of the total sum of squares from a one-way ANOVA.

    Undefined with no values, a single level, or no variance at all (constant input).
    """
    data = np.asarray(values, dtype=float)
    labels = np.asarray(groups, dtype=object)
    levels = set(labels.tolist())
    if data.size == 0:
        return Undefined(NO_VALUES)
    if len(levels) < 2:
        return Undefined(SINGLE_LEVEL)
    if np.all(data == data[0]):
        return Undefined(CONSTANT)
    total = float(((data - data.mean()) ** 2).sum())
    between = sum(
        mask.sum() * (data[mask].mean() - data.mean()) ** 2
        for level in levels
        for mask in [labels == level]
    )
    return float(between / total)
