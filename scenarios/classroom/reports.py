"""The classroom scenario's run report (seed 000, REVERSO): the console lines, the long tables
(Tables 1, 2, 3 and 5 with their numbers and reasons), Figure 3 and the row a sweep combines,
all from the metrics `classroom_metrics` makes; the paper's wide tables are in `tables`."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from personasim.analysis.reports import save_figure, small_note, write_table
from personasim.analysis.undefined import (
    shown_stat,
)
from personasim.scenarios.classroom.metrics import RACE_NAMES, TABLE_LEVELS
from personasim.scenarios.classroom.tables import write_paper_tables, write_wide_tables

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "accuracy_rows",
    "behaviour_rows",
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


def _signed(record: dict[str, Any], key: str) -> str:
    value = record[key]
    return shown_stat(record, key) if value is None else f"{value:+.1f}"


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
        for level in TABLE_LEVELS:
            row[f"format_{level}"] = cell[level].get("format_compliance")
            row[f"n_asked_{level}"] = cell[level]["n_answers"]
            row[f"n_{level}"] = cell[level]["n_graded"]
            row[f"unreadable_{level}"] = cell[level].get("unreadable_answers", 0)
            row[f"ambiguous_{level}"] = cell[level].get("ambiguous_answers", 0)
        row["no_persona_n"] = _counted(metrics["baseline"])
        row["doc"] = cell["doc"]["mean"]
        row["doc_sd"] = cell["doc"]["sd"]
        row["n_judged"] = cell["doc"]["n_judged"]
        row["small_group"] = any(cell[g]["small"] for g in (*TABLE_LEVELS, "doc"))
        rows.append(row)
    return rows


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


def race_effect_figure(
    rows: list[dict[str, Any]], model: str, note: str | None = None, min_group_n: int = 5
) -> Figure:
    """Figure 3: change in zero-shot accuracy when a race is added, per race and level; a bar
    resting on fewer than `min_group_n` graded answers on either side is labelled †."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 4.0))
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
        labels = [
            "undefined" if math.isnan(v) else f"{v:+.1f}" + ("†" if points[r]["small"] else "")
            for v, r in zip(values, races, strict=True)
        ]
        axes.bar_label(bars, labels=labels, padding=3, fontsize=8)
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_xticks(range(len(races)), [f"{RACE_NAMES[r]} ({r})" for r in races])
    axes.set_ylabel("accuracy change vs no race (points; bars ± SD)")
    axes.set_title(f"classroom: adding race, zero-shot — {model} (seed 000, Fig. 3)")
    axes.margins(y=0.2)
    axes.grid(axis="y", alpha=0.3)
    axes.legend()
    notes = [note] if note else []
    if any(r["small"] for r in rows):
        notes.append(small_note(min_group_n, "graded answers on one side of the bar"))
    if notes:
        figure.text(0.5, -0.01, "\n".join(notes), ha="center", va="top", fontsize=8, style="italic")
    return figure


def _both(record: dict[str, Any]) -> str:
    """Accuracy over the graded answers (unreadable and ambiguous ones not right), with how
    many were unreadable or ambiguous, and over the answers asked for (failed ones too)."""
    return (
        f"{_pm(record, 'accuracy', 'accuracy_sd')} % of {record['n_graded']} graded "
        f"({record.get('unreadable_answers', 0)} unreadable, "
        f"{record.get('ambiguous_answers', 0)} ambiguous) "
        f"[{shown_stat(record, 'accuracy_all', 1)} % of {record['n_answers']} asked]"
    )


def _format(record: dict[str, Any]) -> str:
    """The format compliance beside the accuracy (nothing where no format was asked)."""
    share = record.get("format_compliance")
    return "" if share is None else f", format {share:.1f} %"


def report_lines(metrics: dict[str, Any]) -> list[str]:
    """The console report: the run's counts, then one line per cell."""
    base = metrics["baseline"]
    lines = [
        f"{metrics['model']}: {metrics['n_questions']} questions × {metrics['repetitions']} "
        f"repetitions; no persona {_both(base)}; "
        f"{metrics.get('unreadable_answers', 0)} unreadable answers (no explicit final "
        f"answer), {metrics.get('ambiguous_answers', 0)} ambiguous, "
        f"{metrics['answer_failures']} failed answers, {metrics['judge_failures']} failed "
        f"judgements, {metrics['reasks']} re-asks"
    ]
    for row in metrics["cells"]:
        low, high, doc = row["low"], row["high"], row["doc"]
        lines.append(
            f"  {row['strategy']:<11} {row['race']:<4} {row['order']:<6}  "
            f"low {_both(low)} ({_signed(low, 'change')}){_format(low)}  "
            f"high {_both(high)} ({_signed(high, 'change')}){_format(high)}"
            f"  DoC {_pm(doc, 'mean', 'sd', 2)}"
        )
    return lines


def write_reports(metrics: dict[str, Any], directory: Path) -> list[Path]:
    """Tables 1, 2, 3 and 5 and Figure 3 (Table 5 and Figure 3 when the run has them)."""
    rows = accuracy_rows(metrics)
    flagged = {
        "flag": "small_group",
        "notes": [
            small_note(metrics["min_group_n"], "graded or judged answers in a group of the row")
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
            metrics["race_effect"], metrics["model"], metrics["note"], metrics["min_group_n"]
        )
        files.append(save_figure(figure, directory, "figure3_race_effect"))
    return files


def summary_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Tables 1 and 2 in one, a sweep labels each row with its model; the zero-shot rows with
    a race carry Figure 3's change (`race_effect_low`, `race_effect_high` and their SDs);
    every row carries Table 3's shares and `n_comments`, and an "after" row Table 5's changes
    against "before" (`order_acc_low_change`, `order_acc_high_change`, `order_doc_change`)."""
    effects = {(r["race"], r["order"], r["level"]): r for r in metrics["race_effect"]}
    behaviours = {(r["strategy"], r["race"], r["order"]): r for r in behaviour_rows(metrics)}
    orders = {(r["strategy"], r["race"]): r for r in metrics["order_effect"]}
    rows = []
    for row in accuracy_rows(metrics):
        row = {k: v for k, v in row.items() if k != "model"}
        for level in TABLE_LEVELS:
            effect = effects.get((row["race"], row["order"], level))
            if row["strategy"] == "zero-shot" and effect is not None:
                row[f"race_effect_{level}"] = effect["change"]
                row[f"race_effect_{level}_sd"] = effect["sd"]
        shares = behaviours[(row["strategy"], row["race"], row["order"])]
        row.update({k: v for k, v in shares.items() if k.startswith("(") or k == "n_comments"})
        order = orders.get((row["strategy"], row["race"]))
        if row["order"] == "after" and order is not None:
            for key in ("acc_low_change", "acc_high_change", "doc_change"):
                row[f"order_{key}"] = order[key]
        rows.append(row)
    return rows


def write_all_reports(metrics: dict[str, Any], directory: Path) -> list[Path]:
    """Every report file of a run: the long tables and Figure 3 (`write_reports`), then the
    paper's wide Tables 1, 2, 3 and 5 (`tables`)."""
    files = write_reports(metrics, directory)
    files += write_wide_tables(accuracy_rows(metrics), directory)
    orders = [{"model": metrics["model"], **r} for r in metrics["order_effect"]]
    return files + write_paper_tables(behaviour_rows(metrics), orders, directory)
