"""Figures 3–5 of PersonaGym (seed 002, §4.2) for one run, drawn from its `metrics` alone.

Figure 3: score per task; Figure 4: refusal rate per task; Figure 5: each evaluator's score per
task (the ensemble's robustness). The paper plots several models; a sweep's runs each draw
their own, side by side in the sweep's folders. An undefined value is drawn as no bar and named
in the axis label, never as zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from .reports import save_figure

__all__ = ["write_gym_figures"]


def _values(fields: Mapping[str, Any], names: Sequence[str]) -> list[float]:
    """The defined values as numbers; NaN (no bar) where a metrics field is null."""
    return [float(fields[n]) if fields.get(n) is not None else float("nan") for n in names]


def _labels(tasks: Sequence[str], values: Sequence[float]) -> list[str]:
    return [
        t.replace(" ", "\n") + ("\n(undefined)" if np.isnan(v) else "")
        for t, v in zip(tasks, values, strict=True)
    ]


def _bars(
    title: str,
    ylabel: str,
    tasks: Sequence[str],
    series: dict[str, list[float]],
    ylim: tuple[float, float],
) -> Figure:
    figure = Figure(figsize=(1.6 * len(tasks) + 2, 3.6))
    ax = figure.subplots()
    width = 0.8 / max(1, len(series))
    x = np.arange(len(tasks))
    for i, (name, values) in enumerate(series.items()):
        ax.bar(x + (i - (len(series) - 1) / 2) * width, values, width, label=name)
    only = next(iter(series.values())) if len(series) == 1 else [0.0] * len(tasks)
    ax.set_xticks(x, _labels(tasks, only))
    ax.set_ylim(*ylim)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if len(series) > 1:
        ax.legend(fontsize="small")
    return figure


def write_gym_figures(metrics: Mapping[str, Any], directory: Path) -> list[Path]:
    """figure3_task_scores.png, figure4_refusals.png and figure5_evaluator_scores.png."""
    tasks = list(metrics["tasks"])
    model = metrics["model"]
    scores = _values(metrics["scores"], tasks)
    refusals = _values(metrics["refusals"]["by_task"], tasks)
    evaluators = {
        f"{name} ({spec})": _values(metrics["by_evaluator"].get(name, {}), tasks)
        for name, spec in metrics["evaluators"].items()
    }
    return [
        save_figure(
            _bars(f"Score per task — {model}", "score (1–5)", tasks, {model: scores}, (0, 5)),
            directory,
            "figure3_task_scores",
        ),
        save_figure(
            _bars(f"Refusals per task — {model}", "refusal rate", tasks, {model: refusals}, (0, 1)),
            directory,
            "figure4_refusals",
        ),
        save_figure(
            _bars(f"Score per evaluator — {model}", "score (1–5)", tasks, evaluators, (0, 5)),
            directory,
            "figure5_evaluator_scores",
        ),
    ]
