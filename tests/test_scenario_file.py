"""`personasim run path/to/scenario.py`: a scenario file runs, lists, sweeps, re-scores and
resumes with no package; a bad file is one clear error naming it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from personasim.simulation.cli.main import main
from personasim.simulation.core import scenario as scenario_module
from personasim.simulation.llm import scripted

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "coin_guess.py"
ROUND_TWO = "        side = self.table.flip()\n"


@pytest.fixture(autouse=True)
def restore_registries() -> Iterator[None]:
    """Files loaded here register rules and scenarios; later tests see the registries as before."""
    scenario_module.list_scenarios()  # built-ins imported before the snapshot
    with scenario_module.SCENARIOS.scoped(), scripted.RULES.scoped():
        yield


@pytest.fixture
def coin_file(tmp_path: Path) -> Path:
    path = tmp_path / "scenarios" / "coin_guess.py"
    path.parent.mkdir()
    shutil.copy(EXAMPLE, path)
    return path


def run_file(path: Path, out: Path, *more: str) -> int:
    return main(["run", str(path), "--n-personas", "4", "--out", str(out), "--no-progress", *more])


def manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_file_runs_and_the_manifest_records_it(coin_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run_file(coin_file, out) == 0
    recorded = manifest(out)
    assert recorded["status"] == "complete"
    assert recorded["scenario"] == "coin-guess"
    assert recorded["scenario_file"] == {
        "path": str(coin_file.resolve()),
        "sha256": sha256(coin_file),
        "class": "CoinGuess",
    }
    assert json.loads((out / "metrics.json").read_text())["metrics"]["guesses"] == 4 * 3


@pytest.mark.slow
def test_the_example_runs_as_from_a_fresh_clone(tmp_path: Path) -> None:
    """`personasim run examples/coin_guess.py` in a checkout, then `metrics`, `replay` and
    `export` in fresh processes that never imported the file."""
    (tmp_path / "examples").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "examples" / "coin_guess.py")
    env = {k: v for k, v in os.environ.items() if k != "PERSONASIM_CACHE_DIR"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "personasim.simulation.cli.main", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    done = cli("run", "examples/coin_guess.py", "--n-personas", "3", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "9 guesses" in done.stdout
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert run_dir.name.startswith("coin-guess-")
    assert manifest(run_dir)["status"] == "complete"
    assert (tmp_path / ".personasim" / "cache" / "responses.sqlite").is_file()

    checked = cli("metrics", str(run_dir), "--check", "--scenario-file", "examples/coin_guess.py")
    assert checked.returncode == 0, checked.stderr
    assert "identical to the recomputed metrics" in checked.stdout
    replayed = cli("replay", str(run_dir))
    assert replayed.returncode == 0, replayed.stderr
    assert "coin.flipped 3" in replayed.stdout
    assert "synthetic-0003  PersonaAgent" in replayed.stdout
    exported = cli("export", str(run_dir))
    assert exported.returncode == 0, exported.stderr
    lines = (run_dir / "events.jsonl").read_text().splitlines()
    assert sum(json.loads(line)["kind"] == "coin.flipped" for line in lines) == 3


def test_list_shows_the_files_scenario_only(coin_file: Path, capsys) -> None:
    assert main(["list", str(coin_file)]) == 0
    printed = capsys.readouterr().out
    assert "coin-guess — personas guess coin flips" in printed
    assert "--n-personas" in printed and "--rounds" in printed
    assert "trust-population" not in printed


def test_metrics_recomputes_from_the_file_the_user_names_and_refuses_an_edit(
    coin_file: Path, tmp_path: Path, capsys
) -> None:
    """The run's file only when named on the command line, and only as it was: the path in
    the manifest is never followed (a run directory may come from anyone)."""
    out = tmp_path / "run"
    assert run_file(coin_file, out) == 0
    capsys.readouterr()
    assert main(["metrics", str(out), "--check"]) == 2
    error = capsys.readouterr().err.replace("\n", "")
    assert error.startswith("error:") and "pass --scenario-file FILE" in error
    assert main(["metrics", str(out), "--check", "--scenario-file", str(coin_file)]) == 0
    coin_file.write_text(coin_file.read_text() + "\n# edited after the run\n")
    capsys.readouterr()
    assert main(["metrics", str(out), "--check", "--scenario-file", str(coin_file)]) == 2
    assert "is not the file the run used" in capsys.readouterr().err.replace("\n", "")


def test_metrics_of_a_run_whose_file_is_gone(coin_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    assert run_file(coin_file, out) == 0
    coin_file.unlink()
    capsys.readouterr()
    assert main(["metrics", str(out), "--scenario-file", str(coin_file)]) == 2
    assert f"--scenario-file {coin_file}: no such file" in capsys.readouterr().err.replace("\n", "")
    # replay and export read only the log, so they still work
    assert main(["replay", str(out)]) == 0
    assert main(["export", str(out)]) == 0


@pytest.fixture
def stopping_file(coin_file: Path) -> Path:
    """coin_guess, stopped by Ctrl-C in round 2 while $STOP_IN_ROUND_2 is set."""
    source = coin_file.read_text()
    assert ROUND_TWO in source
    stop = (
        '        if round_index == 2 and __import__("os").environ.get("STOP_IN_ROUND_2"):\n'
        "            raise KeyboardInterrupt\n"
    )
    coin_file.write_text(source.replace(ROUND_TWO, stop + ROUND_TWO))
    return coin_file


def test_an_interrupted_file_run_resumes_to_the_uninterrupted_result(
    stopping_file: Path, tmp_path: Path, monkeypatch
) -> None:
    clean = tmp_path / "clean"
    assert run_file(stopping_file, clean) == 0
    out = tmp_path / "cut"
    monkeypatch.setenv("PERSONASIM_CACHE_DIR", str(tmp_path / "cache-of-the-cut-run"))
    monkeypatch.setenv("STOP_IN_ROUND_2", "1")
    assert run_file(stopping_file, out) == 130
    assert manifest(out)["status"] == "interrupted"
    monkeypatch.delenv("STOP_IN_ROUND_2")
    assert run_file(stopping_file, out, "--resume") == 0
    assert manifest(out)["status"] == "complete"
    # rounds 1 and 2 came back from the log: each of the 12 guesses was asked once
    assert manifest(out)["llm"]["calls"] == 12 and manifest(clean)["llm"]["calls"] == 12
    assert (out / "metrics.json").read_text() == (clean / "metrics.json").read_text()


def test_resume_refuses_a_changed_file(
    stopping_file: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    out = tmp_path / "cut"
    monkeypatch.setenv("STOP_IN_ROUND_2", "1")
    assert run_file(stopping_file, out) == 130
    monkeypatch.delenv("STOP_IN_ROUND_2")
    stopping_file.write_text(stopping_file.read_text().replace("0.3 if", "0.1 if"))
    capsys.readouterr()
    assert run_file(stopping_file, out, "--resume") == 2
    error = capsys.readouterr().err.replace("\n", "")
    assert "the scenario file changed since the run started" in error
    assert manifest(out)["status"] == "interrupted"


def test_a_file_named_like_a_builtin_is_recomputed_from_the_file(
    coin_file: Path, tmp_path: Path
) -> None:
    coin_file.write_text(coin_file.read_text().replace('"coin-guess"', '"trust-population"'))
    out = tmp_path / "run"
    assert run_file(coin_file, out) == 0
    assert manifest(out)["scenario"] == "trust-population"
    assert main(["metrics", str(out), "--check", "--scenario-file", str(coin_file)]) == 0
    assert json.loads((out / "metrics.json").read_text())["metrics"]["guesses"] == 12


def test_sweep_over_a_file(coin_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    args = ["sweep", str(coin_file), "--vary", "rounds=1,2", "--n-personas", "3"]
    assert main([*args, "--out", str(out), "--no-progress"]) == 0
    rows = (out / "combined.csv").read_text().splitlines()
    assert len(rows) == 3  # header + one row per value
    runs = sorted(p for p in out.iterdir() if p.is_dir())
    assert len(runs) == 2
    assert {manifest(r)["scenario_file"]["sha256"] for r in runs} == {sha256(coin_file)}
    assert sorted(manifest(r)["params"]["rounds"] for r in runs) == [1, 2]


SCENARIO_BODY = """
class {name}(Scenario):
    name = "{scenario}"
    summary = "{summary}"
    Params = ScenarioParams

    def setup(self, sim):
        pass

    async def play_round(self, sim, round_index):
        pass

    @classmethod
    def compute_metrics(cls, events):
        return {{"events": len(events)}}
"""
HEADER = "from personasim.simulation import Scenario, ScenarioParams, register_scenario\n"


def scenario_source(name: str, scenario: str = "tiny", summary: str = "tiny") -> str:
    return SCENARIO_BODY.format(name=name, scenario=scenario, summary=summary)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (HEADER + "X = 1\n", "defines no Scenario subclass"),
        (
            HEADER + scenario_source("First") + scenario_source("Second", "other"),
            "defines 2 Scenario subclasses (First, Second)",
        ),
        (
            HEADER + "class Half(Scenario):\n    name = 'half'\n",
            "abstract, so not runnable: Half (missing compute_metrics, play_round, setup)",
        ),
        (HEADER + "def broken(:\n", "bad.py:2: syntax error"),
        (HEADER + "\n\nraise RuntimeError('no data here')\n", "bad.py:4: loading it failed"),
    ],
)
def test_a_bad_file_is_one_clear_error(source: str, message: str, tmp_path: Path, capsys) -> None:
    path = tmp_path / "bad.py"
    path.write_text(source)
    assert main(["run", str(path), "--out", str(tmp_path / "r"), "--no-progress"]) == 2
    error = capsys.readouterr().err.replace("\n", "")
    assert error.startswith("error:")
    assert message in error
    assert not (tmp_path / "r").exists()


def test_a_missing_file(tmp_path: Path, capsys) -> None:
    assert main(["run", str(tmp_path / "nowhere.py")]) == 2
    assert "nowhere.py: no such scenario file" in capsys.readouterr().err.replace("\n", "")


def test_a_self_registering_file_loads_again_after_an_edit(coin_file: Path, tmp_path: Path) -> None:
    """coin_guess decorated with @register_scenario runs from its file, is edited and runs
    again in the same process: the edited class replaces the first, no name clash."""
    source = coin_file.read_text()
    assert "class CoinGuess(Scenario):" in source and "    Scenario,\n" in source
    source = source.replace("    Scenario,\n", "    Scenario,\n    register_scenario,\n", 1)
    decorated = "@register_scenario\nclass CoinGuess(Scenario):"
    coin_file.write_text(source.replace("class CoinGuess(Scenario):", decorated))
    assert run_file(coin_file, tmp_path / "first") == 0
    first = scenario_module.SCENARIOS.get("coin-guess")
    coin_file.write_text(coin_file.read_text().replace("(example scenario)", "(edited)"))
    assert run_file(coin_file, tmp_path / "second") == 0
    second = scenario_module.SCENARIOS.get("coin-guess")
    assert second is not None and second is not first
    assert second.summary.endswith("(edited)")
    # registered in this process only, so the run still records its file for later processes
    assert manifest(tmp_path / "second")["scenario_file"]["sha256"] == sha256(coin_file)
    assert main(["list", "coin-guess"]) == 0
