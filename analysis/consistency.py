"""Belief–behaviour consistency metrics (seed 001, §4–§5).

Population level (§4.1): an elicited belief ranking π^(S) and effect size η̂² are compared
with the behavioural ranking π* and η² (`rank_levels` / `eta_squared` in `analysis.stats`) by
ρ = Spearman(π^(S), π*) (`ranking_spearman`) and Δη² = |η̂² − η²|. Table 3 reports medians
over attributes (`median_of_defined`). Imposed priors for §4.3 are permutations of the elicited
ranking with a target ρ of 0.8 (weak) or 0.2 (strong) (`perturb_ranking`). Individual level
(§5.2): forecast MAE per forecast horizon (`mae_by_horizon`).

Elicited effect sizes come in two shapes:

* CTX+$ (Appendix C.2.2) states a mean and sd per level for 100 individuals per group
  (prompt C.1.3); `eta_squared_from_group_stats` recovers the one-way ANOVA η² from them,
  which reproduces the sample output's "omnibus_effect_size": 0.2335.
* NOCTX+TR / CTX+TR (Appendix C.2.1) may state a word. `effect_size_value` maps words to the
  midpoint of Cohen's η² band, as the paper's sample output reads them:

  ======================================  ===========  ===============================
  word (case/whitespace-insensitive)      η²           band
  ======================================  ===========  ===============================
  "negligible", "none", "very small"      0.005        [0, .01)
  "small"                                 0.035        [.01, .06) — C.2.1 "1% and 6%"
  "medium", "moderate"                    0.10         [.06, .14) — C.2.1 "0.10"
  "large"                                 0.20         [.14, .26)
  ======================================  ===========  ===============================

  "large" is open-ended in Cohen's convention; we close it at .26 so that its band is as wide
  as "medium"'s (.08) and take that band's midpoint. Numbers and numeric strings ("0.12",
  "12%") pass through, percentages converted to fractions.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from scipy.stats import spearmanr

from personasim.analysis.undefined import CONSTANT, NO_VALUES, SINGLE_LEVEL, Statistic, Undefined

__all__ = [
    "QUALITATIVE_ETA_SQUARED",
    "Ranking",
    "effect_size_value",
    "eta_squared_from_group_stats",
    "mae_by_horizon",
    "median_of_defined",
    "perturb_ranking",
    "ranking_spearman",
]

QUALITATIVE_ETA_SQUARED: dict[str, float] = {
    "negligible": 0.005,
    "none": 0.005,
    "very small": 0.005,
    "small": 0.035,
    "medium": 0.10,
    "moderate": 0.10,
    "large": 0.20,
}

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


def eta_squared_from_group_stats(
    stats: Mapping[str, tuple[float, float]], n_per_group: int = 100
) -> Statistic:
    """One-way ANOVA η² from per-level (mean, sd), each level having `n_per_group` members.

    CTX+$ beliefs state only means and sds (C.2.2), "assuming 100 individuals per group"
    (C.1.3), so η̂² has to come from the summary statistics:
    SS_between = Σ n (m_i − grand)², SS_within = Σ (n − 1) sd_i², η² = SS_b / (SS_b + SS_w),
    with sd the sample (n − 1) standard deviation. Undefined with fewer than two levels or
    no variance at all, matching `analysis.stats.eta_squared`.
    """
    if n_per_group < 1:
        raise ValueError(f"n_per_group must be at least 1, got {n_per_group}")
    if len(stats) < 2:
        return Undefined(SINGLE_LEVEL if stats else NO_VALUES)
    pairs = np.asarray([tuple(v) for v in stats.values()], dtype=float)
    if pairs.ndim != 2 or pairs.shape[1] != 2:
        raise ValueError("each level needs a (mean, sd) pair")
    if not np.all(np.isfinite(pairs)):
        raise ValueError(f"means and sds must be finite: {dict(stats)!r}")
    means, sds = pairs[:, 0], pairs[:, 1]
    if np.any(sds < 0):
        raise ValueError(f"standard deviations must be non-negative: {dict(stats)!r}")
    # identical means give exactly zero, not a rounding residue of the grand mean
    if np.all(means == means[0]):
        ss_between = 0.0
    else:
        ss_between = float(n_per_group * ((means - means.mean()) ** 2).sum())
    ss_within = float((n_per_group - 1) * (sds**2).sum())
    total = ss_between + ss_within
    if total == 0.0:
        return Undefined(CONSTANT)
    return ss_between / total


def effect_size_value(value: str | float | int) -> float:
    """A stated effect size as an η² fraction, so elicited and simulated η² can be subtracted.

    Numbers and numeric strings pass through ("12%" → 0.12); Cohen's words map to their
    band's midpoint (see the module docstring); a number glossed by its word and a range of
    two numbers or adjacent words are read as `_read_effect_text` says. Anything else, or a
    number outside [0, 1], raises ValueError.
    """
    if isinstance(value, bool):
        raise ValueError(f"effect size must be a number or a word, got {value!r}")
    if isinstance(value, int | float | np.integer | np.floating):
        number = float(value)
    elif isinstance(value, str):
        number = _read_effect_text(value)
    else:
        raise ValueError(f"effect size must be a number or a word, got {value!r}")
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise ValueError(f"effect size {value!r} is not a proportion of variance in [0, 1]")
    return number


# Cohen's η² bands of the words (see the module docstring), for checking a number against the
# word that glosses it ("0.10 (medium)") and for reading ranges of adjacent words.
_BANDS: dict[str, tuple[float, float]] = {
    "negligible": (0.0, 0.01),
    "small": (0.01, 0.06),
    "medium": (0.06, 0.14),
    "large": (0.14, 1.0),
}
_BAND_OF = {"none": "negligible", "very small": "negligible", "moderate": "medium"}
_TOKEN = re.compile(
    r"(?P<number>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*%?)|(?P<word>very[\s_-]+small|negligible|none|small|"
    r"medium|moderate|large)|(?P<range>\bto\b|[-–—])|(?P<filler>\ba\b|\ban\b|\beffects?\b|"
    r"\bsized?\b|\babout\b|\baround\b|\broughly\b|\bapproximately\b|\beta[- ]?squared\b|"
    r"η²|η\^2|[~≈=:,;.()\[\]\s])|(?P<other>\S)",
    re.IGNORECASE,
)


def _read_effect_text(value: str) -> float:
    """What a careful reader takes a stated effect size to be: a number ("0.12", "12%"), a
    word, a number glossed by its word ("0.10 (medium)"; they must agree), or a range of two
    numbers or of two adjacent words ("moderate to large": the mean of the two). Anything else
    ("small or large", "small to large", "0.5 (small)", prose) is ambiguous: ValueError."""
    numbers: list[float] = []
    words: list[str] = []
    ranged = False
    for token in _TOKEN.finditer(value):
        if token["other"]:
            raise _unreadable(value)
        if token["number"]:
            text = token["number"].replace(" ", "")
            numbers.append(float(text[:-1]) / 100.0 if text.endswith("%") else float(text))
        elif token["word"]:
            word = " ".join(re.split(r"[\s_-]+", token["word"].lower()))
            words.append(_BAND_OF.get(word, word))
        ranged = ranged or bool(token["range"])
    if ranged and len(numbers) + len(words) < 2:
        raise _unreadable(value)
    if len(numbers) == 2 and ranged:
        return _glossed((numbers[0] + numbers[1]) / 2.0, words, value)
    if len(numbers) == 1 and not ranged:
        return _glossed(numbers[0], words, value)
    if not numbers and len(words) == 1 and not ranged:
        return QUALITATIVE_ETA_SQUARED[words[0]]
    order = list(_BANDS)
    if not numbers and len(words) == 2 and ranged:
        first, second = sorted(order.index(w) for w in words)
        if second - first == 1:
            return (QUALITATIVE_ETA_SQUARED[words[0]] + QUALITATIVE_ETA_SQUARED[words[1]]) / 2
    raise _unreadable(value)


def _glossed(number: float, words: list[str], value: str) -> float:
    """A number, checked against any word said with it (both must describe the same band)."""
    for word in words:
        low, high = _BANDS[word]
        if not low <= number <= high:
            raise ValueError(f"effect size {value!r}: {number:g} is not {word!r} (η² {low}–{high})")
    return number


def _unreadable(value: str) -> ValueError:
    words = ", ".join(repr(w) for w in QUALITATIVE_ETA_SQUARED)
    return ValueError(
        f"unrecognised effect size {value!r}: expected a number in [0, 1], a percentage "
        f"such as '12%', one of {words}, a number with its word ('0.10 (medium)') or a "
        "range of two adjacent words ('moderate to large')"
    )


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


def median_of_defined(values: Iterable[Statistic]) -> Statistic:
    """Median of the defined values (Table 3's median over attributes); undefined values are
    skipped, not counted as zero, and with none defined the median is undefined."""
    present = [float(v) for v in values if not isinstance(v, Undefined)]
    if not present:
        return Undefined("no defined values")
    return float(np.median(present))


def mae_by_horizon(
    rows: Iterable[tuple[int, float, float]],
) -> dict[int, dict[str, float | int]]:
    """Per forecast horizon, MAE = mean |forecast − actual| and the two means (§5.2, Fig. 1).

    `rows` are (horizon, forecast, actual); the result is keyed by horizon in ascending
    order, each with {"n", "mae", "mean_forecast", "mean_actual"}, so MAE's growth with the
    horizon can be read off directly.
    """
    grouped: dict[int, list[tuple[float, float]]] = {}
    for horizon, forecast, actual in rows:
        grouped.setdefault(int(horizon), []).append((float(forecast), float(actual)))
    result: dict[int, dict[str, float | int]] = {}
    for horizon in sorted(grouped):
        pairs = np.asarray(grouped[horizon], dtype=float)
        result[horizon] = {
            "n": len(pairs),
            "mae": float(np.abs(pairs[:, 0] - pairs[:, 1]).mean()),
            "mean_forecast": float(pairs[:, 0].mean()),
            "mean_actual": float(pairs[:, 1].mean()),
        }
    return result
