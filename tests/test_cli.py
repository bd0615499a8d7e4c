"""The command line: its subcommands and its errors (one clear line, non-zero exit)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer

from personasim.simulation.cli.main import main


def run_cli(*args: str) -> int:
    return main(list(args))


def run_with_personas(personas: Path, n: int, out: Path, *more: str) -> int:
    return run_cli(
        "run",
        "trust-population",
        "--persona-file",
        str(personas),
        "--n-personas",
        str(n),
        "--out",
        str(out),
        *more,
    )


@pytest.fixture
def small_run(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    assert (
        run_cli("run", "trust-population", "--n-personas", "4", "--out", str(out), "--no-progress")
        == 0
    )
    return out


def test_run_prints_summary_and_run_dir(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r"
    assert (
        run_cli(
            "run",
            "trust-population",
            "--n-personas",
            "6",
            "--endowment=44",
            "--trustee",
            "M5",
            "--out",
            str(out),
            "--no-progress",
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "6 of 6 personas decided" in printed
    assert "not a language model" in printed
    assert "model calls 6, cache hits 0, failed calls 0, failed decisions 0\n" in printed
    assert "tokens" not in printed  # the scripted model counts words, not tokens
    assert f"run directory: {out}" in printed
    assert printed.rstrip().endswith(
        f"reports (tables, figures): {out / 'reports'}\nto look at it: personasim view {out}"
    )
    rankings = [line for line in printed.splitlines() if "ranking" in line]
    assert rankings and not [line for line in rankings if "..." in line]
    assert all(re.search(r"… and \d+ more", line) for line in rankings if "…" in line)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["params"]["endowment"] == 44 and manifest["params"]["trustee"] == "M5"


def test_a_language_models_run_prints_its_tokens(tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer() as server:
        code = run_cli("run", "trust-population", "--n-personas", "3", "--no-progress",
                       "--no-cache", "--model", f"openai:{server.model}", "--base-url",
                       server.base_url, "--out", str(tmp_path / "r"))  # fmt: skip
    assert code == 0
    assert re.search(r"model calls 3, .*, tokens \d+\+\d+ \(prompt\+completion\)\n",
                     capsys.readouterr().out)  # fmt: skip


def test_the_summary_names_failed_calls_and_failed_decisions_apart(tmp_path: Path, capsys) -> None:
    """A run not valid for its failed decisions made no failed model call: the summary line
    says which is which (it said `failures 0` under `RUN NOT VALID`)."""
    out = tmp_path / "r"
    drifting = ["--model", "scripted:drift=1", "--max-repairs", "0"]
    code = run_cli("run", "trust-population", "--n-personas", "20", *drifting, "--out", str(out),
                   "--no-progress")  # fmt: skip
    assert code == 3
    printed = capsys.readouterr().out
    failed = json.loads((out / "manifest.json").read_text())["validity"]["overall"]["failed"]
    assert failed > 0 and "RUN NOT VALID" in printed
    assert f"model calls 20, cache hits 0, failed calls 0, failed decisions {failed}\n" in printed


def test_metrics_check_without_metrics_json_says_so(small_run: Path, capsys) -> None:
    """Not "DIFFERS": there is nothing to compare yet; exit 1 (documented) until it is written."""
    (small_run / "metrics.json").unlink()
    capsys.readouterr()
    assert run_cli("metrics", str(small_run), "--check") == 1
    printed = capsys.readouterr().out
    assert "no metrics.json yet" in printed and "DIFFERS" not in printed
    assert f"personasim metrics {small_run}` writes it" in printed
    assert not (small_run / "metrics.json").exists()
    assert run_cli("metrics", str(small_run)) == 0
    assert run_cli("metrics", str(small_run), "--check") == 0


def test_list_shows_scenarios_and_defaults(capsys) -> None:
    assert run_cli("list") == 0
    printed = capsys.readouterr().out
    assert "trust-population" in printed
    assert "--n-personas" in printed and "100" in printed
    assert "--temperature" in printed and "0.05" in printed


def test_replay_lists_agents_then_shows_one_trajectory(small_run: Path, capsys) -> None:
    assert run_cli("replay", str(small_run)) == 0
    overview = capsys.readouterr().out
    assert "5 agents" in overview and "trustee-M3" in overview
    agent = next(line.split()[0] for line in overview.splitlines() if "PersonaAgent" in line)
    assert run_cli("replay", str(small_run), "--agent", agent) == 0
    trajectory = capsys.readouterr().out
    for expected in (
        "round 1",
        "asked the model",
        "YOUR CHARACTER PROFILE",
        "reply:",
        "decision.made",
        "trust.transfer",
        "trust.return",
    ):
        assert expected in trajectory


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "no-such-scenario"], "unknown scenario 'no-such-scenario'"),
        (["run", "trust-population", "--endowment", "-3"], "--endowment"),
        (["run", "trust-population", "--trustee", "X9"], "--trustee"),
        (["run", "trust-population", "--n-personas", "lots"], "--n-personas"),
        (["run", "trust-population", "--no-such-param", "1"], "--no-such-param"),
        (
            ["run", "trust-populaton"],
            "unknown scenario 'trust-populaton' (did you mean 'trust-population'?)",
        ),
        (["run", "trust-population", "--n-persona", "3"], "; did you mean --n-personas?"),
        (["sweep", "trust-population", "--vary", "endowmnt=1,2", "--out", "s"], "--endowment?"),
        (["run", "trust-population", "--n-personas", "500"], "more than the 120 personas"),
        (["run", "trust-population", "--model", "gpt-4"], "unknown model 'gpt-4'"),
        (["run", "trust-population", "--persona-file", "/nonexistent.jsonl"], "no such file"),
    ],
)
def test_bad_input_is_one_clear_error(args, message, capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_cli(*args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and message in err
    assert "Traceback" not in err
    assert not (tmp_path / "runs").exists()  # nothing written for a run that never started
    assert not (tmp_path / "s").exists()


def test_no_did_you_mean_without_a_close_name(capsys) -> None:
    assert run_cli("run", "xyzzy") == 2
    assert run_cli("run", "trust-population", "--zzz", "1") == 2
    assert "did you mean" not in capsys.readouterr().err


def test_malformed_persona_file_names_file_and_line(tmp_path: Path, capsys) -> None:
    personas = tmp_path / "people.jsonl"
    personas.write_text('{"id": "a", "age": 30}\n{"id": "b", "age": 41}\n{"id": "c", age: 52}\n')
    out = tmp_path / "r"
    assert run_with_personas(personas, 2, out) == 2
    err = capsys.readouterr().err
    assert "people.jsonl" in err and "line 3" in err
    assert not out.exists()


def test_persona_file_runs(tmp_path: Path) -> None:
    personas = tmp_path / "people.csv"
    personas.write_text("id,age,sex,religion\na,30,Female,None\nb,71,Male,Jewish\nc,45,Male,None\n")
    out = tmp_path / "r"
    assert run_with_personas(personas, 3, out, "--no-progress") == 0
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    assert metrics["n_personas"] == 3
    assert set(metrics["attributes"]["Age"]["levels"]) == {"30-44", "45-64", "65+"}


def test_commands_on_something_that_is_not_a_run(tmp_path: Path, capsys) -> None:
    for command in ("replay", "metrics", "export"):
        assert run_cli(command, str(tmp_path)) == 2
        assert "not a run directory" in capsys.readouterr().err


def test_replay_of_unknown_agent(small_run: Path, capsys) -> None:
    assert run_cli("replay", str(small_run), "--agent", "nobody") == 2
    assert "no agent 'nobody'" in capsys.readouterr().err
