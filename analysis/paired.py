"""Paired differences: the same units measured under two conditions (a persona at two levels of
one attribute). The mean difference with a bootstrap interval over units, Wilcoxon's
signed-rank test, and the share of units whose value changes; each a number or `Undefined`
with the reason (checked against scipy and a brute-force bootstrap in tests/test_paired.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from personasim.analysis.agreement import percentile_interval
from personasim.analysis.resampling import stratified_bootstrap_weights
from personasim.analysis.stats import holm
from personasim.analysis.undefined import FEWER_THAN_2, NO_VALUES, Statistic, Undefined

__all__ = [
    "ALL_ZERO",
    "NOT_NUMBERS",
    "PairedDifference",
    "holm_over",
    "paired_difference",
]

ALL_ZERO = "all differences are zero"
"""Why the signed-rank test has no p-value: it ranks non-zero differences, and there are none."""

NOT_NUMBERS = "the decisions are not numbers"


@dataclass(frozen=True)
class PairedDifference:
    """`b − a` over the units measured under both conditions."""

    n: int
    mean: Statistic
    low: Statistic
    high: Statistic
    wilcoxon_p: Statistic
    changed: Statistic
    """Share of the units whose value differs between the two conditions."""


def paired_difference(
    a: Sequence[Any],
    b: Sequence[Any],
    rng: np.random.Generator,
    resamples: int = 2000,
    confidence: float = 0.95,
) -> PairedDifference:
    """The paired statistics of `b[i] − a[i]`; values that are not numbers (labels) still give
    the share that changed. The interval is the percentile bootstrap of the mean difference,
    units resampled with replacement (`resamples` draws from `rng`)."""
    if len(a) != len(b):
        raise ValueError(f"paired values need equal lengths, got {len(a)} and {len(b)}")
    n = len(a)
    if n == 0:
        none = Undefined(NO_VALUES)
        return PairedDifference(0, none, none, none, none, none)
    changed = float(np.mean([x != y for x, y in zip(a, b, strict=True)]))
    if not all(_is_number(v) for v in (*a, *b)):
        labels = Undefined(NOT_NUMBERS)
        return PairedDifference(n, labels, labels, labels, labels, changed)
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if n < 2:
        few = Undefined(FEWER_THAN_2)
        return PairedDifference(n, float(d.mean()), few, few, few, changed)
    low, high = _bootstrap_interval(d, rng, resamples, confidence)
    return PairedDifference(n, float(d.mean()), low, high, _wilcoxon(d), changed)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not (isinstance(value, float) and np.isnan(value))


def _bootstrap_interval(
    d: np.ndarray, rng: np.random.Generator, resamples: int, confidence: float
) -> tuple[Statistic, Statistic]:
    weights = stratified_bootstrap_weights(np.zeros(len(d), dtype=int), resamples, rng)
    low, high, _ = percentile_interval(weights @ d / len(d), resamples, confidence)
    return low, high


def _wilcoxon(d: np.ndarray) -> Statistic:
    """Two-sided signed-rank p (zeros dropped, Wilcoxon's convention); exact for small n
    without ties, the normal approximation otherwise (scipy's `method="auto"`)."""
    from scipy import stats

    if not np.any(d != 0):
        return Undefined(ALL_ZERO)
    p = float(stats.wilcoxon(d, zero_method="wilcox").pvalue)
    return Undefined("the test gave no p-value") if np.isnan(p) else p


def holm_over(p_values: Sequence[Statistic]) -> list[Statistic]:
    """`holm` over the defined p-values of one family (the pairs of levels); an undefined one
    stays undefined and does not count towards the family's size."""
    defined = [i for i, p in enumerate(p_values) if not isinstance(p, Undefined)]
    adjusted = holm([float(p_values[i]) for i in defined])  # type: ignore[arg-type]
    result = list(p_values)
    for i, p in zip(defined, adjusted, strict=True):
        result[i] = p
    return result
