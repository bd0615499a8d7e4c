"""Metrics, tables and figures of the Trust Game scenarios (seed 001, belief–behaviour
consistency), computed from a run's event table alone.

- trust-population (§4.1): per trait, the behavioural ranking π*_t of its levels by mean
  transfer, η²_t from a one-way ANOVA, and n per level.
- every Trust Game scenario: the published human benchmarks beside the amounts sent.

trust-beliefs' are in `beliefs_metrics`, trust-conditioning's in `conditioning_metrics`,
trust-forecast's in `forecast_metrics`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from personasim.analysis.event_tables import agent_payloads, min_group_n, payloads
from personasim.analysis.reports import model_label, save_figure, small_note
from personasim.analysis.stats import (
    eta_squared,
    mean_of,
    rank_levels,
    sample_sd,
    summarize_levels,
)
from personasim.analysis.undefined import (
    CONSTANT,
    NO_VALUES,
    SINGLE_LEVEL,
    Undefined,
    in_words,
    read_stat,
    shown_stat,
    stat_fields,
)
from personasim.environments import human_reference
from personasim.scenarios.trust.metric_blocks import Behaviour, PopulationStatistics
from personasim.simulation import run_header
from personasim.simulation.runs.lifecycle.tables import cell_text, percent, write_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "amount_sent_rows",
    "analysed_levels",
    "behaviour_metrics",
    "human_line",
    "human_note",
    "population_metrics",
    "population_report",
    "population_rows",
    "with_human_reference",
    "write_amount_sent",
    "write_population_reports",
]


# ---------------------------------------------------------------------------------------------
# trust-population: behaviour per trait (§4.1)
# ---------------------------------------------------------------------------------------------


def population_metrics(events: pd.DataFrame) -> PopulationStatistics:
    header = run_header(events)
    behaviour = behaviour_metrics(events, header["params"]["attributes"])
    return {"model": model_label(header["model"]), **behaviour}


def behaviour_metrics(
    events: pd.DataFrame, attributes: Sequence[str], round_index: int | None = None
) -> Behaviour:
    """§4.1 behavioural outcomes of the trustors, in one round when trustors play several."""
    traits = {
        e["agent_id"]: e["payload"]["persona"]["traits"]
        for e in agent_payloads(events, "agent.created")
        if "persona" in e["payload"]
    }
    kept = analysed_levels(events)
    endowment = run_header(events)["params"].get("endowment")
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
        "sent_counts": {f"{amount:g}": n for amount, n in sorted(Counter(amounts).items())},
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


NOT_IN_SPLIT = f"{NO_VALUES}: no level of this trait in the test split"
"""Why a trait of Table 5 outside the paper's test split has no η² (the reason as stored)."""


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
        return NOT_IN_SPLIT
    if not levels:
        return f"{NO_VALUES}: all {at_levels} decisions at its levels failed"
    if reason == SINGLE_LEVEL:
        return f"{SINGLE_LEVEL} ({levels[0][:30]}, n={len(levels)})"
    if reason == CONSTANT:
        return f"{CONSTANT} (all {len(values)} deciders sent ${values[0]:g})"
    return reason


def shown_ranking(ranking: list[str], shown: int = 3) -> str:
    """The first levels of a ranking; the rest counted, never cut silently."""
    more = len(ranking) - shown
    return " > ".join(ranking[:shown]) + (f" > … and {more} more" if more > 0 else "")


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
            reason = read_stat(result, "eta_squared").reason
            why = in_words(reason)
            if reason == NOT_IN_SPLIT:
                why += (
                    "; the test split holds the levels the paper reports, --split all every level"
                )
            lines.append(f"  {name}: eta² undefined, {n}: {why}")
            continue
        top = shown_ranking(result["ranking"])
        small = [level for level, s in result["levels"].items() if s["small"]]
        note = f" (n < {metrics['min_group_n']}: {', '.join(small)})" if small else ""
        lines.append(f"  {name}: eta² = {eta}, {n}; ranking {top}{note}")
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
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 0.4 * max(len(traits), 3) + 1.2))
    axes = figure.subplots()
    names = [f"{t['attribute']} (n={t['n']}, {t['n_levels']} levels)" for t in traits]
    values = [t["eta_squared"] if t["eta_squared"] is not None else 0.0 for t in traits]
    bars = axes.barh(
        names, values, color=["C0" if t["eta_squared"] is not None else "none" for t in traits]
    )
    shown = ["" if t["eta_squared"] is None else f"{t['eta_squared']:.3f}" for t in traits]
    axes.bar_label(bars, labels=shown, padding=2, fontsize=7)
    axes.margins(x=0.12)
    for i, t in enumerate(traits):
        if t["eta_squared"] is None:
            axes.text(0, i, f" undefined: {t['eta_squared_undefined']}", va="center", fontsize=7)
    axes.invert_yaxis()
    axes.set_ylabel("trait (n deciders, levels)")
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
        *write_amount_sent(
            {metrics.get("model", "simulated"): metrics},
            metrics.get("human_reference", []),
            directory,
        ),
        save_figure(eta_figure(traits), directory, "population_eta_squared"),
        save_figure(sent_figure(metrics), directory, "population_amount_sent"),
    ]


def sent_figure(metrics: Mapping[str, Any]) -> Figure:
    """How many trustors sent each amount, with this run's mean and the human benchmarks' means
    (share of the endowment × this run's endowment) as lines; n in the title."""
    from matplotlib.figure import Figure

    counts = {float(amount): n for amount, n in metrics.get("sent_counts", {}).items()}
    endowment = metrics.get("endowment")
    figure = Figure(figsize=(6.4, 3.6))
    axes = figure.subplots()
    bars = axes.bar(list(counts), list(counts.values()), width=0.8, color="C0")
    total = sum(counts.values())
    axes.bar_label(bars, labels=[f"{k} of {total}" for k in counts.values()], fontsize=6)
    if metrics.get("mean_sent") is not None:
        who = metrics.get("model", "simulated")
        mean = metrics["mean_sent"]
        axes.axvline(mean, color="black", linestyle="--", label=f"mean of {who}: {mean:.2f}")
    for i, reference in enumerate(metrics.get("human_reference", []) if endowment else []):
        label = f"humans' mean: {reference['label']}"
        axes.axvline(reference["share_sent"] * endowment, color=f"C{i + 1}", ls=":", label=label)
    if not counts:
        axes.text(
            0.5, 0.5, "no data: no trustor decided", ha="center", va="center",
            transform=axes.transAxes,
        )  # fmt: skip
    axes.set_xlabel("dollars sent" + (f" (of {endowment})" if endowment else ""))
    axes.set_ylabel("trustors")
    axes.margins(y=0.12)
    axes.set_title(f"trust-population: amounts sent (n = {metrics['n_decisions']})")
    if axes.get_legend_handles_labels()[0]:
        axes.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2)
    return figure


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
    """The amounts the run's trustors sent (one row per condition, `who` naming the model and
    the condition, with n and SD) and, beside them, the published human benchmarks, each with
    its n and as a share of its endowment."""
    rows = []
    for who, b in behaviours.items():
        endowment = b.get("endowment")
        mean = b.get("mean_sent")
        share = Undefined(b.get("mean_sent_undefined") or "no decisions")
        if mean is not None and endowment:
            share = mean / endowment
        rows.append(
            {
                "source": "simulated",
                "who": who,
                "n": b["n_decisions"],
                "n_of": "deciders",
                **stat_fields("mean_sent", read_stat(b, "mean_sent")),
                **stat_fields("sd_sent", _sd_of(b)),
                "endowment": endowment,
                **stat_fields("share_sent", share, 4),
                "citation": "",
            }
        )
    rows += [
        {
            "source": "human benchmark",
            "who": r["label"],
            "n": r["n"],
            "n_of": r["n_of"],
            "mean_sent": r.get("mean_sent"),
            "mean_sent_undefined": "" if "mean_sent" in r else "reported as a share only",
            "sd_sent": None,
            "sd_sent_undefined": "not in the shipped reference",
            "endowment": r.get("endowment"),
            "share_sent": r["share_sent"],
            "citation": r["citation"],
        }
        for r in reference
    ]
    return rows


def _sd_of(behaviour: Mapping[str, Any]) -> Any:
    """The SD of the amounts sent, or why there is none (a record written without it)."""
    if "sd_sent" in behaviour or "sd_sent_undefined" in behaviour:
        return read_stat(behaviour, "sd_sent")
    return Undefined("not recorded for this condition")


def _mean_cell(row: Mapping[str, Any]) -> str:
    """The mean sent with its SD and n: "4.00 (SD 2.20), n=60 deciders"."""
    mean, sd = row.get("mean_sent"), row.get("sd_sent")
    if mean is None:
        return cell_text(None, row["n"], noun=row["n_of"], reason=row.get("mean_sent_undefined"))
    shown = f"{mean:.2f}" + ("" if sd is None else f" (SD {sd:.2f})")
    return cell_text(shown, row["n"], noun=row["n_of"])


def _share_cell(row: Mapping[str, Any]) -> str:
    share = row.get("share_sent")
    return "—" if share is None else percent(100.0 * share)


AMOUNT_SENT_CELLS = {"mean_sent": _mean_cell, "share_sent": _share_cell}
"""amount_sent.md's cells: the mean with its SD and n, the share as a percentage."""


def write_amount_sent(
    behaviours: Mapping[str, Mapping[str, Any]],
    reference: Sequence[Mapping[str, Any]],
    directory: Path,
) -> list[Path]:
    """`amount_sent`: `behaviours` maps a label naming the model (and condition) to its
    behaviour metrics; the human benchmarks follow."""
    rows = amount_sent_rows(behaviours, reference)
    note = (
        "Simulated rows: the model (and condition) that sent, the mean sent with its SD over the "
        "n deciders. Human benchmarks are one-shot Trust Games with people; returns here come "
        "from fixed archetypes, so only the amount sent has a reference."
    )
    return write_table(rows, directory, "amount_sent", notes=[note], cells=AMOUNT_SENT_CELLS)


def with_human_reference(
    compute: Callable[[pd.DataFrame], dict[str, Any]],
) -> Callable[[pd.DataFrame], dict[str, Any]]:
    """A Trust Game scenario's metrics with the published human benchmarks beside them (the
    shipped reference, not the run's events), as its `ScenarioMetrics.compute`."""

    def metrics(events: pd.DataFrame) -> dict[str, Any]:
        return {**compute(events), "human_reference": human_reference()}

    return metrics
