"""trust-beliefs' metrics, report and tables (seed 001, §4.1–4.2, Table 3; Appendix D.1,
Table 9): each elicited belief's ranking and η̂², ρ_t = Spearman(belief, behaviour) and
|Δη²_t|, medians over traits, from a run's event table alone."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from personasim.analysis.event_tables import payloads
from personasim.analysis.rankings import Ranking, ranking_spearman
from personasim.analysis.reports import model_label, small_note
from personasim.analysis.stats import (
    eta_squared_from_group_stats,
    mean_of,
    median_of_defined,
)
from personasim.analysis.undefined import (
    Undefined,
    first_undefined,
    read_stat,
    shown_stat,
    stat_fields,
)
from personasim.scenarios.trust.metric_blocks import BeliefsStatistics
from personasim.scenarios.trust.metrics import (
    behaviour_metrics,
    human_line,
    population_report,
    write_amount_sent,
)
from personasim.simulation import run_header
from personasim.simulation.core.summary_counts import SummaryCount
from personasim.simulation.runs.lifecycle.tables import significant, write_table

__all__ = [
    "BELIEFS_SUMMARY_COUNTS",
    "BY_CONSTRUCTION_MARK",
    "BY_CONSTRUCTION_NOTE",
    "behaviour_scores",
    "belief_eta",
    "belief_metrics",
    "belief_scores",
    "beliefs_metrics",
    "beliefs_report",
    "beliefs_summary_rows",
    "has_small_level",
    "rho_cell",
    "table3_rows",
    "trait_n",
    "two_level_rho",
    "two_level_words",
    "why_no_belief",
    "write_beliefs_reports",
    "write_beliefs_sweep_reports",
]


def beliefs_metrics(events: pd.DataFrame) -> BeliefsStatistics:
    header = run_header(events)
    behaviour = behaviour_metrics(events, header["params"]["attributes"])
    return {
        "model": model_label(header["model"]),
        "behaviour": behaviour,
        **belief_metrics(events, behaviour["attributes"]),
    }


def belief_metrics(events: pd.DataFrame, behaviour: Mapping[str, Any]) -> dict[str, Any]:
    """Beliefs per strategy and trait, their consistency with `behaviour`, and the medians.

    Every strategy has a record for every analysed trait: a trait that was not asked about
    (fewer than two levels in the split) or whose elicitation failed has null statistics and
    the reason in words (`missing`), so a table can show its row and a summary can say over
    how many traits its median is taken."""
    params = run_header(events)["params"]
    made: dict[tuple[str, str], Any] = {}
    for payload in payloads(events, "decision.made"):
        if payload["task"].startswith("trust.belief."):
            made[(payload["strategy"], payload["attribute"])] = payload["value"]
    failures = [
        p for p in payloads(events, "decision.failed") if p["task"].startswith("trust.belief.")
    ]
    failed = {(p["strategy"], p["attribute"]): p for p in failures}
    strategies = params.get("strategies") or [params["strategy"]]
    beliefs: dict[str, dict[str, Any]] = {}
    for strategy in strategies:
        per_trait = beliefs.setdefault(strategy, {})
        for attribute, shown in behaviour.items():
            belief = made.get((strategy, attribute))
            per_trait[attribute] = (
                _consistency(belief, shown)
                if belief is not None
                else _no_belief(why_no_belief(failed.get((strategy, attribute)), shown), shown)
            )
    return {
        "beliefs": beliefs,
        "summary": {strategy: _summary(per_trait) for strategy, per_trait in beliefs.items()},
        "elicitation_failures": len(failures),
    }


def why_no_belief(failure: Mapping[str, Any] | None, behaviour: Mapping[str, Any]) -> str:
    """Why a strategy has no belief about a trait, in words."""
    if failure is not None:
        return f"the elicitation failed after {failure['attempts']} attempts"
    levels = list(behaviour["levels"])
    if behaviour.get("n_personas") == 0 or not levels:
        reason = read_stat(behaviour, "eta_squared")
        detail = reason.reason.split(": ", 1)[-1] if isinstance(reason, Undefined) else ""
        return f"not asked: {detail or 'no level of this trait among the deciders'}"
    if len(levels) < 2:
        return f"not asked: a single level in the split ({levels[0][:30]})"
    return "no elicitation recorded (the run did not finish it)"


def _no_belief(reason: str, behaviour: Mapping[str, Any]) -> dict[str, Any]:
    """The record of a trait without a belief: behaviour as measured, the rest null + reason."""
    absent = Undefined(reason)
    return {
        **stat_fields("belief_ranking", absent),
        **stat_fields("belief_eta_squared", absent),
        "behaviour_ranking": behaviour["ranking"],
        **stat_fields("behaviour_eta_squared", read_stat(behaviour, "eta_squared")),
        **stat_fields("rho", absent),
        "rho_by_construction": False,
        **stat_fields("abs_delta_eta_squared", absent),
        **trait_n(behaviour),
        "small_group": has_small_level(behaviour),
        "missing": reason,
    }


def trait_n(behaviour: Mapping[str, Any]) -> dict[str, Any]:
    """n behind a trait's row: deciders at its analysed levels, of the personas there."""
    n = sum(s["n"] for s in behaviour["levels"].values())
    return {
        "n": n,
        "n_personas": behaviour.get("n_personas", n),
        "n_levels": len(behaviour["levels"]),
    }


def belief_scores(belief: Mapping[str, Any]) -> Ranking:
    """What a belief's ρ is computed from: Ctx+$'s stated mean per level (equal means tie), or
    the stated ranking (NoCtx+Tr, Ctx+Tr)."""
    stats = belief.get("stated", {}).get("mean_sd_level_stats")
    if stats:
        return {level: float(s["mean"]) for level, s in stats.items()}
    return belief["ranking"]


def belief_eta(belief: Mapping[str, Any]) -> float | Undefined:
    """A belief's η̂²: recomputed from Ctx+$'s stated means and SDs (so an undefined one keeps
    its reason), else the stated effect size."""
    stats = belief.get("stated", {}).get("mean_sd_level_stats")
    if stats:
        return eta_squared_from_group_stats({k: (s["mean"], s["sd"]) for k, s in stats.items()})
    return float(belief["eta_squared"])


def behaviour_scores(behaviour: Mapping[str, Any]) -> dict[str, float]:
    """The behavioural mean per level: π* with ties kept, for ρ with average ranks."""
    return {level: s["mean"] for level, s in behaviour["levels"].items()}


def two_level_rho(rho: Any, belief: Ranking, behaviour: Ranking) -> bool:
    """Whether a defined ρ is ±1 by construction: belief and behaviour share only 2 levels
    (a 2-level trait such as US citizenship), so any ordering of them gives ρ = ±1 and the
    value says only which way round, not how strongly they agree."""
    if isinstance(rho, Undefined):
        return False
    first = set(belief) if not isinstance(belief, Mapping) else set(belief.keys())
    second = set(behaviour) if not isinstance(behaviour, Mapping) else set(behaviour.keys())
    return len(first & second) == 2


BY_CONSTRUCTION_MARK = "‡"
"""How a table marks a ρ that is ±1 by construction (`two_level_rho`)."""
BY_CONSTRUCTION_NOTE = (
    f"{BY_CONSTRUCTION_MARK} ρ = ±1 by construction: belief and behaviour share only 2 levels, "
    "so any ordering gives ±1; left out of the median marked 'without 2-level traits' (the "
    "paper's median, 'Median', counts them)."
)


def has_small_level(behaviour: Mapping[str, Any]) -> bool:
    return any(s["small"] for s in behaviour["levels"].values())


def _consistency(belief: dict[str, Any], behaviour: dict[str, Any]) -> dict[str, Any]:
    scores = behaviour_scores(behaviour)
    rho = ranking_spearman(belief_scores(belief), scores)
    eta = belief_eta(belief)
    shown = read_stat(behaviour, "eta_squared")
    delta = first_undefined(belief=eta, behaviour=shown) or abs(eta - shown)
    return {
        "belief_ranking": belief["ranking"],
        **stat_fields("belief_eta_squared", eta),
        "behaviour_ranking": behaviour["ranking"],
        **stat_fields("behaviour_eta_squared", shown),
        **stat_fields("rho", rho),
        "rho_by_construction": two_level_rho(rho, belief_scores(belief), scores),
        **stat_fields("abs_delta_eta_squared", delta),
        **trait_n(behaviour),
        "small_group": has_small_level(behaviour),
    }


def _summary(per_trait: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Medians over the traits with a value; the traits without one, each with its reason."""
    rhos = [read_stat(v, "rho") for v in per_trait.values()]
    deltas = [read_stat(v, "abs_delta_eta_squared") for v in per_trait.values()]
    defined = [r for r in rhos if not isinstance(r, Undefined)]
    informative = [
        r for r, v in zip(rhos, per_trait.values(), strict=True) if not v.get("rho_by_construction")
    ]
    return {
        "n_attributes": len(per_trait),
        "n_rho_defined": len(defined),
        "n_rho_by_construction": len(defined) - len(_defined(informative)),
        **stat_fields("median_rho_without_two_level", median_of_defined(informative)),
        "n_delta_defined": sum(not isinstance(d, Undefined) for d in deltas),
        "no_rho": {
            a: r.reason for a, r in zip(per_trait, rhos, strict=True) if isinstance(r, Undefined)
        },
        **stat_fields("median_rho", median_of_defined(rhos)),
        **stat_fields("mean_rho", mean_of(defined, "no defined values")),
        **stat_fields("median_abs_delta_eta_squared", median_of_defined(deltas)),
    }


def _defined(values: list[Any]) -> list[Any]:
    return [v for v in values if not isinstance(v, Undefined)]


def beliefs_report(metrics: dict[str, Any]) -> list[str]:
    """Per strategy the medians and how many traits they are over, naming those without a ρ
    (with their reason) rather than counting them."""
    behaviour = {**metrics["behaviour"], "human_reference": metrics.get("human_reference", [])}
    lines = population_report(behaviour)[:1]
    if humans := human_line(behaviour, behaviour.get("endowment")):
        lines.append(humans)
    for strategy, summary in metrics["summary"].items():
        lines.append(
            f"  {strategy}: median ρ = {shown_stat(summary, 'median_rho', 3)} over "
            f"{summary['n_rho_defined']} of {summary['n_attributes']} traits, median "
            f"|Δη²| = {shown_stat(summary, 'median_abs_delta_eta_squared', 3)} over "
            f"{summary.get('n_delta_defined', summary['n_attributes'])}"
            + two_level_words(summary, summary["n_rho_defined"])
        )
        lines += [f"    no ρ for {a}: {why}" for a, why in summary.get("no_rho", {}).items()]
    return lines


def two_level_words(stats: Mapping[str, Any], n_rho: int) -> str:
    """The median ρ without the traits whose ρ is ±1 by construction (2 levels), where there
    are any among the `n_rho` traits with a ρ."""
    k = stats.get("n_rho_by_construction", 0)
    if not k:
        return ""
    return (
        f"; median ρ = {shown_stat(stats, 'median_rho_without_two_level', 3)} over the "
        f"{n_rho - k} with more than 2 levels (a 2-level trait's ρ is ±1 by construction)"
    )


def rho_cell(row: Mapping[str, Any]) -> str | None:
    """A ρ of Table 3 or 4 with its mark where it is ±1 by construction (`two_level_rho`)."""
    rho = row.get("rho")
    if rho is None:
        return None
    shown = significant(rho)
    return f"{shown} {BY_CONSTRUCTION_MARK}" if row.get("by_construction") else shown


def table3_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 3's shape: strategy × trait, |Δη²| and ρ, with a median row per strategy; a trait
    with a behavioural level smaller than the run's `min_group_n` is flagged `small_group`."""
    rows = []
    for strategy, per_trait in metrics["beliefs"].items():
        for attribute, result in per_trait.items():
            rows.append(
                {
                    "model": metrics["model"],
                    "strategy": strategy,
                    "attribute": attribute,
                    "n": result.get("n"),
                    "abs_delta_eta_squared": result["abs_delta_eta_squared"],
                    "abs_delta_eta_squared_undefined": result.get(
                        "abs_delta_eta_squared_undefined", ""
                    ),
                    "rho": result["rho"],
                    "rho_undefined": result.get("rho_undefined", ""),
                    "by_construction": bool(result.get("rho_by_construction")),
                    "small_group": result["small_group"],
                }
            )
        summary = metrics["summary"][strategy]
        rows.append(
            {
                "model": metrics["model"],
                "strategy": strategy,
                "attribute": "Median",
                "n": summary["n_rho_defined"],
                "abs_delta_eta_squared": summary["median_abs_delta_eta_squared"],
                "abs_delta_eta_squared_undefined": summary.get(
                    "median_abs_delta_eta_squared_undefined", ""
                ),
                "rho": summary["median_rho"],
                "rho_undefined": summary.get("median_rho_undefined", ""),
                "by_construction": False,
                "small_group": False,
            }
        )
        if "median_rho_without_two_level" in summary or summary.get(
            "median_rho_without_two_level_undefined"
        ):
            rows.append(_median_without_row(metrics["model"], strategy, summary))
    return rows


def _median_without_row(model: str, strategy: str, summary: Mapping[str, Any]) -> dict[str, Any]:
    """Table 3's median ρ over the traits whose ρ is not ±1 by construction."""
    return {
        "model": model,
        "strategy": strategy,
        "attribute": "Median without 2-level traits",
        "n": summary["n_rho_defined"] - summary.get("n_rho_by_construction", 0),
        "abs_delta_eta_squared": None,
        "abs_delta_eta_squared_undefined": "see Median (|Δη²| is not ±1 by construction)",
        "rho": summary["median_rho_without_two_level"],
        "rho_undefined": summary.get("median_rho_without_two_level_undefined", ""),
        "by_construction": False,
        "small_group": False,
    }


def write_beliefs_reports(metrics: dict[str, Any], directory: Path) -> list[Path]:
    smallest = metrics["behaviour"]["min_group_n"]
    return [
        *write_table(
            table3_rows(metrics),
            directory,
            "table3_consistency",
            flag="small_group",
            notes=[
                small_note(smallest, "deciders in a level of the trait"),
                BY_CONSTRUCTION_NOTE,
                N_NOTE,
            ],
            cells={"rho": rho_cell},
        ),
        *write_amount_sent(
            {metrics["model"]: metrics["behaviour"]}, metrics.get("human_reference", []), directory
        ),
    ]


N_NOTE = (
    "n: personas who decided, at the trait's analysed levels; on a Median row, the number of "
    "traits the median is over. A trait without a belief keeps its row, with the reason in "
    "rho_undefined."
)


def beliefs_summary_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Per strategy a "Median" row (Table 3's medians, Table 9's mean ρ) and a row per trait,
    so a sweep can lay Table 3 out wide (traits × strategies, per model)."""
    rows = []
    for strategy, summary in metrics["summary"].items():
        without_two_level = summary["n_rho_defined"] - summary.get("n_rho_by_construction", 0)
        rows.append(
            {
                "strategy": strategy,
                "attribute": "Median",
                "rho": summary["median_rho"],
                "rho_n": summary["n_rho_defined"],
                "abs_delta_eta_squared": summary["median_abs_delta_eta_squared"],
                "abs_delta_eta_squared_n": summary.get("n_delta_defined"),
                **summary,
            }
        )
        if "n_rho_by_construction" in summary:
            rows[-1]["n_rho_without_two_level"] = without_two_level
            rows.append(
                {
                    "strategy": strategy,
                    "attribute": "Median without 2-level traits",
                    "rho": summary["median_rho_without_two_level"],
                    "rho_n": without_two_level,
                    "rho_undefined": summary.get("median_rho_without_two_level_undefined", ""),
                    "abs_delta_eta_squared": None,
                }
            )
        rows += [
            {
                "strategy": strategy,
                "attribute": attribute,
                "rho": result["rho"],
                "rho_undefined": result.get("rho_undefined", ""),
                "by_construction": bool(result.get("rho_by_construction")),
                "abs_delta_eta_squared": result["abs_delta_eta_squared"],
            }
            for attribute, result in metrics["beliefs"][strategy].items()
        ]
    return rows


BELIEFS_SUMMARY_COUNTS = {
    "rho": SummaryCount("rho_n", "traits"),
    "abs_delta_eta_squared": SummaryCount("abs_delta_eta_squared_n", "traits"),
    "median_rho": SummaryCount("n_rho_defined", "traits"),
    "mean_rho": SummaryCount("n_rho_defined", "traits"),
    "median_rho_without_two_level": SummaryCount("n_rho_without_two_level", "traits"),
    "median_abs_delta_eta_squared": SummaryCount("n_delta_defined", "traits"),
}
"""What each statistic of `beliefs_summary_rows` is over: a median row's values over the
traits with one (`rho_n`, `abs_delta_eta_squared_n`); a trait's own ρ and |Δη²| (over its
levels and deciders) have no count in the row and show their values alone."""


def write_beliefs_sweep_reports(
    rows: list[dict[str, Any]], varied: list[str], directory: Path
) -> list[Path]:
    """Table 3's wide shape (traits × strategies, |Δη²| and ρ per model, one block per other
    varied setting) and, when the sweep varies the endowment, Table 9 (mean ρ per endowment)."""
    if not rows:
        return []
    frame = pd.DataFrame(rows)
    others = [name for name in varied if name != "model"]
    wide = frame.pivot_table(
        index=[*others, "strategy", "attribute"],
        columns="model",
        values=["abs_delta_eta_squared", "rho"],
        aggfunc="first",
        dropna=False,
        sort=False,
    )
    wide = wide.swaplevel(axis=1).sort_index(axis=1, level=0, sort_remaining=False)
    wide.columns = [f"{model} {'ρ' if v == 'rho' else 'abs Δη²'}" for model, v in wide.columns]
    written = write_table(wide.reset_index().to_dict("records"), directory, "table3_wide")
    if "endowment" not in varied:
        return written
    medians = frame[frame["attribute"] == "Median"]
    by_endowment = medians.pivot_table(
        index=["model", "strategy"], columns="endowment", values="mean_rho", aggfunc="first"
    )
    by_endowment.columns = [f"${c}" for c in by_endowment.columns]
    table = by_endowment.reset_index().to_dict("records")
    return [*written, *write_table(table, directory, "table9_mean_spearman_by_endowment")]
