"""Agreement between raters, and between a model and raters: Fleiss' κ over categories, ICC(3,k)
and Pearson r over scores, and a correlation (Pearson, Spearman or Kendall τ-b) with its
bootstrap interval. Each is a number or `Undefined` with the reason."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy.stats import rankdata

from personasim.analysis.undefined import CONSTANT, NO_VALUES, Statistic, Undefined, stat_fields

__all__ = [
    "CorrelationInterval",
    "Method",
    "bootstrap_correlation",
    "correlation_undefined",
    "fleiss_kappa",
    "icc3k",
    "pearson",
]

Method = Literal["spearman", "kendall", "pearson"]
"""The correlations `bootstrap_correlation` computes."""


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]]) -> Statistic:
    """Fleiss' κ (1971) of an items × categories table of how many raters chose each category.

    Every item needs the same number of raters, at least 2; κ is undefined without items or
    when every rating falls in one category (chance agreement is then 1).
    """
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2 or table.shape[0] == 0:
        return Undefined("no rated items")
    raters = table.sum(axis=1)
    if not np.all(raters == raters[0]):
        return Undefined("items have different numbers of raters")
    n = raters[0]
    if n < 2:
        return Undefined("fewer than 2 raters per item")
    shares = table.sum(axis=0) / table.sum()
    chance = float(np.sum(shares**2))
    if chance >= 1.0:
        return Undefined("every rating in one category")
    observed = float(np.mean((np.sum(table**2, axis=1) - n) / (n * (n - 1))))
    return (observed - chance) / (1.0 - chance)


def pearson(x: Sequence[float], y: Sequence[float]) -> Statistic:
    """Pearson r; undefined with fewer than 3 pairs or a constant side."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) < 3:
        return Undefined("fewer than 3 pairs")
    for label, side in (("x", a), ("y", b)):
        if np.all(side == side[0]):
            return Undefined(CONSTANT).within(label)
    return float(np.corrcoef(a, b)[0, 1])


def icc3k(ratings: Sequence[Sequence[float]]) -> Statistic:
    """ICC(3,k) of Shrout & Fleiss (1979): two-way mixed, consistency, mean of k raters.

    `ratings` is targets × raters; ICC(3,k) = (BMS − EMS) / BMS. Undefined with fewer than
    2 targets or 2 raters, or when the targets' means are all equal (BMS = 0).
    """
    x = np.asarray(ratings, dtype=float)
    if x.size == 0:
        return Undefined(NO_VALUES)
    n, k = x.shape
    if n < 2:
        return Undefined("fewer than 2 targets")
    if k < 2:
        return Undefined("fewer than 2 raters")
    row_means = x.mean(axis=1)
    if np.allclose(row_means, row_means[0], rtol=1e-12, atol=1e-12):
        return Undefined("no variance between targets")
    grand = x.mean()
    bss = k * ((row_means - grand) ** 2).sum()
    jss = n * ((x.mean(axis=0) - grand) ** 2).sum()
    ess = ((x - grand) ** 2).sum() - bss - jss
    bms = bss / (n - 1)
    ems = ess / ((n - 1) * (k - 1))
    return float((bms - ems) / bms)


def correlation_undefined(a: np.ndarray, b: np.ndarray) -> Undefined | None:
    """Why a correlation of a with b is undefined (n < 2, either constant), or None."""
    if len(a) < 2:
        return Undefined("fewer than 2 pairs")
    for label, side in (("x", a), ("y", b)):
        if np.all(side == side[0]):
            return Undefined(CONSTANT).within(label)
    return None


@dataclass(frozen=True)
class CorrelationInterval:
    """A correlation with its bootstrap interval; significant when the interval excludes 0.

    `resamples` counts the resamples that had a correlation (a constant resample has none).
    """

    method: str
    r: Statistic
    low: Statistic
    high: Statistic
    n: int
    significant: bool | Undefined
    resamples: int = 0

    def record(self) -> dict[str, Any]:
        return {
            "method": self.method,
            **stat_fields("r", self.r),
            **stat_fields("low", self.low),
            **stat_fields("high", self.high),
            "n": self.n,
            **stat_fields("significant", self.significant),
            "resamples": self.resamples,
        }


def bootstrap_correlation(
    x: Sequence[float],
    y: Sequence[float],
    method: Method = "spearman",
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
) -> CorrelationInterval:
    """Appendix F.1: resample the (x, y) pairs with replacement `n_resamples` times, take each
    resample's correlation to Fisher's z = artanh(r), and map the 2.5th and 97.5th percentiles
    of z back with tanh.

    The resamples are `numpy.random.default_rng(seed).integers(0, n, (n_resamples, n))`, one
    row each. A resample whose x or y is constant has no correlation and is left out; r = ±1
    is clipped to ±(1 − 1e-12) so that z stays finite. r is undefined with fewer than 2 pairs
    or a constant side; the interval also with fewer than 3 pairs or no usable resample.
    """
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(xs)
    r: Statistic = correlation_undefined(xs, ys) or float(
        _correlations(xs[None, :], ys[None, :], method)[0]
    )
    if isinstance(r, Undefined) or n < 3:
        why = r if isinstance(r, Undefined) else Undefined("fewer than 3 pairs")
        return CorrelationInterval(method, r, why, why, n, why)
    rows = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    chunk = max(1, 20_000_000 // (n * n))
    resampled = np.concatenate(
        [
            _correlations(xs[rows[i : i + chunk]], ys[rows[i : i + chunk]], method)
            for i in range(0, n_resamples, chunk)
        ]
    )
    usable = resampled[~np.isnan(resampled)]
    if usable.size == 0:
        why = Undefined("every resample constant")
        return CorrelationInterval(method, r, why, why, n, why)
    z = np.arctanh(np.clip(usable, -1 + 1e-12, 1 - 1e-12))
    tail = (1 - level) / 2 * 100
    low, high = np.tanh(np.percentile(z, [tail, 100 - tail]))
    return CorrelationInterval(
        method, r, float(low), float(high), n, bool(low > 0 or high < 0), int(usable.size)
    )


def _correlations(x: np.ndarray, y: np.ndarray, method: Method) -> np.ndarray:
    """Row-wise correlation of two (samples × n) arrays; NaN where a row is constant."""
    if method == "kendall":
        return _kendall_tau_b(x, y)
    if method == "spearman":
        x, y = rankdata(x, axis=1), rankdata(y, axis=1)
    dx = x - x.mean(axis=1, keepdims=True)
    dy = y - y.mean(axis=1, keepdims=True)
    denominator = np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (dx * dy).sum(axis=1) / denominator, np.nan)


def _kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's τ-b row-wise (as `scipy.stats.kendalltau`): concordance over pairs i < j."""
    sx = np.sign(x[:, :, None] - x[:, None, :])
    sy = np.sign(y[:, :, None] - y[:, None, :])
    concordance = (sx * sy).sum(axis=(1, 2))
    untied = np.abs(sx).sum(axis=(1, 2)) * np.abs(sy).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(untied > 0, concordance / np.sqrt(untied), np.nan)
