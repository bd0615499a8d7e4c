"""The classroom scenario's run report (seed 000, REVERSO): the console lines, the long tables
(Tables 1, 2, 3 and 5 with their numbers and reasons), Figure 3 and the row a sweep combines,
all from the metrics `classroom_metrics` makes; the paper's wide tables are in `tables`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from personasim.analysis.reports import save_figure, small_note
from personasim.analysis.undefined import (
    shown_stat,
)
from personasim.scenarios.classroom.metrics import RACE_NAMES, TABLE_LEVELS
from personasim.scenarios.classroom.tables import (
    accuracy_cell,
    baseline_cell,
    doc_cell,
    write_paper_tables,
    write_wide_tables,
)
from personasim.simulation.core.summary_counts import SummaryCount
from personasim.simulation.runs.lifecycle.tables import cell_text, percent, write_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "SUMMARY_COUNTS",
    "accuracy_rows",
    "behaviour_rows",
    "graded_counts",
    "race_effect_figure",
    "report_lines",
    "summary_rows",
    "write_all_reports",
    "write_reports",
]


def _pm(record: dict[str, Any], key: str, sd_key: str, digits: int = 1) -> str:
    """ "mean ± sd", or the mean alone when the SD is undefined, or "undefined (reason)"."""
    text = shown_stat(record, key, digits)
    sd = record[sd_key]
    return text if record[key] is None or sd is None else f"{text} ± {sd:.{digits}f}"


def _change(record: dict[str, Any]) -> str:
    """The change against the no-persona baseline, in words where it is undefined."""
    value = record["change"]
    if value is None:
        return f"change vs no persona {shown_stat(record, 'change')}"
    return f"{value:+.1f} vs no persona"


def accuracy_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Tables 1 and 2: per strategy × race × order, low and high accuracy (%) as a careful
    grader reads, their change against the no-persona baseline, and the mean DoC, each with
    its SD over repetitions; beside them the format compliance (%), the answers asked for,
    graded, unreadable and ambiguous (both graded not right); `small_group` when one of them
    rests on fewer answers than the run's `min_group_n`."""
    rows = []
    for cell in metrics["cells"]:
        row = {
            "model": metrics["model"],
            "strategy": cell["strategy"],
            "race": cell["race"],
            "order": cell["order"],
            "no_persona": metrics["baseline"]["accuracy"],
        }
        for level in TABLE_LEVELS:
            row[f"acc_{level}"] = cell[level]["accuracy"]
            row[f"acc_{level}_sd"] = cell[level]["accuracy_sd"]
            row[f"acc_{level}_change"] = cell[level]["change"]
            row[f"acc_{level}_undefined"] = cell[level].get("accuracy_undefined", "")
        for level in TABLE_LEVELS:
            row[f"format_{level}"] = cell[level].get("format_compliance")
            row[f"n_asked_{level}"] = cell[level]["n_answers"]
            row[f"n_{level}"] = cell[level]["n_graded"]
            row[f"unreadable_{level}"] = cell[level].get("unreadable_answers", 0)
            row[f"ambiguous_{level}"] = cell[level].get("ambiguous_answers", 0)
        row["no_persona_n"] = _counted(metrics["baseline"])
        row["no_persona_graded"] = metrics["baseline"]["n_graded"]
        row["no_persona_asked"] = metrics["baseline"]["n_answers"]
        row["doc"] = cell["doc"]["mean"]
        row["doc_sd"] = cell["doc"]["sd"]
        row["n_judged"] = cell["doc"]["n_judged"]
        row["small_group"] = any(cell[g]["small"] for g in (*TABLE_LEVELS, "doc"))
        rows.append(row)
    return rows


LONG_CELLS = {
    "no_persona": baseline_cell,
    **{f"acc_{level}": partial(accuracy_cell, level=level) for level in TABLE_LEVELS},
    "doc": doc_cell,
}
"""How Tables 1 and 2's long Markdown shows a value with its n (the CSV keeps the number)."""


def _counted(record: dict[str, Any]) -> str:
    """Answers asked / graded / unreadable / ambiguous."""
    keys = ("n_answers", "n_graded", "unreadable_answers", "ambiguous_answers")
    return "/".join(str(record.get(key, 0)) for key in keys)


def behaviour_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 3: the share (%) of each tagged low-performance behaviour per cell."""
    return [
        {
            "model": metrics["model"],
            "strategy": cell["strategy"],
            "race": cell["race"],
            "order": cell["order"],
            **{f"({c})": share for c, share in cell["behaviours"]["shares"].items()},
            "n_comments": cell["behaviours"]["n_comments"],
        }
        for cell in metrics["cells"]
    ]


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else value


def graded_counts(metrics: Mapping[str, Any]) -> dict[tuple[str, str], tuple[int, int]]:
    """Figure 3's n per (race, level): the zero-shot answers graded with the race and without
    it (race none), in the order the race effect was measured in."""
    effects = metrics["race_effect"]
    if not effects:
        return {}
    order = effects[0]["order"]
    cells = {
        (c["race"], level): c[level]["n_graded"]
        for c in metrics["cells"]
        if c["strategy"] == "zero-shot" and c["order"] == order
        for level in TABLE_LEVELS
    }
    return {
        (r["race"], r["level"]): (
            cells.get((r["race"], r["level"]), 0),
            cells.get(("none", r["level"]), 0),
        )
        for r in effects
    }


def race_effect_figure(
    rows: list[dict[str, Any]],
    model: str,
    note: str | None = None,
    min_group_n: int = 5,
    counts: Mapping[tuple[str, str], tuple[int, int]] | None = None,
) -> Figure:
    """Figure 3: change in zero-shot accuracy when a race is added, per race and level, each
    bar labelled with its change and n (answers graded with the race / without it, `counts`
    from `graded_counts`); a bar resting on fewer than `min_group_n` graded answers on either
    side is marked †."""
    from matplotlib.figure import Figure

    counts = counts or {}
    figure = Figure(figsize=(7.2, 4.4))
    axes = figure.subplots()
    races = list(dict.fromkeys(r["race"] for r in rows))
    width = 0.38
    for offset, level in ((-width / 2, "low"), (width / 2, "high")):
        points = {r["race"]: r for r in rows if r["level"] == level}
        # an undefined change draws no bar (not a bar at 0); an undefined SD no error bar
        values = [_or_nan(points[race]["change"]) for race in races]
        errors = [_or_nan(points[race]["sd"]) for race in races]
        bars = axes.bar(
            [i + offset for i in range(len(races))],
            [0.0 if math.isnan(v) else v for v in values],
            width,
            yerr=errors,
            capsize=4,
            label=f"{level}-performing",
            color="#d9534f" if level == "low" else "#337ab7",
        )
        labels = []
        for value, race in zip(values, races, strict=True):
            shown = "undefined" if math.isnan(value) else f"{value:+.1f}"
            with_race, without = counts.get((race, level), (None, None))
            n = "" if with_race is None else f"\nn={with_race}/{without}"
            labels.append(shown + ("†" if points[race]["small"] else "") + n)
        axes.bar_label(bars, labels=labels, padding=3, fontsize=7)
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_xticks(range(len(races)), [f"{RACE_NAMES[r]} ({r})" for r in races])
    axes.set_xlabel("race added to the persona (n = answers graded with / without it)")
    axes.set_ylabel("accuracy change vs no race (points; bars ± SD)")
    axes.set_title(f"classroom: adding race, zero-shot — {model} (seed 000, Fig. 3)")
    axes.margins(y=0.25)
    low, high = axes.get_ylim()
    if high - low < 1e-6:  # every change is 0 (or float noise): a readable axis, not 1e-17
        axes.set_ylim(-1, 1)
    axes.grid(axis="y", alpha=0.3)
    axes.legend()
    notes = [note] if note else []
    if any(r["small"] for r in rows):
        notes.append(small_note(min_group_n, "graded answers on one side of the bar"))
    if notes:
        figure.text(0.5, -0.01, "\n".join(notes), ha="center", va="top", fontsize=8, style="italic")
    return figure


def _both(record: dict[str, Any]) -> str:
    """Accuracy over the graded answers (unreadable and ambiguous ones not right, counted),
    with its SD over repetitions, and over all answers asked for where some failed; in plain
    words where nothing was asked or graded."""
    asked, graded = record["n_answers"], record["n_graded"]
    if not asked:
        return "not run (no answers asked)"
    if record["accuracy"] is None:
        return f"no answer graded of {asked} asked (all failed)"
    sd = record.get("accuracy_sd")
    value = percent(record["accuracy"]) + ("" if sd is None else f" ± {sd:.1f}")
    text = cell_text(value, graded, noun="graded", asked=asked, as_percent=True)
    text += (
        f" ({record.get('unreadable_answers', 0)} unreadable, "
        f"{record.get('ambiguous_answers', 0)} ambiguous)"
    )
    if asked != graded and record.get("accuracy_all") is not None:
        text += (
            f"; {percent(record['accuracy_all'])} of all {asked} asked, the "
            f"{asked - graded} failed counted wrong"
        )
    return text


def _format(record: dict[str, Any]) -> str:
    """The format compliance beside the accuracy (nothing where no format was asked)."""
    share = record.get("format_compliance")
    return "" if share is None else f", format {percent(share)}"


def report_lines(metrics: dict[str, Any]) -> list[str]:
    """The console report: the run's counts, then one line per cell."""
    base = metrics["baseline"]
    lines = [
        f"{metrics['model']}: {metrics['n_questions']} questions × {metrics['repetitions']} "
        f"repetitions; no persona: {_both(base)}; "
        f"{metrics.get('unreadable_answers', 0)} unreadable answers (no explicit final "
        f"answer), {metrics.get('ambiguous_answers', 0)} ambiguous, "
        f"{metrics['answer_failures']} failed answers, {metrics['judge_failures']} failed "
        f"judgements, {metrics['reasks']} re-asks"
    ]
    if role := metrics.get("reader_role"):
        lines.append("  reader role: " + ", ".join(f"{what} {n}" for what, n in role.items()))
    for row in metrics["cells"]:
        low, high, doc = row["low"], row["high"], row["doc"]
        lines.append(
            f"  {row['strategy']:<11} {row['race']:<4} {row['order']:<6}  "
            f"low {_both(low)}, {_change(low)}{_format(low)}  "
            f"high {_both(high)}, {_change(high)}{_format(high)}"
            f"  DoC {_pm(doc, 'mean', 'sd', 2)}"
        )
    return lines


LONG_NOTE = (
    "Accuracy (%) with its n: the answers graded (unreadable and ambiguous ones graded not "
    "right) and, where some failed (no usable reply after re-asks), the answers asked for. DoC: "
    "the mean of the judged pairs. — : not run."
)


def write_reports(metrics: dict[str, Any], directory: Path) -> list[Path]:
    """Tables 1, 2, 3 and 5 and Figure 3 (Table 5 and Figure 3 when the run has them)."""
    rows = accuracy_rows(metrics)
    flagged = {
        "flag": "small_group",
        "cells": LONG_CELLS,
        "notes": [
            small_note(metrics["min_group_n"], "graded or judged answers in a group of the row"),
            LONG_NOTE,
        ],
    }
    files = [
        *write_table(
            [r for r in rows if r["race"] == "none"], directory, "table1_level", **flagged
        ),
        *write_table([r for r in rows if r["race"] != "none"], directory, "table2_race", **flagged),
        *write_table(behaviour_rows(metrics), directory, "table3_behaviours"),
    ]
    if metrics["order_effect"]:
        files += write_table(metrics["order_effect"], directory, "table5_order")
    if metrics["race_effect"]:
        figure = race_effect_figure(
            metrics["race_effect"],
            metrics["model"],
            metrics["note"],
            metrics["min_group_n"],
            graded_counts(metrics),
        )
        files.append(save_figure(figure, directory, "figure3_race_effect"))
    return files


def summary_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Tables 1 and 2 in one, a sweep labels each row with its model; the zero-shot rows with
    a race carry Figure 3's change (`race_effect_low`, `race_effect_high` and their SDs);
    every row carries Table 3's shares and `n_comments`, and an "after" row Table 5's changes
    against "before" (`order_acc_low_change`, `order_acc_high_change`, `order_doc_change`).
    `reps_<level>` and `race_effect_<level>_reps` count the repetitions an SD or race effect
    is over (`SUMMARY_COUNTS`)."""
    effects = {(r["race"], r["order"], r["level"]): r for r in metrics["race_effect"]}
    behaviours = {(r["strategy"], r["race"], r["order"]): r for r in behaviour_rows(metrics)}
    orders = {(r["strategy"], r["race"]): r for r in metrics["order_effect"]}
    reps = {  # the repetitions with a graded answer: what each accuracy SD is over
        (c["strategy"], c["race"], c["order"], level): len(c[level].get("by_repetition", {}))
        for c in metrics["cells"]
        for level in TABLE_LEVELS
    }
    rows = []
    for row in accuracy_rows(metrics):
        row = {k: v for k, v in row.items() if k != "model"}
        for level in TABLE_LEVELS:
            row[f"reps_{level}"] = reps[(row["strategy"], row["race"], row["order"], level)]
        for level in TABLE_LEVELS:
            effect = effects.get((row["race"], row["order"], level))
            if row["strategy"] == "zero-shot" and effect is not None:
                row[f"race_effect_{level}"] = effect["change"]
                row[f"race_effect_{level}_sd"] = effect["sd"]
                row[f"race_effect_{level}_reps"] = effect["n_repetitions"]
        shares = behaviours[(row["strategy"], row["race"], row["order"])]
        row.update({k: v for k, v in shares.items() if k.startswith("(") or k == "n_comments"})
        order = orders.get((row["strategy"], row["race"]))
        if row["order"] == "after" and order is not None:
            for key in ("acc_low_change", "acc_high_change", "doc_change"):
                row[f"order_{key}"] = order[key]
        rows.append(row)
    return rows


SUMMARY_COUNTS = {
    "no_persona": SummaryCount("no_persona_graded", "graded", "no_persona_asked", percent=1),
    **{
        stat: count
        for level in TABLE_LEVELS
        for stat, count in {
            f"acc_{level}": SummaryCount(f"n_{level}", "graded", f"n_asked_{level}", percent=1),
            f"acc_{level}_sd": SummaryCount(f"reps_{level}", "repetitions"),
            f"format_{level}": SummaryCount(f"n_{level}", "graded", percent=1),
            f"race_effect_{level}": SummaryCount(f"race_effect_{level}_reps", "repetitions"),
            f"race_effect_{level}_sd": SummaryCount(f"race_effect_{level}_reps", "repetitions"),
        }.items()
    },
    "doc": SummaryCount("n_judged", "judged"),
    **{f"({c})": SummaryCount("n_comments", "comments", percent=1) for c in (1, 2, 3, 4)},
}
"""What each statistic of `summary_rows` is counted over (the sweep's combined.md): accuracy
and format compliance (%) over the graded answers, their SDs and the race effect over the
repetitions with answers, the DoC over the judged pairs, Table 3's shares over the tagged
comments. The changes against another group (no persona, "before") rest on two groups' n and
the DoC's SD on repetitions the row does not count: they show their values alone."""


def write_all_reports(metrics: dict[str, Any], directory: Path) -> list[Path]:
    """Every report file of a run: the long tables and Figure 3 (`write_reports`), then the
    paper's wide Tables 1, 2, 3 and 5 (`tables`)."""
    files = write_reports(metrics, directory)
    files += write_wide_tables(accuracy_rows(metrics), directory)
    orders = [{"model": metrics["model"], **r} for r in metrics["order_effect"]]
    return files + write_paper_tables(behaviour_rows(metrics), orders, directory)
