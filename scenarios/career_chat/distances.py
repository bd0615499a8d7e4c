"""Career chat's distances (seed 003, §5.1, Table 2): between groups, the mean JSD of their
answer centroids and its baseline (each group to all); across formats, the random-pairing
EMD baseline of profile against dialogue answers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from personasim.analysis.divergences import emd_ordinal, js_centroid, jsd
from personasim.analysis.stats import ratio_of
from personasim.analysis.undefined import Statistic, Undefined

__all__ = ["GroupDistances", "group_distances", "random_pairing_emd"]


@dataclass(frozen=True)
class GroupDistances:
    """Table 2 for one grouping: pairwise distances, the baseline, and their ratios."""

    groups: dict[str, int]
    pairs: dict[tuple[str, str], float]
    baseline: Statistic
    centroids_failed: int

    def ratio(self, pair: tuple[str, str]) -> Statistic:
        """distance / baseline; undefined with no baseline or a zero one."""
        return ratio_of(self.pairs[pair], self.baseline)


def group_distances(
    responses: Mapping[str, Mapping[str, Sequence[Sequence[float]]]],
) -> GroupDistances:
    """`responses[group][question]` = that group's distributions for the question.

    Distance(g, g′) = mean over questions both answer of JSD(c_g ‖ c_g′); the baseline is the
    mean over questions and groups of JSD(c_g ‖ c_all), c_all the centroid of all responses.
    """
    failed = 0
    centroids: dict[str, dict[str, np.ndarray]] = {}
    pooled: dict[str, list[Sequence[float]]] = {}
    for group, by_question in responses.items():
        centroids[group] = {}
        for question, dists in by_question.items():
            if not dists:
                continue
            centroid = js_centroid(dists)
            failed += not centroid.converged
            centroids[group][question] = centroid.distribution
            pooled.setdefault(question, []).extend(dists)
    overall = {q: js_centroid(d) for q, d in pooled.items()}
    failed += sum(not c.converged for c in overall.values())
    pairs = {}
    for a, b in combinations(sorted(centroids), 2):
        shared = sorted(set(centroids[a]) & set(centroids[b]))
        if shared:
            pairs[(a, b)] = float(np.mean([jsd(centroids[a][q], centroids[b][q]) for q in shared]))
    to_global = [
        jsd(c, overall[q].distribution) for per in centroids.values() for q, c in per.items()
    ]
    sizes = {g: max((len(d) for d in per.values()), default=0) for g, per in responses.items()}
    baseline = float(np.mean(to_global)) if to_global else Undefined("no answers")
    return GroupDistances(sizes, pairs, baseline, failed)


def random_pairing_emd(
    profile: Sequence[Sequence[int]],
    dialogue: Sequence[Sequence[int]],
    rng: np.random.Generator,
    repeats: int = 100,
) -> Statistic:
    """Mean EMD of user i's profile answers with another user's dialogue answers (Table 2's
    baseline), averaged over `repeats` seeded random derangements; undefined with fewer than
    two users (nobody to pair with)."""
    n = len(profile)
    if n < 2:
        return Undefined("fewer than 2 users")
    values = []
    for _ in range(repeats):
        shift = rng.permutation(n)
        partner = np.roll(shift, 1)  # a cyclic shift of a random order never fixes a point
        order = dict(zip(shift.tolist(), partner.tolist(), strict=True))
        values.extend(emd_ordinal(profile[i], dialogue[order[i]]) for i in range(n))
    return float(np.mean(values))
