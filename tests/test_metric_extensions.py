"""Metrics a scenario gets by declaring, not by wrapping (simulation/core/metric_extensions.py):
the counterfactual block for a scenario with twins, the rescore block for one with scores,
both registered through the `personasim.metrics_extensions` entry-point group."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from personasim.simulation import (
    CounterfactualParams,
    Outcome,
    Scenario,
    ScenarioMetrics,
    ScenarioParams,
    ScoreItems,
    Twins,
    detail_scores,
    get_scenario,
    twins_of,
)
from personasim.simulation.cli.main import main
from personasim.simulation.core.metric_extensions import (
    METRICS_EXTENSIONS,
    MetricsExtension,
    extended_kinds,
    extended_metrics,
    extended_report,
    extended_reports,
    metrics_extension,
)


def _count(events: pd.DataFrame) -> dict[str, Any]:
    return {"events": len(events)}


class _Toy(Scenario):
    name = "metric-extension-toy"
    summary = "test"
    Params = ScenarioParams
    metrics = ScenarioMetrics(compute=_count, report=lambda m: ["own"], kinds=("toy.seen",))

    def setup(self, sim: Any) -> None:
        pass

    async def play_round(self, sim: Any, round_index: int) -> None:
        pass


class _ToyParams(CounterfactualParams):
    pass


class _WithTwins(_Toy):
    Params = _ToyParams


class _OwnTwins(_Toy):
    twins = Twins((Outcome("toy.graded", "correct"),), decisions=False)


class _Scored(_Toy):
    scores = ScoreItems(tasks=("toy.judge",), read=detail_scores("item"))


EVENTS = pd.DataFrame(
    {
        "seq": [1, 2],
        "kind": ["toy.seen", "toy.seen"],
        "round": [1, 1],
        "agent_id": ["a", "b"],
        "payload": [{}, {}],
    }
)


def test_the_opt_in_is_the_declaration() -> None:
    assert twins_of(_Toy) is None  # plain parameters, no twins
    assert twins_of(_WithTwins) == Twins()  # its parameters opt in: decisions compared
    assert twins_of(_OwnTwins) == _OwnTwins.twins
    assert twins_of(get_scenario("classroom")) == get_scenario("classroom").twins
    assert twins_of(get_scenario("trust-population")) == Twins()
    assert twins_of(get_scenario("persona-gym")) is None  # free-text personas


def test_personasims_own_extensions_come_through_the_entry_point_group() -> None:
    extensions = METRICS_EXTENSIONS.items()
    assert {"counterfactual", "rescore"} <= set(extensions)
    # where each is defined is its `compute`, so another under the same name is refused
    with METRICS_EXTENSIONS.scoped(), pytest.raises(ValueError, match="two metrics extensions"):
        metrics_extension("counterfactual")(MetricsExtension(lambda s: True, lambda s, e: {}))
    assert str(METRICS_EXTENSIONS.origin("counterfactual")).startswith(
        "personasim.analysis.counterfactual."
    )
    assert extensions["rescore"].applies(_Scored) and not extensions["rescore"].applies(_Toy)
    assert extensions["counterfactual"].applies(_WithTwins)
    assert not extensions["counterfactual"].applies(_Toy)


def test_no_built_in_scenario_wraps_its_metrics() -> None:
    """Each built-in scenario's `compute` is its own function: the extensions add their blocks
    in the run's pipeline (a wrapper would be a closure defined in analysis/)."""
    from personasim.simulation import list_scenarios

    for name, cls in list_scenarios().items():
        if cls.__module__.startswith("personasim.scenarios.") and cls.metrics is not None:
            assert not cls.metrics.compute.__module__.startswith("personasim.analysis"), name


def test_a_plain_run_gets_no_block_and_a_clash_is_an_error(tmp_path: Path) -> None:
    assert extended_metrics(_WithTwins, EVENTS) == {"events": 2}  # no twins in the log
    assert extended_metrics(_Scored, EVENTS) == {"events": 2}  # not a rescore
    assert extended_report(_WithTwins, {"events": 2}) == ["own"]
    assert extended_reports(_WithTwins, {"events": 2}, tmp_path) == []

    with METRICS_EXTENSIONS.scoped():
        METRICS_EXTENSIONS.register(
            "toy",
            MetricsExtension(
                applies=lambda scenario: scenario is _Toy,
                compute=lambda scenario, events: {"events": -1},
            ),
        )
        with pytest.raises(ValueError, match="already hold events"):
            extended_metrics(_Toy, EVENTS)
    assert "toy" not in METRICS_EXTENSIONS


def test_an_extension_adds_its_block_lines_files_and_kinds(tmp_path: Path) -> None:
    def written(metrics: dict[str, Any], folder: Path) -> list[Path]:
        path = folder / "toy.txt"
        path.write_text(str(metrics["toy"]))
        return [path]

    with METRICS_EXTENSIONS.scoped():
        METRICS_EXTENSIONS.register(
            "toy",
            MetricsExtension(
                applies=lambda scenario: issubclass(scenario, _Toy),
                compute=lambda scenario, events: {"toy": {"n": len(events)}},
                report=lambda metrics: [f"toy n={metrics['toy']['n']}"],
                write_reports=written,
                kinds=lambda scenario: ("toy.extra",),
            ),
        )
        metrics = extended_metrics(_Toy, EVENTS)
        assert metrics == {"events": 2, "toy": {"n": 2}}
        assert extended_report(_Toy, metrics) == ["own", "toy n=2"]
        assert extended_reports(_Toy, metrics, tmp_path) == [tmp_path / "toy.txt"]
        assert extended_kinds(_Toy) == ("toy.seen", "toy.extra")
    assert extended_kinds(_Toy) == ("toy.seen",)


def test_a_counterfactual_run_of_a_scenario_that_only_opted_in(tmp_path: Path, capsys) -> None:
    """trust-population declares nothing but `CounterfactualParams`; its counterfactual run's
    metrics, lines and reports come from the extension, and `metrics --check` recomputes
    them the same."""
    out = tmp_path / "run"
    args = ["counterfactual", "trust-population", "--attribute", "Sex", "--levels", "Male,Female"]
    assert main([*args, "--n-personas", "4", "--out", str(out), "--no-cache"]) == 0
    printed = capsys.readouterr().out
    assert "counterfactual Sex: 2 levels x 4 personas" in printed
    block = json.loads((out / "metrics.json").read_text())["metrics"]["counterfactual"]
    assert block["attribute"] == "Sex" and block["rows"]
    assert (out / "reports" / "counterfactual.csv").exists()
    assert main(["metrics", str(out), "--check"]) == 0
