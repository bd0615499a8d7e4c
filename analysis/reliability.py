"""Reliability coefficients over a units × raters table of ratings: Krippendorff's α (nominal,
ordinal, interval; missing ratings allowed), the intraclass correlations of Shrout & Fleiss
(1979) / McGraw & Wong (1996), Fleiss' κ, quadratic-weighted Cohen's κ for two raters, and the
plain exact and within-±1 agreement rates. Each is a number or `Undefined` with the reason."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, get_args

import numpy as np

from personasim.analysis.undefined import CONSTANT, NO_VALUES, Statistic, Undefined

__all__ = [
    "ICC_FORMS",
    "IccForm",
    "Level",
    "exact_agreement",
    "fleiss_kappa",
    "icc",
    "icc3k",
    "krippendorff_alpha",
    "quadratic_kappa",
    "ratings_matrix",
    "within_agreement",
]

Level = Literal["nominal", "ordinal", "interval"]
"""Krippendorff's levels of measurement: which differences between values count, how much."""

IccForm = Literal["ICC(1,1)", "ICC(1,k)", "ICC(2,1)", "ICC(2,k)", "ICC(3,1)", "ICC(3,k)"]
"""Shrout & Fleiss's names: 1 one-way random, 2 two-way random (absolute agreement), 3 two-way
mixed (consistency); 1 a single rater's reliability, k the reliability of the k raters' mean."""

ICC_FORMS: tuple[str, ...] = get_args(IccForm)

NO_PAIRS = "no unit rated by 2 raters"
ONE_PAIR = "fewer than 2 units rated by 2 raters"


def ratings_matrix(ratings: Any) -> np.ndarray:
    """A units × raters float array from nested sequences, None and NaN both as NaN (missing)."""
    try:
        matrix = np.asarray(ratings, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"ratings must be a units × raters table of numbers: {error}") from None
    if matrix.size == 0:
        return matrix.reshape(len(matrix), 0)
    if matrix.ndim != 2:
        raise ValueError("ratings must be a units × raters table (rows of equal length)")
    return matrix


def krippendorff_alpha(ratings: Any, level: Level = "ordinal") -> Statistic:
    """Krippendorff's α of a units × raters table, missing ratings as None or NaN.

    α = 1 − D_o / D_e over the coincidence matrix of the pairable values (units with at least
    2 ratings), as in Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability". The
    ordinal metric uses the values' ranks by frequency, the interval metric their squared
    difference. Undefined without values, with fewer than 2 units rated twice (one unit gives
    α = 0 whatever the ratings), or when every pairable value is the same (no expected
    disagreement).
    """
    if level not in get_args(Level):
        raise ValueError(f"level must be one of {', '.join(get_args(Level))}; got {level!r}")
    x = ratings_matrix(ratings)
    present = ~np.isnan(x)
    if not present.any():
        return Undefined(NO_VALUES)
    values, index = np.unique(x[present], return_inverse=True)
    counts = np.zeros((len(x), len(values)))  # unit × value: how many raters gave it
    np.add.at(counts, (np.nonzero(present)[0], index), 1.0)
    m = counts.sum(axis=1)
    counts, m = counts[m >= 2], m[m >= 2]
    if len(m) < 2:
        return Undefined(ONE_PAIR if len(m) else NO_PAIRS)
    scaled = counts / (m - 1)[:, None]
    coincidence = scaled.T @ counts - np.diag(scaled.sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    delta = _distance(values, n_c, level)
    expected = float(n_c @ delta @ n_c)
    if expected <= 0:
        return Undefined(CONSTANT)
    return 1.0 - (n - 1) * float((coincidence * delta).sum()) / expected


def _distance(values: np.ndarray, n_c: np.ndarray, level: Level) -> np.ndarray:
    """δ² between every two values: nominal 0/1, interval (c − k)², ordinal
    (Σ_{g=c..k} n_g − (n_c + n_k) / 2)²."""
    if level == "nominal":
        return 1.0 - np.eye(len(values))
    if level == "interval":
        return (values[:, None] - values[None, :]) ** 2
    cumulative = np.concatenate([[0.0], np.cumsum(n_c)])
    low = np.minimum.outer(np.arange(len(values)), np.arange(len(values)))
    high = np.maximum.outer(np.arange(len(values)), np.arange(len(values)))
    between = cumulative[high + 1] - cumulative[low]
    return (between - (n_c[:, None] + n_c[None, :]) / 2) ** 2


def icc(ratings: Any, form: IccForm = "ICC(2,1)") -> Statistic:
    """An intraclass correlation of a targets × raters table (Shrout & Fleiss 1979, Table 1),
    from the two-way ANOVA mean squares over the targets that every rater rated.

    Undefined with fewer than 2 complete targets or 2 raters, or when the targets' means are
    all equal (no variance between targets: nothing to be reliable about).
    """
    if form not in ICC_FORMS:
        raise ValueError(f"form must be one of {', '.join(ICC_FORMS)}; got {form!r}")
    x = ratings_matrix(ratings)
    if x.size == 0 or np.isnan(x).all():
        return Undefined(NO_VALUES)
    x = x[~np.isnan(x).any(axis=1)]
    n, k = x.shape
    if n < 2:
        return Undefined("fewer than 2 targets rated by every rater")
    if k < 2:
        return Undefined("fewer than 2 raters")
    row_means = x.mean(axis=1)
    if np.allclose(row_means, row_means[0], rtol=1e-12, atol=1e-12):
        return Undefined("no variance between targets")
    bms, jms, ems, wms = _mean_squares(x)
    kind, single = form[4], form[6] == "1"
    if kind == "1":
        return float((bms - wms) / (bms + (k - 1) * wms if single else bms))
    if kind == "2":
        if single:
            return float((bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n))
        return float((bms - ems) / (bms + (jms - ems) / n))
    return float((bms - ems) / (bms + (k - 1) * ems if single else bms))


def _mean_squares(x: np.ndarray) -> tuple[float, float, float, float]:
    """Between-targets, between-judges, residual and within-target mean squares."""
    n, k = x.shape
    grand = x.mean()
    bss = k * ((x.mean(axis=1) - grand) ** 2).sum()
    jss = n * ((x.mean(axis=0) - grand) ** 2).sum()
    ess = ((x - grand) ** 2).sum() - bss - jss
    return (
        bss / (n - 1),
        jss / (k - 1),
        ess / ((n - 1) * (k - 1)),
        (jss + ess) / (n * (k - 1)),
    )


def icc3k(ratings: Sequence[Sequence[float]]) -> Statistic:
    """ICC(3,k) of Shrout & Fleiss (1979): two-way mixed, consistency, mean of k raters;
    (BMS − EMS) / BMS. `icc(ratings, "ICC(3,k)")` with the reasons career chat reports."""
    x = np.asarray(ratings, dtype=float)
    if x.size == 0:
        return Undefined(NO_VALUES)
    n, k = x.shape
    if n < 2:
        return Undefined("fewer than 2 targets")
    if k < 2:
        return Undefined("fewer than 2 raters")
    return icc(x, "ICC(3,k)")


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


def _pairs(first: Sequence[float | None], second: Sequence[float | None]) -> np.ndarray:
    """The (first, second) rows where both rated; raises when the two do not pair up."""
    if len(first) != len(second):
        raise ValueError(f"the two raters must rate the same items ({len(first)} vs {len(second)})")
    x = np.column_stack([np.asarray(first, dtype=float), np.asarray(second, dtype=float)])
    return x[~np.isnan(x).any(axis=1)]


def quadratic_kappa(first: Sequence[float | None], second: Sequence[float | None]) -> Statistic:
    """Cohen's κ with quadratic weights over the items both raters rated:
    1 − Σ (a − b)² / Σ_{i,j} (a_i − b_j)² · n / n², i.e. observed over chance-expected squared
    disagreement from the two raters' own marginals.

    Weights are the squared difference of the values themselves, so on a scale of consecutive
    integers this equals scikit-learn's `cohen_kappa_score(weights="quadratic")`. Undefined with
    fewer than 2 pairs or when the chance-expected disagreement is 0 (both raters give one and
    the same value throughout).
    """
    x = _pairs(first, second)
    if len(x) == 0:
        return Undefined(NO_VALUES)
    if len(x) < 2:
        return Undefined("fewer than 2 pairs")
    a, b = x[:, 0], x[:, 1]
    expected = float(((a[:, None] - b[None, :]) ** 2).mean())
    if expected == 0:
        return Undefined(CONSTANT)
    return 1.0 - float(((a - b) ** 2).mean()) / expected


def exact_agreement(first: Sequence[float | None], second: Sequence[float | None]) -> Statistic:
    """The share of items both rated on which the two give the same value."""
    return within_agreement(first, second, 0.0)


def within_agreement(
    first: Sequence[float | None], second: Sequence[float | None], tolerance: float = 1.0
) -> Statistic:
    """The share of items both rated on which the two differ by at most `tolerance` (±1 on a
    rubric scale by default)."""
    x = _pairs(first, second)
    if len(x) == 0:
        return Undefined(NO_VALUES)
    return float(np.mean(np.abs(x[:, 0] - x[:, 1]) <= tolerance))
