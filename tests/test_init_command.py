"""`personasim init NAME`: the scaffold file runs as it is (init → run → metrics --check), on the
scripted rules and the drifting model, with generated personas or a persona file; no overwrite."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from personasim.analysis import load_agents, load_events
from personasim.simulation.cli.init_command import scenario_source
from personasim.simulation.cli.main import main


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PERSONASIM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def test_init_then_run_then_metrics_check(here: Path, capsys) -> None:
    assert main(["init", "ultimatum"]) == 0
    assert "wrote ultimatum.py; run it with: personasim run ultimatum.py" in capsys.readouterr().out
    assert main(["run", "ultimatum.py", "--out", "r", "--no-progress"]) == 0
    # a run directory never names code to run: the scenario file is named again
    assert main(["metrics", "r", "--check", "--scenario-file", "ultimatum.py"]) == 0
    metrics = json.loads((here / "r" / "metrics.json").read_text())["metrics"]
    events = load_events(here / "r")
    settled = [p for p in events.loc[events["kind"] == "offer.settled", "payload"]]
    assert metrics["offers"] == len(settled) == 12  # the default --n-personas, none failed
    offers = [p["offer"] for p in settled]
    assert metrics["mean_offer"] == pytest.approx(sum(offers) / len(offers), abs=1e-6)
    assert sum(row["n"] for row in metrics["by_level"]) == len(settled)
    table = (here / "r" / "reports" / "offers_by_level.md").read_text()
    assert "| Agreeableness" in table and "n < 5" in table
    agents = load_agents(here / "r").set_index("agent_id")
    assert agents.loc["responder", "threshold"] == 3  # the fixed-rule agent: no model role
    assert (
        agents["role"].isna()["responder"] and agents["role"].drop("responder").eq("persona").all()
    )
    assert str(agents["offer.propose"].dtype) == "Int64"


def test_the_file_runs_on_the_drifting_model_with_a_persona_file(here: Path) -> None:
    people = [{"id": f"p{i}", "age": 20 + i, "sex": "Female"} for i in range(8)]
    (here / "people.jsonl").write_text("\n".join(json.dumps(p) for p in people) + "\n")
    assert main(["init", "split.py"]) == 0
    argv = ["run", "split.py", "--persona-file", "people.jsonl", "--model", "scripted:drift=0.15"]
    assert main([*argv, "--out", "r", "--no-progress"]) == 0
    assert main(["metrics", "r", "--check", "--scenario-file", "split.py"]) == 0
    agents = load_agents(here / "r")
    assert set(agents["persona_id"].dropna()) == {p["id"] for p in people}
    metrics = json.loads((here / "r" / "metrics.json").read_text())["metrics"]
    assert metrics["offers"] + metrics["failed"] == len(people)


def test_a_missing_persona_file_is_one_error_line(here: Path, capsys) -> None:
    assert main(["init", "split"]) == 0
    assert main(["run", "split.py", "--persona-file", "nope.jsonl", "--out", "r"]) == 2
    assert "error: --persona-file: nope.jsonl: no such file" in capsys.readouterr().err
    assert not (here / "r").exists()


@pytest.mark.parametrize(
    ("name", "message"),
    [("taken", "taken.py already exists; choose another name (nothing was written)"),
     ("9lives", "a scenario name starts with a letter"),
     ("nowhere/x", "nowhere: no such directory")],
)  # fmt: skip
def test_init_refuses_to_overwrite_or_a_bad_name(
    here: Path, capsys, name: str, message: str
) -> None:
    (here / "taken.py").write_text("# mine\n")
    assert main(["init", name]) == 2
    assert message in capsys.readouterr().err
    assert (here / "taken.py").read_text() == "# mine\n"


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_the_written_file_is_ruff_clean(here: Path) -> None:
    assert main(["init", "clean"]) == 0
    config = str(Path(__file__).resolve().parents[1] / "pyproject.toml")  # the project's rules
    for command in (["check"], ["format", "--check"]):
        done = subprocess.run(
            ["ruff", *command, "--config", config, "clean.py"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_docs_snippets_are_the_template_as_written(here: Path) -> None:
    """docs/scenarios.md's fixed-rule agent and persona-file code is quoted from the file."""
    docs = (Path(__file__).resolve().parents[1] / "docs" / "scenarios.md").read_text()
    snippets = re.findall(r"<!-- from the init template -->\n```python\n(.*?)```", docs, re.S)
    assert len(snippets) == 2
    source = scenario_source(Path("ultimatum.py"))
    for snippet in snippets:
        assert snippet in source
