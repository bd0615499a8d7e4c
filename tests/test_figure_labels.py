"""Every figure the project draws can be read without asking (issue 36): each drawing function
is called on small scripted data, and the Figure it returns is opened before it is saved.

The rule, per panel (an Axes; a colorbar is part of its panel and exempt):

- a panel that shows data (lines, markers, bars, areas, an image) labels its x and its y axis;
  a heatmap (an image) may instead name its rows and columns in its tick labels;
- every panel shows its n: "n=12", "n = 12" or "k of n" in its title, axis labels, tick
  labels, legend or a text inside it; a panel with nothing to draw says "no data: ..." in
  words (and is not left empty);
- every bar shows its own n: a bar chart carries at least as many n labels (texts or tick
  labels) as it has bar positions (a stack of bars at one position counts once).

A last test checks that the list below covers every function in the source tree that makes a
Figure, so a new figure cannot skip the rule.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from matplotlib.axes import Axes
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parents[1]
N_TEXT = re.compile(r"\bn\s*=\s*\d|\b\d+ of \d+\b")
NO_DATA = "no data:"


# --- the rule --------------------------------------------------------------------------------


def _panels(figure: Figure) -> list[Axes]:
    return [ax for ax in figure.axes if ax.get_label() != "<colorbar>"]


def _shows_data(ax: Axes) -> bool:
    lines = [line for line in ax.lines if len(line.get_xdata()) > 0]
    return bool(lines or ax.containers or ax.collections or ax.images or ax.patches)


def _words(ax: Axes) -> list[str]:
    """Every text a reader sees in a panel."""
    words = [ax.get_title(loc) for loc in ("left", "center", "right")]
    words += [ax.get_xlabel(), ax.get_ylabel(), *(t.get_text() for t in ax.texts)]
    words += [t.get_text() for t in (*ax.get_xticklabels(), *ax.get_yticklabels())]
    if ax.get_legend() is not None:
        words += [t.get_text() for t in ax.get_legend().get_texts()]
    return words


def _bar_positions(ax: Axes) -> int:
    """Bar positions: a stack (bars at one x, or one y for horizontal bars) counts once."""
    positions = set()
    for container in ax.containers:
        if not isinstance(container, BarContainer):
            continue
        for bar in container.patches:
            if container.orientation == "horizontal":
                positions.add(round(bar.get_y() + bar.get_height() / 2, 6))
            else:
                positions.add(round(bar.get_x() + bar.get_width() / 2, 6))
    return len(positions)


def problems(figure: Figure, name: str) -> list[str]:
    """What a reader would have to ask about `figure`; empty when it follows the rule."""
    found = []
    for index, ax in enumerate(_panels(figure)):
        where = f"{name} panel {index} ({ax.get_title()!r})"
        words = _words(ax)
        if any(NO_DATA in w for w in words):
            continue  # says in words why there is nothing to draw
        if not ax.axison and not (ax.texts or ax.get_title()):
            found.append(f"{where}: an empty panel")
        if _shows_data(ax):
            image_ticks = ax.images and all(
                any(t.get_text() for t in ticks)
                for ticks in (ax.get_xticklabels(), ax.get_yticklabels())
            )
            if not (ax.get_xlabel() and ax.get_ylabel()) and not image_ticks:
                found.append(f"{where}: no x or y label")
        if not any(N_TEXT.search(w) for w in words):
            found.append(f"{where}: no n")
        counted = sum(bool(N_TEXT.search(w)) for w in words)
        bars = _bar_positions(ax)
        if bars and counted < bars:
            found.append(f"{where}: {bars} bars but {counted} n labels")
    return found


# --- small scripted data for each drawing function ----------------------------------------------


def classroom_race_effect() -> list[Figure]:
    from personasim.scenarios.classroom.reports import race_effect_figure

    rows = [
        {"race": "AA", "level": "low", "order": "before", "change": -8.3, "sd": 14.0, "small": 0},
        {"race": "AA", "level": "high", "order": "before", "change": 2.8, "sd": None, "small": 0},
        {"race": "HS", "level": "low", "order": "before", "change": None, "sd": None, "small": 1},
        {"race": "HS", "level": "high", "order": "before", "change": 0.0, "sd": 8.3, "small": 1},
    ]
    counts = {("AA", "low"): (36, 36), ("AA", "high"): (36, 36), ("HS", "low"): (0, 36),
              ("HS", "high"): (3, 36)}  # fmt: skip
    return [race_effect_figure(rows, "scripted", "a note", 5, counts)]


def classroom_race_effect_models() -> list[Figure]:
    from personasim.scenarios.classroom.tables import race_effect_models_figure

    rows = []
    for model in ("scripted", "scripted:drift=0.3"):
        base = {"model": model, "strategy": "zero-shot", "order": "before"}
        rows.append({**base, "race": "none", "n_low": 12, "n_high": 12})
        for race, change in (("AA", -4.0), ("HS", None)):
            rows.append({**base, "race": race, "n_low": 12, "n_high": 11,
                         "race_effect_low": change, "race_effect_low_sd": 2.0,
                         "race_effect_high": 1.0, "race_effect_high_sd": None})  # fmt: skip
    return [race_effect_models_figure(rows)]


def _career_metrics() -> dict[str, Any]:
    groups = {"<30": 4, "30-40": 5, ">60": 7}
    pairs = [
        {"group_a": a, "group_b": b, "n_a": groups[a], "n_b": groups[b], "ratio": r,
         "ratio_ci": [r * 0.8, r * 1.2], "ratio_null": [0.3, 5.0], "ratio_p": p,
         "ratio_p_holm": min(1.0, 3 * p)}
        for (a, b), r, p in ((("<30", "30-40"), 1.2, 0.4), (("<30", ">60"), 6.2, 0.01),
                             (("30-40", ">60"), 2.7, 0.2))
    ]  # fmt: skip
    result = {"groups": groups, "pairs": pairs}
    return {
        "model": "scripted",
        "adaptation": {f: {"age": result} for f in ("profile", "dialogue")},
    }


def career_figure5() -> list[Figure]:
    from personasim.scenarios.career_chat.reports import figure5, figure5_null

    metrics = _career_metrics()
    return [figure5(metrics, "age"), figure5_null(metrics, "age")]


def journey_agreement() -> list[Figure]:
    from personasim.scenarios.persona_journey.metrics import agreement_figure

    personas = [
        {"trust_sent": float(i % 7), "survey_mean": 2 + i / 20, "gym_consistency": 4.0,
         "survey_stability": (i % 3) / 3} for i in range(8)
    ]  # fmt: skip
    agreement = {"trust_vs_survey": {"rho": 0.4}, "consistency_vs_stability": {"rho": None,
                 "rho_undefined": "constant input"}}  # fmt: skip
    empty = {"personas": [{"trust_sent": 1.0}], "agreement": {}}
    return [agreement_figure({"personas": personas, "agreement": agreement}),
            agreement_figure(empty)]  # fmt: skip


def trust_population() -> list[Figure]:
    from personasim.scenarios.trust.metrics import eta_figure, sent_figure

    traits = [
        {"attribute": "Age", "n": 60, "n_levels": 4, "eta_squared": 0.08,
         "eta_squared_undefined": ""},
        {"attribute": "Family", "n": 0, "n_levels": 0, "eta_squared": None,
         "eta_squared_undefined": "no values: no level in the test split"},
    ]  # fmt: skip
    reference = [{"label": "Berg et al. (1995)", "share_sent": 0.516}]
    sent = {"sent_counts": {"0": 3, "5": 10, "10": 2}, "endowment": 10, "mean_sent": 5.0,
            "n_decisions": 15, "human_reference": reference}  # fmt: skip
    nothing = {"sent_counts": {}, "endowment": 10, "mean_sent": None, "n_decisions": 0}
    return [eta_figure(traits), sent_figure(sent), sent_figure(nothing)]


def trust_forecast() -> list[Figure]:
    from personasim.scenarios.trust.forecast_metrics import mae_figure

    rows = [
        {"model": "scripted", "archetype": "M1", "horizon": h, "n": 20 - 2 * h, "mae": 1.0 + h,
         "sd_abs_error": 0.5} for h in (1, 2, 3)
    ]  # fmt: skip
    return [mae_figure(rows, 3, "a note"), mae_figure([], 3)]


def _gym_metrics(pipeline: str) -> dict[str, Any]:
    tasks = ["Expected Action", "Toxicity Control"]
    placed = pipeline == "dynamic"
    return {
        "model": "scripted",
        "pipeline": pipeline,
        "tasks": tasks,
        "generator": "scripted",
        "personas": {
            "p1": {
                "description": "A 30-year-old chef from New York",
                "settings": ["Kitchen"] if placed else None,
            },
            "p2": {
                "description": "A nurse from New Zealand",
                "settings": ["Hospital", "Kitchen"] if placed else None,
            },
        },
        "refusals": {
            "rate": 0.05,
            "n": 2,
            "judged_in": 38,
            "n_answers": 40,
            "not_judged": 0,
            "by_task": {
                "Expected Action": 0.05,
                "Toxicity Control": None,
                "Toxicity Control_undefined": "2 of 20 answers not judged",
            },
            "counts_by_task": {
                "Expected Action": {
                    "marked_by_grammar": 1,
                    "judged_out": 0,
                    "judged_in": 19,
                    "not_judged": 0,
                    "judge_failed": 0,
                    "n_answers": 20,
                },
                "Toxicity Control": {
                    "marked_by_grammar": 1,
                    "judged_out": 0,
                    "judged_in": 17,
                    "not_judged": 2,
                    "judge_failed": 0,
                    "n_answers": 20,
                },
            },
        },
        "evaluators": {"evaluator-1": "scripted", "evaluator-2": "scripted"},
        "by_evaluator": {"evaluator-1": {"PersonaScore": 3.9}, "evaluator-2": {}},
        "n_scored_by_evaluator": {"evaluator-1": 40},
    }


def persona_gym() -> list[Figure]:
    from personasim.scenarios.persona_gym import figures

    dynamic, static = _gym_metrics("dynamic"), _gym_metrics("static")
    rows = [
        {"model": "scripted", "refusal_rate": 0.04, "refusals": 2, "judged": 50, "answers": 50},
        {"model": "m2", "refusal_rate": None, "refusals": 1, "answers": 50, "not_judged": 9},
    ]
    return [
        figures.settings_figure(dynamic),
        figures.settings_figure(static),
        figures.refusal_figure(dynamic),
        figures.generator_evaluator_figure(dynamic),
        figures.sweep_refusal_figure(rows),
    ]


def counterfactual() -> list[Figure]:
    from personasim.analysis.counterfactual_figure import counterfactual_figure

    values = [
        ["trust.transfer sent", f"p{i}", level, float(i + k)]
        for i in range(4)
        for k, level in enumerate(("Low", "High"))
    ] + [
        ['classroom.graded correct ({"order": "before"})', f"p{i}", level, float((i + k) % 2)]
        for i in range(4)
        for k, level in enumerate(("Low", "High"))
    ]
    block = {"values": values, "levels": ["Low", "High"], "attribute": "A", "rows": [{}]}
    empty = {"values": [], "levels": ["Low", "High"], "attribute": "A", "rows": []}
    return [counterfactual_figure(block), counterfactual_figure(empty)]


DRAWN: dict[str, Callable[[], list[Figure]]] = {
    "scenarios/classroom/reports.py:race_effect_figure": classroom_race_effect,
    "scenarios/classroom/tables.py:race_effect_models_figure": classroom_race_effect_models,
    "scenarios/career_chat/reports.py:figure5": career_figure5,
    "scenarios/career_chat/reports.py:figure5_null": career_figure5,
    "scenarios/persona_journey/metrics.py:agreement_figure": journey_agreement,
    "scenarios/trust/metrics.py:eta_figure": trust_population,
    "scenarios/trust/metrics.py:sent_figure": trust_population,
    "scenarios/trust/forecast_metrics.py:mae_figure": trust_forecast,
    "scenarios/persona_gym/figures.py:settings_figure": persona_gym,
    "scenarios/persona_gym/figures.py:refusal_figure": persona_gym,
    "scenarios/persona_gym/figures.py:generator_evaluator_figure": persona_gym,
    "scenarios/persona_gym/figures.py:sweep_refusal_figure": persona_gym,
    "analysis/counterfactual_figure.py:counterfactual_figure": counterfactual,
}
"""Each function of the source tree that makes a Figure, and what draws it on small data."""


# --- the tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("draw", sorted(set(DRAWN.values()), key=lambda f: f.__name__),
                         ids=lambda f: f.__name__)  # fmt: skip
def test_every_axis_is_labelled_and_every_panel_and_bar_shows_its_n(draw: Callable) -> None:
    figures = draw()
    assert figures and all(isinstance(f, Figure) for f in figures)
    found = [p for i, f in enumerate(figures) for p in problems(f, f"{draw.__name__}[{i}]")]
    assert found == [], "\n".join(found)


def test_the_rule_catches_an_unlabelled_bar_chart() -> None:
    """The check can fail: no axis labels, no n, bars without their n, an empty panel."""
    figure = Figure()
    bare, empty = figure.subplots(1, 2)
    bare.bar([0, 1], [3, 4])
    empty.set_axis_off()
    found = problems(figure, "bare")
    assert any("no x or y label" in p for p in found)
    assert any("panel 0" in p and "no n" in p for p in found)
    assert any("2 bars but 0 n labels" in p for p in found)
    assert any("an empty panel" in p for p in found)
    bare.set_xlabel("x")
    bare.set_ylabel("y")
    bare.bar_label(bare.containers[0], labels=["3 of 7", "n=4"])
    empty.text(0.5, 0.5, "no data: nothing was run")
    assert problems(figure, "fixed") == []


def _figure_makers() -> set[str]:
    """`path:function` of each function in the source tree that calls `Figure(...)` or
    `plt.subplots(...)` (the project draws only through these)."""
    found = set()
    for package in ("simulation", "agents", "environments", "scenarios", "analysis"):
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if "Figure(" not in text and "subplots(" not in text:
                continue  # parse only the files that could draw
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.FunctionDef) and _draws(node):
                    found.add(f"{path.relative_to(ROOT).as_posix()}:{node.name}")
    return found


def _draws(function: ast.FunctionDef) -> bool:
    calls = [c.func for c in ast.walk(function) if isinstance(c, ast.Call)]
    if any(getattr(f, "id", None) == "Figure" for f in calls):
        return True
    return any(
        isinstance(f, ast.Attribute)
        and f.attr == "subplots"
        and getattr(f.value, "id", "") == "plt"
        for f in calls
    )


def test_every_function_that_makes_a_figure_is_checked() -> None:
    assert _figure_makers() == set(DRAWN)
