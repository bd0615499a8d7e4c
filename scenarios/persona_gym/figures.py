"""Figures 3–5 of PersonaGym (seed 002, §4.2–4.3) for one run, drawn from its `metrics` alone,
each with its n.

- Figure 3: the distribution of the selected settings (how many personas were placed in each,
  k of n on each bar) beside a word cloud of the persona descriptions' words (font size ∝
  count; multi-word names such as "New York" kept whole; drawn with matplotlib text laid out
  in rows, not a packed cloud: no extra dependency). A run that selects no settings (the
  static pipeline) says so in words in place of the settings panel.
- Figure 4: the refusal rate (answers out of persona, `refusals.py`) of the run's model and
  per task, each bar labelled with its rate and k of n judged answers, on an axis scaled to
  the highest bar so that a 4% bar shows; a sweep draws it per model
  (`write_sweep_refusal_figure`).
- Figure 5: PersonaScore by question generator × evaluator: the run's generator (its reasoner
  model) in the row, each evaluator's PersonaScore in a column, with the scored answers n.

An undefined value is drawn as no bar (or an empty cell) and named, never as zero.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from personasim.analysis.reports import save_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "NAME",
    "STOPWORDS",
    "attribute_words",
    "generator_evaluator_figure",
    "no_data",
    "refusal_figure",
    "selected_settings",
    "settings_figure",
    "sweep_refusal_figure",
    "write_gym_figures",
    "write_sweep_refusal_figure",
]

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "from",
        "for",
        "with",
        "who",
        "whose",
        "is",
        "are",
        "was",
        "be",
        "by",
        "as",
        "or",
        "but",
        "their",
        "his",
        "her",
        "its",
        "they",
        "she",
        "he",
        "it",
        "that",
        "this",
        "which",
        "while",
        "into",
        "about",
        "over",
        "than",
        "through",
    ]
)
"""Words left out of the word cloud (articles, prepositions, pronouns, conjunctions)."""

MAX_SETTINGS = 25
"""Figure 3 shows at most this many settings (the most selected); the title says how many."""


def selected_settings(metrics: Mapping[str, Any]) -> Counter[str]:
    """Per setting, how many personas were placed in it (a persona not placed has None)."""
    return Counter(s for record in metrics["personas"].values() for s in (record["settings"] or []))


_CAPITALISED = r"[A-Z][\w']*(?:-[A-Z][\w']*)*"  # "Smith-Jones", not "York-based"
NAME = re.compile(rf"{_CAPITALISED}(?:\s+(?:(?:of|de|da|do|del|la|le)\s+)?{_CAPITALISED})+")
"""A multi-word proper name as written: capitalised words in a row, with a joining "of" or "de"
between them ("New York", "Rio de Janeiro", "World War II"): a place is one unit in the cloud."""


def _names(description: str) -> list[str]:
    """The multi-word names of a description, without a capitalised article before them ("A
    New York chef" names "New York")."""
    names = []
    for match in NAME.finditer(description):
        words = match.group().split()
        while words and words[0].lower() in STOPWORDS:
            words.pop(0)
        if len(words) >= 2:
            names.append(" ".join(words))
    return names


def attribute_words(metrics: Mapping[str, Any]) -> Counter[str]:
    """The words of the persona descriptions (lower case, hyphenated kept whole) without
    `STOPWORDS`, counted over personas; a multi-word name written with capitals ("New York",
    "New Zealand") counts as one unit, as written, so "new" is not a word of its own."""
    words = Counter[str]()
    for record in metrics["personas"].values():
        description = record["description"]
        names = _names(description)
        words.update(names)
        for name in names:
            description = description.replace(name, " ")
        tokens = re.findall(r"[a-z][a-z'-]*[a-z]|\d+-year-old", description.lower())
        words.update(t for t in tokens if t not in STOPWORDS)
    return words


def no_data(ax: Any, reason: str) -> None:
    """A panel with nothing to draw says so in words ("no data: ...") instead of staying empty."""
    text = textwrap.fill(f"no data: {reason}", width=44)
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()


def _settings_panel(ax: Any, counts: Counter[str], n_placed: int, pipeline: str) -> None:
    from matplotlib.ticker import MaxNLocator

    shown = counts.most_common(MAX_SETTINGS)[::-1]
    if not shown:
        why = (
            "the static pipeline places no persona in a setting (its questions come from a file)"
            if pipeline == "static"
            else "no persona was placed in a setting"
        )
        ax.set_title("Selected settings", fontsize="medium")
        no_data(ax, why)
        return
    bars = ax.barh([name for name, _ in shown], [k for _, k in shown], color="#4c72b0")
    ax.bar_label(bars, labels=[f"{k} of {n_placed}" for _, k in shown], padding=2, fontsize=7)
    more = f", top {MAX_SETTINGS} of {len(counts)}" if len(counts) > MAX_SETTINGS else ""
    ax.set_title(f"Selected settings (n = {n_placed} personas placed{more})", fontsize="medium")
    ax.set_xlabel("personas placed in the setting")
    ax.set_ylabel("setting")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.margins(x=0.15)
    ax.tick_params(axis="y", labelsize="small")


def _word_cloud(ax: Any, words: Counter[str], n_personas: int, limit: int = 60) -> None:
    """Words in rows, largest first, font size from 8 to 28 points by count (14 when all
    counts are equal)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    ax.set_axis_off()
    ax.set_title(f"Persona attributes (n = {n_personas} descriptions)", fontsize="medium")
    top = words.most_common(limit)
    if not top:
        no_data(ax, "no persona description has a word to count")
        return
    high, low = top[0][1], top[-1][1]
    x, y, row_height = 0.0, 0.95, 0.0
    renderer = FigureCanvasAgg(ax.figure).get_renderer()  # to measure each word
    width = ax.get_window_extent(renderer).width
    for word, count in top:
        size = 8 + 20 * ((count - low) / (high - low) if high > low else 0.3)
        text = ax.text(x, y, word, fontsize=size, va="top", transform=ax.transAxes)
        box = text.get_window_extent(renderer)
        if x > 0 and x + box.width / width > 1.0:  # next row
            y -= row_height + 0.02
            x, row_height = 0.0, 0.0
            text.set_position((x, y))
        if y < 0.05:
            text.remove()
            break
        x += box.width / width + 0.02
        row_height = max(row_height, box.height / ax.get_window_extent(renderer).height)


def settings_figure(metrics: Mapping[str, Any]) -> Figure:
    """Figure 3: the selected settings beside the persona descriptions' words."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(13, 6))  # fixed axes: the word cloud is laid out in them
    left, right = figure.subplots(1, 2, width_ratios=[1, 1.2])
    figure.subplots_adjust(left=0.22, right=0.98, wspace=0.08)
    placed = sum(1 for r in metrics["personas"].values() if r["settings"])
    _settings_panel(left, selected_settings(metrics), placed, str(metrics.get("pipeline", "")))
    _word_cloud(right, attribute_words(metrics), len(metrics["personas"]))
    figure.suptitle(f"Figure 3 — settings and persona attributes ({metrics['model']})")
    return figure


def _value(fields: Mapping[str, Any], name: str) -> float:
    value = fields.get(name)
    return float(value) if value is not None else float("nan")


def _refusal_bars(
    ax: Any, labels: Sequence[str], rates: Sequence[float], notes: Sequence[str], what: str
) -> None:
    """One bar per label, each labelled with its rate and k of n (`notes`); the axis reaches
    a little above the highest bar, so that a 4% bar is not a sliver on a 0-100% axis."""
    from matplotlib.ticker import PercentFormatter

    x = np.arange(len(labels))
    ax.bar(x, [0.0 if np.isnan(r) else r for r in rates], color="#c44e52")
    for i, (rate, note) in enumerate(zip(rates, notes, strict=True)):
        shown = "undefined" if np.isnan(rate) else f"{100 * rate:.1f}%"
        ax.text(i, 0 if np.isnan(rate) else rate, f"{shown}\n{note}", ha="center",
                va="bottom", fontsize=7)  # fmt: skip
    ax.set_xticks(x, labels, fontsize="small")
    finite = [r for r in rates if not np.isnan(r)]
    ax.set_ylim(0, min(1.0, max(0.05, 1.35 * max(finite, default=0.0))) * 1.12)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylabel("answers out of persona (% of judged)")
    ax.set_xlabel(what)


def _refusal_note(out: int, judged: int | None, answers: int | None, not_judged: int) -> str:
    """k of n judged answers out of persona, and how many were not judged (then the rate is
    undefined)."""
    if not answers:
        return "no answers (n=0)"
    if not_judged:
        return f"{out} of {answers} answers\n{not_judged} not judged"
    return f"{out} of {judged if judged is not None else answers}"


def refusal_figure(metrics: Mapping[str, Any]) -> Figure:
    """Figure 4: the refusal rate of the run's model and per task, each bar with k of n."""
    from matplotlib.figure import Figure

    refusals = metrics["refusals"]
    tasks = list(metrics["tasks"])
    figure = Figure(figsize=(2.6 + 1.6 * len(tasks), 4.0), layout="constrained")
    model_ax, task_ax = figure.subplots(1, 2, width_ratios=[1, max(len(tasks), 1)])
    rate = _value(refusals, "rate")
    judged = refusals["n"] + refusals.get("judged_in", 0)
    note = _refusal_note(
        refusals["n"], judged, refusals["n_answers"], refusals.get("not_judged", 0)
    )
    _refusal_bars(model_ax, [str(metrics["model"])], [rate], [note], "model")
    model_ax.set_title("all answers")
    by_task = refusals.get("counts_by_task", {})
    per_task = [_value(refusals["by_task"], t) for t in tasks]
    notes = []
    for task in tasks:
        counts = by_task.get(task)
        if counts is None:  # a log written before the counts per task
            notes.append("n not recorded")
            continue
        out = counts["marked_by_grammar"] + counts["judged_out"]
        notes.append(
            _refusal_note(out, out + counts["judged_in"], counts["n_answers"], counts["not_judged"])
        )
    _refusal_bars(task_ax, [t.replace(" ", "\n") for t in tasks], per_task, notes, "task")
    task_ax.set_title("per task")
    figure.suptitle(f"Figure 4 — answers out of persona (refusals), {metrics['model']}")
    return figure


def _spec_lines(spec: str, width: int = 20) -> str:
    """A model spec on lines of at most `width` characters (broken after the kind's colon and
    at hyphens), so neighbouring tick labels do not run into each other."""
    return textwrap.fill(spec.replace(":", ": ", 1), width).replace(": ", ":")


def generator_evaluator_figure(metrics: Mapping[str, Any]) -> Figure:
    """Figure 5: PersonaScore by question generator × evaluator, each cell with its n."""
    from matplotlib.figure import Figure

    evaluators = list(metrics["evaluators"])
    counts = metrics.get("n_scored_by_evaluator", {})
    cells = np.array(
        [[_value(metrics["by_evaluator"].get(e, {}), "PersonaScore") for e in evaluators]]
    )
    figure = Figure(figsize=(2.5 + 2.2 * len(evaluators), 2.8), layout="constrained")
    ax = figure.subplots()
    image = ax.imshow(np.ma.masked_invalid(cells), vmin=1, vmax=5, cmap="viridis")
    for j, name in enumerate(evaluators):
        value = cells[0, j]
        shown = "undefined" if np.isnan(value) else f"{value:.2f}"
        ax.text(j, 0, f"{shown}\nn = {counts.get(name, 0)}", ha="center", va="center",
                color="white" if not np.isnan(value) and value < 3.5 else "black")  # fmt: skip
    labels = [f"{e}\n{_spec_lines(str(metrics['evaluators'][e]))}" for e in evaluators]
    ax.set_xticks(range(len(evaluators)), labels)
    ax.set_yticks([0], [f"generator\n{metrics.get('generator', 'unknown')}"])
    ax.set_xlabel("evaluator")
    ax.set_ylabel("question generator")
    figure.colorbar(image, ax=ax, label="PersonaScore (1–5)")
    title = "Figure 5 — PersonaScore by question generator × evaluator"
    figure.suptitle(f"{title} ({metrics['model']})")
    return figure


def write_gym_figures(metrics: Mapping[str, Any], directory: Path) -> list[Path]:
    """figure3_settings.png, figure4_refusals.png and figure5_generator_evaluator.png."""
    return [
        save_figure(settings_figure(metrics), directory, "figure3_settings"),
        save_figure(refusal_figure(metrics), directory, "figure4_refusals"),
        save_figure(generator_evaluator_figure(metrics), directory, "figure5_generator_evaluator"),
    ]


def sweep_refusal_figure(rows: Sequence[Mapping[str, Any]]) -> Figure:
    """Figure 4 across a sweep's runs: the refusal rate per model, with k of n answers."""
    from matplotlib.figure import Figure

    labels = [str(r["model"]) for r in rows]
    rates = [_value(r, "refusal_rate") for r in rows]
    notes = [
        _refusal_note(r["refusals"], r.get("judged"), r.get("answers"), r.get("not_judged") or 0)
        for r in rows
    ]
    figure = Figure(figsize=(2.4 + 1.6 * len(rows), 4.0), layout="constrained")
    _refusal_bars(figure.subplots(), labels, rates, notes, "model (run)")
    figure.suptitle("Figure 4 — answers out of persona (refusals) per model")
    return figure


def write_sweep_refusal_figure(rows: Sequence[Mapping[str, Any]], directory: Path) -> Path:
    """`figure4_refusals_by_model.png` (`sweep_refusal_figure`)."""
    return save_figure(sweep_refusal_figure(rows), directory, "figure4_refusals_by_model")
