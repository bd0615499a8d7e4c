"""Uncertainty of career-chat's group distances (issue 13, item 4): bootstrap intervals and a
permutation null for "ratio to baseline".

The intervals are t intervals on the log scale, centred on the point estimate, their width
the bootstrap's spread of log(value) (`analysis.intervals.log_normal_interval`; t with m − 1
degrees of freedom, m the smallest group's users). The resamples
are biased: repeated users pull group centroids apart, which inflates distances and baselines
unequally, so percentile intervals can miss their own estimate (BA_dialogue job Creative vs
Health: ratio 8.324, percentile interval [3.69, 8.08]). An interval centred on the estimate
always contains it; its width still comes from the same resamples.

BA_dialogue baselines are ~1e-3, so a ratio swings with the sample; a point estimate alone says
little. Every resample needs a JS centroid per group and question, which the L-BFGS optimiser
of `analysis.divergences.js_centroid` makes far too slow for thousands of resamples. Here the
centroids of all resamples are computed at once by Nielsen's (2020) concave–convex fixed point
c_k ∝ Π_i ((c_k + p_ik)/2)^(w_i / Σw), vectorised over resamples and groups, with each resample
a weight vector over users (bootstrap: multinomial counts; permutation: shuffled labels, unit
weights). Its fixed point is the same centroid (tested against `group_distances`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import combinations

import numpy as np

from personasim.analysis.divergences import js_rows
from personasim.analysis.intervals import log_normal_interval
from personasim.analysis.resampling import stratified_bootstrap_weights
from personasim.analysis.undefined import Statistic, Undefined
from personasim.scenarios.career_chat.distances import GroupDistances

__all__ = [
    "BOOTSTRAP_LEVEL",
    "GroupData",
    "Uncertainty",
    "batched_distances",
    "group_data",
    "group_uncertainty",
]

BOOTSTRAP_LEVEL = 0.95
"""Two-sided: the log-scale intervals' level, and the permutation null's central share."""

_NO_ANSWERS = Undefined("no answers to resample")
PERMUTATIONS_OFF = "permutations off (0 permutations)"
_TOL = 1e-10
_MAX_ITER = 2000


@dataclass(frozen=True)
class GroupData:
    """One grouping and format: `dists[q, u]` user u's distribution for question q (zeros and
    `answered[q, u]` False where u did not answer), `labels[u]` the group index of user u."""

    groups: list[str]
    labels: np.ndarray
    dists: np.ndarray
    answered: np.ndarray


def group_data(
    responses: Mapping[str, Mapping[str, Mapping[str, Sequence[float]]]],
) -> GroupData:
    """From `responses[group][question][user]` = that user's distribution."""
    groups = sorted(responses)
    users = sorted({u for per in responses.values() for d in per.values() for u in d})
    questions = sorted({q for per in responses.values() for q in per})
    n_options = len(next(iter(next(iter(next(iter(responses.values())).values())).values())))
    index = {u: i for i, u in enumerate(users)}
    labels = np.full(len(users), -1)
    dists = np.zeros((len(questions), len(users), n_options))
    answered = np.zeros((len(questions), len(users)), dtype=bool)
    for g, group in enumerate(groups):
        for q, question in enumerate(questions):
            for user, dist in responses[group].get(question, {}).items():
                labels[index[user]] = g
                dists[q, index[user]] = dist
                answered[q, index[user]] = True
    return GroupData(groups, labels, dists, answered)


def _centroids(points: np.ndarray, weights: np.ndarray, labels: np.ndarray, n: int) -> np.ndarray:
    """Weighted JS centroids, batched: `points` (U, K), user u's `weights[r, u]` and group
    `labels[r, u]` in resample r → centroids (R, n, K).

    A group with no weight gets NaN (no centroid). Options no weighted point supports stay 0
    (any mass there only adds divergence). The fixed point is accelerated by SQUAREM (Varadhan
    & Roland 2008, scheme S3): two plain steps give an extrapolation, taken where it stays a
    distribution and otherwise replaced by the plain step, then one plain step stabilises it;
    it stops when a plain step moves no coordinate by more than 1e-10."""
    member = (labels[:, None, :] == np.arange(n)[None, :, None]) * weights[:, None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        w = member / member.sum(axis=-1, keepdims=True)  # (R, n, U)
        c = w @ points  # the mean, the fixed point's start
    support = c > 0
    rows = np.arange(len(labels))[:, None]
    step = partial(
        _fixed_point_step,
        points=points,
        w=np.nan_to_num(w),
        labels=labels,
        rows=rows,
        support=support,
    )
    return _squarem(step, c, support)


def _squarem(
    step: Callable[[np.ndarray], np.ndarray], c: np.ndarray, support: np.ndarray
) -> np.ndarray:
    """Iterate the fixed-point `step` from `c` with SQUAREM extrapolation (see `_centroids`)."""
    for _ in range(_MAX_ITER // 3):
        c1 = step(c)
        if _settled(c, c1):
            return c1
        c2 = step(c1)
        r, v = c1 - c, c2 - 2 * c1 + c
        with np.errstate(invalid="ignore", divide="ignore"):
            alpha = -np.sqrt(_sq(r) / _sq(v))  # (R, n, 1)
        alpha = np.where(np.isfinite(alpha), np.minimum(alpha, -1.0), -1.0)
        jump = c - 2 * alpha * r + alpha**2 * v
        usable = np.all((jump >= 0) | ~support, axis=-1, keepdims=True)
        jump = np.where(usable, np.where(support, np.maximum(jump, 0.0), 0.0), c2)
        with np.errstate(invalid="ignore"):
            jump /= jump.sum(axis=-1, keepdims=True)
        c = step(jump)
    return c


def _block_centroids(points: np.ndarray, weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """`_centroids` when every resample's users are sorted by group into the same blocks
    (`counts[g]` users each): `points` (U, K) or (R, U, K), `weights` (R, U) → (R, G, K).
    A user's own centroid is a repeat of its block's and group sums are `reduceat`s, so a step
    costs R·U·K instead of R·G·U·K and needs no gather."""
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    total = np.add.reduceat(weights, starts, axis=1)  # (R, G)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.nan_to_num(weights / np.repeat(total, counts, axis=1))[..., None]  # (R, U, 1)
    c = np.add.reduceat(share * points, starts, axis=1)  # the mean, the start
    c[total == 0] = np.nan
    support = c > 0

    def step(current: np.ndarray) -> np.ndarray:
        m = (np.repeat(np.nan_to_num(current), counts, axis=1) + points) / 2
        logm = np.log(m, out=np.zeros_like(m), where=m > 0)  # 0·log 0 = 0
        new = np.where(support, np.exp(np.add.reduceat(share * logm, starts, axis=1)), 0.0)
        with np.errstate(invalid="ignore"):
            return new / new.sum(axis=-1, keepdims=True)

    return _squarem(step, c, support)


def _sq(x: np.ndarray) -> np.ndarray:
    return np.nansum(x * x, axis=-1, keepdims=True)


def _settled(old: np.ndarray, new: np.ndarray) -> bool:
    return not np.isfinite(new).any() or bool(np.nanmax(np.abs(new - old)) < _TOL)


def _fixed_point_step(
    c: np.ndarray,
    points: np.ndarray,
    w: np.ndarray,
    labels: np.ndarray,
    rows: np.ndarray,
    support: np.ndarray,
) -> np.ndarray:
    """One concave–convex step c_k ∝ Π_i ((c_k + p_ik)/2)^(w_i/Σw). Each user's log term is
    taken at its own group's centroid only, then summed into groups."""
    own = np.nan_to_num(c)[rows, labels]  # (R, U, K)
    m = (own + points) / 2
    logm = np.log(m, out=np.zeros_like(m), where=m > 0)  # 0·log 0 = 0
    new = np.where(support, np.exp(w @ logm), 0.0)  # (R, n, U) @ (R, U, K)
    with np.errstate(invalid="ignore"):
        return new / new.sum(axis=-1, keepdims=True)


def batched_distances(
    data: GroupData, weights: np.ndarray, labels: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Pair distances (R, n_pairs) and baselines (R,) for R resamples at once.

    `weights[r, u]` is user u's weight in resample r, `labels[r, u]` its group; as in
    `career_chat.group_distances`: a pair's distance is the mean over the questions both
    groups answer of JSD between their centroids, the baseline the mean over answered
    (group, question) of JSD(group centroid ‖ centroid of all answers). NaN where undefined.
    """
    n_groups = len(data.groups)
    n_r = len(weights)
    pairs = list(combinations(range(n_groups), 2))
    pair_sum = np.zeros((n_r, len(pairs)))
    pair_n = np.zeros((n_r, len(pairs)))
    base_sum = np.zeros(n_r)
    base_n = np.zeros(n_r)
    member = labels[:, None, :] == np.arange(n_groups)[None, :, None]  # (R, G, U)
    blocks = _blocks(labels, n_groups)
    for q in range(len(data.dists)):
        w = weights * data.answered[q]
        if blocks is None:
            cents = _centroids(data.dists[q], w, labels, n_groups)  # (R, G, K)
            pooled = _centroids(data.dists[q], w, np.zeros_like(labels), 1)[:, 0]  # (R, K)
        else:
            order, counts = blocks
            points = data.dists[q][order]  # (R, U, K): each resample's users by group
            cents = _block_centroids(points, np.take_along_axis(w, order, 1), counts)
            pooled = _pooled(data.dists[q], w)
        has = (member * w[:, None, :]).sum(axis=-1) > 0  # (R, G)
        to_all = js_rows(np.nan_to_num(cents), np.nan_to_num(pooled)[:, None, :])
        base_sum += np.where(has, to_all, 0.0).sum(axis=1)
        base_n += has.sum(axis=1)
        for k, (a, b) in enumerate(pairs):
            both = has[:, a] & has[:, b]
            d = js_rows(np.nan_to_num(cents[:, a]), np.nan_to_num(cents[:, b]))
            pair_sum[:, k] += np.where(both, d, 0.0)
            pair_n[:, k] += both
    with np.errstate(invalid="ignore", divide="ignore"):
        return pair_sum / pair_n, base_sum / base_n


def _blocks(labels: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Each resample's users sorted by group, when every resample has the same group sizes
    (always so for stratified bootstrap and label permutations): (order (R, U), counts)."""
    counts = np.stack([np.bincount(row, minlength=n_groups) for row in labels])
    if len(labels) == 0 or np.any(counts != counts[0]) or np.any(counts[0] == 0):
        return None
    return np.argsort(labels, axis=1, kind="stable"), counts[0]


def _pooled(points: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The centroid of all answers per resample (R, K); computed once when every resample
    weighs the users alike (label permutations leave the pool unchanged)."""
    if np.all(weights == weights[0]):
        one = _block_centroids(points, weights[:1], np.array([points.shape[0]]))[:, 0]
        return np.repeat(one, len(weights), axis=0)
    return _block_centroids(points, weights, np.array([points.shape[0]]))[:, 0]


@dataclass
class Uncertainty:
    """Per pair (by group names): log-scale intervals of distance and ratio, the permutation
    p-value of the ratio and the central 95% of its permutation null (what chance gives); the
    baseline's interval. Undefined entries carry the reason."""

    distance_ci: dict[tuple[str, str], Statistic | list[float]] = field(default_factory=dict)
    ratio_ci: dict[tuple[str, str], Statistic | list[float]] = field(default_factory=dict)
    ratio_p: dict[tuple[str, str], Statistic] = field(default_factory=dict)
    ratio_null: dict[tuple[str, str], Statistic | list[float]] = field(default_factory=dict)
    baseline_ci: Statistic | list[float] = _NO_ANSWERS


def _interval(
    estimate: Statistic, values: np.ndarray, what: str, smallest: int
) -> Statistic | list[float]:
    """The log-scale interval of `estimate` from its bootstrap `values` (the smallest group
    resampled has `smallest` users), as [low, high]."""
    bad = int(np.sum(~np.isfinite(values)))
    if len(values) == 0:
        return Undefined("bootstrap off (0 resamples)")
    if bad:
        return Undefined(f"{what} undefined in {bad} of {len(values)} resamples")
    low, high = log_normal_interval(estimate, values, smallest, BOOTSTRAP_LEVEL)
    return low if isinstance(low, Undefined) else [float(low), float(high)]


def _null_band(values: np.ndarray) -> Statistic | list[float]:
    """The central `BOOTSTRAP_LEVEL` share of the permutation null: where chance puts it."""
    bad = int(np.sum(~np.isfinite(values)))
    if len(values) == 0:
        return Undefined(PERMUTATIONS_OFF)
    if bad:
        return Undefined(f"the ratio undefined in {bad} of {len(values)} resamples")
    alpha = (1 - BOOTSTRAP_LEVEL) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha])
    return [float(low), float(high)]


def group_uncertainty(
    data: GroupData,
    observed: GroupDistances,
    n_bootstrap: int,
    n_permutations: int,
    seed: int | Sequence[int],
    budget: int = 2_000_000,
) -> Uncertainty:
    """Bootstrap intervals (`n_bootstrap` resamples of users within groups) for every pair's
    distance and ratio and for the baseline, each around its `observed` value on the log
    scale, and a permutation p-value for each pair's ratio: group labels shuffled over users
    `n_permutations` times, p = (1 + #{ratio* ≥ observed}) / (1 + n_permutations). Seeded;
    0 resamples → undefined with the reason."""
    rng = np.random.default_rng(seed)
    chunk = max(1, budget // (data.dists.shape[1] * data.dists.shape[2] * len(data.groups)))
    names = [(data.groups[a], data.groups[b]) for a, b in combinations(range(len(data.groups)), 2)]
    result = Uncertainty()
    boot_w = stratified_bootstrap_weights(data.labels, n_bootstrap, rng)
    boot_d, boot_b = _in_chunks(data, boot_w, np.tile(data.labels, (n_bootstrap, 1)), chunk)
    perm_labels = np.array([rng.permutation(data.labels) for _ in range(n_permutations)])
    perm_labels = perm_labels.reshape(n_permutations, len(data.labels))
    perm_d, perm_b = _in_chunks(data, np.ones(perm_labels.shape), perm_labels, chunk)
    # the observed labels through the same computation as the permuted ones: a permutation
    # that reproduces them must tie with the observed value, not differ in the last digits
    own_d, own_b = _in_chunks(data, np.ones((1, len(data.labels))), data.labels[None, :], 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot_r = np.where(boot_b[:, None] > 0, boot_d / boot_b[:, None], np.nan)
        perm_r = np.where(perm_b[:, None] > 0, perm_d / perm_b[:, None], np.nan)
        own_r = np.where(own_b[:, None] > 0, own_d / own_b[:, None], np.nan)[0]
    smallest = int(np.unique(data.labels, return_counts=True)[1].min(initial=len(data.labels)))
    result.baseline_ci = _interval(observed.baseline, boot_b, "the baseline", smallest)
    for k, pair in enumerate(names):
        distance = observed.pairs.get(pair, Undefined("no question both groups answered"))
        ratio = observed.ratio(pair) if pair in observed.pairs else distance
        result.distance_ci[pair] = _interval(distance, boot_d[:, k], "the distance", smallest)
        result.ratio_ci[pair] = _interval(ratio, boot_r[:, k], "the ratio", smallest)
        result.ratio_p[pair] = _p_value(perm_r[:, k], ratio, float(own_r[k]))
        result.ratio_null[pair] = _null_band(perm_r[:, k])
    return result


def _in_chunks(
    data: GroupData, weights: np.ndarray, labels: np.ndarray, chunk: int
) -> tuple[np.ndarray, np.ndarray]:
    """`batched_distances` `chunk` resamples at a time (bounded memory: R·G·U floats)."""
    n_pairs = len(data.groups) * (len(data.groups) - 1) // 2
    if len(weights) == 0:
        return np.zeros((0, n_pairs)), np.zeros(0)
    parts = [
        batched_distances(data, weights[i : i + chunk], labels[i : i + chunk])
        for i in range(0, len(weights), chunk)
    ]
    return np.concatenate([d for d, _ in parts]), np.concatenate([b for _, b in parts])


def _p_value(null: np.ndarray, observed: Statistic | None, same_path: float) -> Statistic:
    """(1 + #{null ≥ observed}) / (1 + #null), `observed` as `same_path` computes it (the
    permutations' own code on the observed labels; `observed` only says whether it is defined)."""
    if len(null) == 0:
        return Undefined(PERMUTATIONS_OFF)
    if observed is None or isinstance(observed, Undefined):
        return Undefined("the observed ratio is undefined")
    null = null[np.isfinite(null)]
    if len(null) == 0:
        return Undefined("the ratio is undefined in every permutation")
    if not np.isfinite(same_path):
        return Undefined("the observed ratio is undefined")
    # a relative tolerance: a permutation reproducing the observed labels ties with it exactly
    at_least = np.sum(null >= same_path * (1 - 1e-9))
    return float((1 + at_least) / (1 + len(null)))
