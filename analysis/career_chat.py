"""Metrics, tables and figures of the career-chat scenario (seed 003, §5.1, Appendices E, G).

The statistics: option distributions from top-k logprobs, base-2 Jensen–Shannon divergence and
centroids, group distances and their baseline, the ordinal EMD of the consistency check, the
groupings (age bins, country development level, job category and position level in
`career_jobs`), and judge–human agreement (Pearson r, ICC(3,k)), all pure: arrays in, numbers
out. Then the scenario's metrics from its event table alone (`compute_metrics`), its console
report, and its report files (Tables 1, 2, 3, 5, Figures 4 and 5); the scenario's hooks call
these.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from personasim.simulation.stages import stage

from .career_countries import development_level
from .career_jobs import (
    JOB_CATEGORIES,
    OTHER_CATEGORY,
    POSITION_LEVELS,
    job_category,
    position_level,
)
from .career_uncertainty import (
    Uncertainty,
    group_data,
    group_uncertainty,
    in_processes,
    js_rows,
)
from .event_tables import min_group_n, payloads, rounded
from .reports import model_label, save_figure, small_note, write_table
from .stats import holm, mean_of, ratio_of, small_groups
from .undefined import CONSTANT, NO_VALUES, Statistic, Undefined, shown_stat, stat_fields

__all__ = [
    "AGE_BINS",
    "DIMENSIONS",
    "DIMENSION_LABELS",
    "EDUCATION_ALIASES",
    "FORMATS",
    "GROUPINGS",
    "N_OPTIONS",
    "Centroid",
    "GroupDistances",
    "Resamples",
    "age_bin",
    "compute_metrics",
    "confidence_rows",
    "country_group",
    "education_label",
    "emd_ordinal",
    "figure5",
    "group_distances",
    "icc3k",
    "js_centroid",
    "jsd",
    "one_hot",
    "option_distribution",
    "pearson",
    "random_pairing_emd",
    "report_lines",
    "summary_rows",
    "table1_rows",
    "table2_rows",
    "table3_rows",
    "write_reports",
]

N_OPTIONS = 5
"""Every survey item has five ordered options (VSM 2013)."""

DIMENSIONS = ("coverage", "correctness", "diversity", "relevance")
"""The judge's four dimensions (Figures 8–11), each with its pack entry `judge_<name>`."""
DIMENSION_LABELS = {
    "coverage": "Attribute Coverage",
    "correctness": "Attribute Correctness",
    "diversity": "Question Diversity",
    "relevance": "Relevance",
}

FORMATS = ("profile", "dialogue")
"""BA_user and BA_dialogue (§5)."""

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
    the value's token cannot be found, it comes without top alternatives, or no alternative
    names an option: the caller falls
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
    alternatives = dict(entry.get("top") or {})
    if not alternatives:  # the chosen token alone is no distribution: a fallback, counted
        return None
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
    value = float(js_rows(c[None, :], points).sum())
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
    return float(js_rows(c[None, :], points).sum())


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


EDUCATION_ALIASES = {"Bachelor's Degree": "Bachelor's", "Master's Degree": "Master's"}
"""The paper's seed-file labels (its Kaggle recruitment CSV) for our education levels."""


def education_label(education: str) -> str:
    return EDUCATION_ALIASES.get(education, education)


def age_bin(age: int) -> str:
    if age < 30:
        return "<30"
    if age >= 60:
        return ">60"
    low = age // 10 * 10
    return f"{low}-{low + 10}"


def country_group(country: str) -> str:
    """The authors' development level of the country (`career_countries`; "Unknown" else)."""
    return development_level(country)


GROUPINGS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "age": lambda p: age_bin(int(p["age"])),
    "education": lambda p: education_label(str(p["education"])),
    "country": lambda p: country_group(str(p["country"])),
    "job": lambda p: p.get("job_category") or job_category(str(p["job_title"])),
    "position": lambda p: p.get("position_level") or position_level(str(p["job_title"])),
}
"""How a profile is grouped for each of the paper's attributes (the paper's education labels
and ours are the same groups); job category and position level come from the run's
`--job-groups` file where it names the title, else from `career_jobs`' word rule."""


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


# ---------------------------------------------------------------------------------------------
# The scenario's metrics, from the event table alone (§5.1, Tables 1–3, 5, Figure 4)
# ---------------------------------------------------------------------------------------------


def _profiles(events: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Each user's attributes, with the job labels a `--job-groups` file gave its title."""
    given = payloads(events, "career.job_groups")
    labels = given[0]["titles"] if given else {}
    return {
        p["persona"]["id"]: {
            **p["persona"]["attributes"],
            **labels.get(p["persona"]["attributes"]["job_title"], {}),
        }
        for p in payloads(events, "agent.created")
        if p.get("type") == "UserSimulator"
    }


def _decisions(events: pd.DataFrame, task: str) -> pd.DataFrame:
    made = events[events["kind"] == "decision.made"]
    # astype(bool): on no rows, map() gives an object Series, which pandas would read as a
    # (empty) list of columns and return a frame without any (a run where nothing parsed)
    return made[made["payload"].map(lambda p: p["task"] == task).astype(bool)]


def _probe_table(events: pd.DataFrame) -> pd.DataFrame:
    """One row per usable probe: user, format, item, selected option, distribution, source.

    The distribution comes from the last `career.probe` call in the decision's unit (the
    answer that was parsed); without usable logprobs it is one-hot and `source` says so.
    """
    calls = events[events["kind"] == "llm.call"]
    calls = calls[calls["payload"].map(lambda p: p["task"] == "career.probe").astype(bool)]
    last_call = calls.groupby("scope")["payload"].last().to_dict()
    rows = []
    for scope, p in _decisions(events, "career.probe")[["scope", "payload"]].itertuples(
        index=False
    ):
        selected = int(p["value"])
        if "distribution" in p:  # imported (`personasim import`): the released probabilities
            distribution, source = p["distribution"], "imported"
        else:
            distribution = option_distribution(last_call[scope]["response"].get("logprobs"))
            source = "logprobs" if distribution else "one_hot"
        rows.append(
            {
                "user": p["user"],
                "format": p["format"],
                "item": p["item"],
                "selected": selected,
                "distribution": distribution or one_hot(selected),
                "source": source,
            }
        )
    columns = ["user", "format", "item", "selected", "distribution", "source"]
    return pd.DataFrame(rows, columns=columns)


def _probe_stats(probes: pd.DataFrame, fmt: str) -> dict[str, Any]:
    """Figure 4: mean probability of the selected option (`confidence`, the paper's text) and
    of the most likely option (`confidence_top`, what the released numbers appear to use);
    one-hot fallbacks counted."""
    rows = probes[probes["format"] == fmt]
    confidence = [d[s - 1] for d, s in zip(rows["distribution"], rows["selected"], strict=True)]
    top = [max(d) for d in rows["distribution"]]
    return {
        "n": len(rows),
        "one_hot_fallback": int((rows["source"] == "one_hot").sum()),
        **stat_fields("confidence", mean_of(confidence, "no answers")),
        **stat_fields("confidence_top", mean_of(top, "no answers")),
    }


@dataclass(frozen=True)
class Resamples:
    """Item 4's resampling: bootstrap resamples, label permutations, and their seed."""

    bootstrap: int = 1000
    permutations: int = 1000
    seed: int = 0


_NO_CI = Undefined("no answers to resample")


def _adaptations(
    probes: pd.DataFrame,
    profiles: dict[str, dict[str, Any]],
    smallest: int,
    resamples: Resamples,
) -> dict[str, dict[str, Any]]:
    """Table 2 for BA_user and BA_dialogue: every grouping's distances, baseline and ratios;
    groups of fewer than `smallest` users are listed in `small_groups`, and a pair with one
    of them is `small`. The (format, grouping) cells are computed as one batch
    (`in_processes`: over processes when the resampling is large)."""
    cells = []
    for fmt in FORMATS:
        rows = probes[probes["format"] == fmt]
        for index, (grouping, label) in enumerate(GROUPINGS.items()):
            by_user: dict[str, dict[str, dict[str, list[float]]]] = {}
            for user, item, dist in rows[["user", "item", "distribution"]].itertuples(index=False):
                group = label(profiles[user])
                by_user.setdefault(group, {}).setdefault(str(item), {})[user] = dist
            seed = (resamples.seed, FORMATS.index(fmt), index)
            cells.append(_Cell(fmt, grouping, by_user, resamples, seed))
    stage(
        f"centroids and resampling of {len(cells)} (format, grouping) cells: "
        f"{resamples.bootstrap} bootstrap resamples and {resamples.permutations} permutations "
        "each"
    )
    users = len(profiles)
    work = users * len(cells) * (resamples.bootstrap + resamples.permutations)
    result: dict[str, dict[str, Any]] = {fmt: {} for fmt in FORMATS}
    computed = in_processes(_cell, cells, work, _announce)
    for cell, (distances, spread) in zip(cells, computed, strict=True):
        result[cell.fmt][cell.grouping] = _grouping_record(distances, spread, smallest)
    return result


def _announce(cell: _Cell) -> None:
    stage(f"BA_{'user' if cell.fmt == 'profile' else 'dialogue'} by {cell.grouping}: done")


@dataclass(frozen=True)
class _Cell:
    """One format and grouping: the users' distributions by group, question and user."""

    fmt: str
    grouping: str
    by_user: dict[str, dict[str, dict[str, list[float]]]]
    resamples: Resamples
    seed: tuple[int, ...]


def _cell(cell: _Cell) -> tuple[GroupDistances, Uncertainty]:
    """A cell's distances (L-BFGS centroids) and their bootstrap and permutation spread."""
    responses = {
        g: {q: list(d.values()) for q, d in per.items()} for g, per in cell.by_user.items()
    }
    distances = group_distances(responses)
    if not cell.by_user:
        return distances, Uncertainty()
    spread = group_uncertainty(
        group_data(cell.by_user),
        {pair: distances.ratio(pair) for pair in distances.pairs},
        cell.resamples.bootstrap,
        cell.resamples.permutations,
        list(cell.seed),
    )
    return distances, spread


def _grouping_record(
    distances: GroupDistances, spread: Uncertainty, smallest: int
) -> dict[str, Any]:
    small = small_groups(distances.groups, smallest)
    return {
        "groups": dict(sorted(distances.groups.items())),
        "small_groups": small,
        **stat_fields("baseline", distances.baseline),
        **stat_fields("baseline_ci", spread.baseline_ci),
        "centroids_not_converged": distances.centroids_failed,
        "pairs": [
            {
                "group_a": a,
                "group_b": b,
                "n_a": distances.groups[a],
                "n_b": distances.groups[b],
                "distance": rounded(value),
                **stat_fields("distance_ci", spread.distance_ci.get((a, b), _NO_CI)),
                **stat_fields("ratio", distances.ratio((a, b))),
                **stat_fields("ratio_ci", spread.ratio_ci.get((a, b), _NO_CI)),
                **stat_fields("ratio_p", spread.ratio_p.get((a, b), _NO_CI)),
                **stat_fields("ratio_null", spread.ratio_null.get((a, b), _NO_CI)),
                "small": a in small or b in small,
            }
            for (a, b), value in distances.pairs.items()
        ],
    }


def _with_holm(adaptation: dict[str, Any]) -> dict[str, Any]:
    """Each pair's `ratio_p_holm`: Holm-corrected over every pair of the run's Table 2 with a
    defined p (both formats, every grouping: the pairs a reader scans for "significant" ones);
    a pair without a p keeps its reason. `holm_family` counts the family."""
    pairs = [p for per in adaptation.values() for r in per.values() for p in r["pairs"]]
    tested = [p for p in pairs if p["ratio_p"] is not None]
    for pair, adjusted in zip(tested, holm([p["ratio_p"] for p in tested]), strict=True):
        pair.update(stat_fields("ratio_p_holm", adjusted))
    for pair in pairs:
        if pair["ratio_p"] is None:
            pair.update(stat_fields("ratio_p_holm", Undefined(pair["ratio_p_undefined"])))
    for per in adaptation.values():
        for result in per.values():
            result["holm_family"] = len(tested)
    return adaptation


def _consistency(probes: pd.DataFrame, seed: int, repeats: int, smallest: int) -> dict[str, Any]:
    """Table 3: mean EMD(S_u, S_d) over users with both formats, on the items answered in both,
    against seeded random user–dialogue pairings; `small` with fewer than `smallest` users."""
    table = probes.pivot_table(
        index=["user", "item"], columns="format", values="selected", aggfunc="first"
    )
    profile: list[list[int]] = []
    dialogue: list[list[int]] = []
    if set(FORMATS) <= set(table.columns):
        table = table.dropna(subset=list(FORMATS))
        users = sorted(table.index.get_level_values("user").unique())
        profile = [table.loc[u, "profile"].astype(int).tolist() for u in users]
        dialogue = [table.loc[u, "dialogue"].astype(int).tolist() for u in users]
    distances = [emd_ordinal(a, b) for a, b in zip(profile, dialogue, strict=True)]
    distance = mean_of(distances, "no user answered in both formats")
    baseline = random_pairing_emd(profile, dialogue, np.random.default_rng(seed), repeats)
    return {
        "n_users": len(profile),
        **stat_fields("distance", distance),
        **stat_fields("baseline", baseline),
        **stat_fields("ratio", ratio_of(distance, baseline)),
        "small": len(profile) < smallest,
    }


def _dialogue_stats(events: pd.DataFrame) -> dict[str, Any]:
    ended = [p["reason"] for p in payloads(events, "career.dialogue_ended")]
    questions = payloads(events, "career.question")
    flagged = sum(q["out_of_context"] for q in questions)
    exchanges = [p["exchanges"] for p in payloads(events, "career.dialogue_ended")]
    return {
        "n": len(ended),
        "ended": {
            reason: ended.count(reason) for reason in ("goals_covered", "max_turns", "failed")
        },
        "questions": len(questions),
        "out_of_context": flagged,
        **stat_fields(
            "out_of_context_rate",
            mean_of([q["out_of_context"] for q in questions], "no questions"),
        ),
        **stat_fields("mean_exchanges", mean_of(exchanges, "no dialogues")),
    }


def _judge_table(events: pd.DataFrame) -> pd.DataFrame:
    rows = [
        {"user": p["user"], "dimension": p["dimension"], "rating": float(p["value"])}
        for p in _decisions(events, "career.judge")["payload"]
    ]
    return pd.DataFrame(rows, columns=["user", "dimension", "rating"])


def _judge_means(judge: pd.DataFrame) -> dict[str, Any]:
    """Table 1's LLM-judge column: ratings averaged over samples, then over dialogues."""
    per_dialogue = judge.groupby(["dimension", "user"])["rating"].mean()
    means: dict[str, Any] = {}
    for d in DIMENSIONS:
        rated = per_dialogue[d] if d in per_dialogue.index.get_level_values(0) else []
        means.update(stat_fields(d, mean_of(rated, "no ratings")))
    return {"n_ratings": len(judge), "means": means}


def _alignment(judge: pd.DataFrame, rows: list[list[Any]], smallest: int) -> list[dict[str, Any]]:
    """Table 5: per dimension, the judge's mean vs the raters' mean on shared dialogues;
    `small` with fewer than `smallest` shared dialogues."""
    human = pd.DataFrame(rows, columns=["user", "dimension", "rating"])
    human_mean = human.groupby(["dimension", "user"])["rating"].mean()
    judge_mean = judge.groupby(["dimension", "user"])["rating"].mean()
    result = []
    for dimension in DIMENSIONS:
        shared = sorted(
            set(_users_of(judge_mean, dimension)) & set(_users_of(human_mean, dimension))
        )
        x = [judge_mean[(dimension, u)] for u in shared]
        y = [human_mean[(dimension, u)] for u in shared]
        none = "no dialogue rated by both"
        result.append(
            {
                "dimension": DIMENSION_LABELS[dimension],
                "n": len(shared),
                **stat_fields("llm_judge", mean_of(x, none)),
                **stat_fields("human", mean_of(y, none)),
                **stat_fields(
                    "icc3k", icc3k(list(zip(x, y, strict=True))) if shared else Undefined(none)
                ),
                **stat_fields("pearson", pearson(x, y)),
                "small": len(shared) < smallest,
            }
        )
    return result


def _users_of(series: pd.Series, dimension: str) -> list[str]:
    return list(series[dimension].index) if dimension in series.index.get_level_values(0) else []


def _task_counts(events: pd.DataFrame, kind: str) -> dict[str, int]:
    tasks = [p["task"] for p in payloads(events, kind)]
    names = (
        "career.user",
        "career.ooc",
        "career.assistant",
        "career.reasoning",
        "career.probe",
        "career.judge",
    )
    return {name.split(".")[1]: tasks.count(name) for name in names}


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items())


# ---------------------------------------------------------------------------------------------
# Tables and figures
# ---------------------------------------------------------------------------------------------


def table1_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 1's shape: dimension, LLM judge, human (when human ratings were given)."""
    human = {r["dimension"]: r["human"] for r in metrics["human_alignment"] or []}
    return [
        {
            "dimension": DIMENSION_LABELS[d],
            "llm_judge": metrics["judge"]["means"][d],
            "human": human.get(DIMENSION_LABELS[d]),
        }
        for d in DIMENSIONS
    ]


def table2_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 2's quantities per scenario, grouping and pair, each group's n beside it: distance,
    baseline, their ratio with its bootstrap interval, the permutation null's central 95%
    (`ratio_null_low/high`: where chance puts the ratio; the paper's line is 1), the
    permutation p and its Holm-corrected p, and `chance` in words."""
    return [
        {
            "scenario": "BA_user" if fmt == "profile" else "BA_dialogue",
            "grouping": grouping,
            **{k: v for k, v in pair.items() if not k.endswith(("_ci", "_null"))},
            **_bounds(pair, "distance_ci"),
            **_bounds(pair, "ratio_ci"),
            **_bounds(pair, "ratio_null"),
            "chance": chance_mark(pair),
            "baseline": result["baseline"],
            **_bounds(result, "baseline_ci"),
        }
        for fmt in FORMATS
        for grouping, result in metrics["adaptation"][fmt].items()
        for pair in result["pairs"]
    ]


ALPHA = 0.05
"""The level at which a pair is marked (permutation p, and Holm-corrected p)."""


def chance_mark(pair: Mapping[str, Any]) -> str:
    """How a pair's ratio stands against the permutation null, in words."""
    p, corrected = pair.get("ratio_p"), pair.get("ratio_p_holm")
    if p is None:
        return f"no p ({pair.get('ratio_p_undefined', 'undefined')})"
    if corrected is not None and corrected < ALPHA:
        return f"Holm p < {ALPHA}"
    if p < ALPHA:
        return f"p < {ALPHA}, not after Holm"
    return "within chance"


def group_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Every group of every grouping and format with its n (Table 2's groups; "Unknown"
    included), so a group with no pair (the only one of its grouping) still shows."""
    smallest = metrics["min_group_n"]
    return [
        {
            "scenario": "BA_user" if fmt == "profile" else "BA_dialogue",
            "grouping": grouping,
            "group": group,
            "n": n,
            "small": n < smallest,
        }
        for fmt in FORMATS
        for grouping, result in metrics["adaptation"][fmt].items()
        for group, n in sorted(result["groups"].items(), key=lambda item: _group_order(item[0]))
    ]


def _bounds(record: Mapping[str, Any], name: str) -> dict[str, Any]:
    """An interval as two columns `<name>_low`, `<name>_high` (empty when undefined; the
    reason stays in `<name>_undefined`)."""
    interval = record.get(name) or [None, None]
    return {f"{name}_low": interval[0], f"{name}_high": interval[1]}


def table3_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 3's shape: model, measured distance, baseline, distance / baseline."""
    c = metrics["consistency"]
    return [
        {
            "model": metrics["model"],
            "distance": c["distance"],
            "baseline": c["baseline"],
            "ratio": c["ratio"],
            "n_users": c["n_users"],
            "small": c["small"],
        }
    ]


def confidence_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Figure 4: mean probability of the selected option (the paper's text) and of the most
    likely option (`confidence_top`) per format."""
    return [
        {
            "model": metrics["model"],
            "format": "BA_user" if fmt == "profile" else "BA_dialogue",
            "confidence": metrics["probes"][fmt]["confidence"],
            "confidence_top": metrics["probes"][fmt]["confidence_top"],
            "one_hot_fallback": metrics["probes"][fmt]["one_hot_fallback"],
        }
        for fmt in FORMATS
    ]


def _ratio_matrix(result: dict[str, Any]) -> tuple[list[str], np.ndarray, dict[tuple, str]]:
    groups = sorted(result["groups"], key=_group_order)
    matrix = np.full((len(groups), len(groups)), np.nan)
    marks: dict[tuple[int, int], str] = {}
    for pair in result["pairs"]:
        if pair["ratio"] is not None:
            i, j = groups.index(pair["group_a"]), groups.index(pair["group_b"])
            matrix[i, j] = matrix[j, i] = pair["ratio"]
            marks[(i, j)] = marks[(j, i)] = _star(pair)
    np.fill_diagonal(matrix, 0.0)
    return groups, matrix, marks


def _star(pair: Mapping[str, Any]) -> str:
    """‡ Holm-corrected p < 0.05; * permutation p < 0.05 only; blank otherwise."""
    corrected, p = pair.get("ratio_p_holm"), pair.get("ratio_p")
    if corrected is not None and corrected < ALPHA:
        return "‡"
    return "*" if p is not None and p < ALPHA else ""


def _with_n(groups: Sequence[str], sizes: Mapping[str, int]) -> list[str]:
    return [f"{g} (n={sizes[g]})" for g in groups]


def _group_order(group: str) -> tuple[int, str]:
    order = ("<30", "30-40", "40-50", "50-60", ">60", "High School", "Bachelor's", "Master's")
    order += ("PhD", "Developed", "Developing", "Third World", "Unknown")
    order += (*POSITION_LEVELS, *JOB_CATEGORIES, OTHER_CATEGORY)
    return (order.index(group) if group in order else len(order), group)


MARKS_NOTE = (
    f"* permutation p < {ALPHA}; ‡ also after Holm's correction over the run's pairs; "
    "the paper's baseline is 1"
)


def figure5(metrics: dict[str, Any], grouping: str) -> Any:
    """Figure 5: pairwise group distance / baseline, BA_user and BA_dialogue side by side,
    each group's n on its label and each pair marked by its permutation and Holm p."""
    import matplotlib.pyplot as plt

    panels = [(fmt, metrics["adaptation"][fmt][grouping]) for fmt in FORMATS]
    if not any(result["pairs"] for _, result in panels):
        return None
    figure, axes = plt.subplots(1, 2, figsize=(12, 5))
    for axis, (fmt, result) in zip(axes, panels, strict=True):
        groups, matrix, marks = _ratio_matrix(result)
        labels = _with_n(groups, result["groups"])
        image = axis.imshow(matrix, cmap="viridis")
        axis.set_xticks(range(len(groups)), labels, rotation=45, ha="right")
        axis.set_yticks(range(len(groups)), labels)
        for (i, j), value in np.ndenumerate(matrix):
            if not np.isnan(value) and i != j:
                text = f"{value:.2f}{marks.get((i, j), '')}"
                axis.text(j, i, text, ha="center", va="center", color="w", fontsize=8)
        label = "BA_user" if fmt == "profile" else "BA_dialogue"
        axis.set_title(f"{label} by {grouping} (distance / baseline)")
        figure.colorbar(image, ax=axis, shrink=0.8)
    figure.suptitle(f"{metrics['model']}: pairwise group distances (baseline = 1)")
    figure.text(0.5, 0.01, MARKS_NOTE, ha="center", fontsize=8)
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    return figure


def figure5_null(metrics: dict[str, Any], grouping: str) -> Any:
    """Figure 5 against chance: per pair (labelled with both groups' n) the observed ratio and
    its bootstrap interval, over the permutation null's central 95% band (grey), with the
    paper's line at 1; marked by permutation p and Holm p."""
    import matplotlib.pyplot as plt

    panels = [(fmt, metrics["adaptation"][fmt][grouping]) for fmt in FORMATS]
    if not any(result["pairs"] for _, result in panels):
        return None
    height = max(len(r["pairs"]) for _, r in panels)
    figure, axes = plt.subplots(1, 2, figsize=(13, 1.2 + 0.38 * height), sharex=False)
    for axis, (fmt, result) in zip(axes, panels, strict=True):
        pairs = result["pairs"]
        for y, pair in enumerate(pairs):
            null = pair.get("ratio_null")
            if null:
                axis.fill_betweenx([y - 0.35, y + 0.35], *null, color="0.85", lw=0)
            ci = pair.get("ratio_ci")
            if ci:
                axis.plot(ci, [y, y], color="k", lw=1)
            if pair["ratio"] is not None:
                star = _star(pair)
                axis.plot(pair["ratio"], y, "o", color="C3" if star else "k", ms=4)
                axis.text(pair["ratio"], y + 0.2, star, ha="center", fontsize=8)
        axis.axvline(1.0, ls="--", color="C0", lw=1)
        names = [f"{p['group_a']} (n={p['n_a']}) – {p['group_b']} (n={p['n_b']})" for p in pairs]
        axis.set_yticks(range(len(pairs)), names, fontsize=7)
        axis.invert_yaxis()
        label = "BA_user" if fmt == "profile" else "BA_dialogue"
        axis.set_title(f"{label} by {grouping}: ratio, grey = permutation null 95%")
        axis.set_xlabel("distance / baseline (dashed: the paper's line at 1)")
    figure.text(0.5, 0.005, MARKS_NOTE + "; bars: bootstrap 95% interval", ha="center", fontsize=8)
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    return figure


# ---------------------------------------------------------------------------------------------
# The metrics hook, the console report and the report files
# ---------------------------------------------------------------------------------------------


def compute_metrics(events: pd.DataFrame) -> dict[str, Any]:
    """Every number of the run, from its event table (the scenario's `compute_metrics`)."""
    header = payloads(events, "run.started")[0]
    params = header["params"]
    profiles = _profiles(events)
    probes = _probe_table(events)
    human = payloads(events, "career.human_ratings")
    judge = _judge_table(events)
    smallest = min_group_n(events)
    return {
        "model": model_label(header["model"]),
        "n_users": len(profiles),
        "n_items": len(payloads(events, "career.survey")[0]["items"]),
        "min_group_n": smallest,
        "dialogues": _dialogue_stats(events),
        "probes": {fmt: _probe_stats(probes, fmt) for fmt in FORMATS},
        "adaptation": _with_holm(_adaptations(probes, profiles, smallest, _resamples(header))),
        "consistency": _consistency(probes, header["seed"], params["emd_repeats"], smallest),
        "judge": _judge_means(judge),
        **stat_fields(
            "human_alignment",
            _alignment(judge, human[0]["rows"], smallest)
            if human
            else Undefined("no human ratings given (--human-ratings)"),
        ),
        "design": paper_differences(
            header, len(payloads(events, "career.survey")[0]["items"]), len(profiles)
        ),
        "failures": _task_counts(events, "decision.failed"),
        "reasks": _task_counts(events, "decision.reask"),
    }


PAPER_USERS = 1000
PAPER_ITEMS = 18
PAPER_ROLES = {"user": "gpt-4o-2024-08-06", "detector": "gpt-4o-mini-2024-07-18"}
PAPER_ROLES |= {"judge": "gpt-4o-2024-08-06"}
"""§3–§4: who played the simulated user, the out-of-context detector and the judge."""


def paper_differences(header: Mapping[str, Any], n_items: int, n_users: int) -> list[str]:
    """What of this run's design is not the paper's (empty: its survey, users and repetitions;
    an import is the authors' own answers and has none)."""
    if header.get("import"):
        return []
    params, differs = header["params"], []
    if n_items != PAPER_ITEMS:
        differs.append(f"{n_items} survey items (paper: the {PAPER_ITEMS} VSM-2013 items)")
    if not params.get("profile_file") and not params.get("dialogues_from"):
        differs.append(f"{n_users} synthetic users (paper: {PAPER_USERS:,} recruitment profiles)")
    elif n_users != PAPER_USERS:
        differs.append(f"{n_users} users (paper: {PAPER_USERS:,})")
    if params.get("judge_samples", 10) != 10:
        differs.append(f"{params['judge_samples']} judge samples (paper: 10)")
    roles = header.get("roles") or {}
    for role, paper_model in PAPER_ROLES.items():
        specs = roles.get(role)
        model = str(specs[0]) if specs else model_label(header["model"])
        model = model.split("@")[0].removeprefix("openai:")  # the name, not the endpoint
        if paper_model not in model:
            differs.append(f"{role}: {model} (paper: {paper_model})")
    return differs


def _design_line(metrics: Mapping[str, Any]) -> str | None:
    differs = metrics.get("design")
    if not differs:
        return None
    return "  not the paper's design: " + "; ".join(differs) + " (--paper --profile-file FILE)"


def _shown_ci(record: Mapping[str, Any], name: str) -> str:
    interval = record.get(name)
    return f"[{interval[0]:.3g}, {interval[1]:.3g}]" if interval else "[undefined]"


def _resamples(header: Mapping[str, Any]) -> Resamples:
    """From the run's parameters; logs from before item 4 (and imports) get the defaults."""
    params = header["params"]
    default = Resamples()
    return Resamples(
        int(params.get("bootstrap", default.bootstrap)),
        int(params.get("permutations", default.permutations)),
        int(header.get("seed") or 0),
    )


def _chance_summary(metrics: dict[str, Any]) -> str:
    pairs = [p for per in metrics["adaptation"].values() for r in per.values() for p in r["pairs"]]
    tested = [p for p in pairs if p["ratio_p"] is not None]
    raw = sum(p["ratio_p"] < ALPHA for p in tested)
    corrected = sum(p["ratio_p_holm"] < ALPHA for p in tested)
    return (
        f"group pairs: {raw} of {len(tested)} with permutation p < {ALPHA}, {corrected} after "
        f"Holm ({len(pairs) - len(tested)} without a p); see table2_adaptation"
    )


def report_lines(metrics: dict[str, Any]) -> list[str]:
    """The console summary: dialogues, consistency, per format the widest group gap, judge."""
    d, c = metrics["dialogues"], metrics["consistency"]
    lines = [
        f"{metrics['model']}: {d['n']} dialogues ({_counts_text(d['ended'])}), "
        f"{d['questions']} questions, {d['out_of_context']} rewritten by the detector",
        f"  consistency EMD {shown_stat(c, 'distance', 3)} vs random pairings "
        f"{shown_stat(c, 'baseline', 3)} (ratio {shown_stat(c, 'ratio', 3)}, "
        f"{c['n_users']} users)",
    ]
    for fmt in FORMATS:
        probe = metrics["probes"][fmt]
        lines.append(
            f"  BA_{'user' if fmt == 'profile' else 'dialogue'}: {probe['n']} answers, "
            f"confidence {shown_stat(probe, 'confidence', 3)}, one-hot fallbacks "
            f"{probe['one_hot_fallback']}"
        )
        for grouping, result in metrics["adaptation"][fmt].items():
            widest = max(result["pairs"], key=lambda r: r["distance"], default=None)
            if widest:
                small = result["small_groups"]
                note = f" (n < {metrics['min_group_n']}: {', '.join(small)})" if small else ""
                lines.append(
                    f"    {grouping}: baseline {shown_stat(result, 'baseline', 3)}, widest "
                    f"{widest['group_a']} (n={widest['n_a']}) vs {widest['group_b']} "
                    f"(n={widest['n_b']}) ratio {shown_stat(widest, 'ratio', 3)} "
                    f"{_shown_ci(widest, 'ratio_ci')}, chance "
                    f"{_shown_ci(widest, 'ratio_null')}, permutation p "
                    f"{shown_stat(widest, 'ratio_p', 3)}, Holm p "
                    f"{shown_stat(widest, 'ratio_p_holm', 3)}{note}"
                )
    lines.append(f"  {_chance_summary(metrics)}")
    design = _design_line(metrics)
    if design:
        lines.insert(1, design)
    means = metrics["judge"]["means"]
    judge = ", ".join(f"{d} {shown_stat(means, d, 3)}" for d in DIMENSIONS)
    lines.append(f"  judge: {judge}; failures: {_counts_text(metrics['failures'])}")
    return lines


def write_reports(metrics: dict[str, Any], directory: Path) -> list[Path]:
    """Tables 1, 2, 3 (and 5 with human ratings) as CSV and Markdown, Figure 4's numbers and
    Figure 5 per grouping."""
    smallest = metrics["min_group_n"]
    files = write_table(table1_rows(metrics), directory, "table1_dialogue_quality")
    files += write_table(
        table2_rows(metrics),
        directory,
        "table2_adaptation",
        flag="small",
        notes=[small_note(smallest, "users in a group of the pair"), TABLE2_NOTE],
    )
    files += write_table(
        group_rows(metrics),
        directory,
        "table2_groups",
        flag="small",
        notes=[small_note(smallest, "users in the group")],
    )
    users = small_note(smallest, "users or dialogues in the row")
    files += write_table(
        table3_rows(metrics),
        directory,
        "table3_consistency",
        flag="small",
        notes=[users],
    )
    files += write_table(confidence_rows(metrics), directory, "figure4_confidence")
    if metrics["human_alignment"]:
        files += write_table(
            metrics["human_alignment"],
            directory,
            "table5_judge_alignment",
            flag="small",
            notes=[users],
        )
    for grouping in GROUPINGS:
        for suffix, draw in (("", figure5), ("_null", figure5_null)):
            figure = draw(metrics, grouping)
            if figure is not None:
                files.append(save_figure(figure, directory, f"figure5_{grouping}{suffix}"))
    return files


TABLE2_NOTE = (
    "n_a, n_b: users in each group. ratio_null_low/high: the central 95% of the ratio when "
    "group labels are shuffled over users (chance; the paper's line is 1). ratio_p: "
    "permutation p; ratio_p_holm: Holm-corrected over every pair with a p in this table."
)


def summary_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 3's row with Figure 4's two measures per format (`confidence`, the paper's
    caption; `confidence_top`, what its released numbers match); a sweep labels it with its
    model."""
    row = {k: v for k, v in table3_rows(metrics)[0].items() if k != "model"}
    confidence = {
        f"{measure}_{r['format']}": r[measure]
        for r in confidence_rows(metrics)
        for measure in ("confidence", "confidence_top")
    }
    return [{**row, **confidence}]
