"""`Scenario.metrics`: one declared `ScenarioMetrics` in place of forwarding each metrics hook,
the classmethod style of a one-file scenario still working beside it."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pandas as pd

from personasim.simulation import Scenario, ScenarioMetrics, ScenarioParams, get_scenario


def _count(events: pd.DataFrame) -> dict[str, Any]:
    return {"events": len(events), "label": "x", "nested": {"a": 1}}


def _lines(metrics: dict[str, Any]) -> list[str]:
    return [f"{metrics['events']} events"]


def _files(metrics: dict[str, Any], directory: Path) -> list[Path]:
    path = directory / "count.txt"
    path.write_text(str(metrics["events"]))
    return [path]


class _Base(Scenario):
    name = "metrics-hook-test"
    summary = "test"
    Params = ScenarioParams

    def setup(self, sim: Any) -> None:
        pass

    async def play_round(self, sim: Any, round_index: int) -> None:
        pass


class Declared(_Base):
    metrics = ScenarioMetrics(compute=_count, report=_lines, write_reports=_files)


class Overridden(Declared):
    """The classmethod style wins over the inherited declaration, hook by hook."""

    @classmethod
    def compute_metrics(cls, events: pd.DataFrame) -> dict[str, Any]:
        return {"events": -1}


EVENTS = pd.DataFrame({"seq": [1, 2, 3]})


def test_a_declared_hook_is_what_the_base_methods_call(tmp_path: Path) -> None:
    assert not inspect.isabstract(Declared)
    metrics = Declared.compute_metrics(EVENTS)
    assert metrics == {"events": 3, "label": "x", "nested": {"a": 1}}
    assert Declared.report(metrics) == ["3 events"]
    assert Declared.write_reports(metrics, tmp_path) == [tmp_path / "count.txt"]
    assert (tmp_path / "count.txt").read_text() == "3"
    # not declared: the base defaults (top-level numbers and strings; no sweep files)
    assert Declared.summary_rows(metrics) == [{"events": 3, "label": "x"}]
    assert Declared.write_sweep_reports([], [], tmp_path) == []


def test_an_override_beats_the_inherited_declaration() -> None:
    assert Overridden.compute_metrics(EVENTS) == {"events": -1}
    assert Overridden.report({"events": -1}) == ["-1 events"]


def test_without_metrics_or_compute_metrics_a_scenario_stays_abstract() -> None:
    assert inspect.isabstract(_Base)
    assert "compute_metrics" in _Base.__abstractmethods__
    assert "compute_metrics" not in Declared.__abstractmethods__


def test_every_built_in_scenario_declares_its_metrics() -> None:
    from personasim.simulation.core.catalog import builtin_cards

    names = sorted(builtin_cards())
    assert len(names) >= 8  # the registry lists the papers; a new one is checked too
    for name in names:
        cls = get_scenario(name)
        assert isinstance(cls.metrics, ScenarioMetrics), name
        # nothing forwarded by hand (`compute_metrics` itself is filled in from the declaration)
        assert not {"report", "write_reports", "summary_rows"} & set(vars(cls)), name
