"""Every built-in scenario declares its metrics block (`ScenarioMetrics.block`, a TypedDict of
what its metrics function returns), and its real metrics match it: each key it declares is
there (or `NotRequired`), no key it does not declare, each value of its declared type
(strictly: `"3"` is not an int). The scenarios run on their declared `smoke_params`, and on a
few other settings that change the block's shape (a key only some runs have, an import).

The blocks the kernel's metrics extensions add (`counterfactual`, `rescore`) are the
extensions', not the scenario's, and are left out before the check (docs/scenarios.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA
from pydantic import TypeAdapter, ValidationError

from personasim.simulation import get_scenario, list_scenarios
from personasim.simulation.cli.main import main

EXTENSION_KEYS = ("counterfactual", "rescore")
"""Blocks of the metrics extensions (`core/metric_extensions.py`), not of the scenario."""

BUILTIN = sorted(
    name
    for name, scenario in list_scenarios().items()
    if scenario.__module__.startswith("personasim.scenarios.")
)


def smoke_args(name: str) -> list[str]:
    """The scenario's declared smoke parameters (`Scenario.smoke_params`) as command flags."""
    params = get_scenario(name).smoke_params or {}
    return [f for key, value in params.items() for f in (f"--{key.replace('_', '-')}", str(value))]


def _gym_human_scores(folder: Path) -> list[str]:
    """A human-scores file for the smoke run's one persona: the list branch of its alignment."""
    path = folder / "human.csv"
    tasks = get_scenario("persona-gym").Params().tasks  # type: ignore[attr-defined]
    path.write_text("persona,task,score\n" + "".join(f"p001,{t},3\n" for t in tasks))
    return ["--human-scores", str(path)]


CASES: dict[str, Callable[[Path], list[str]]] = {
    **{name: lambda _, name=name: ["run", name, *smoke_args(name)] for name in BUILTIN},
    "classroom --swap-order": lambda _: [
        "run", "classroom", *smoke_args("classroom"), "--swap-order"
    ],
    "persona-gym --human-scores": lambda folder: [
        "run", "persona-gym", *smoke_args("persona-gym"), *_gym_human_scores(folder)
    ],
    "persona-gym import": lambda _: [
        "import", "persona-gym", "--format", "published-scores",
        "--scores", str(DATA / "personagym" / "published_scores.json"),
    ],
}  # fmt: skip
"""Each run whose metrics are checked, named by its scenario first: the smoke run of every
built-in scenario, and runs whose block has another shape (a `NotRequired` key present, the
list branch of an undefined-or-list statistic, persona-gym's imported published scores)."""


@pytest.fixture(scope="module")
def metrics_of(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], dict[str, Any]]:
    """The scenario's own block of a case's run (run once per module, on the scripted model)."""
    made: dict[str, dict[str, Any]] = {}

    def metrics(case: str) -> dict[str, Any]:
        if case not in made:
            folder = tmp_path_factory.mktemp("run")
            args = CASES[case](folder)
            cache = ["--no-cache"] if args[0] == "run" else []
            out = folder / "out"
            assert main([*args, "--out", str(out), "--no-progress", *cache]) == 0, case
            block = json.loads((out / "metrics.json").read_text(encoding="utf-8"))["metrics"]
            made[case] = {k: v for k, v in block.items() if k not in EXTENSION_KEYS}
        return made[case]

    return metrics


def declared(name: str) -> TypeAdapter[Any]:
    declaration = get_scenario(name).metrics
    assert declaration is not None and declaration.block is not None, name
    return TypeAdapter(declaration.block)


def check(name: str, block: dict[str, Any]) -> None:
    """Refuses a missing key, an undeclared key or a value of another type (strict mode)."""
    declared(name).validate_python(block, strict=True)


def test_every_builtin_scenario_declares_its_block() -> None:
    assert len(BUILTIN) >= 8, BUILTIN
    blocks = {name: getattr(get_scenario(name).metrics, "block", None) for name in BUILTIN}
    undeclared = [name for name, block in blocks.items() if block is None]
    assert not undeclared, f"declare ScenarioMetrics(block=...) on {undeclared}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_real_metrics_match_the_declared_block(
    case: str, metrics_of: Callable[[str], dict[str, Any]]
) -> None:
    check(case.split()[0], metrics_of(case))


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_the_cases_reach_the_optional_shapes(metrics_of: Callable[[str], dict[str, Any]]) -> None:
    """The other settings do give the shapes they are there for, so the check sees them."""
    assert "position_bias" in metrics_of("classroom --swap-order")
    assert "position_bias" not in metrics_of("classroom")
    assert isinstance(metrics_of("persona-gym --human-scores")["human_alignment"], list)
    assert "published" in metrics_of("persona-gym import")


def _refusal(name: str, block: dict[str, Any]) -> list[tuple[str, str]]:
    """(first key of each error's location, error type) of a refused block; [] if accepted."""
    try:
        check(name, block)
    except ValidationError as error:
        return [(str(e["loc"][0]), e["type"]) for e in error.errors()]
    return []


def test_the_check_refuses_a_missing_an_extra_and_a_mistyped_key(
    metrics_of: Callable[[str], dict[str, Any]],
) -> None:
    real = metrics_of("trust-population")
    assert _refusal("trust-population", real) == []
    missing = {k: v for k, v in real.items() if k != "n_decisions"}
    assert ("n_decisions", "missing") in _refusal("trust-population", missing)
    extra = {**real, "surprise": 1}
    assert ("surprise", "extra_forbidden") in _refusal("trust-population", extra)
    mistyped = {**real, "n_personas": str(real["n_personas"])}
    assert ("n_personas", "int_type") in _refusal("trust-population", mistyped)
    nulled = {**real, "model": None}  # not an undefined statistic: null is refused
    assert ("model", "string_type") in _refusal("trust-population", nulled)


def test_the_check_refuses_an_extra_key_in_a_declared_nested_block(
    metrics_of: Callable[[str], dict[str, Any]],
) -> None:
    beliefs = metrics_of("trust-beliefs")
    assert _refusal("trust-beliefs", beliefs) == []
    deeper = {**beliefs, "behaviour": {**beliefs["behaviour"], "surprise": 1}}
    assert ("behaviour", "extra_forbidden") in _refusal("trust-beliefs", deeper)


def test_a_block_of_two_shapes_refuses_a_mix_of_them(
    metrics_of: Callable[[str], dict[str, Any]],
) -> None:
    """persona-gym's block is a run's or an import's, never a run's with an import's keys."""
    run = metrics_of("persona-gym")
    assert _refusal("persona-gym", run) == []
    assert _refusal("persona-gym", {**run, "published": []})
