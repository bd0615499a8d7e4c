"""Rankings of levels and their agreement: Spearman ρ between two rankings (ties share their
average rank), and a permutation of a ranking whose ρ with it is as close as possible to a
target (to impose a prior of known strength)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np

from personasim.analysis.undefined import CONSTANT, Statistic, Undefined

__all__ = ["Ranking", "perturb_ranking", "ranking_spearman"]

# Up to this many levels perturb_ranking enumerates every permutation (8! = 40,320).
_EXHAUSTIVE_MAX_LEVELS = 8
_RANDOM_SEARCH_STEPS = 20_000


def _check_ranking(ranking: Sequence[str], name: str) -> None:
    if len(set(ranking)) != len(ranking):
        raise ValueError(f"{name} ranking repeats a level: {list(ranking)!r}")


Ranking = Sequence[str] | Mapping[str, float]
"""A ranking of levels: names best first (strict), or each level's score (higher ranks
first; equal scores tie)."""


def _scores(ranking: Ranking, name: str) -> dict[str, float]:
    """Level → score, higher is better; a list's first level scores highest."""
    if isinstance(ranking, Mapping):
        return {str(level): float(score) for level, score in ranking.items()}
    _check_ranking(ranking, name)
    return {level: -float(i) for i, level in enumerate(ranking)}


def ranking_spearman(belief: Ranking, behaviour: Ranking) -> Statistic:
    """Spearman ρ between two rankings of levels — the paper's ρ_t^(S).

    Each side is a list of level names (best first) or a mapping of level → score, e.g. the
    behavioural mean per level; tied scores share their average rank (scipy's `spearmanr`),
    so levels whose means are equal are not ordered alphabetically into a ρ of ±1.

    Only levels present in both rankings count: a level missing from either side is dropped
    (an LLM may omit or invent a level, and the paper's ρ needs a common set). Undefined with
    fewer than two shared levels, or when either side ranks them all equal; with exactly two
    distinct levels it is ±1. A list that repeats a level is not a ranking: ValueError.
    """
    from scipy.stats import spearmanr

    first, second = _scores(belief, "belief"), _scores(behaviour, "behaviour")
    shared = [level for level in first if level in second]
    if len(shared) < 2:
        return Undefined("fewer than 2 shared levels")
    x = np.array([first[level] for level in shared])
    y = np.array([second[level] for level in shared])
    for label, side in (("belief", x), ("behaviour", y)):
        if np.all(side == side[0]):
            return Undefined(CONSTANT).within(label)
    return float(spearmanr(x, y).statistic)


def _rho_of(positions: np.ndarray) -> np.ndarray:
    """ρ of each row (a permutation of 0..k−1) with the identity: 1 − 6Σd²/(k(k²−1))."""
    k = positions.shape[-1]
    d2 = ((positions - np.arange(k)) ** 2).sum(axis=-1)
    return 1.0 - 6.0 * d2 / (k * (k * k - 1))


def perturb_ranking(
    ranking: Sequence[str],
    target_rho: float,
    rng: np.random.Generator,
    tolerance: float = 0.05,
) -> tuple[list[str], float]:
    """A permutation of `ranking` whose Spearman ρ with it is as close to `target_rho` as found.

    Builds §4.3's imposed priors ("constructed to have ρ = 0.80 or ρ = 0.20" with the elicited
    beliefs). Few levels admit few ρ values (k=2: ±1; k=3: 1, .5, −.5, −1), so the result is
    the nearest attainable and the caller should record the achieved ρ returned with it.

    Up to 8 levels every permutation is scored and one of the closest is drawn uniformly with
    `rng`; `tolerance` is not used there. Beyond 8 levels a seeded random search (random
    transpositions kept when they do not move ρ away from the target) stops once within
    `tolerance` or after a bounded number of steps, returning the best permutation found.
    Fewer than two levels (no ρ), duplicate levels or a target outside [−1, 1] raise
    ValueError.
    """
    levels = list(ranking)
    _check_ranking(levels, "input")
    k = len(levels)
    if k < 2:
        raise ValueError(f"need at least 2 levels to perturb a ranking, got {k}")
    if not -1.0 <= target_rho <= 1.0:
        raise ValueError(f"target_rho must lie in [-1, 1], got {target_rho}")

    if k <= _EXHAUSTIVE_MAX_LEVELS:
        perms = np.array(list(itertools.permutations(range(k))), dtype=np.int64)
        rhos = _rho_of(perms)
        dist = np.abs(rhos - target_rho)
        best = np.flatnonzero(dist <= dist.min() + 1e-12)
        choice = int(best[rng.integers(len(best))])
        order, rho = perms[choice], float(rhos[choice])
    else:
        order = rng.permutation(k)
        rho = float(_rho_of(order))
        for _ in range(_RANDOM_SEARCH_STEPS):
            if abs(rho - target_rho) <= tolerance:
                break
            i, j = rng.choice(k, size=2, replace=False)
            candidate = order.copy()
            candidate[i], candidate[j] = candidate[j], candidate[i]
            candidate_rho = float(_rho_of(candidate))
            if abs(candidate_rho - target_rho) <= abs(rho - target_rho):
                order, rho = candidate, candidate_rho
    return [levels[i] for i in order], rho
