"""`scenario_values`: the scenario parameters after `personasim run SCENARIO`, a boolean one
also as a switch; and `run SCENARIO --help`, which lists them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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


# --- boolean parameters: --flag, --no-flag, --flag true/false ----------------------------------


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        (["--big-five"], {"big_five": "true"}),
        (["--no-big-five"], {"big_five": "false"}),
        (["--no-big-five", "--n-personas", "3"], {"big_five": "false", "n_personas": "3"}),
        (["--big-five", "--n-personas", "3"], {"big_five": "true", "n_personas": "3"}),
        (["--big-five", "false"], {"big_five": "false"}),  # as before: a value still works
        (["--big-five=true"], {"big_five": "true"}),
    ],
)
def test_a_boolean_parameter_is_a_switch(tokens: list[str], expected: dict[str, str]) -> None:
    assert scenario_values(tokens, {"big_five"}) == expected


def test_a_negated_switch_takes_no_value() -> None:
    with pytest.raises(ScenarioError, match=r"--no-big-five takes no value \(--big-five true"):
        scenario_values(["--no-big-five=true"], {"big_five"})


@pytest.mark.parametrize(
    ("flags", "big_five"),
    [(["--no-big-five"], False), (["--big-five"], True), (["--big-five", "false"], False)],
)
def test_run_takes_a_boolean_parameter_as_a_switch(tmp_path, flags, big_five) -> None:
    from personasim.simulation.cli.main import main

    out = tmp_path / "r"
    args = ["run", "trust-population", "--n-personas", "3", *flags, "--out", str(out)]
    assert main([*args, "--no-progress"]) == 0
    assert json.loads((out / "manifest.json").read_text())["params"]["big_five"] is big_five


# --- `run SCENARIO --help`: the run flags with their defaults, then the scenario's parameters --


def help_text(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """What `personasim ARGV` printed for its help (exit 0), on one line: argparse wraps to
    the terminal's width, which a test must not depend on."""
    from personasim.simulation.cli.main import main

    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    assert exited.value.code == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return " ".join(captured.out.split())


def test_run_scenario_help_lists_its_parameters_after_the_run_flags(capsys) -> None:
    text = help_text(capsys, "run", "trust-population", "--help")
    section = text.index("parameters of trust-population (--name value):")
    assert text.index("--concurrency") < text.index("dry run (") < section
    params = text[section:]
    assert "--n-personas int personas sampled from the bank (default: 100)" in params
    assert "--population sample|synthetic" in params and "(default: sample)" in params
    assert "--big-five / --no-big-five add independently sampled Big-Five levels" in params
    # the run flags' defaults, where they have one; none for an unset or switched-off flag
    assert "model requests in flight (default: 16)" in text
    assert "--seed SEED seed of the run's draws (default: 0)" in text
    assert "--no-cache neither read nor write the cache --cache-dir" in text
    assert "default: None" not in text and "default: False" not in text
    assert "upper 95% bound is above this makes the run not valid (0.05)" in text  # not twice


def test_run_help_without_a_scenario_says_where_the_parameters_are(capsys) -> None:
    text = help_text(capsys, "run", "--help")
    assert "`personasim run SCENARIO --help` lists a scenario's parameters" in text
    assert "parameters of" not in text
    assert "model requests in flight (default: 16)" in text


def test_help_of_a_scenario_file_and_of_sweep(capsys) -> None:
    example = Path(__file__).resolve().parents[1] / "examples" / "coin_guess.py"
    text = help_text(capsys, "run", str(example), "--help")
    assert "parameters of coin-guess (--name value):" in text
    assert "--rounds int flips per persona (default: 3)" in text
    text = help_text(capsys, "sweep", "trust-population", "-h")
    assert "--vary NAME=V1,V2" in text and "parameters of trust-population" in text


def test_help_of_an_unknown_scenario_is_one_error(capsys) -> None:
    from personasim.simulation.cli.main import main

    assert main(["run", "trust-populaton", "--help"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown scenario 'trust-populaton' (did you mean")


HELPED = (
    "import sys, contextlib, io, json\nfrom personasim.simulation.cli.main import main\n"
    "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()) as text:\n"
    "    main(['run', 'trust-population', '--help'])\n"
    "heavy = ('langgraph', 'mesa', 'pandas', 'matplotlib', 'ray', 'openai', 'scipy')\n"
    "print(json.dumps([sorted(m for m in heavy if m in sys.modules), "
    "'personasim.scenarios.trust_population' in sys.modules, len(text.getvalue())]))"
)


def test_scenario_help_reads_the_card_not_the_scenario(tmp_path) -> None:
    """In a fresh process, once the cards are cached (the first use made them:
    tests/test_catalog.py), `run SCENARIO --help` imports none of its code."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", HELPED], capture_output=True, text=True, check=True, env=env
        )
    assert json.loads(done.stdout)[:2] == [[], False]
    assert json.loads(done.stdout)[2] > 2000
