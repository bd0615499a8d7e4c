"""Confidence intervals that keep their coverage at the edges (a rate of 0 or 1, ten items, a
biased resample), one function per kind of statistic; tests/test_interval_coverage.py measures
each one's coverage on data sets with a known value.

- a proportion (an agreement rate, a refusal rate, an accuracy): Wilson's score interval,
  never of zero width, even at 0 of 20 or 20 of 20;
- a mean of paired differences: the t interval; a difference of two groups' means: Welch's;
- a difference of paired proportions (0/1 outcomes at two levels): Bonett & Price's (2012)
  adjusted Wald interval;
- any other statistic with bootstrap resamples (agreement coefficients, a rank correlation):
  the bias-corrected and accelerated (BCa) bootstrap of Efron (1987), from the resamples and
  the leave-one-out (jackknife) values;
- a positive, bias-prone statistic (a ratio of distances): a normal interval on the log scale,
  centred on the estimate, its width from the resamples.

The `*_bounds` functions work on whole arrays (the last axis is the sample), so the coverage
test runs thousands of data sets at once; the `*_interval` functions wrap them for one sample
and return `Undefined` with the reason where no interval exists (no values, no spread, an
estimate outside every resample). Every interval here contains its point estimate.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from personasim.analysis.undefined import FEWER_THAN_2, NO_VALUES, Statistic, Undefined

__all__ = [
    "BIASED",
    "CONFIDENCE",
    "INTERVAL_METHODS",
    "NO_SPREAD",
    "OUTSIDE_RESAMPLES",
    "SAME_RESAMPLES",
    "Interval",
    "bca_bounds",
    "bca_interval",
    "log_normal_bounds",
    "log_normal_interval",
    "mean_t_interval",
    "paired_proportion_bounds",
    "paired_proportion_interval",
    "shown_interval",
    "t_bounds",
    "welch_bounds",
    "welch_interval",
    "wilson_bounds",
    "wilson_interval",
]

CONFIDENCE = 0.95

Interval = tuple[Statistic, Statistic]
"""(low, high): two numbers, or the same `Undefined` twice."""

INTERVAL_METHODS = {
    "wilson": "Wilson score interval",
    "t": "t interval of the mean",
    "welch": "Welch's t interval of a difference of two means",
    "paired proportions": "adjusted Wald interval for paired proportions (Bonett & Price 2012)",
    "bca": "bias-corrected and accelerated (BCa) bootstrap",
    "log-normal": "normal interval on the log scale from the bootstrap's spread",
}
"""The `interval` names metrics records carry, in words for a table's notes."""

NO_SPREAD = "every value is the same, so there is no spread to estimate an interval from"
SAME_RESAMPLES = "every bootstrap resample gives the same value, so the spread is unknown"
OUTSIDE_RESAMPLES = "the estimate lies outside all the bootstrap resamples' values"
BIASED = "the bias-corrected interval excludes the estimate (resamples too biased)"


def _z(confidence: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(1 - (1 - confidence) / 2))


def _undefined(reason: str) -> Interval:
    why = Undefined(reason)
    return why, why


def wilson_bounds(
    successes: np.ndarray | int, n: np.ndarray | int, confidence: float = CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval of k/n, element-wise (equal to scipy's
    `binomtest(k, n).proportion_ci(method="wilson")`; NaN where n is 0)."""
    k, total = np.asarray(successes, dtype=float), np.asarray(n, dtype=float)
    z = _z(confidence)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / total
        centre = (p + z * z / (2 * total)) / (1 + z * z / total)
        half = z / (1 + z * z / total) * np.sqrt(p * (1 - p) / total + z * z / (4 * total**2))
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def wilson_interval(successes: int, n: int, confidence: float = CONFIDENCE) -> Interval:
    """The Wilson interval of a proportion; undefined with no trials. At 20 of 20 it is
    [0.839, 1], where a percentile bootstrap says [1, 1]."""
    if n == 0:
        return _undefined(NO_VALUES)
    low, high = wilson_bounds(successes, n, confidence)
    return float(low), float(high)


def t_bounds(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """The t interval of the mean along the last axis (scipy's `ttest_1samp` interval)."""
    from scipy import stats

    x = np.asarray(values, dtype=float)
    n = x.shape[-1]
    mean, sd = x.mean(axis=-1), x.std(axis=-1, ddof=1)
    half = stats.t.ppf(1 - (1 - confidence) / 2, n - 1) * sd / np.sqrt(n)
    return mean - half, mean + half


def mean_t_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> Interval:
    """The t interval of a mean; undefined with fewer than 2 values or when all are equal (a
    zero-width interval would claim certainty that 2 equal values do not give)."""
    x = np.asarray(values, dtype=float)
    if len(x) < 2:
        return _undefined(FEWER_THAN_2 if len(x) else NO_VALUES)
    if np.all(x == x[0]):
        return _undefined(NO_SPREAD)
    low, high = t_bounds(x, confidence)
    return float(low), float(high)


def welch_bounds(
    a: np.ndarray, b: np.ndarray, confidence: float = CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """Welch's t interval of mean(a) − mean(b) along the last axis (scipy's `ttest_ind` with
    unequal variances)."""
    from scipy import stats

    interval = stats.ttest_ind(a, b, axis=-1, equal_var=False).confidence_interval(confidence)
    return np.asarray(interval.low), np.asarray(interval.high)


def welch_interval(
    a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE
) -> Interval:
    """Welch's interval of mean(a) − mean(b); undefined when a group has fewer than 2 values
    or neither group varies."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if min(len(x), len(y)) < 2:
        return _undefined("a group has fewer than 2 values")
    if np.all(x == x[0]) and np.all(y == y[0]):
        return _undefined(NO_SPREAD)
    low, high = welch_bounds(x, y, confidence)
    return float(low), float(high)


def paired_proportion_bounds(
    up: np.ndarray | int,
    down: np.ndarray | int,
    n: np.ndarray | int,
    confidence: float = CONFIDENCE,
) -> tuple[np.ndarray, np.ndarray]:
    """Bonett & Price's (2012) adjusted Wald interval of p_b − p_a from paired 0/1 outcomes:
    `up` units went 0 → 1, `down` 1 → 0, of `n`. With one added to each discordant count,
    p̃ = (count + 1) / (n + 2), the interval p̃_up − p̃_down ± z·√((p̃_up + p̃_down −
    (p̃_up − p̃_down)²) / (n + 2)), within [−1, 1]. Its half-width is at least 2.77/(n + 2)
    and the shift from the plain estimate at most 2/(n + 2), so it contains the estimate."""
    u, d, total = (np.asarray(v, dtype=float) for v in (up, down, n))
    pu, pd = (u + 1) / (total + 2), (d + 1) / (total + 2)
    centre = pu - pd
    half = _z(confidence) * np.sqrt((pu + pd - centre**2) / (total + 2))
    return np.clip(centre - half, -1.0, 1.0), np.clip(centre + half, -1.0, 1.0)


def paired_proportion_interval(
    a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE
) -> Interval:
    """The interval of mean(b) − mean(a) for paired 0/1 outcomes (`paired_proportion_bounds`);
    defined from one pair on, and never of zero width."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) == 0:
        return _undefined(NO_VALUES)
    up, down = int(np.sum((x == 0) & (y == 1))), int(np.sum((x == 1) & (y == 0)))
    low, high = paired_proportion_bounds(up, down, len(x), confidence)
    return float(low), float(high)


def bca_bounds(
    estimate: np.ndarray | float,
    draws: np.ndarray,
    jackknife: np.ndarray,
    confidence: float = CONFIDENCE,
) -> tuple[np.ndarray, np.ndarray]:
    """BCa bounds along the last axis, as `scipy.stats.bootstrap(method="BCa")` computes them
    from the same resamples: the bias correction z0 = Φ⁻¹(share of draws below the estimate,
    ties counted half), the acceleration a = Σu³ / (6 (Σu²)^1.5) with u the jackknife values'
    deviations from their mean, and the draws' percentiles at Φ(z0 + (z0 + z)/(1 − a(z0 + z)))
    for z = ∓z_(1−α/2). NaN where the draws are all equal or the estimate is outside them."""
    from scipy.special import ndtr, ndtri

    theta = np.asarray(estimate, dtype=float)[..., None]
    b = np.asarray(draws, dtype=float)
    share = ((b < theta).sum(axis=-1) + (b <= theta).sum(axis=-1)) / (2 * b.shape[-1])
    z0 = ndtri(share)
    jack = np.asarray(jackknife, dtype=float)
    u = jack.mean(axis=-1, keepdims=True) - jack
    with np.errstate(invalid="ignore", divide="ignore"):
        accel = (u**3).sum(axis=-1) / (6 * ((u**2).sum(axis=-1)) ** 1.5)
    accel = np.where(np.isfinite(accel), accel, 0.0)  # no jackknife spread: no acceleration
    tail = ndtri((1 - confidence) / 2)
    levels = [ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z))) for z in (tail, -tail)]
    ordered = np.sort(b, axis=-1)
    low, high = (_quantile_of_sorted(ordered, q) for q in levels)
    flat = ordered[..., 0] == ordered[..., -1]
    bad = flat | ~np.isfinite(z0)
    return np.where(bad, np.nan, low), np.where(bad, np.nan, high)


def _quantile_of_sorted(ordered: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The q-th quantile (numpy's linear method) of each sorted row, q varying by row."""
    n = ordered.shape[-1]
    position = np.nan_to_num(np.asarray(q, dtype=float)) * (n - 1)
    below = np.clip(np.floor(position).astype(int), 0, n - 1)
    above = np.minimum(below + 1, n - 1)
    weight = position - below
    lower = np.take_along_axis(ordered, below[..., None], axis=-1)[..., 0]
    upper = np.take_along_axis(ordered, above[..., None], axis=-1)[..., 0]
    return lower + weight * (upper - lower)


def bca_interval(
    estimate: float, draws: np.ndarray, jackknife: np.ndarray, confidence: float = CONFIDENCE
) -> Interval:
    """The BCa interval of one statistic from its bootstrap draws and jackknife values (NaN:
    a resample or a leave-one-out sample on which it is undefined, left out). Undefined when
    the draws do not vary, the estimate lies outside all of them, or the corrected interval
    would exclude the estimate (the bootstrap then says more about its own bias than about the
    statistic)."""
    b = np.asarray(draws, dtype=float)
    b, jack = b[~np.isnan(b)], np.asarray(jackknife, dtype=float)
    jack = jack[~np.isnan(jack)]
    if b.size == 0:
        return _undefined("no bootstrap resample has a value")
    if np.all(b == b[0]):
        return _undefined(SAME_RESAMPLES)
    if estimate < b.min() or estimate > b.max():
        return _undefined(OUTSIDE_RESAMPLES)
    low, high = bca_bounds(estimate, b, jack if jack.size else np.zeros(1), confidence)
    if not np.isfinite(low) or not low <= estimate <= high:
        return _undefined(BIASED)
    return float(low), float(high)


def log_normal_bounds(
    estimate: np.ndarray | float, draws: np.ndarray, confidence: float = CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """estimate · exp(∓z · SD(log draws)) along the last axis: a normal interval on the log
    scale centred on the estimate, so it always contains it, however biased the resamples."""
    theta = np.asarray(estimate, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.log(np.asarray(draws, dtype=float)).std(axis=-1, ddof=1)
    step = np.exp(_z(confidence) * spread)
    return theta / step, theta * step


def log_normal_interval(
    estimate: Statistic, draws: np.ndarray, confidence: float = CONFIDENCE
) -> Interval:
    """`log_normal_bounds` of a positive statistic from its bootstrap draws; undefined when
    the estimate is undefined or not positive, a draw is not positive or not finite, or the
    draws do not vary."""
    b = np.asarray(draws, dtype=float)
    if isinstance(estimate, Undefined):
        return estimate, estimate
    if estimate <= 0:
        return _undefined("the estimate is not positive: no interval on the log scale")
    bad = int(np.sum(~np.isfinite(b) | (b <= 0)))
    if bad:
        return _undefined(f"undefined or not positive in {bad} of {len(b)} resamples")
    if len(b) < 2 or np.all(b == b[0]):
        return _undefined(SAME_RESAMPLES)
    low, high = log_normal_bounds(estimate, b, confidence)
    return float(low), float(high)


def shown_interval(low: Statistic | None, high: Statistic | None, digits: int = 3) -> str:
    """` [0.623, 0.984]`, or `; interval undefined: why` (leading space or semicolon), to put
    after a shown value."""
    if isinstance(low, Undefined):
        return f"; interval undefined: {low.reason}"
    if low is None or high is None or isinstance(high, Undefined):
        return "; interval undefined: not recorded"
    return f" [{low:.{digits}f}, {high:.{digits}f}]"
