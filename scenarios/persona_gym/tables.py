"""PersonaGym's report (seed 002): the console lines, Table 2 (a row per run or model, with the
spread across a sweep's runs), the per-persona table and the sweep's report, all from the
metrics `gym_metrics` makes; the figures are in `figures`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from personasim.analysis.reports import small_note
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
from personasim.simulation.core.summary_counts import SummaryCount
from personasim.simulation.runs.lifecycle.tables import cell_text, write_table

__all__ = [
    "SPREAD_LABEL",
    "SUMMARY_COUNTS",
    "is_scripted",
    "persona_rows",
    "refusal_cell",
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
        f"(rate {_rate_words(refusals)})"
    )


def _rate_words(refusals: dict[str, Any]) -> str:
    """The refusal rate as a percentage of the judged answers, or why it is undefined."""
    if refusals.get("rate") is None:
        return shown_stat(refusals, "rate")
    judged = refusals["n"] + refusals["judged_in"]
    return cell_text(100.0 * refusals["rate"], judged, noun="judged", as_percent=True)


def refusal_cell(row: dict[str, Any], rate: str = "refusal_rate") -> str:
    """A refusal rate with its n: "6.0% of 200 judged" (out of persona / judged answers; ", 205
    asked" where verdicts could not be read), or why it is undefined, in one percent format."""
    value = row.get(rate)
    answers = row.get("answers", row.get("n_answers"))
    judged = row.get("judged")
    return cell_text(
        None if value is None else 100.0 * value,
        judged if value is not None and judged is not None else answers,
        noun="judged" if value is not None and judged is not None else "answers",
        asked=answers if value is not None else None,
        as_percent=True,
        reason=str(row.get(f"{rate}_undefined") or ""),
    )


def refusal_rows(refusals: dict[str, Any]) -> list[dict[str, Any]]:
    """The refusal table: per task and for all answers, how each answer was read and the rate
    (out / judged; undefined, with the reason, while answers are not judged)."""
    rows = [
        {
            "task": task,
            **counts,
            "judged": _judged(counts),
            **stat_fields("rate", read_stat(refusals["by_task"], task)),
        }
        for task, counts in refusals["counts_by_task"].items()
    ]
    overall = {k: refusals[k] for k in (*REFUSAL_OUTCOMES, "n_answers")}
    overall["judged"] = _judged(overall)
    return [*rows, {"task": "all", **overall, **stat_fields("rate", read_stat(refusals, "rate"))}]


def _judged(counts: dict[str, Any]) -> int:
    """The answers a refusal rate is over: out of persona (grammar or judge) or judged in."""
    return counts["marked_by_grammar"] + counts["judged_out"] + counts["judged_in"]


def write_gym_reports(metrics: dict[str, Any], directory: Path) -> list[Path]:
    """Table 2's row, per-persona scores, evaluator agreement and human alignment tables."""
    if "published" in metrics:
        return write_published_reports(metrics, directory, table2_spread, TABLE2_CELLS)
    smallest = metrics["min_group_n"]
    small = metrics["small_tasks"]
    notes = [small_note(smallest, f"scored questions in {', '.join(small)}")] if small else []
    files = write_table(
        table2_rows(metrics),
        directory,
        "table2_persona_score",
        flag="small_group",
        notes=[*notes, SCORE_NOTE],
        cells=TABLE2_CELLS,
    )
    if "counts_by_task" in metrics["refusals"]:
        files += write_table(
            refusal_rows(metrics["refusals"]),
            directory,
            "refusals",
            cells={"rate": lambda row: refusal_cell(row, "rate")},
        )
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
    refusals = metrics["refusals"]
    return [
        {
            "model": metrics["model"],
            "n": metrics["n_scored_questions"],
            **metrics["scores"],
            **stat_fields("refusal_rate", read_stat(refusals, "rate")),
            "refusals": refusals["n"],
            "judged": refusals["n"] + refusals.get("judged_in", 0),
            "answers": refusals["n_answers"],
            "not_judged": refusals.get("not_judged", 0),
            "small_group": bool(metrics["small_tasks"]),
        }
    ]


SPREAD_LABEL = "spread (max - min)"
"""Table 2's last row: per task the highest minus the lowest score among the rows (§4.2)."""


def is_scripted(model: Any) -> bool:
    """Whether a row's model is the scripted double (a test double, not a language model)."""
    return str(model).split(":", 1)[0] == "scripted"


def table2_spread(
    rows: Sequence[dict[str, Any]], tasks: Sequence[str], include_scripted: bool | None = None
) -> list[dict[str, Any]]:
    """Table 2 across a sweep's runs (or the paper's models beside ours), and a last row
    `spread`: per task (and PersonaScore) the highest minus the lowest score (§4.2: "Action
    Justification ... 2.10"); undefined, with its reason, where fewer than 2 rows have it.

    The scripted double is a test double, not a model, so its rows are left out of the spread
    unless `include_scripted` (None: only where every row is scripted, as in a sweep of its
    settings); `spread_over` says which rows the spread is over."""
    columns = [*tasks, "PersonaScore"]
    kept = ("model", "n", *columns, "refusal_rate", "refusals", "judged", "answers", "not_judged")
    table = [{k: r.get(k) for k in kept} | _undefined(r) for r in rows]
    if include_scripted is None:
        include_scripted = all(is_scripted(r.get("model")) for r in rows)
    counted = [r for r in rows if include_scripted or not is_scripted(r.get("model"))]
    left_out = len(rows) - len(counted)
    over = f"{len(counted)} of {len(rows)} rows" + (
        f"; {left_out} scripted left out (the test double, not a model)" if left_out else ""
    )
    spread: dict[str, Any] = {"model": SPREAD_LABEL, "spread_over": over}
    for column in columns:
        values = [float(r[column]) for r in counted if r.get(column) is not None]
        spread |= stat_fields(
            column,
            max(values) - min(values)
            if len(values) >= 2
            else Undefined(f"fewer than 2 rows to compare ({over})"),
        )
    return [*table, spread]


def _undefined(row: dict[str, Any]) -> dict[str, Any]:
    """The reason beside an undefined refusal rate (so its cell can say why)."""
    reason = row.get("refusal_rate_undefined")
    return {"refusal_rate_undefined": reason} if reason else {}


TABLE2_CELLS = {"refusal_rate": refusal_cell}
"""Table 2's Markdown cells with their n: the refusal rate of the judged answers."""
SCORE_NOTE = (
    "n: the scored questions behind the task scores and PersonaScore (1-5); refusal_rate: the "
    "share of judged answers out of persona."
)


SPREAD_NOTE = (
    "spread (max - min): over the rows spread_over names; the scripted double's rows are left "
    "out where other rows are there (it is a test double, not a language model)."
)


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
    counts = {f"{task} n": n for task, n in metrics.get("n_scored_by_task", {}).items()}
    return [
        {**{k: v for k, v in row.items() if k != "model"}, **counts} for row in table2_rows(metrics)
    ]


SUMMARY_COUNTS = {
    **{task: SummaryCount(f"{task} n", "scored") for task in TASKS},
    "PersonaScore": SummaryCount("n", "scored"),
    "refusal_rate": SummaryCount("judged", "judged", "answers", percent=100),
}
"""What each statistic of `summary_rows` is counted over (the sweep's combined.md): a task's
score over its scored questions (`<task> n`), PersonaScore (the mean of the task scores) over
all of them, the refusal rate over the answers whose verdict was read, of those answered."""


def write_sweep_reports(
    rows: list[dict[str, Any]], varied: list[str], directory: Path
) -> list[Path]:
    """Table 2 across the sweep's runs with each task's spread among them (§4.2), and
    Figure 4: the refusal rate per model (each run labelled by its model and varied
    values)."""
    tasks = [t for t in TASKS if any(t in row for row in rows)]
    files = write_table(
        table2_spread(rows, tasks),
        directory,
        "table2_across_models",
        notes=[SCORE_NOTE, SPREAD_NOTE],
        cells=TABLE2_CELLS,
    )
    labelled = [
        {**row, "model": "\n".join([str(row["model"]), *(f"{v}={row[v]}" for v in varied)])}
        for row in rows
    ]
    return [*files, write_sweep_refusal_figure(labelled, directory)]
