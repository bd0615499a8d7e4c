"""Cross-environment metrics of `persona-journey`, computed from the event log alone.

Per persona: the Trust Game transfer, the survey's mean answer (the logprob-expected option
where the response carries logprobs, else the chosen option, counted), the survey's stability
(share of items answered alike in every repeat), the mean evaluator score over PersonaGym scenes
and on the Persona Consistency scene. Across personas: Spearman's ρ between environments with
BCa bootstrap intervals (personas resampled); per trait, ρ between the trait levels' means
in two environments; order effects (a place visited first vs later) and memory effects (a mode
vs `none`, after at least one earlier place) as differences of means with Welch's intervals.
Whatever cannot be computed is null with its reason. See docs/persona-journey.md.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired

import numpy as np
import pandas as pd
from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

from personasim.analysis.agreement import resampled_correlations
from personasim.analysis.event_tables import agent_payloads, min_group_n, rounded
from personasim.analysis.intervals import bca_interval, welch_interval
from personasim.analysis.reports import save_figure
from personasim.analysis.stats import mean_of
from personasim.analysis.undefined import CONSTANT, Statistic, Undefined, shown_stat, stat_fields
from personasim.scenarios.career_chat.options import option_distribution
from personasim.simulation.core.summary_counts import SummaryCount
from personasim.simulation.runs.lifecycle.atomic_files import atomic_path

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "AXIS_WORDS",
    "BOOTSTRAP_SEED",
    "MEANS",
    "N_BOOTSTRAP",
    "PAIRS",
    "SUMMARY_COUNTS",
    "PersonaJourneyMetrics",
    "agreement_figure",
    "bootstrap_spearman",
    "difference_of_means",
    "journey_metrics",
    "persona_table",
    "report_lines",
    "spearman",
    "summary_rows",
    "write_reports",
]

N_BOOTSTRAP = 1000
BOOTSTRAP_SEED = 0
"""Fixed, so `personasim metrics --check` recomputes the same intervals."""

PAIRS = (
    ("trust_vs_survey", "trust_sent", "survey_mean"),
    ("trust_vs_gym", "trust_sent", "gym_score"),
    ("survey_vs_gym", "survey_mean", "gym_score"),
    ("consistency_vs_stability", "gym_consistency", "survey_stability"),
)
"""Per-persona measures compared across environments (name, x, y)."""

OUTCOME = {"trust": "trust_sent", "survey": "survey_mean", "gym": "gym_score"}
"""The per-persona outcome of each place, for order and memory effects."""

CONSISTENCY_TASK = "Persona Consistency"


# --- statistics ------------------------------------------------------------------------------


def spearman(x: Sequence[float], y: Sequence[float]) -> Statistic:
    """Spearman's ρ (scipy), or why it is undefined."""
    from scipy import stats

    if len(x) < 3:
        return Undefined(f"fewer than 3 personas with both values (n={len(x)})")
    if len(set(x)) < 2 or len(set(y)) < 2:
        return Undefined(CONSTANT)
    return float(stats.spearmanr(x, y).statistic)


def bootstrap_spearman(
    x: Sequence[float], y: Sequence[float], n_boot: int = N_BOOTSTRAP, seed: int = BOOTSTRAP_SEED
) -> dict[str, Any]:
    """ρ with a 95% BCa interval over personas resampled with replacement (the rows of
    `default_rng(seed).integers(0, n, (n_boot, n))`), the jackknife leaving out one persona at
    a time; resamples whose ρ is undefined (a constant side) are left out."""
    rho = spearman(x, y)
    record = {"n": len(x), **stat_fields("rho", rho)}
    if isinstance(rho, Undefined):
        return {**record, **stat_fields("ci_low", rho), **stat_fields("ci_high", rho)}
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(xs)
    rows = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    draws = resampled_correlations(xs, ys, rows, "spearman")
    if np.sum(~np.isnan(draws)) < n_boot / 2:
        usable = int(np.sum(~np.isnan(draws)))
        low = high = Undefined(f"defined in only {usable} of {n_boot} bootstrap resamples")
    else:
        left_out = np.array([np.delete(np.arange(n), i) for i in range(n)])
        jackknife = resampled_correlations(xs, ys, left_out, "spearman")
        low, high = bca_interval(rho, draws, jackknife)
    return {**record, **stat_fields("ci_low", low), **stat_fields("ci_high", high)}


def difference_of_means(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    """mean(a) − mean(b) with Welch's 95% t interval (the groups are different personas, each
    with its own spread; it keeps its coverage with groups of 10, where a bootstrap does not:
    docs/intervals.md)."""
    record: dict[str, Any] = {"n_a": len(a), "n_b": len(b)}
    if not a or not b:
        why = Undefined("an empty group (" + ("first" if not a else "second") + ")")
        return {
            **record,
            **{k: v for n in ("diff", "ci_low", "ci_high") for k, v in stat_fields(n, why).items()},
        }
    low, high = welch_interval(a, b)
    return {
        **record,
        **stat_fields("diff", float(np.mean(a) - np.mean(b))),
        **stat_fields("ci_low", low),
        **stat_fields("ci_high", high),
    }


# --- the per-persona table -------------------------------------------------------------------


def _made(events: pd.DataFrame, task: str) -> pd.DataFrame:
    rows = events[(events["kind"] == "decision.made")]
    return rows[rows["payload"].map(lambda p: p.get("task") == task)]


def _survey_answers(events: pd.DataFrame) -> tuple[list[dict[str, Any]], int]:
    """One row per accepted survey answer: chosen option and the logprob-expected option
    (from the last `llm.call` of that persona's unit before the decision), and how many had
    no usable logprobs (their chosen option stands in)."""
    rows, without = [], 0
    last_call: dict[tuple[str, str], dict[str, Any]] = {}
    for event in events.itertuples():
        payload = event.payload
        key = (event.scope, event.agent_id)
        if event.kind == "llm.call" and payload.get("task") == "career.probe":
            last_call[key] = payload
        elif event.kind == "decision.made" and payload.get("task") == "career.probe":
            response = (last_call.get(key) or {}).get("response") or {}
            dist = option_distribution(response.get("logprobs"))
            option = int(payload["value"])
            if dist is None:
                without += 1
                expected = float(option)
            else:
                expected = float(sum(k * p for k, p in enumerate(dist, 1)))
            rows.append(
                {
                    "persona": event.agent_id,
                    "item": payload["item"],
                    "repeat": payload["repeat"],
                    "option": option,
                    "expected": expected,
                }
            )
    return rows, without


def persona_table(events: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One row per persona: its memory mode, route and the measures of each place."""
    personas = {
        r["agent_id"]: r["payload"].get("persona")
        for r in agent_payloads(events, "agent.created")
        if r["payload"].get("persona")
    }
    memory = {
        r["agent_id"]: r["payload"]["memory"] for r in agent_payloads(events, "journey.assigned")
    }
    routes: dict[str, list[str]] = defaultdict(list)
    for r in agent_payloads(events, "agent.moved"):
        if r["payload"].get("graph") == "journey":
            routes[r["agent_id"]].append(r["payload"]["to"])
    sent = {
        r.agent_id: float(r.payload["value"]) for r in _made(events, "trust.trustor").itertuples()
    }
    survey, without = _survey_answers(events)
    scores: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in _made(events, "persona_gym.evaluate").itertuples():
        scores[(r.payload["persona"], r.payload["gym_task"])].append(
            float(r.payload["value"]["score"])
        )
    rows = []
    for pid in memory:
        answers = [a for a in survey if a["persona"] == pid]
        tasks = {task: np.mean(v) for (p, task), v in scores.items() if p == pid}
        rows.append(
            {
                "persona": pid,
                "memory": memory[pid],
                "route": "-".join(routes.get(pid, [])),
                "trust_sent": sent.get(pid, np.nan),
                "survey_mean": np.mean([a["expected"] for a in answers]) if answers else np.nan,
                "survey_stability": _stability(answers),
                "gym_score": float(np.mean(list(tasks.values()))) if tasks else np.nan,
                "gym_consistency": tasks.get(CONSISTENCY_TASK, np.nan),
                "traits": (personas.get(pid) or {}).get("traits", {}),
            }
        )
    frame = pd.DataFrame(rows)
    return frame, {"survey_answers": len(survey), "survey_without_logprobs": without}


def _stability(answers: list[dict[str, Any]]) -> float:
    """Share of items whose repeats all chose one option (NaN: no item answered twice)."""
    by_item: dict[Any, set[int]] = defaultdict(set)
    counts: dict[Any, int] = defaultdict(int)
    for a in answers:
        by_item[a["item"]].add(a["option"])
        counts[a["item"]] += 1
    repeated = [item for item, n in counts.items() if n >= 2]
    if not repeated:
        return float("nan")
    return float(np.mean([len(by_item[i]) == 1 for i in repeated]))


def _pairs(frame: pd.DataFrame, x: str, y: str) -> tuple[list[float], list[float]]:
    both = frame[[x, y]].dropna()
    return both[x].tolist(), both[y].tolist()


# --- the metrics -----------------------------------------------------------------------------


@with_config(ConfigDict(extra="forbid"))
class PersonaJourneyMetrics(TypedDict):
    """persona-journey's metrics block (`journey_metrics`): the counts, and where any persona
    was measured its records, the agreement between environments, per trait, the order and
    memory effects and the mean of each measure (null, with the reason beside it, where no
    persona has the measure)."""

    n_personas: int
    decisions: dict[str, int]
    failures: dict[str, int]
    moves: int
    survey_answers: int
    survey_without_logprobs: int
    personas: NotRequired[list[dict[str, Any]]]
    agreement: NotRequired[dict[str, dict[str, Any]]]
    per_trait: NotRequired[dict[str, dict[str, Any]]]
    order_effects: NotRequired[dict[str, Any]]
    memory_effects: NotRequired[dict[str, Any]]
    mean_trust_sent: NotRequired[float | None]
    mean_survey_mean: NotRequired[float | None]
    mean_gym_score: NotRequired[float | None]
    mean_survey_stability: NotRequired[float | None]
    mean_trust_sent_undefined: NotRequired[str]
    mean_survey_mean_undefined: NotRequired[str]
    mean_gym_score_undefined: NotRequired[str]
    mean_survey_stability_undefined: NotRequired[str]


def journey_metrics(events: pd.DataFrame) -> PersonaJourneyMetrics:
    frame, counts = persona_table(events)
    failed = events[events["kind"] == "decision.failed"]["payload"].map(lambda p: p["task"])
    made = events[events["kind"] == "decision.made"]["payload"].map(lambda p: p["task"])
    metrics: dict[str, Any] = {
        "n_personas": len(frame),
        "decisions": {str(k): int(v) for k, v in made.value_counts().sort_index().items()},
        "failures": {str(k): int(v) for k, v in failed.value_counts().sort_index().items()},
        "moves": int((events["kind"] == "agent.moved").sum()),
        **counts,
    }
    if frame.empty:
        return metrics
    metrics["personas"] = [_persona_record(r) for r in frame.to_dict("records")]
    metrics["agreement"] = {name: bootstrap_spearman(*_pairs(frame, x, y)) for name, x, y in PAIRS}
    metrics["per_trait"] = _per_trait(frame, min_group_n(events))
    metrics["order_effects"] = _order_effects(frame)
    metrics["memory_effects"] = _memory_effects(frame)
    for name, measure in MEANS.items():
        missing = f"no persona has a {measure}"
        metrics.update(stat_fields(f"mean_{name}", mean_of(frame[name].dropna(), missing)))
    return metrics


MEANS = {
    "trust_sent": "Trust Game transfer",
    "survey_mean": "survey mean",
    "gym_score": "PersonaGym score",
    "survey_stability": "survey stability",
}
"""The per-persona measures (in words) whose mean over the personas with one is a top-level
metric."""


def summary_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """The run's top-level numbers (as by default) and, per mean, how many personas have the
    measure it averages (`n_<measure>`)."""
    row = {k: v for k, v in metrics.items() if isinstance(v, int | float | str | None)}
    personas = metrics.get("personas", [])
    counts = {f"n_{name}": sum(p.get(name) is not None for p in personas) for name in MEANS}
    return [{**row, **counts}]


SUMMARY_COUNTS = {f"mean_{name}": SummaryCount(f"n_{name}", "personas") for name in MEANS}
"""Each mean of `summary_rows` is over the personas with its measure, not all personas."""


def _persona_record(row: Mapping[str, Any]) -> dict[str, Any]:
    record = {k: row[k] for k in ("persona", "memory", "route")}
    for name in ("trust_sent", "survey_mean", "survey_stability", "gym_score", "gym_consistency"):
        value = row[name]
        record[name] = None if pd.isna(value) else rounded(float(value))
    return record


def _per_trait(frame: pd.DataFrame, smallest: int) -> dict[str, Any]:
    """Per trait: do its levels rank alike by trust transfer and by survey answer?"""
    result: dict[str, Any] = {}
    names = sorted({t for traits in frame["traits"] for t in traits})
    for trait in names:
        level = frame["traits"].map(lambda t, trait=trait: t.get(trait))
        grouped = frame.assign(level=level).dropna(subset=["level"]).groupby("level")
        means = grouped[["trust_sent", "survey_mean"]].mean().dropna()
        sizes = grouped.size()
        rho = spearman(means["trust_sent"].tolist(), means["survey_mean"].tolist())
        if isinstance(rho, Undefined) and len(means) < 3:
            rho = Undefined(f"fewer than 3 levels with both values ({len(means)})")
        result[trait] = {
            "levels": {str(k): int(sizes[k]) for k in means.index},
            "small_levels": [str(k) for k in means.index if sizes[k] < smallest],
            **stat_fields("rho_trust_survey", rho),
        }
    return result


def _position(route: str, place: str) -> int | None:
    stops = route.split("-") if route else []
    return stops.index(place) + 1 if place in stops else None


def _order_effects(frame: pd.DataFrame) -> dict[str, Any]:
    """Per place: outcome at its earliest position in the routes minus at its latest."""
    result = {}
    for place, outcome in OUTCOME.items():
        pos = frame["route"].map(lambda r, p=place: _position(r, p))
        seen = sorted(int(k) for k in pos.dropna().unique())
        if len(seen) < 2:
            where = f"step {seen[0]}" if seen else "no step"
            why = Undefined(
                f"every persona visited {place} at {where}: vary --order across "
                "runs or use --route shuffled"
            )
            result[place] = {
                k: v for n in ("diff", "ci_low", "ci_high") for k, v in stat_fields(n, why).items()
            }
            continue
        early = frame.loc[pos == seen[0], outcome].dropna().tolist()
        late = frame.loc[pos == seen[-1], outcome].dropna().tolist()
        result[place] = {"positions": [seen[0], seen[-1]], **difference_of_means(early, late)}
    return result


def _memory_effects(frame: pd.DataFrame) -> dict[str, Any]:
    """Per mode other than none and place: outcome minus none's, over visits after another
    place (a first visit has nothing to remember)."""
    result: dict[str, Any] = {}
    modes = sorted(set(frame["memory"]) - {"none"})
    if "none" not in set(frame["memory"]) or not modes:
        return {
            "undefined": "one memory mode in this run (or no `none` baseline): run with "
            "--memory none,summary,full to compare modes"
        }
    for mode in modes:
        for place, outcome in OUTCOME.items():
            later = frame["route"].map(lambda r, p=place: (_position(r, p) or 0) > 1)
            a = frame.loc[later & (frame["memory"] == mode), outcome].dropna().tolist()
            b = frame.loc[later & (frame["memory"] == "none"), outcome].dropna().tolist()
            record = difference_of_means(a, b)
            if not a or not b:
                why = Undefined(
                    f"no persona with memory {mode if not a else 'none'} visited "
                    f"{place} after another place"
                )
                record.update(
                    {
                        k: v
                        for n in ("diff", "ci_low", "ci_high")
                        for k, v in stat_fields(n, why).items()
                    }
                )
            result[f"{mode}/{place}"] = record
    return result


# --- report and figure -----------------------------------------------------------------------


def report_lines(metrics: dict[str, Any]) -> list[str]:
    lines = [
        f"personas: {metrics['n_personas']}, moves: {metrics['moves']}, "
        f"failures: {sum(metrics['failures'].values())}"
    ]
    for name, record in metrics.get("agreement", {}).items():
        lines.append(
            f"{name}: rho {shown_stat(record, 'rho')} "
            f"[{shown_stat(record, 'ci_low')}, {shown_stat(record, 'ci_high')}] "
            f"n={record['n']}"
        )
    return lines


AXIS_WORDS = {
    "trust_sent": "dollars sent in the Trust Game",
    "survey_mean": "survey: mean expected option (by logprobs)",
    "survey_stability": "survey: share of repeated items answered alike",
    "gym_score": "PersonaGym score (1-5)",
    "gym_consistency": "PersonaGym Persona Consistency (1-5)",
}
"""The per-persona measures in words, for the figure's axes."""


def agreement_figure(metrics: Mapping[str, Any]) -> Figure:
    """Two cross-environment scatters (trust vs survey, consistency vs stability), one dot per
    persona with both measures, n and Spearman ρ in each panel's title; a panel with no persona
    measured on both says so in words."""
    from matplotlib.figure import Figure

    table = pd.DataFrame(metrics["personas"])
    figure = Figure(figsize=(9.5, 4.2), layout="constrained")
    for ax, (name, x, y) in zip(figure.subplots(1, 2), (PAIRS[0], PAIRS[3]), strict=True):
        both = table[[x, y]].dropna() if {x, y} <= set(table.columns) else pd.DataFrame()
        if both.empty:
            ax.set_title(name)
            ax.text(0.5, 0.5, f"no data: no persona has both {x} and {y}", ha="center",
                    va="center", transform=ax.transAxes, wrap=True)  # fmt: skip
            ax.set_axis_off()
            continue
        ax.scatter(both[x], both[y])
        ax.set_xlabel(AXIS_WORDS.get(x, x))
        ax.set_ylabel(AXIS_WORDS.get(y, y))
        rho = shown_stat(metrics.get("agreement", {}).get(name, {"rho": None}), "rho")
        title = f"{name}: Spearman ρ {rho} (n={len(both)} personas)"
        ax.set_title(textwrap.fill(title, 52), fontsize=10)  # a long "undefined: …" wraps
    return figure


def write_reports(metrics: dict[str, Any], directory: Path) -> list[Path]:
    """`journey_personas.csv` and `journey_agreement.png` (two cross-environment scatters)."""
    if not metrics.get("personas"):
        return []
    directory.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame(metrics["personas"])
    csv = directory / "journey_personas.csv"
    with atomic_path(csv) as tmp:
        table.to_csv(tmp, index=False)
    png = save_figure(agreement_figure(metrics), directory, "journey_agreement")
    return [csv, png]
