"""`scenario_values`: the scenario parameters after `personasim run SCENARIO`."""

from __future__ import annotations

import pytest

from personasim.simulation import ScenarioError
from personasim.simulation.cli import scenario_values


def test_both_forms_and_dashes_become_underscores() -> None:
    assert scenario_values(["--n-personas", "50", "--endowment=44"]) == {
        "n_personas": "50",
        "endowment": "44",
    }


def test_no_tokens_no_values() -> None:
    assert scenario_values([]) == {}


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        (["--attributes=Age,Sex"], {"attributes": "Age,Sex"}),
        (["--persona-file", "data/p.jsonl"], {"persona_file": "data/p.jsonl"}),
        (["--offset", "-5"], {"offset": "-5"}),  # one dash is a value, not a flag
        (["--note=a=b"], {"note": "a=b"}),  # only the first '=' separates
        (["--x", "1", "--x", "2"], {"x": "2"}),  # the last one wins
    ],
)
def test_values(tokens: list[str], expected: dict[str, str]) -> None:
    assert scenario_values(tokens) == expected


@pytest.mark.parametrize(
    "tokens",
    [["--n-personas"], ["--n-personas", "--endowment", "44"], ["--endowment=44", "--seedless"]],
)
def test_missing_value(tokens: list[str]) -> None:
    with pytest.raises(ScenarioError, match="needs a value"):
        scenario_values(tokens)


@pytest.mark.parametrize(
    "tokens",
    [["50"], ["--n-personas", "50", "44"], ["-n", "3"], ["--"], ["--endowment=44", "stray"]],
)
def test_stray_positional(tokens: list[str]) -> None:
    with pytest.raises(ScenarioError, match="unexpected argument"):
        scenario_values(tokens)


def test_error_names_the_parameter() -> None:
    with pytest.raises(ScenarioError) as info:
        scenario_values(["--max-repairs"])
    assert "--max-repairs" in str(info.value)


def test_scenario_flags_are_not_mistaken_for_abbreviated_kernel_flags(tmp_path, capsys) -> None:
    """`--mode` is not `--model` abbreviated: it reaches the scenario (which rejects it)."""
    from personasim.simulation.cli import main

    assert main(["run", "trust-population", "--mode", "x", "--out", str(tmp_path / "r")]) == 2
    assert "--mode" in capsys.readouterr().err
