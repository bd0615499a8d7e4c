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
    "eta_squared_from_group_stats",
    "holm",
    "mean_of",
    "median_of_defined",
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
    share an average rank (see `analysis.rankings.ranking_spearman`).
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


def eta_squared_from_group_stats(
    stats: Mapping[str, tuple[float, float]], n_per_group: int = 100
) -> Statistic:
    """One-way ANOVA η² from per-level (mean, sd), each level having `n_per_group` members.

    CTX+$ beliefs state only means and sds (C.2.2), "assuming 100 individuals per group"
    (C.1.3), so η̂² has to come from the summary statistics:
    SS_between = Σ n (m_i − grand)², SS_within = Σ (n − 1) sd_i², η² = SS_b / (SS_b + SS_w),
    with sd the sample (n − 1) standard deviation. Undefined with fewer than two levels or
    no variance at all, matching `analysis.stats.eta_squared`.
    """
    if n_per_group < 1:
        raise ValueError(f"n_per_group must be at least 1, got {n_per_group}")
    if len(stats) < 2:
        return Undefined(SINGLE_LEVEL if stats else NO_VALUES)
    pairs = np.asarray([tuple(v) for v in stats.values()], dtype=float)
    if pairs.ndim != 2 or pairs.shape[1] != 2:
        raise ValueError("each level needs a (mean, sd) pair")
    if not np.all(np.isfinite(pairs)):
        raise ValueError(f"means and sds must be finite: {dict(stats)!r}")
    means, sds = pairs[:, 0], pairs[:, 1]
    if np.any(sds < 0):
        raise ValueError(f"standard deviations must be non-negative: {dict(stats)!r}")
    # identical means give exactly zero, not a rounding residue of the grand mean
    if np.all(means == means[0]):
        ss_between = 0.0
    else:
        ss_between = float(n_per_group * ((means - means.mean()) ** 2).sum())
    ss_within = float((n_per_group - 1) * (sds**2).sum())
    total = ss_between + ss_within
    if total == 0.0:
        return Undefined(CONSTANT)
    return ss_between / total


def median_of_defined(values: Iterable[Statistic]) -> Statistic:
    """Median of the defined values (Table 3's median over attributes); undefined values are
    skipped, not counted as zero, and with none defined the median is undefined."""
    present = [float(v) for v in values if not isinstance(v, Undefined)]
    if not present:
        return Undefined("no defined values")
    return float(np.median(present))
