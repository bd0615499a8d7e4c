"""The PersonaGym paper's published scores as a run's metrics (`personasim import persona-gym`).

The authors released, per model, the five task scores and the PersonaScore (Table 2; their
`evaluations/<model>/scores.json`), rounded to two decimals: aggregates, with no per-question
scores, so no n. PersonaScore is defined as the mean of the task scores (§3.3); the
published one is shown beside the mean of the published task scores, and a model is flagged
where they differ by more than rounding can explain (`ROUNDING`): Claude 3 Haiku's published
PersonaScore is 3.64, the mean of its published task scores 3.84.

Runs of ours (`--beside`) are read from their own metrics and shown beside the paper's models
in Table 2 across models, with each task's spread; the scripted double's runs are left out of
the spread unless `--spread-with-scripted yes` (it is a test double, not a model).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from personasim.analysis.undefined import Undefined, stat_fields
from personasim.scenarios.persona_gym.metric_blocks import PublishedGymMetrics
from personasim.simulation.runs.lifecycle.tables import write_table

__all__ = [
    "NO_N",
    "ROUNDING",
    "Spread",
    "published_metrics",
    "published_report_lines",
    "published_rows",
    "write_published_reports",
]

ROUNDING = 0.01
"""Largest difference between the published PersonaScore and the mean of the published task
scores that two-decimal rounding explains (each rounded by at most 0.005)."""

NO_N = "published aggregates: the paper releases no per-question scores"


def published_rows(
    models: Mapping[str, Mapping[str, float]], tasks: Sequence[str]
) -> list[dict[str, Any]]:
    """Per published model: its task scores, the published PersonaScore, the mean of the task
    scores, their difference and whether it is more than rounding; n is undefined."""
    rows = []
    for model, scores in models.items():
        mean = float(np.mean([scores[t] for t in tasks]))
        published = float(scores["PersonaScore"])
        difference = round(published - mean, 6)
        rows.append(
            {
                "model": model,
                "source": "published",
                **{t: scores[t] for t in tasks},
                "PersonaScore": published,
                "mean_of_tasks": round(mean, 6),
                "difference": difference,
                "differs": abs(difference) > ROUNDING,
                **stat_fields("n", Undefined(NO_N)),
            }
        )
    return rows


def published_metrics(
    header: Mapping[str, Any], published: Mapping[str, Any], beside: Sequence[Mapping[str, Any]]
) -> PublishedGymMetrics:
    """The imported run's `metrics`: the published rows and the runs shown beside them."""
    tasks = header["params"]["tasks"]
    rows = published_rows(published["models"], tasks)
    return {
        "model": "published (PersonaGym authors)",
        "imported": published["source"],
        "tasks": tasks,
        "spread_with_scripted": bool(published.get("spread_with_scripted", False)),
        "published": rows,
        "differing": [r["model"] for r in rows if r["differs"]],
        "beside": [dict(r) for r in beside],
        **stat_fields("n_scored_questions", Undefined(NO_N)),
    }


def published_report_lines(metrics: Mapping[str, Any]) -> list[str]:
    lines = [f"published PersonaGym scores of {len(metrics['published'])} models ({NO_N})"]
    for row in metrics["published"]:
        flag = "  ← differs beyond rounding" if row["differs"] else ""
        lines.append(
            f"  {row['model']}: PersonaScore published {row['PersonaScore']:.2f}, mean of "
            f"tasks {row['mean_of_tasks']:.2f}{flag}"
        )
    for row in metrics["beside"]:
        lines.append(f"  beside: {row['model']} PersonaScore {row.get('PersonaScore')}")
    return lines


Spread = Callable[[Sequence[dict[str, Any]], Sequence[str], bool], list[dict[str, Any]]]


def write_published_reports(
    metrics: Mapping[str, Any],
    directory: Path,
    spread: Spread,
    cells: Mapping[str, Callable[[Mapping[str, Any]], str | None]] | None = None,
) -> list[Path]:
    """`published_scores` (a row per model, both PersonaScores, the flag) and
    `table2_across_models`: our runs (`--beside`) and the paper's models, with each task's
    spread (`spread`: Table 2's, `table2_spread`; `cells`: its Markdown cells with their n)."""
    notes = [
        f"n: {NO_N}.",
        "differs: the published PersonaScore and the mean of the published task scores "
        f"differ by more than {ROUNDING} (two-decimal rounding).",
    ]
    files = write_table(metrics["published"], directory, "published_scores", notes=notes)
    tasks = metrics["tasks"]
    ours = [{**r, "source": r.get("source", "run")} for r in metrics["beside"]]
    rows = [*ours, *metrics["published"]]
    table = spread(rows, tasks, metrics.get("spread_with_scripted", False))
    for row, source in zip(table, [*(r["source"] for r in rows), ""], strict=True):
        row["source"] = source  # by position: two runs may share a model's name
    files += write_table(
        table,
        directory,
        "table2_across_models",
        notes=[
            "PersonaScore of a published row: as published (see published_scores); n: the "
            "scored questions of a run of ours (the paper releases none).",
            "spread (max - min): over the rows spread_over names; the scripted double's runs "
            "are left out unless imported with --spread-with-scripted yes.",
        ],
        cells=cells or {},
    )
    return files
