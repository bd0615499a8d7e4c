"""Metrics, tables and figures of the Trust Game scenarios (seed 001, belief–behaviour
consistency), computed from a run's event table alone.

- trust-population (§4.1): per trait, the behavioural ranking π*_t of its levels by mean
  transfer, η²_t from a one-way ANOVA, and n per level.
- trust-beliefs (§4.1–4.2, Table 3; Appendix D.1, Table 9): each elicited belief's ranking and
  η̂², ρ_t = Spearman(belief, behaviour) and |Δη²_t|, medians over traits.
- trust-conditioning (§4.3, Table 4): per condition, ρ between the prior in force and behaviour
  under it, and the mean |η̂² − η²|.

trust-forecast's are in `trust_forecast`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from personasim.analysis.event_tables import agent_payloads, min_group_n, payloads
from personasim.analysis.rankings import Ranking, ranking_spearman
from personasim.analysis.reports import model_label, save_figure, small_note, write_table
from personasim.analysis.stats import (
    eta_squared,
    eta_squared_from_group_stats,
    mean_of,
    median_of_defined,
    rank_levels,
    sample_sd,
    summarize_levels,
)
from personasim.analysis.undefined import (
    CONSTANT,
    NO_VALUES,
    SINGLE_LEVEL,
    Undefined,
    first_undefined,
    read_stat,
    shown_stat,
    stat_fields,
)

__all__ = [
    "analysed_levels",
    "behaviour_metrics",
    "behaviour_scores",
    "belief_eta",
    "belief_metrics",
    "belief_scores",
    "beliefs_metrics",
    "beliefs_report",
    "beliefs_summary_rows",
    "conditioning_metrics",
    "conditioning_report",
    "conditioning_summary_rows",
    "conditioning_trait_rows",
    "has_small_level",
    "population_metrics",
    "population_report",
    "population_rows",
    "table3_rows",
    "write_beliefs_reports",
    "write_beliefs_sweep_reports",
    "write_conditioning_reports",
    "write_population_reports",
]


# ---------------------------------------------------------------------------------------------
# trust-population: behaviour per trait (§4.1)
# ---------------------------------------------------------------------------------------------


def population_metrics(events: pd.DataFrame) -> dict[str, Any]:
    params = payloads(events, "run.started")[0]["params"]
    return behaviour_metrics(events, params["attributes"])


def behaviour_metrics(
    events: pd.DataFrame, attributes: Sequence[str], round_index: int | None = None
) -> dict[str, Any]:
    """§4.1 behavioural outcomes of the trustors, in one round when trustors play several."""
    traits = {
        e["agent_id"]: e["payload"]["persona"]["traits"]
        for e in agent_payloads(events, "agent.created")
        if "persona" in e["payload"]
    }
    kept = analysed_levels(events)
    endowment = payloads(events, "run.started")[0]["params"].get("endowment")
    if round_index is not None:
        events = events[events["round"] == round_index]
    sent = {e["agent_id"]: e["payload"]["sent"] for e in agent_payloads(events, "trust.transfer")}
    ids = sorted(sent)
    amounts = [sent[i] for i in ids]
    smallest = min_group_n(events)
    return {
        "endowment": endowment,
        "n_personas": len(traits),
        "n_decisions": len(ids),
        "parse_failures": _count(events, "decision.failed", "trust.trustor"),
        "reasks": _count(events, "decision.reask", "trust.trustor"),
        **stat_fields("mean_sent", mean_of(amounts, "no decisions")),
        **stat_fields("sd_sent", sample_sd(amounts)),
        "min_group_n": smallest,
        "attributes": {
            name: _attribute_metrics(
                name, ids, amounts, traits, smallest, None if kept is None else kept.get(name)
            )
            for name in attributes
        },
    }


def analysed_levels(events: pd.DataFrame) -> dict[str, list[str]] | None:
    """Each trait's analysed levels from the run's `trust.levels` event (the split), or None
    for a log written before it existed (every level present is analysed)."""
    found = payloads(events, "trust.levels")
    return found[0]["levels"] if found else None


def _count(events: pd.DataFrame, kind: str, task: str) -> int:
    return sum(1 for p in payloads(events, kind) if p.get("task") == task)


def _attribute_metrics(
    name: str,
    ids: list[str],
    amounts: list[float],
    traits: dict[str, dict[str, str]],
    smallest: int,
    kept: list[str] | None = None,
) -> dict[str, Any]:
    """π*_t, η²_t and n per level for one trait, over personas that have it at a `kept` level
    (the split; None: any) and decided; a level with fewer than `smallest` deciders is flagged
    `small`."""
    pairs = [
        (a, traits[i][name])
        for i, a in zip(ids, amounts, strict=True)
        if name in traits[i] and (kept is None or traits[i][name] in kept)
    ]
    values = [a for a, _ in pairs]
    levels = [lvl for _, lvl in pairs]
    at_levels = sum(1 for t in traits.values() if name in t and (kept is None or t[name] in kept))
    eta = eta_squared(values, levels)
    if isinstance(eta, Undefined):
        eta = Undefined(_why_no_eta(eta.reason, name, traits, kept, at_levels, values, levels))
    return {
        "ranking": rank_levels(values, levels),
        **stat_fields("eta_squared", eta),
        "n": len(values),
        "n_personas": at_levels,
        "levels": {
            s.level: {"n": s.n, "mean": round(s.mean, 6), "small": s.n < smallest}
            for s in summarize_levels(values, levels)
        },
    }


def _why_no_eta(
    reason: str,
    name: str,
    traits: dict[str, dict[str, str]],
    kept: list[str] | None,
    at_levels: int,
    values: list[float],
    levels: list[str],
) -> str:
    """An undefined η²'s reason, said so a reader can act on it: which levels, how many
    personas, how many of their decisions failed (the short reason first, as elsewhere)."""
    if not any(name in t for t in traits.values()):
        return f"{NO_VALUES}: no persona has this trait"
    if kept is not None and not kept:
        return f"{NO_VALUES}: no level of this trait in the test split"
    if not levels:
        return f"{NO_VALUES}: all {at_levels} decisions at its levels failed"
    if reason == SINGLE_LEVEL:
        return f"{SINGLE_LEVEL} ({levels[0][:30]}, n={len(levels)})"
    if reason == CONSTANT:
        return f"{CONSTANT} (all {len(values)} deciders sent ${values[0]:g})"
    return reason


def population_report(metrics: dict[str, Any]) -> list[str]:
    lines = [
        f"{metrics['n_decisions']} of {metrics['n_personas']} personas decided "
        f"({metrics['parse_failures']} parse failures, {metrics['reasks']} re-asks); "
        f"mean sent {shown_stat(metrics, 'mean_sent')}, SD {shown_stat(metrics, 'sd_sent')}",
    ]
    if humans := human_line(metrics, metrics.get("endowment")):
        lines.append(humans)
    for name, result in metrics["attributes"].items():
        eta = shown_stat(result, "eta_squared", 3)
        n = f"n = {result.get('n', sum(s['n'] for s in result['levels'].values()))}"
        if result["eta_squared"] is None:
            lines.append(f"  {name}: eta² {eta}; {n}")
            continue
        top = " > ".join(result["ranking"][:3])
        small = [level for level, s in result["levels"].items() if s["small"]]
        note = f" (n < {metrics['min_group_n']}: {', '.join(small)})" if small else ""
        lines.append(f"  {name}: eta² = {eta}, {n}; ranking {top} ...{note}")
    return lines


def population_rows(metrics: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per trait (η², n, levels) and per level (n, mean, place in π*) of §4.1's behaviour."""
    traits, levels = [], []
    for name, result in metrics["attributes"].items():
        traits.append(
            {
                "attribute": name,
                "n": sum(s["n"] for s in result["levels"].values()),
                "n_levels": len(result["levels"]),
                "eta_squared": result["eta_squared"],
                "eta_squared_undefined": result.get("eta_squared_undefined", ""),
                "ranking": " > ".join(result["ranking"]),
                "small_group": any(s["small"] for s in result["levels"].values()),
            }
        )
        place = {level: i for i, level in enumerate(result["ranking"], start=1)}
        levels.extend(
            {"attribute": name, "level": level, **stats, "place": place.get(level)}
            for level, stats in result["levels"].items()
        )
    return traits, levels


def eta_figure(traits: list[dict[str, Any]]) -> Figure:
    """η² of each trait's levels on the amount sent, with n per trait; undefined ones shown
    as absent (labelled), never as zero."""
    figure = Figure(figsize=(6.4, 0.4 * max(len(traits), 3) + 1.2))
    axes = figure.subplots()
    names = [f"{t['attribute']} (n={t['n']}, {t['n_levels']} levels)" for t in traits]
    values = [t["eta_squared"] if t["eta_squared"] is not None else 0.0 for t in traits]
    axes.barh(
        names, values, color=["C0" if t["eta_squared"] is not None else "none" for t in traits]
    )
    for i, t in enumerate(traits):
        if t["eta_squared"] is None:
            axes.text(0, i, f" undefined: {t['eta_squared_undefined']}", va="center", fontsize=7)
    axes.invert_yaxis()
    axes.set_xlabel("η² (one-way ANOVA of dollars sent on the trait's levels)")
    axes.set_title("trust-population: effect of each trait (seed 001, §4.1)")
    return figure


def write_population_reports(metrics: dict[str, Any], directory: Path) -> list[Path]:
    traits, levels = population_rows(metrics)
    note = small_note(metrics["min_group_n"], "deciders in a level of the trait")
    humans = human_note(metrics.get("human_reference", []))
    return [
        *write_table(traits, directory, "population_traits", flag="small_group", notes=[note]),
        *write_table(levels, directory, "population_levels", flag="small", notes=[note, humans]),
        *write_amount_sent({"this run": metrics}, metrics.get("human_reference", []), directory),
        save_figure(eta_figure(traits), directory, "population_eta_squared"),
    ]


# ---------------------------------------------------------------------------------------------
# What people send: the published human benchmarks beside the amounts sent
# ---------------------------------------------------------------------------------------------


def human_note(reference: Sequence[Mapping[str, Any]]) -> str:
    """One line naming the human benchmarks (share of the endowment sent), for a table."""
    if not reference:
        return ""
    said = "; ".join(f"{r['label']}: {r['share_sent']:.1%}" for r in reference)
    return f"Humans send (share of the endowment): {said}. Citations: docs/trust-population.md."


def human_line(metrics: Mapping[str, Any], endowment: int | None) -> str:
    """This run's mean as a share of the endowment beside the human benchmarks' shares."""
    reference = metrics.get("human_reference", [])
    mean = metrics.get("mean_sent")
    if not reference or mean is None or not endowment:
        return ""
    said = ", ".join(f"{r['label']} {r['share_sent']:.1%}" for r in reference)
    return f"  sent {mean / endowment:.1%} of the endowment; humans: {said}"


def amount_sent_rows(
    behaviours: Mapping[str, Mapping[str, Any]], reference: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The amounts this run's trustors sent (one row per condition) and, beside them, the
    published human benchmarks, each with its n and as a share of its endowment."""
    rows = []
    for who, b in behaviours.items():
        endowment = b.get("endowment")
        mean = b.get("mean_sent")
        share = Undefined(b.get("mean_sent_undefined") or "no decisions")
        if mean is not None and endowment:
            share = mean / endowment
        rows.append(
            {
                "who": who,
                "n": b["n_decisions"],
                "n_of": "deciders",
                **stat_fields("mean_sent", read_stat(b, "mean_sent")),
                "endowment": endowment,
                **stat_fields("share_sent", share, 4),
                "citation": "",
            }
        )
    rows += [
        {
            "who": r["label"],
            "n": r["n"],
            "n_of": r["n_of"],
            "mean_sent": r.get("mean_sent"),
            "mean_sent_undefined": "" if "mean_sent" in r else "reported as a share only",
            "endowment": r.get("endowment"),
            "share_sent": r["share_sent"],
            "citation": r["citation"],
        }
        for r in reference
    ]
    return rows


def write_amount_sent(
    behaviours: Mapping[str, Mapping[str, Any]],
    reference: Sequence[Mapping[str, Any]],
    directory: Path,
) -> list[Path]:
    rows = amount_sent_rows(behaviours, reference)
    note = (
        "Human benchmarks are one-shot Trust Games with people; returns here come from fixed "
        "archetypes, so only the amount sent has a reference."
    )
    return write_table(rows, directory, "amount_sent", notes=[note])


# ---------------------------------------------------------------------------------------------
# trust-beliefs: elicited beliefs against behaviour (§4.1–4.2, Table 3, Table 9)
# ---------------------------------------------------------------------------------------------


def beliefs_metrics(events: pd.DataFrame) -> dict[str, Any]:
    header = payloads(events, "run.started")[0]
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
    params = payloads(events, "run.started")[0]["params"]
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
                else _no_belief(_why_no_belief(failed.get((strategy, attribute)), shown), shown)
            )
    return {
        "beliefs": beliefs,
        "summary": {strategy: _summary(per_trait) for strategy, per_trait in beliefs.items()},
        "elicitation_failures": len(failures),
    }


def _why_no_belief(failure: Mapping[str, Any] | None, behaviour: Mapping[str, Any]) -> str:
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
        **stat_fields("abs_delta_eta_squared", absent),
        **_trait_n(behaviour),
        "small_group": has_small_level(behaviour),
        "missing": reason,
    }


def _trait_n(behaviour: Mapping[str, Any]) -> dict[str, Any]:
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


def has_small_level(behaviour: Mapping[str, Any]) -> bool:
    return any(s["small"] for s in behaviour["levels"].values())


def _consistency(belief: dict[str, Any], behaviour: dict[str, Any]) -> dict[str, Any]:
    rho = ranking_spearman(belief_scores(belief), behaviour_scores(behaviour))
    eta = belief_eta(belief)
    shown = read_stat(behaviour, "eta_squared")
    delta = first_undefined(belief=eta, behaviour=shown) or abs(eta - shown)
    return {
        "belief_ranking": belief["ranking"],
        **stat_fields("belief_eta_squared", eta),
        "behaviour_ranking": behaviour["ranking"],
        **stat_fields("behaviour_eta_squared", shown),
        **stat_fields("rho", rho),
        **stat_fields("abs_delta_eta_squared", delta),
        **_trait_n(behaviour),
        "small_group": has_small_level(behaviour),
    }


def _summary(per_trait: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Medians over the traits with a value; the traits without one, each with its reason."""
    rhos = [read_stat(v, "rho") for v in per_trait.values()]
    deltas = [read_stat(v, "abs_delta_eta_squared") for v in per_trait.values()]
    defined = [r for r in rhos if not isinstance(r, Undefined)]
    return {
        "n_attributes": len(per_trait),
        "n_rho_defined": len(defined),
        "n_delta_defined": sum(not isinstance(d, Undefined) for d in deltas),
        "no_rho": {
            a: r.reason for a, r in zip(per_trait, rhos, strict=True) if isinstance(r, Undefined)
        },
        **stat_fields("median_rho", median_of_defined(rhos)),
        **stat_fields("mean_rho", mean_of(defined, "no defined values")),
        **stat_fields("median_abs_delta_eta_squared", median_of_defined(deltas)),
    }


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
        )
        lines += [f"    no ρ for {a}: {why}" for a, why in summary.get("no_rho", {}).items()]
    return lines


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
                "small_group": False,
            }
        )
    return rows


def write_beliefs_reports(metrics: dict[str, Any], directory: Path) -> list[Path]:
    smallest = metrics["behaviour"]["min_group_n"]
    return [
        *write_table(
            table3_rows(metrics),
            directory,
            "table3_consistency",
            flag="small_group",
            notes=[small_note(smallest, "deciders in a level of the trait"), N_NOTE],
        ),
        *write_amount_sent(
            {"this run": metrics["behaviour"]}, metrics.get("human_reference", []), directory
        ),
    ]


N_NOTE = (
    "n: personas who decided, at the trait's analysed levels; on a Median row, the number of "
    "traits with a ρ. A trait without a belief keeps its row, with the reason in rho_undefined."
)


def beliefs_summary_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Per strategy a "Median" row (Table 3's medians, Table 9's mean ρ) and a row per trait,
    so a sweep can lay Table 3 out wide (traits × strategies, per model)."""
    rows = []
    for strategy, summary in metrics["summary"].items():
        rows.append(
            {
                "strategy": strategy,
                "attribute": "Median",
                "rho": summary["median_rho"],
                "abs_delta_eta_squared": summary["median_abs_delta_eta_squared"],
                **summary,
            }
        )
        rows += [
            {
                "strategy": strategy,
                "attribute": attribute,
                "rho": result["rho"],
                "rho_undefined": result.get("rho_undefined", ""),
                "abs_delta_eta_squared": result["abs_delta_eta_squared"],
            }
            for attribute, result in metrics["beliefs"][strategy].items()
        ]
    return rows


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


# ---------------------------------------------------------------------------------------------
# trust-conditioning: priors in the prompt against behaviour (§4.3, Table 4)
# ---------------------------------------------------------------------------------------------


def conditioning_metrics(events: pd.DataFrame) -> dict[str, Any]:
    """Table 4: per condition (one round each, after the elicitation round), ρ and |Δη²|."""
    header = payloads(events, "run.started")[0]
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
        per_trait[attribute] = {
            "prior_ranking": prior,
            "imposed_rho": achieved,
            "behaviour_ranking": shown["ranking"],
            "rho": ranking_spearman(scores, behaviour_scores(shown)),
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
        "parse_failures": behaviour["parse_failures"],
        **stat_fields("median_rho", median_of_defined(v["rho"] for v in per_trait.values())),
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
        a: _why_no_belief(failed.get(a), shown)
        for a, shown in behaviour.items()
        if a not in elicited
    }
    return {
        "n_attributes": len(behaviour),
        "no_belief": reasons,
        "n_by_attribute": {a: _trait_n(shown)["n"] for a, shown in behaviour.items()},
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
            "mae_eta_squared": m["mae_eta_squared"],
            "median_imposed_rho": m["median_imposed_rho"],
            "unperturbed": len(m["unperturbed"]),
            "traits_without_rho": "; ".join(f"{a}: {why}" for a, why in _no_rho(m).items()),
            "small_group": bool(m["small_levels"]),
        }
        for condition, m in metrics["conditions"].items()
    ]


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
                }
            )
    return rows


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
        c: m
        for c, m in metrics["conditions"].items()
        if "mean_sent" in m or "mean_sent_undefined" in m
    }
    return [
        *write_amount_sent(sent, metrics.get("human_reference", []), directory),
        *write_table(rows, directory, "table4_conditioning", flag="small_group", notes=[note]),
        *(write_table(by_trait, directory, "table4_by_trait") if by_trait else []),
        *(write_table(achieved, directory, "table4_achieved_prior_rho") if achieved else []),
    ]
