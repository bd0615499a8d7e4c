"""Metrics of the career-chat scenario (seed 003, §5.1, Appendices E, G).

The scenario's metrics from its event table alone (`compute_metrics`), from the pieces beside
it: option distributions (`options`), group distances and the consistency baseline
(`distances`, on `analysis.divergences`), the groupings (`groupings`, `jobs`, `countries`), their
bootstrap and permutation spread (`uncertainty`) and judge–human agreement (Pearson r,
ICC(3,k) in `analysis.agreement`). Its tables, figures and console report are in `reports`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from personasim.analysis.agreement import pearson
from personasim.analysis.divergences import emd_ordinal
from personasim.analysis.event_tables import min_group_n, payloads, rounded
from personasim.analysis.reliability import icc3k
from personasim.analysis.reports import model_label
from personasim.analysis.resampling import in_processes
from personasim.analysis.stats import holm, mean_of, ratio_of, small_groups
from personasim.analysis.undefined import Undefined, stat_fields
from personasim.environments.career_chat import DIMENSIONS, EDUCATION_ALIASES, education_label
from personasim.scenarios.career_chat.distances import (
    GroupDistances,
    group_distances,
    random_pairing_emd,
)
from personasim.scenarios.career_chat.groupings import GROUPINGS, job_labels
from personasim.scenarios.career_chat.metric_blocks import CareerChatMetrics
from personasim.scenarios.career_chat.options import one_hot, option_distribution
from personasim.scenarios.career_chat.uncertainty import (
    Uncertainty,
    group_data,
    group_uncertainty,
)
from personasim.simulation import run_header
from personasim.simulation.core.stages import stage
from personasim.simulation.llm.model_spec import model_name

__all__ = [
    "DIMENSIONS",
    "DIMENSION_LABELS",
    "EDUCATION_ALIASES",
    "FORMATS",
    "Resamples",
    "compute_metrics",
    "education_label",
]

DIMENSION_LABELS = {
    "coverage": "Attribute Coverage",
    "correctness": "Attribute Correctness",
    "diversity": "Question Diversity",
    "relevance": "Relevance",
}

FORMATS = ("profile", "dialogue")
"""BA_user and BA_dialogue (§5)."""


# ---------------------------------------------------------------------------------------------
# The scenario's metrics, from the event table alone (§5.1, Tables 1–3, 5, Figure 4)
# ---------------------------------------------------------------------------------------------


def _profiles(events: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Each user's attributes, with the job labels the log gives its title: a `--job-groups`
    file's, then a bound classifier's (`--role classifier`, for the titles the file left)."""
    labels: dict[str, dict[str, str]] = {}
    for given in payloads(events, "career.job_groups"):
        labels |= given["titles"]
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
        distances,
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
                **stat_fields("ratio_p", spread.ratio_p.get((a, b), _NO_CI), None),
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
        pair.update(stat_fields("ratio_p_holm", adjusted, None))  # full precision
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


NO_RATINGS = (
    "the judge rated no dialogue: none was asked (--judge-samples 0) or every rating failed"
)


def _judge_means(judge: pd.DataFrame) -> dict[str, Any]:
    """Table 1's LLM-judge column: ratings averaged over samples, then over dialogues."""
    per_dialogue = judge.groupby(["dimension", "user"])["rating"].mean()
    means: dict[str, Any] = {}
    rated_dialogues: dict[str, int] = {}
    for d in DIMENSIONS:
        rated = per_dialogue[d] if d in per_dialogue.index.get_level_values(0) else []
        means.update(stat_fields(d, mean_of(rated, NO_RATINGS)))
        rated_dialogues[d] = len(rated)
    return {"n_ratings": len(judge), "means": means, "n_dialogues": rated_dialogues}


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
        "career.classify",
    )
    return {name.split(".")[1]: tasks.count(name) for name in names}


# ---------------------------------------------------------------------------------------------
# The metrics hook
# ---------------------------------------------------------------------------------------------


def compute_metrics(events: pd.DataFrame) -> CareerChatMetrics:
    """Every number of the run, from its event table (the scenario's `compute_metrics`)."""
    header = run_header(events)
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
        "job_labels": job_labels(events, profiles),
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
        model = model_name(str(specs[0])) if specs else model_label(header["model"])
        if paper_model not in model:
            differs.append(f"{role}: {model} (paper: {paper_model})")
    return differs


def _resamples(header: Mapping[str, Any]) -> Resamples:
    """From the run's parameters; logs from before item 4 (and imports) get the defaults."""
    params = header["params"]
    default = Resamples()
    return Resamples(
        int(params.get("bootstrap", default.bootstrap)),
        int(params.get("permutations", default.permutations)),
        int(header.get("seed") or 0),
    )
