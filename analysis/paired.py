"""Paired differences: the same units measured under two conditions (a persona at two levels of
one attribute). The mean difference with its interval, a test chosen by the data, and the share
of units whose value changes; each a number or `Undefined` with the reason (checked against
scipy in tests/test_paired.py).

- 0/1 outcomes (right/wrong): the exact McNemar test — a binomial test of the discordant pairs
  against ½ — and Agresti & Min's interval of the difference of the two proportions;
- other numbers (scores, amounts, ordinal ratings): Wilcoxon's signed-rank test with zero
  differences dropped (`zero_method="wilcox"`) and the t interval of the mean difference.

Wilcoxon on 0/1 pairs ranks every non-zero difference alike and uses a normal approximation
with tie corrections; McNemar's exact test is the test built for them (and the more
conservative of the two on small samples).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from personasim.analysis.intervals import mean_t_interval, paired_proportion_interval
from personasim.analysis.stats import holm
from personasim.analysis.undefined import FEWER_THAN_2, NO_VALUES, Statistic, Undefined

__all__ = [
    "ALL_ZERO",
    "MCNEMAR",
    "NOT_NUMBERS",
    "WILCOXON",
    "PairedDifference",
    "holm_over",
    "mcnemar_exact",
    "paired_difference",
    "wilcoxon_signed_rank",
]

ALL_ZERO = "all differences are zero"
"""Why a paired test has no p-value: it tests the non-zero differences, and there are none."""

NOT_NUMBERS = "the decisions are not numbers"

MCNEMAR = "exact McNemar"
WILCOXON = "Wilcoxon signed-rank, zero differences dropped"
"""The `test` each p-value is recorded with."""

PAIRED_T = "t"
PAIRED_PROPORTIONS = "paired proportions"
"""The `interval` kinds (`analysis.intervals.INTERVAL_METHODS`)."""


@dataclass(frozen=True)
class PairedDifference:
    """`b − a` over the units measured under both conditions."""

    n: int
    mean: Statistic
    low: Statistic
    high: Statistic
    p: Statistic
    changed: Statistic
    """Share of the units whose value differs between the two conditions."""
    test: str = ""
    """The test behind `p` (`MCNEMAR`, `WILCOXON`); "" when there are no numbers to test."""
    interval: str = ""
    """The interval's kind (`PAIRED_T`, `PAIRED_PROPORTIONS`); "" when there is none."""


def paired_difference(
    a: Sequence[Any], b: Sequence[Any], confidence: float = 0.95
) -> PairedDifference:
    """The paired statistics of `b[i] − a[i]`; values that are not numbers (labels) still give
    the share that changed. 0/1 values (booleans too) get McNemar's test, other numbers
    Wilcoxon's (module docstring)."""
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
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = y - x
    if np.isin(x, (0.0, 1.0)).all() and np.isin(y, (0.0, 1.0)).all():
        low, high = paired_proportion_interval(x, y, confidence)
        return PairedDifference(
            n, float(d.mean()), low, high, mcnemar_exact(x, y), changed, MCNEMAR, PAIRED_PROPORTIONS
        )
    if n < 2:
        few = Undefined(FEWER_THAN_2)
        return PairedDifference(n, float(d.mean()), few, few, few, changed, WILCOXON, PAIRED_T)
    low, high = mean_t_interval(d, confidence)
    p = wilcoxon_signed_rank(d)
    return PairedDifference(n, float(d.mean()), low, high, p, changed, WILCOXON, PAIRED_T)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not (isinstance(value, float) and np.isnan(value))


def mcnemar_exact(a: Sequence[float], b: Sequence[float]) -> Statistic:
    """Two-sided exact McNemar p of paired 0/1 outcomes: of the discordant pairs, how many
    went 0 → 1, against Binomial(discordant, ½) (scipy's `binomtest`)."""
    from scipy.stats import binomtest

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    up, down = int(np.sum((x == 0) & (y == 1))), int(np.sum((x == 1) & (y == 0)))
    if up + down == 0:
        return Undefined(ALL_ZERO)
    return float(binomtest(up, up + down, 0.5).pvalue)


def wilcoxon_signed_rank(d: Sequence[float]) -> Statistic:
    """Two-sided signed-rank p of the differences `d`, zeros dropped (Wilcoxon's convention,
    `zero_method="wilcox"`); exact for small n without ties, the normal approximation with tie
    correction otherwise (scipy's `method="auto"`)."""
    from scipy import stats

    x = np.asarray(d, dtype=float)
    if not np.any(x != 0):
        return Undefined(ALL_ZERO)
    p = float(stats.wilcoxon(x, zero_method="wilcox").pvalue)
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
