"""trust-conditioning's metrics, report and tables (seed 001, §4.3, Table 4): per condition, ρ
between the prior in force and behaviour under it, and the mean |η̂² − η²|, from a run's event
table alone."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from personasim.analysis.event_tables import min_group_n, payloads
from personasim.analysis.rankings import ranking_spearman
from personasim.analysis.reports import model_label, small_note
from personasim.analysis.stats import (
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
from personasim.scenarios.trust.beliefs_metrics import (
    BY_CONSTRUCTION_NOTE,
    behaviour_scores,
    belief_eta,
    belief_scores,
    rho_cell,
    trait_n,
    two_level_rho,
    two_level_words,
    why_no_belief,
)
from personasim.scenarios.trust.metric_blocks import ConditioningStatistics
from personasim.scenarios.trust.metrics import behaviour_metrics, write_amount_sent
from personasim.simulation import run_header
from personasim.simulation.core.summary_counts import SummaryCount
from personasim.simulation.runs.lifecycle.tables import write_table

__all__ = [
    "CONDITIONING_SUMMARY_COUNTS",
    "conditioning_metrics",
    "conditioning_report",
    "conditioning_summary_rows",
    "conditioning_trait_rows",
    "write_conditioning_reports",
]


def conditioning_metrics(events: pd.DataFrame) -> ConditioningStatistics:
    """Table 4: per condition (one round each, after the elicitation round), ρ and |Δη²|."""
    header = run_header(events)
    params = header["params"]
    elicited = {
        p["attribute"]: p["value"]
        for p in payloads(events, "decision.made")
        if p["task"].startswith("trust.belief.")
    }
    imposed = {(p["condition"], p["attribute"]): p for p in payloads(events, "belief.imposed")}
    failed = {
        p["attribute"]: p
        for p in payloads(events, "decision.failed")
        if p["task"].startswith("trust.belief.")
    }
    conditions = {}
    for index, condition in enumerate(params["conditions"], start=2):
        behaviour = behaviour_metrics(events, params["attributes"], round_index=index)
        conditions[condition] = {
            **_condition_metrics(condition, behaviour, elicited, imposed),
            **_traits_without_rho(behaviour["attributes"], elicited, failed),
        }
    return {
        "model": model_label(header["model"]),
        "strategy": params["strategy"],
        "targets": {"weak": params.get("weak_rho"), "strong": params.get("strong_rho")},
        "elicited": elicited,
        "min_group_n": min_group_n(events),
        "conditions": conditions,
    }


def _condition_metrics(
    condition: str,
    behaviour: dict[str, Any],
    elicited: dict[str, dict[str, Any]],
    imposed: dict[tuple[str, str], dict[str, Any]],
) -> dict[str, Any]:
    """Table 4's cell for one condition. The prior in force is the imposed ranking, or for
    unconditioned and self the elicited belief (Ctx+$: its stated means, ties kept); behaviour
    enters ρ by its level means, so tied levels share an average rank."""
    per_trait: dict[str, dict[str, Any]] = {}
    for attribute, belief in elicited.items():
        shown = behaviour["attributes"][attribute]
        prior = imposed.get((condition, attribute), {}).get("ranking", belief["ranking"])
        scores = prior if (condition, attribute) in imposed else belief_scores(belief)
        eta, shown_eta = belief_eta(belief), read_stat(shown, "eta_squared")
        achieved = imposed.get((condition, attribute), {}).get("rho_with_elicited")
        rho = ranking_spearman(scores, behaviour_scores(shown))
        per_trait[attribute] = {
            "prior_ranking": prior,
            "imposed_rho": achieved,
            "behaviour_ranking": shown["ranking"],
            "rho": rho,
            "rho_by_construction": two_level_rho(rho, scores, behaviour_scores(shown)),
            "abs_delta_eta_squared": first_undefined(belief=eta, behaviour=shown_eta)
            or abs(eta - shown_eta),
            "small_levels": sorted(lvl for lvl, s in shown["levels"].items() if s["small"]),
        }
    deltas = [
        v["abs_delta_eta_squared"]
        for v in per_trait.values()
        if not isinstance(v["abs_delta_eta_squared"], Undefined)
    ]
    return {
        "n_decisions": behaviour["n_decisions"],
        "endowment": behaviour["endowment"],
        **stat_fields("mean_sent", read_stat(behaviour, "mean_sent")),
        **stat_fields("sd_sent", read_stat(behaviour, "sd_sent")),
        "parse_failures": behaviour["parse_failures"],
        **stat_fields("median_rho", median_of_defined(v["rho"] for v in per_trait.values())),
        **stat_fields(
            "median_rho_without_two_level",
            median_of_defined(v["rho"] for v in per_trait.values() if not v["rho_by_construction"]),
        ),
        "n_rho_by_construction": sum(v["rho_by_construction"] for v in per_trait.values()),
        **stat_fields("mae_eta_squared", mean_of(deltas, "no defined values")),
        **_achieved_fields(condition, per_trait),
        "small_levels": {a: v["small_levels"] for a, v in per_trait.items() if v["small_levels"]},
        "attributes": {
            a: {
                **v,
                **stat_fields("rho", v["rho"]),
                **stat_fields("abs_delta_eta_squared", v["abs_delta_eta_squared"]),
                **stat_fields(
                    "imposed_rho",
                    Undefined("no prior imposed") if v["imposed_rho"] is None else v["imposed_rho"],
                ),
            }
            for a, v in per_trait.items()
        },
    }


def _traits_without_rho(
    behaviour: Mapping[str, Any],
    elicited: Mapping[str, Any],
    failed: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any]:
    """Every analysed trait's place in a Table 4 cell: how many have a ρ and, for the others,
    why not (not asked, elicitation failed), with n per trait."""
    reasons = {
        a: why_no_belief(failed.get(a), shown)
        for a, shown in behaviour.items()
        if a not in elicited
    }
    return {
        "n_attributes": len(behaviour),
        "no_belief": reasons,
        "n_by_attribute": {a: trait_n(shown)["n"] for a, shown in behaviour.items()},
    }


def _achieved_fields(condition: str, per_trait: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The ρ an imposed prior actually has with the elicited belief, per condition: its median
    over traits and the traits it left unperturbed (ρ = 1: a 2-level trait cannot reach 0.8),
    so a "weak" condition that partly equals "self" says so."""
    achieved = {a: v["imposed_rho"] for a, v in per_trait.items() if v["imposed_rho"] is not None}
    if not achieved:
        reason = "no prior imposed" if condition in {"unconditioned", "self"} else "no beliefs"
        return {**stat_fields("median_imposed_rho", Undefined(reason)), "unperturbed": []}
    return {
        **stat_fields("median_imposed_rho", float(pd.Series(list(achieved.values())).median())),
        "unperturbed": sorted(a for a, rho in achieved.items() if rho >= 1.0 - 1e-12),
    }


def conditioning_report(metrics: dict[str, Any]) -> list[str]:
    lines = []
    for condition, m in metrics["conditions"].items():
        lines.append(
            f"  {condition}: median ρ(prior, behaviour) = {shown_stat(m, 'median_rho', 3)} over "
            f"{_n_rho(m)} of {m.get('n_attributes', len(m['attributes']))} traits, mean |Δη²| = "
            f"{shown_stat(m, 'mae_eta_squared', 3)} ({m['n_decisions']} deciders)"
            + two_level_words(m, _n_rho(m))
            + (
                f"; prior's achieved ρ with the elicited belief: median "
                f"{shown_stat(m, 'median_imposed_rho', 2)}, {len(m['unperturbed'])} traits "
                "unperturbed"
                if m["median_imposed_rho"] is not None
                else ""
            )
        )
        lines += [f"    no ρ for {a}: {why}" for a, why in _no_rho(m).items()]
    return lines


def _n_rho(cell: Mapping[str, Any]) -> int:
    return sum(1 for v in cell["attributes"].values() if v["rho"] is not None)


def _no_rho(cell: Mapping[str, Any]) -> dict[str, str]:
    """The traits of a Table 4 cell without a ρ, and why (no belief, or ρ undefined)."""
    undefined = {a: v["rho_undefined"] for a, v in cell["attributes"].items() if v["rho"] is None}
    return {**cell.get("no_belief", {}), **undefined}


def conditioning_summary_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "condition": condition,
            "n": m["n_decisions"],
            "n_traits_with_rho": _n_rho(m),
            "median_rho": m["median_rho"],
            "n_two_level": m.get("n_rho_by_construction", 0),
            "n_traits_without_two_level": _n_rho(m) - m.get("n_rho_by_construction", 0),
            "median_rho_without_two_level": m.get("median_rho_without_two_level"),
            "n_delta_defined": _n_defined(m, "abs_delta_eta_squared"),
            "mae_eta_squared": m["mae_eta_squared"],
            "n_imposed": _n_defined(m, "imposed_rho"),
            "median_imposed_rho": m["median_imposed_rho"],
            "unperturbed": len(m["unperturbed"]),
            "traits_without_rho": "; ".join(f"{a}: {why}" for a, why in _no_rho(m).items()),
            "small_group": bool(m["small_levels"]),
        }
        for condition, m in metrics["conditions"].items()
    ]


CONDITIONING_SUMMARY_COUNTS = {
    "median_rho": SummaryCount("n_traits_with_rho", "traits"),
    "median_rho_without_two_level": SummaryCount("n_traits_without_two_level", "traits"),
    "mae_eta_squared": SummaryCount("n_delta_defined", "traits"),
    "median_imposed_rho": SummaryCount("n_imposed", "traits"),
}
"""What each statistic of `conditioning_summary_rows` is over: the traits with a value (a ρ,
a ρ not ±1 by construction, a |Δη²|, an imposed prior's achieved ρ), not the row's deciders."""


def _n_defined(cell: Mapping[str, Any], key: str) -> int:
    """How many of a Table 4 cell's traits have a value of `key`."""
    return sum(1 for v in cell["attributes"].values() if v.get(key) is not None)


def conditioning_trait_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 4 by trait: a row per condition and analysed trait, with n and ρ or its reason."""
    rows = []
    for condition, m in metrics["conditions"].items():
        reasons = _no_rho(m)
        for attribute, n in m.get("n_by_attribute", {}).items():
            cell = m["attributes"].get(attribute, {})
            rows.append(
                {
                    "condition": condition,
                    "attribute": attribute,
                    "n": n,
                    "rho": cell.get("rho"),
                    "abs_delta_eta_squared": cell.get("abs_delta_eta_squared"),
                    "rho_undefined": reasons.get(attribute, ""),
                    "by_construction": bool(cell.get("rho_by_construction")),
                    "small_group": bool(cell.get("small_levels")),
                }
            )
    return rows


TWO_LEVEL_NOTE = (
    "median_rho: over every trait with a ρ (the paper's); median_rho_without_two_level: over "
    "those whose ρ is not ±1 by construction (n_two_level traits share only 2 levels)."
)


def write_conditioning_reports(metrics: dict[str, Any], directory: Path) -> list[Path]:
    rows = [{"model": metrics["model"], **row} for row in conditioning_summary_rows(metrics)]
    note = small_note(metrics["min_group_n"], "deciders in a level of a trait, in this condition")
    achieved = [
        {"condition": c, "attribute": a, "achieved_rho": v["imposed_rho"], "target_rho": target}
        for c, m in metrics["conditions"].items()
        for a, v in m["attributes"].items()
        if (target := metrics.get("targets", {}).get(c)) is not None
    ]
    by_trait = conditioning_trait_rows(metrics)
    sent = {
        f"{metrics['model']}, {c}": m
        for c, m in metrics["conditions"].items()
        if "mean_sent" in m or "mean_sent_undefined" in m
    }
    return [
        *write_amount_sent(sent, metrics.get("human_reference", []), directory),
        *write_table(
            rows,
            directory,
            "table4_conditioning",
            flag="small_group",
            notes=[note, TWO_LEVEL_NOTE],
        ),
        *(
            write_table(
                by_trait,
                directory,
                "table4_by_trait",
                flag="small_group",
                notes=[note, BY_CONSTRUCTION_NOTE],
                cells={"rho": rho_cell},
            )
            if by_trait
            else []
        ),
        *(write_table(achieved, directory, "table4_achieved_prior_rho") if achieved else []),
    ]
