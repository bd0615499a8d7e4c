"""Statistics of the career-chat scenario (seed 003, §5.1, Appendices E and G).

Option distributions from top-k logprobs, base-2 Jensen–Shannon divergence and centroids,
group distances and their baseline, the ordinal EMD of the consistency check, the groupings
(age bins, country income group, job category), and judge–human agreement (Pearson r,
ICC(3,k)). All pure: arrays in, numbers out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from scipy.optimize import minimize

from .stats import ratio_of
from .undefined import CONSTANT, NO_VALUES, Statistic, Undefined

__all__ = [
    "AGE_BINS",
    "COUNTRY_INCOME_GROUP",
    "GROUPINGS",
    "JOB_CATEGORY_KEYWORDS",
    "N_OPTIONS",
    "Centroid",
    "GroupDistances",
    "age_bin",
    "country_group",
    "emd_ordinal",
    "group_distances",
    "icc3k",
    "job_category",
    "js_centroid",
    "jsd",
    "one_hot",
    "option_distribution",
    "pearson",
    "random_pairing_emd",
]

N_OPTIONS = 5
"""Every survey item has five ordered options (VSM 2013)."""

_LN2 = math.log(2.0)


# ---------------------------------------------------------------------------------------------
# Appendix G: option distribution from the top-k logprobs at the option id's token
# ---------------------------------------------------------------------------------------------

_OPTION_KEY = re.compile(r'"?option_id"?\s*:\s*"?\s*(\d)')
_TOKEN_TRIM = " \t\n\"'`:,{}"


def _option_of(token: str, n_options: int) -> int | None:
    """The option a token names ("3", " 3", "\\"3", "3,"), or None for anything else."""
    text = token.strip(_TOKEN_TRIM)
    if len(text) == 1 and text.isdigit() and 1 <= int(text) <= n_options:
        return int(text)
    return None


def option_distribution(
    logprobs: Sequence[Mapping[str, Any]] | None, n_options: int = N_OPTIONS
) -> list[float] | None:
    """Normalised probabilities of options 1..n at the token that emits `option_id`'s value.

    `logprobs` are the response's tokens as logged (`{token, logprob, top}`). The option's
    token is found by aligning the tokens with the text they spell; its top-k alternatives
    that name an option contribute exp(logprob) (an option outside the top k gets 0), and the
    result is renormalised over the options (Appendix G). None when there are no logprobs,
    the value's token cannot be found, or no alternative names an option: the caller falls
    back to a one-hot distribution and flags it.
    """
    if not logprobs:
        return None
    tokens = [str(t.get("token", "")) for t in logprobs]
    match = _OPTION_KEY.search("".join(tokens))
    if match is None:
        return None
    position, offset = 0, 0
    for position, token in enumerate(tokens):  # noqa: B007 - the position is the result
        if offset + len(token) > match.start(1):
            break
        offset += len(token)
    entry = logprobs[position]
    alternatives = dict(entry.get("top") or {}) or {entry["token"]: entry["logprob"]}
    mass = [0.0] * n_options
    for token, logprob in alternatives.items():
        option = _option_of(token, n_options)
        if option is not None:
            mass[option - 1] += math.exp(float(logprob))
    total = sum(mass)
    return [m / total for m in mass] if total > 0 else None


def one_hot(option: int, n_options: int = N_OPTIONS) -> list[float]:
    """The fallback distribution for an answer without logprobs."""
    return [1.0 if k == option else 0.0 for k in range(1, n_options + 1)]


# ---------------------------------------------------------------------------------------------
# §5.1: Jensen–Shannon divergence and centroid
# ---------------------------------------------------------------------------------------------


def _kl2(p: np.ndarray, q: np.ndarray) -> float:
    mask = p > 0
    return float(np.sum(p[mask] * np.log2(p[mask] / q[mask])))


def _distribution(values: Sequence[float], name: str) -> np.ndarray:
    """A probability vector, or ValueError: an empty or massless vector has no divergence."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0 or np.any(array < 0) or array.sum() <= 0:
        raise ValueError(f"{name} is not a probability distribution: {values!r}")
    return array


def jsd(p: Sequence[float], q: Sequence[float]) -> float:
    """Base-2 Jensen–Shannon divergence (in [0, 1]); scipy's `jensenshannon` is its sqrt.

    Empty, negative or massless vectors, or vectors of different lengths, raise ValueError.
    """
    a, b = _distribution(p, "p"), _distribution(q, "q")
    if a.shape != b.shape:
        raise ValueError(f"distributions of different lengths: {a.size} and {b.size}")
    m = (a + b) / 2
    return max(0.0, 0.5 * _kl2(a, m) + 0.5 * _kl2(b, m))


@dataclass(frozen=True)
class Centroid:
    distribution: np.ndarray
    converged: bool
    objective: float


def _objective(c: np.ndarray, points: np.ndarray) -> tuple[float, np.ndarray]:
    """Σ JSD(c ‖ P_i) and its gradient in c: ∂JSD/∂c_k = ½ log2(c_k / m_k)."""
    m = (c + points) / 2
    value = sum(jsd(c, p) for p in points)
    grad = 0.5 * np.log2(c / m).sum(axis=0)
    return value, grad


def js_centroid(distributions: Sequence[Sequence[float]], tol: float = 1e-7) -> Centroid:
    """arg min_c Σ_i JSD(c ‖ P_i) over the simplex (Nielsen 2020), from the mean.

    Options no distribution gives mass get 0 (any mass there only adds divergence); the rest
    are a softmax of free parameters minimised by L-BFGS with the analytic gradient.
    Convergence is checked by the optimiser's status and the projected gradient on the simplex.
    """
    if len(distributions) == 0:
        raise ValueError("the centroid of no distributions is undefined")
    points = np.asarray(distributions, dtype=float)
    mean = points.mean(axis=0)
    support = mean > 0
    if len(points) == 1 or support.sum() <= 1:
        return Centroid(mean, True, _objective_value(mean, points))
    sub = points[:, support]

    def fun(z: np.ndarray) -> tuple[float, np.ndarray]:
        c = _softmax(z)
        value, grad = _objective(c, sub)
        return value, c * (grad - np.dot(c, grad))

    start = np.log(mean[support])
    result = minimize(fun, start, jac=True, method="L-BFGS-B", options={"gtol": tol / 10})
    c = _softmax(result.x)
    _, grad = _objective(c, sub)
    projected = float(np.max(np.abs(c * (grad - np.dot(c, grad)))))
    full = np.zeros_like(mean)
    full[support] = c
    return Centroid(full, bool(result.success) or projected < tol, float(result.fun))


def _objective_value(c: np.ndarray, points: np.ndarray) -> float:
    return float(sum(jsd(c, p) for p in points))


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


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


# ---------------------------------------------------------------------------------------------
# §5.1: consistency across formats
# ---------------------------------------------------------------------------------------------


def emd_ordinal(
    selected_a: Sequence[int], selected_b: Sequence[int], n_options: int = N_OPTIONS
) -> float:
    """EMD between two option histograms on ordered unit-spaced bins: Σ_x |F_a(x) − F_b(x)|.

    An empty side has no histogram: ValueError.
    """
    if len(selected_a) == 0 or len(selected_b) == 0:
        raise ValueError("EMD needs at least one answer on each side")
    a = np.bincount(np.asarray(selected_a) - 1, minlength=n_options) / len(selected_a)
    b = np.bincount(np.asarray(selected_b) - 1, minlength=n_options) / len(selected_b)
    return float(np.abs(np.cumsum(a) - np.cumsum(b))[:-1].sum())


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


# ---------------------------------------------------------------------------------------------
# Groupings (§6.1, Appendix H)
# ---------------------------------------------------------------------------------------------

AGE_BINS = ("<30", "30-40", "40-50", "50-60", ">60")
"""10-year brackets; 30 falls in 30-40 and 60 in >60 (the paper leaves the edges open)."""


def age_bin(age: int) -> str:
    if age < 30:
        return "<30"
    if age >= 60:
        return ">60"
    low = age // 10 * 10
    return f"{low}-{low + 10}"


COUNTRY_INCOME_GROUP: dict[str, str] = {
    **dict.fromkeys(
        (
            "Australia",
            "Canada",
            "Chile",
            "France",
            "Germany",
            "Italy",
            "Japan",
            "Netherlands",
            "Norway",
            "Poland",
            "Saudi Arabia",
            "Singapore",
            "South Korea",
            "Spain",
            "Sweden",
            "Switzerland",
            "United Arab Emirates",
            "United Kingdom",
            "United States",
        ),
        "high",
    ),
    **dict.fromkeys(
        (
            "Argentina",
            "Brazil",
            "China",
            "Colombia",
            "Indonesia",
            "Malaysia",
            "Mexico",
            "South Africa",
            "Thailand",
            "Turkey",
        ),
        "upper-middle",
    ),
    **dict.fromkeys(
        (
            "Bangladesh",
            "Egypt",
            "India",
            "Kenya",
            "Nigeria",
            "Pakistan",
            "Philippines",
            "Vietnam",
        ),
        "lower-middle",
    ),
    **dict.fromkeys(("Ethiopia", "Malawi", "Mozambique", "Uganda"), "low"),
}
"""World Bank income groups (fiscal year 2024 classification) standing in for the paper's
"development level" (its mapping came from a model and is not published); others: unknown."""


def country_group(country: str) -> str:
    return COUNTRY_INCOME_GROUP.get(" ".join(country.split()), "unknown")


JOB_CATEGORY_KEYWORDS: dict[str, tuple[str, ...]] = {
    "management": ("manager", "director", "head", "chief", "executive", "ceo", "lead"),
    "engineering & IT": ("engineer", "developer", "software", "data", "it ", "technician"),
    "health": ("nurse", "doctor", "physician", "pharmacist", "therapist"),
    "education & research": ("teacher", "professor", "lecturer", "researcher", "scientist"),
    "business & finance": ("accountant", "analyst", "finance", "sales", "marketing", "consultant"),
}
"""First matching category wins (in this order); titles matching none are "other". The paper
used zero-shot NLI (bart-large-mnli); pass another `classify` to `job_category` to replace it."""


def job_category(title: str, keywords: Mapping[str, Sequence[str]] = JOB_CATEGORY_KEYWORDS) -> str:
    text = f" {title.lower()} "
    for category, words in keywords.items():
        if any(word in text for word in words):
            return category
    return "other"


GROUPINGS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "age": lambda p: age_bin(int(p["age"])),
    "education": lambda p: str(p["education"]),
    "country": lambda p: country_group(str(p["country"])),
    "job": lambda p: job_category(str(p["job_title"])),
}
"""How a profile is grouped for each of the paper's four attributes."""


# ---------------------------------------------------------------------------------------------
# Appendix E: judge–human agreement
# ---------------------------------------------------------------------------------------------


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
