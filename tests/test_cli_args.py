"""`scenario_values`: the scenario parameters after `personasim run SCENARIO`."""

from __future__ import annotations

import pytest

from personasim.simulation import ScenarioError
from personasim.simulation.cli.options import scenario_values


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
    from personasim.simulation.cli.main import main

    assert main(["run", "trust-population", "--mode", "x", "--out", str(tmp_path / "r")]) == 2
    assert "--mode" in capsys.readouterr().err


def test_read_input_names_the_flag_for_every_kind_of_input_failure(tmp_path) -> None:
    from personasim.simulation import read_input

    def missing() -> None:
        (tmp_path / "nope.csv").read_text()

    def malformed() -> None:
        raise ValueError("people.csv, line 3: not a number")

    with pytest.raises(ScenarioError, match=r"--profile-file: .*nope.csv: no such file"):
        read_input("--profile-file", missing)
    with pytest.raises(ScenarioError, match=r"--profile-file: people\.csv, line 3"):
        read_input("--profile-file", malformed)
    assert read_input("--x", lambda: 7) == 7


@pytest.mark.parametrize(
    ("scenario", "flag"),
    [
        ("career-chat", "--profile-file"),
        ("persona-gym", "--persona-file"),
        ("classroom", "--question-file"),
        ("trust-population", "--persona-file"),
    ],
)
def test_a_missing_input_file_is_one_clear_error(scenario, flag, tmp_path, capsys) -> None:
    from personasim.simulation.cli.main import main

    out = tmp_path / "run"
    assert main(["run", scenario, flag, str(tmp_path / "absent.jsonl"), "--out", str(out)]) == 2
    assert "no such file" in capsys.readouterr().err.lower()
    assert not out.exists()
