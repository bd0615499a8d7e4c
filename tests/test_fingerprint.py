"""Resume refuses a run directory whose fingerprint differs from the command's, one line per
field, and a logged request the resumed run would not send."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import trustor_reply
from fake_openai import FakeOpenAIServer

from personasim.scenarios.trust.population import TrustPopulation
from personasim.simulation.cli.main import main
from personasim.simulation.runs.lifecycle.fingerprint import fingerprint_diff


def run_args(out: Path, n: int = 3, *extra: str) -> list[str]:
    return [
        "run",
        "trust-population",
        "--n-personas",
        str(n),
        "--out",
        str(out),
        "--no-progress",
        *extra,
    ]


def error_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()


def edit_manifest(run_dir: Path, **changes: object) -> None:
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    for dotted, value in changes.items():
        *parents, leaf = dotted.split("__")
        target = manifest
        for name in parents:
            target = target[name]
        target[leaf] = value
    path.write_text(json.dumps(manifest))


def reopen(run_dir: Path) -> None:
    """Make a finished run resumable again (as if killed before its last commit)."""
    with sqlite3.connect(run_dir / "events.sqlite") as db:
        db.execute("DELETE FROM events WHERE kind = 'run.completed'")


def test_one_line_per_differing_field() -> None:
    old = {"params": {"temperature": 0.05, "n": 3}, "seed": 0, "packages": {"personasim": "0.1.0"}}
    new = {"params": {"temperature": 0.9, "n": 3}, "seed": 0, "packages": {"personasim": "0.2.0"}}
    assert fingerprint_diff(old, new) == [
        "params.temperature: 0.05 → 0.9",
        "personasim: 0.1.0 → 0.2.0",
    ]
    assert fingerprint_diff(old, old) == []


def test_resume_names_each_changed_setting(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r"
    assert main(run_args(out)) == 0
    capsys.readouterr()
    assert main([*run_args(out, 4, "--seed", "5"), "--resume"]) == 2
    lines = error_lines(capsys)
    assert lines[0].startswith(f"error: cannot resume {out}: this command differs")
    # the scripted model takes the run's seed, so its own seed differs too
    assert lines[1:] == ["  model.seed: 0 → 5", "  params.n_personas: 3 → 4", "  seed: 0 → 5"]


@pytest.mark.parametrize(
    ("edit", "line"),
    [
        ({"packages__personasim": "0.0.9"}, "personasim: 0.0.9 → "),
        ({"prompts__sha256": "0" * 64}, "prompts.sha256: " + "0" * 64 + " → "),
        ({"scenario_version": 0}, "scenario_version: 0 → 1"),
    ],
    ids=["package version", "shipped pack changed by an upgrade", "scenario version"],
)
def test_resume_refuses_an_upgrade(tmp_path: Path, capsys, edit, line) -> None:
    out = tmp_path / "r"
    assert main(run_args(out)) == 0
    edit_manifest(out, status="interrupted", **edit)
    capsys.readouterr()
    assert main([*run_args(out), "--resume"]) == 2
    assert any(said.strip().startswith(line) for said in error_lines(capsys))


def test_a_scenario_version_bump_is_refused(tmp_path: Path, capsys, monkeypatch) -> None:
    out = tmp_path / "r"
    assert main(run_args(out)) == 0
    monkeypatch.setattr(TrustPopulation, "version", 2)
    capsys.readouterr()
    assert main([*run_args(out), "--resume"]) == 2
    assert "  scenario_version: 1 → 2" in error_lines(capsys)


def served(server: FakeOpenAIServer, out: Path, *extra: str) -> list[str]:
    return [
        *run_args(out, 3),
        "--model",
        "openai:fake-model",
        "--base-url",
        server.base_url,
        "--no-cache",
        *extra,
    ]


def test_a_logged_request_the_resumed_run_would_not_send_is_refused(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "r"
    with FakeOpenAIServer(responder=trustor_reply) as server:
        assert main(served(server, out)) == 0
        reopen(out)
        with sqlite3.connect(out / "events.sqlite") as db:  # one unit's logged request differs
            seq, payload = db.execute(
                "SELECT seq, payload FROM events WHERE kind = 'llm.call' ORDER BY seq LIMIT 1"
            ).fetchone()
            changed = {**json.loads(payload), "request_key": "f" * 64}
            db.execute("UPDATE events SET payload = ? WHERE seq = ?", (json.dumps(changed), seq))
        sent = server.request_count
        capsys.readouterr()
        assert main([*served(server, out), "--resume"]) == 2
        (line,) = error_lines(capsys)
        assert "resume refused in scope" in line and "key ffffffffffff…" in line
        assert server.request_count == sent  # refused before the model was asked
        with sqlite3.connect(out / "events.sqlite") as db:
            db.execute("UPDATE events SET payload = ? WHERE seq = ?", (payload, seq))
        assert main([*served(server, out), "--resume"]) == 0  # the untouched log resumes
        assert server.request_count == sent


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_an_endpoint_change_needs_to_be_allowed_and_is_recorded(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "r"
    with (
        FakeOpenAIServer(responder=trustor_reply) as first,
        FakeOpenAIServer(responder=trustor_reply) as moved,
    ):
        assert main(served(first, out)) == 0
        reopen(out)
        capsys.readouterr()
        assert main([*served(moved, out), "--resume"]) == 2
        (line,) = error_lines(capsys)
        assert f"endpoint changed ({first.base_url} → {moved.base_url})" in line
        assert "--allow-endpoint-change" in line
        assert main([*served(moved, out), "--resume", "--allow-endpoint-change"]) == 0
        assert moved.request_count == 0  # every logged unit was answered from the log
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["model"]["base_url"] == first.base_url  # the run's request keys
    (change,) = manifest["endpoint_changes"]
    assert (change["from"], change["to"]) == (first.base_url, moved.base_url)


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_a_drifting_scripted_run_resumes_with_every_request_matched(tmp_path: Path) -> None:
    """The request-key check on answers that drift like real models' (a documented behaviour
    model, not a language model)."""
    out = tmp_path / "r"
    drift = ("--model", "scripted:drift=0.15", "--no-cache")
    assert main(run_args(out, 12, *drift)) == 0
    before = (out / "metrics.json").read_bytes()
    with sqlite3.connect(out / "events.sqlite") as db:
        (calls,) = db.execute("SELECT COUNT(*) FROM events WHERE kind = 'llm.call'").fetchone()
    reopen(out)
    assert main([*run_args(out, 12, *drift), "--resume"]) == 0
    assert (out / "metrics.json").read_bytes() == before
    with sqlite3.connect(out / "events.sqlite") as db:
        sources = db.execute(
            "SELECT json_extract(payload, '$.source') FROM events WHERE kind = 'llm.call'"
        ).fetchall()
    assert len(sources) == calls and {s for (s,) in sources} == {"model"}  # none logged twice
