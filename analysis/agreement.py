"""Agreement between two judges (or a judge and people) item by item, in one record:
`judge_agreement` reports Krippendorff's α, an ICC, quadratic-weighted κ (jackknife
intervals on Fisher's z for α and κ, F-based ones for the ICC) and the exact and within-±1
rates (Wilson intervals; coefficients in `reliability`, intervals in `intervals` and
`icc_intervals`), the items the two differ on most, and notes where the
coefficients disagree (`agreement_notes`). Also Pearson r, and a correlation (Pearson, Spearman or
Kendall τ-b) with its bootstrap interval. Each is a number or `Undefined` with the reason.
`fleiss_kappa` and `icc3k` moved to `reliability` and are still importable from here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

import numpy as np

from personasim.analysis.agreement_notes import agreement_notes
from personasim.analysis.icc_intervals import icc_f_interval
from personasim.analysis.intervals import Interval, jackknife_z_interval, wilson_interval
from personasim.analysis.paired_resamples import (
    resampled_alpha,
    resampled_constant_rater,
    resampled_kappa,
)
from personasim.analysis.reliability import (
    IccForm,
    exact_agreement,
    fleiss_kappa,
    icc,
    icc3k,
    krippendorff_alpha,
    quadratic_kappa,
    within_agreement,
)
from personasim.analysis.resampling import resampled_ranks
from personasim.analysis.undefined import CONSTANT, Statistic, Undefined, stat_fields

__all__ = [
    "CorrelationInterval",
    "Method",
    "bootstrap_correlation",
    "constant_rater",
    "correlation_undefined",
    "correlations_by_row",
    "fleiss_kappa",
    "icc3k",
    "judge_agreement",
    "pearson",
    "resampled_correlations",
]

Method = Literal["spearman", "kendall", "pearson"]
"""The correlations `bootstrap_correlation` computes."""


def pearson(x: Sequence[float], y: Sequence[float]) -> Statistic:
    """Pearson r; undefined with fewer than 3 pairs or a constant side."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) < 3:
        return Undefined("fewer than 3 pairs")
    for label, side in (("x", a), ("y", b)):
        if np.all(side == side[0]):
            return Undefined(CONSTANT).within(label)
    return float(np.corrcoef(a, b)[0, 1])


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
        correlations_by_row(xs[None, :], ys[None, :], method)[0]
    )
    if isinstance(r, Undefined) or n < 3:
        why = r if isinstance(r, Undefined) else Undefined("fewer than 3 pairs")
        return CorrelationInterval(method, r, why, why, n, why)
    rows = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    chunk = max(1, 20_000_000 // (n * n))
    resampled = np.concatenate(
        [
            resampled_correlations(xs, ys, rows[i : i + chunk], method)
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


def correlations_by_row(x: np.ndarray, y: np.ndarray, method: Method) -> np.ndarray:
    """Row-wise correlation of two (samples × n) arrays, e.g. one row per bootstrap resample;
    NaN where a row is constant."""
    from scipy.stats import rankdata

    if method == "kendall":
        return _kendall_tau_b(x, y)
    if method == "spearman":
        x, y = rankdata(x, axis=1), rankdata(y, axis=1)
    dx = x - x.mean(axis=1, keepdims=True)
    dy = y - y.mean(axis=1, keepdims=True)
    denominator = np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (dx * dy).sum(axis=1) / denominator, np.nan)


def resampled_correlations(
    xs: np.ndarray, ys: np.ndarray, rows: np.ndarray, method: Method
) -> np.ndarray:
    """`correlations_by_row(xs[rows], ys[rows], method)`: the correlation of each resample
    (a row of indices), Spearman's ranked by counting (`resampled_ranks`, the same ranks)."""
    if method != "spearman":
        return correlations_by_row(xs[rows], ys[rows], method)
    ranks = (resampled_ranks(side, rows) for side in (xs, ys))
    return correlations_by_row(*ranks, "pearson")


def _kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's τ-b row-wise (as `scipy.stats.kendalltau`): concordance over pairs i < j."""
    sx = np.sign(x[:, :, None] - x[:, None, :])
    sy = np.sign(y[:, :, None] - y[:, None, :])
    concordance = (sx * sy).sum(axis=(1, 2))
    untied = np.abs(sx).sum(axis=(1, 2)) * np.abs(sy).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(untied > 0, concordance / np.sqrt(untied), np.nan)


JudgeLevel = Literal["ordinal", "interval"]

Pair = Callable[[np.ndarray], Statistic]
"""A statistic of an items × 2 table of paired ratings."""


def judge_agreement(
    first: Sequence[float | None],
    second: Sequence[float | None],
    *,
    items: Sequence[Any] | None = None,
    level: JudgeLevel = "ordinal",
    icc_form: IccForm | None = None,
    raters: tuple[str, str] = ("first", "second"),
    confidence: float = 0.95,
    n_differ: int = 10,
) -> dict[str, Any]:
    """How far two raters of the same items agree: the block `personasim rescore` reports
    between two judges, or between a judge and people (pass the human rating, or the humans'
    mean, as `second`: it is just another rater).

    `first[i]` and `second[i]` rate item `items[i]` (JSON-able ids, numpy scalars become Python
    ones; default: the position); None or NaN is a missing rating, and only items both rated
    count. `level` is the scale: "ordinal" for a
    rubric, "interval" for numeric scores. `icc_form` is the ICC the paper names (e.g.
    "ICC(3,k)"); None reports ICC(2,1) and ICC(2,k). The intervals hold their coverage from 10
    items on (docs/intervals.md): α's and κ's are jackknife intervals on Fisher's z scale with a
    t(n − 1) quantile, from the n samples that leave one item out; the ICCs' the F-based ones
    of Shrout & Fleiss (1979) and McGraw & Wong (1996); the two rates' Wilson intervals. None
    resamples: the record is a function of the ratings alone.

    Returns a JSON-able dict::

        {"raters": [first, second], "level": "ordinal",
         "n_items": 40,                      # items given
         "n_rated_by_both": 38,              # items every statistic is computed over
         "n_missing": {"first": 1, "second": 1},
         "confidence": 0.95,
         "statistics": {                     # in this order; ICC keys as chosen
             "krippendorff_alpha" | "quadratic_kappa": {
                 "label": "Krippendorff's alpha (ordinal)", "n": 38,
                 "interval": "jackknife z", "value": 0.81, "low": 0.70, "high": 0.89},
             "ICC(2,1)" | "ICC(2,k)": {"label": ..., "n": 38, "interval": "F", ...},
             "exact_agreement" | "within_1_agreement": {
                 "label": "share of items scored the same", "n": 38, "interval": "wilson",
                 "value": 0.84, "low": 0.70, "high": 0.93}},
         "notes": ["Krippendorff's alpha (ordinal) -0.32 and ICC(2,1) 0.01 differ by ..."],
         "most_different": [                 # largest |second - first| first, at most n_differ
             {"item": "q7", "first": 1.0, "second": 5.0, "difference": 4.0}]}

    An undefined value, low or high is null with "<name>_undefined": reason beside it (fewer
    than 2 items, constant ratings, one rater constant — α, the ICCs and κ measure agreement
    beyond chance, which a rater who never varies cannot show —, nothing rated by both, a
    coefficient undefined when some item is left out, perfect agreement somewhere in the
    jackknife, no residual variance for the ICC's F ratio).
    """
    if level not in get_args(JudgeLevel):
        raise ValueError(f"level must be ordinal or interval; got {level!r}")
    if len(first) != len(second):
        raise ValueError(f"the two raters must rate the same items ({len(first)} vs {len(second)})")
    names = (
        [i.item() if isinstance(i, np.generic) else i for i in items]
        if items is not None
        else list(range(len(first)))
    )
    if len(names) != len(first):
        raise ValueError(f"items names {len(names)} items but the raters rate {len(first)}")
    table = np.column_stack([np.asarray(first, dtype=float), np.asarray(second, dtype=float)])
    missing = np.isnan(table)
    paired = table[~missing.any(axis=1)]
    intervals = _Intervals(confidence, raters)
    statistics = {
        key: {"label": label, "n": len(paired), **intervals.interval(statistic, paired, kind)}
        for key, label, statistic, kind in _statistics(level, icc_form)
    }
    return {
        "raters": list(raters),
        "level": level,
        "n_items": len(table),
        "n_rated_by_both": len(paired),
        "n_missing": {"first": int(missing[:, 0].sum()), "second": int(missing[:, 1].sum())},
        "confidence": confidence,
        "statistics": statistics,
        "notes": agreement_notes(paired, statistics, raters, level),
        "most_different": _most_different(table, names, n_differ),
    }


Resampled = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""The same statistic on many samples (rows of item counts) at once, NaN where undefined."""

WILSON = "wilson"


@dataclass(frozen=True)
class _Jackknife:
    """κ or α: a jackknife interval on Fisher's z from the leave-one-out samples."""

    resampled: Resampled


@dataclass(frozen=True)
class _FBased:
    """An ICC form: its F-based interval from the table's mean squares."""

    form: str


Kind = _Jackknife | _FBased | str


def _statistics(level: JudgeLevel, icc_form: IccForm | None) -> list[tuple[str, str, Pair, Kind]]:
    """(key, label, statistic of the paired table, how its interval is computed — `WILSON`
    for a rate) for each statistic the record reports."""
    forms = [icc_form] if icc_form else ["ICC(2,1)", "ICC(2,k)"]
    return [
        (
            "krippendorff_alpha",
            f"Krippendorff's alpha ({level})",
            lambda x: krippendorff_alpha(x, level),
            _Jackknife(lambda x, w: resampled_alpha(x, w, level)),
        ),
        *[(form, f"{form}, {_ICC_WORDS[form[4]]}", *_icc_of(form)) for form in forms],
        (
            "quadratic_kappa",
            "Cohen's kappa, quadratic weights",
            lambda x: quadratic_kappa(*x.T),
            _Jackknife(resampled_kappa),
        ),
        (
            "exact_agreement",
            "share of items scored the same",
            lambda x: exact_agreement(*x.T),
            WILSON,
        ),
        (
            "within_1_agreement",
            "share of items scored within 1 point",
            lambda x: within_agreement(*x.T, 1.0),
            WILSON,
        ),
    ]


_ICC_WORDS = {
    "1": "one-way random",
    "2": "two-way random, absolute agreement",
    "3": "two-way mixed, consistency",
}


def _icc_of(form: str) -> tuple[Pair, _FBased]:
    return lambda x: icc(x, form), _FBased(form)  # type: ignore[arg-type]


def constant_rater(table: np.ndarray, raters: tuple[str, str]) -> Undefined | None:
    """Why agreement beyond chance is undefined when one rater gives every item the same
    score (ICC and κ are then 0 by construction, α whatever the other rater's spread makes
    it), or None."""
    for name, side in zip(raters, table.T, strict=True):
        if len(side) and np.all(side == side[0]):
            return Undefined(f"one rater is constant ({name} scores every item {side[0]:g})")
    return None


@dataclass(frozen=True)
class _Intervals:
    """Computes each statistic's value and interval fields for one record."""

    confidence: float
    raters: tuple[str, str]

    def interval(self, statistic: Pair, table: np.ndarray, kind: Kind) -> dict[str, Any]:
        """The statistic's value and interval fields (Wilson for a rate, F-based for an ICC,
        the jackknife on Fisher's z for α and κ)."""
        value = statistic(table)
        if kind == WILSON:
            if isinstance(value, Undefined):
                return {**_fields(value, value, value), "interval": WILSON}
            bounds = wilson_interval(round(value * len(table)), len(table), self.confidence)
            return {**_fields(value, *bounds), "interval": WILSON}
        if not isinstance(value, Undefined):
            value = constant_rater(table, self.raters) or value
        name = "F" if isinstance(kind, _FBased) else "jackknife z"
        return {**_fields(value, *self._bounds(value, table, kind)), "interval": name}

    def _bounds(self, value: Statistic, table: np.ndarray, kind: Kind) -> Interval:
        if isinstance(value, Undefined):
            return value, value
        if isinstance(kind, _FBased):
            return icc_f_interval(table, kind.form, self.confidence)
        jackknife = _leave_one_out(cast(_Jackknife, kind).resampled, table)
        return jackknife_z_interval(value, jackknife, self.confidence)


def _leave_one_out(resampled: Resampled, table: np.ndarray) -> np.ndarray:
    """The statistic on each of the n samples that leave one item out, NaN where a rater is
    constant; a block of rows at a time, so n × n never sits in memory."""
    n = len(table)
    block = max(1, 2_000_000 // max(n, 1))
    parts = []
    for start in range(0, n, block):
        rows = np.arange(start, min(start + block, n))
        weights = np.ones((len(rows), n))
        weights[np.arange(len(rows)), rows] = 0.0
        value = resampled(table, weights)
        parts.append(np.where(resampled_constant_rater(table, weights), np.nan, value))
    return np.concatenate(parts) if parts else np.zeros(0)


def _fields(value: Statistic, low: Statistic, high: Statistic) -> dict[str, Any]:
    return {
        **stat_fields("value", value),
        **stat_fields("low", low),
        **stat_fields("high", high),
    }


def _most_different(table: np.ndarray, names: list[Any], limit: int) -> list[dict[str, Any]]:
    """The items both rated whose two ratings differ, largest |difference| first (ties in
    the items' order), at most `limit`."""
    difference = table[:, 1] - table[:, 0]
    rated = np.flatnonzero(~np.isnan(difference) & (difference != 0))
    order = rated[np.argsort(-np.abs(difference[rated]), kind="stable")][:limit]
    return [
        {
            "item": names[i],
            "first": float(table[i, 0]),
            "second": float(table[i, 1]),
            "difference": float(difference[i]),
        }
        for i in order
    ]
