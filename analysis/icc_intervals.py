"""F-based confidence intervals of the intraclass correlations (Shrout & Fleiss 1979; McGraw &
Wong 1996, Table 7), from the same two-way ANOVA mean squares as `reliability.icc`.

Why not the bootstrap: over 10 items the BCa bootstrap of ICC(2,1) covered 88% (92% at 30),
where these intervals cover 95% at 10, 30 and 200 items (tests/test_interval_coverage.py,
docs/intervals.md). ICC(1,·) and ICC(3,·) have exact F intervals under the normal model;
ICC(2,1) McGraw & Wong's approximate one with Satterthwaite's degrees of freedom, and ICC(2,k)
the Spearman–Brown step-up of ICC(2,1)'s bounds (as pingouin and R's psych compute them).
Each interval contains its estimate: a bound is the estimate with the F ratio moved by an F
quantile above 1.
"""

from __future__ import annotations

import numpy as np

from personasim.analysis.intervals import CONFIDENCE, Interval, undefined_interval

__all__ = ["NO_RESIDUAL", "icc_f_interval", "mean_squares"]

NO_RESIDUAL = (
    "the ratings have no residual variance (the raters differ by a constant at most), so the"
    " F ratio is infinite and there is no interval to estimate"
)


def mean_squares(table: np.ndarray) -> tuple[float, float, float, float]:
    """(between targets, within targets, between raters, residual) mean squares of a complete
    targets × raters table."""
    n, k = table.shape
    grand = table.mean()
    rows, columns = table.mean(axis=1), table.mean(axis=0)
    between = k * float(((rows - grand) ** 2).sum()) / (n - 1)
    raters = n * float(((columns - grand) ** 2).sum()) / (k - 1)
    residual_ss = float(((table - rows[:, None] - columns[None, :] + grand) ** 2).sum())
    within = (residual_ss + raters * (k - 1)) / (n * (k - 1))
    return between, within, raters, residual_ss / ((n - 1) * (k - 1))


def icc_f_interval(table: np.ndarray, form: str, confidence: float = CONFIDENCE) -> Interval:
    """The interval of an ICC form of a complete targets × raters table (at least 2 × 2, the
    targets' means not all equal: `reliability.icc` defines the value); undefined when the
    residual (or, for ICC(1,·), the within-target) variance is 0."""
    table = np.asarray(table, dtype=float)
    n, k = table.shape
    between, within, raters, residual = mean_squares(table)
    error = within if form[4] == "1" else residual
    if error <= 1e-12 * max(between, 1.0):
        return undefined_interval(NO_RESIDUAL)
    if form[4] == "2":
        low, high = _absolute_single(n, k, between, raters, residual, confidence)
        if form[6] == "k":
            low, high = (k * r / (1 + (k - 1) * r) for r in (low, high))
        return float(low), float(high)
    df_error = n * (k - 1) if form[4] == "1" else (n - 1) * (k - 1)
    return _exact(between / error, n - 1, df_error, k if form[6] == "1" else None, confidence)


def _exact(
    ratio: float, df_targets: int, df_error: int, k: int | None, confidence: float
) -> Interval:
    """ICC(1,·) and ICC(3,·): the F ratio divided (lower) and multiplied (upper) by F
    quantiles, then (F − 1)/(F + k − 1) for a single rater, 1 − 1/F for the mean (k None)."""
    from scipy.stats import f

    tail = 1 - (1 - confidence) / 2
    lower = ratio / f.ppf(tail, df_targets, df_error)
    upper = ratio * f.ppf(tail, df_error, df_targets)
    if k is None:
        return 1 - 1 / lower, 1 - 1 / upper
    return (lower - 1) / (lower + k - 1), (upper - 1) / (upper + k - 1)


def _absolute_single(
    n: int, k: int, between: float, raters: float, residual: float, confidence: float
) -> tuple[float, float]:
    """McGraw & Wong's (1996) interval of ICC(A,1) = ICC(2,1): F quantiles with the
    Satterthwaite degrees of freedom v of a·MS_raters + b·MS_residual."""
    from scipy.stats import f

    estimate = (between - residual) / (between + (k - 1) * residual + k * (raters - residual) / n)
    tail = 1 - (1 - confidence) / 2
    a = k * estimate / (n * (1 - estimate))
    b = 1 + k * estimate * (n - 1) / (n * (1 - estimate))
    v = (a * raters + b * residual) ** 2 / (
        (a * raters) ** 2 / (k - 1) + (b * residual) ** 2 / ((n - 1) * (k - 1))
    )
    up, down = f.ppf(tail, n - 1, v), f.ppf(tail, v, n - 1)
    spread = k * raters + (k * n - k - n) * residual
    low = n * (between - up * residual) / (up * spread + n * between)
    high = n * (down * between - residual) / (spread + n * down * between)
    return low, high
