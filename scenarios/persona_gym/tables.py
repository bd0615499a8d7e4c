"""PersonaGym's report (seed 002): the console lines, Table 2 (a row per run or model, with the
spread across a sweep's runs), the per-persona table and the sweep's report, all from the
metrics `gym_metrics` makes; the figures are in `figures`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from personasim.analysis.reports import small_note, write_table
from personasim.analysis.undefined import (
    Undefined,
    read_stat,
    shown_stat,
    stat_fields,
)
from personasim.environments.persona_gym.place import TASKS
from personasim.scenarios.persona_gym.figures import write_gym_figures, write_sweep_refusal_figure
from personasim.scenarios.persona_gym.metrics import REFUSAL_OUTCOMES
from personasim.scenarios.persona_gym.published import (
    published_report_lines,
    write_published_reports,
)

__all__ = [
    "persona_rows",
    "refusal_line",
    "refusal_rows",
    "report_lines",
    "summary_rows",
    "table2_rows",
    "table2_spread",
    "write_gym_reports",
    "write_sweep_reports",
]


def report_lines(metrics: dict[str, Any]) -> list[str]:
    """The run's summary lines for the console."""
    if "published" in metrics:
        return published_report_lines(metrics)
    scores = metrics["scores"]
    per_task = ", ".join(f"{t} {shown_stat(scores, t)}" for t in metrics["tasks"])
    failures = metrics["failures"]
    lines = [
        f"{metrics['model']}: PersonaScore {shown_stat(scores, 'PersonaScore')} over "
        f"{metrics['n_personas']} personas, {metrics['n_scored_questions']} of "
        f"{metrics['n_questions']} questions scored ({metrics['pipeline']} pipeline)",
        f"  {per_task}",
        f"  {refusal_line(metrics['refusals'])}",
        "  failures: "
        + ", ".join(f"{k} {v}" for k, v in failures.items())
        + f" (evaluator scores excluded: {failures['evaluate']})",
    ]
    if metrics["small_tasks"]:
        lines.append(
            f"  fewer than {metrics['min_group_n']} scored questions: "
            + ", ".join(metrics["small_tasks"])
        )
    for row in metrics["agreement"]:
        lines.append(
            f"  {row['evaluators']}: Spearman {shown_stat(row, 'spearman')}, mean |diff| "
            f"{shown_stat(row, 'mean_abs_diff')} over {row['n']} answers"
        )
    return lines


def refusal_line(refusals: dict[str, Any]) -> str:
    """Answers out of persona, by what read them: never an unread answer taken as in persona."""
    judge = ", ".join(refusals.get("judge") or []) or "none bound"
    return (
        f"out of persona: {refusals['marked_by_grammar']} marked by the grammar, "
        f"{refusals['judged_out']} judged out and {refusals['judged_in']} judged in by the "
        f"refusal judge ({judge}), {refusals['not_judged']} not judged, "
        f"{refusals['judge_failed']} unreadable verdicts, of {refusals['n_answers']} answers "
        f"(rate {shown_stat(refusals, 'rate')})"
    )


def refusal_rows(refusals: dict[str, Any]) -> list[dict[str, Any]]:
    """The refusal table: per task and for all answers, how each answer was read and the rate
    (out / judged; undefined, with the reason, while answers are not judged)."""
    rows = [
        {"task": task, **counts, **stat_fields("rate", read_stat(refusals["by_task"], task))}
        for task, counts in refusals["counts_by_task"].items()
    ]
    overall = {k: refusals[k] for k in (*REFUSAL_OUTCOMES, "n_answers")}
    return [*rows, {"task": "all", **overall, **stat_fields("rate", read_stat(refusals, "rate"))}]


def write_gym_reports(metrics: dict[str, Any], directory: Path) -> list[Path]:
    """Table 2's row, per-persona scores, evaluator agreement and human alignment tables."""
    if "published" in metrics:
        return write_published_reports(metrics, directory, table2_spread)
    smallest = metrics["min_group_n"]
    small = metrics["small_tasks"]
    notes = [small_note(smallest, f"scored questions in {', '.join(small)}")] if small else []
    files = write_table(
        table2_rows(metrics), directory, "table2_persona_score", flag="small_group", notes=notes
    )
    if "counts_by_task" in metrics["refusals"]:
        files += write_table(refusal_rows(metrics["refusals"]), directory, "refusals")
    files += write_table(
        persona_rows(metrics),
        directory,
        "persona_scores",
        flag="small_group",
        notes=[small_note(smallest, "scored questions in a task of the persona")],
    )
    pairs = small_note(smallest, "answers or personas in the row")
    for key, name in (
        ("agreement", "evaluator_agreement"),
        ("human_alignment", "human_alignment"),
    ):
        if metrics[key]:
            files += write_table(metrics[key], directory, name, flag="small", notes=[pairs])
    return files + write_gym_figures(metrics, directory)


def table2_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 2's shape: the model, its score per task, and PersonaScore; `small_group` when a
    task's score rests on fewer scored questions than the run's `min_group_n`. An import of
    the published scores gives a row per model (`persona_gym_published`)."""
    if "published" in metrics:
        return [*metrics["beside"], *metrics["published"]]
    return [
        {
            "model": metrics["model"],
            **metrics["scores"],
            **stat_fields("refusal_rate", read_stat(metrics["refusals"], "rate")),
            "refusals": metrics["refusals"]["n"],
            "answers": metrics["refusals"]["n_answers"],
            "not_judged": metrics["refusals"].get("not_judged", 0),
            "small_group": bool(metrics["small_tasks"]),
        }
    ]


def table2_spread(rows: Sequence[dict[str, Any]], tasks: Sequence[str]) -> list[dict[str, Any]]:
    """Table 2 across a sweep's runs, and a last row `spread`: per task (and PersonaScore) the
    highest minus the lowest score among the runs (§4.2: "Action Justification ... 2.10");
    undefined, with its reason, where fewer than 2 runs have the score."""
    columns = [*tasks, "PersonaScore"]
    kept = ("model", *columns, "refusal_rate", "refusals", "answers", "not_judged")
    table = [{k: r.get(k) for k in kept} for r in rows]
    spread: dict[str, Any] = {"model": "spread (max - min)"}
    for column in columns:
        values = [float(r[column]) for r in rows if r.get(column) is not None]
        spread |= stat_fields(
            column,
            max(values) - min(values) if len(values) >= 2 else Undefined("fewer than 2 runs"),
        )
    return [*table, spread]


def persona_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Per persona: its description, settings, task scores and PersonaScore."""
    return [
        {
            "persona": persona,
            "description": record["description"],
            "settings": "; ".join(record["settings"] or []),
            **record["scores"],
            "small_group": bool(record["small_tasks"]),
        }
        for persona, record in metrics["personas"].items()
    ]


def summary_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 2's row for this run, with its refusal rate; a sweep labels it with its model.
    An import of the published scores gives its rows with their models."""
    if "published" in metrics:
        return table2_rows(metrics)
    return [{k: v for k, v in row.items() if k != "model"} for row in table2_rows(metrics)]


def write_sweep_reports(
    rows: list[dict[str, Any]], varied: list[str], directory: Path
) -> list[Path]:
    """Table 2 across the sweep's runs with each task's spread among them (§4.2), and
    Figure 4: the refusal rate per model (each run labelled by its model and varied
    values)."""
    tasks = [t for t in TASKS if any(t in row for row in rows)]
    files = write_table(table2_spread(rows, tasks), directory, "table2_across_models")
    labelled = [
        {**row, "model": "\n".join([str(row["model"]), *(f"{v}={row[v]}" for v in varied)])}
        for row in rows
    ]
    return [*files, write_sweep_refusal_figure(labelled, directory)]
