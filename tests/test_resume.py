"""A run killed with SIGKILL part-way, then resumed, equals an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import trustor_reply
from fake_openai import FakeOpenAIServer

from personasim.simulation import RunError, SQLiteEventStore, run_scenario
from personasim.simulation.cli.main import main

N = 48


def cli_args(server: FakeOpenAIServer, out: Path) -> list[str]:
    return [
        "run",
        "trust-population",
        "--n-personas",
        str(N),
        "--model",
        "openai:fake-model",
        "--base-url",
        server.base_url,
        "--concurrency",
        "4",
        "--out",
        str(out),
        "--no-progress",
    ]


def count(db: Path, kind: str) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT COUNT(*) FROM events WHERE kind=?", (kind,)).fetchone()[0]
    except sqlite3.OperationalError:
        return 0  # not created yet


def kill_part_way(server: FakeOpenAIServer, out: Path, env: dict[str, str]) -> int:
    """Start the CLI in a child process and SIGKILL it once some decisions are logged."""
    child = subprocess.Popen(
        [sys.executable, "-m", "personasim.simulation.cli.main", *cli_args(server, out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    try:
        while count(out / "events.sqlite", "decision.made") < 12:
            assert child.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no progress within 60 s"
            time.sleep(0.01)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    return count(out / "events.sqlite", "decision.made")


def event_signature(run_dir: Path) -> Counter:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        events = list(store.read())
    seqs = [e.seq for e in events]
    assert seqs == list(range(1, len(events) + 1))
    volatile = {"cached", "source", "attempts", "latency_s"}
    return Counter(
        (
            e.kind,
            e.agent_id,
            e.round,
            json.dumps({k: v for k, v in e.payload.items() if k not in volatile}, sort_keys=True),
        )
        for e in events
    )


@pytest.mark.slow
def test_sigkill_then_resume_matches_uninterrupted_run(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    env = {**os.environ}
    with FakeOpenAIServer(responder=trustor_reply, latency=0.05) as server:
        killed = tmp_path / "killed"
        done_before_kill = kill_part_way(server, killed, env)
        assert 12 <= done_before_kill < N
        manifest = json.loads((killed / "manifest.json").read_text())
        assert manifest["status"] == "interrupted"
        assert not (killed / "metrics.json").exists()

        assert main([*cli_args(server, killed), "--resume"]) == 0

        monkeypatch.setenv("PERSONASIM_CACHE_DIR", str(tmp_path / "fresh-cache"))
        assert main(cli_args(server, tmp_path / "straight")) == 0

    resumed = tmp_path / "killed"
    assert (resumed / "metrics.json").read_bytes() == (
        tmp_path / "straight" / "metrics.json"
    ).read_bytes()
    assert json.loads((resumed / "manifest.json").read_text())["status"] == "complete"
    assert event_signature(resumed) == event_signature(tmp_path / "straight")
    per_agent = Counter(
        e[1] for e in event_signature(resumed).elements() if e[0] == "decision.made"
    )
    assert len(per_agent) == N and set(per_agent.values()) == {1}


def test_resume_refuses_other_settings(tmp_path: Path) -> None:
    run_scenario("trust-population", {"n_personas": 3}, out=tmp_path / "r", progress=False)
    with pytest.raises(RunError, match="n_personas"):
        run_scenario(
            "trust-population", {"n_personas": 4}, out=tmp_path / "r", resume=True, progress=False
        )
    with pytest.raises(RunError, match="seed"):
        run_scenario(
            "trust-population",
            {"n_personas": 3},
            seed=5,
            out=tmp_path / "r",
            resume=True,
            progress=False,
        )


@pytest.mark.parametrize("value", [None, 0.7])
def test_a_parameter_added_since_the_run_started_blocks_resume_only_off_its_default(
    tmp_path: Path, value: float | None
) -> None:
    """A run started before a parameter existed did what its default does: resuming it with
    the default is the same run; with another value it is not."""
    run_scenario("trust-population", {"n_personas": 3}, out=tmp_path / "r", progress=False)
    manifest_path = tmp_path / "r" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert manifest["params"].pop("temperature") == 0.05  # as an older version wrote it
    manifest_path.write_text(json.dumps(manifest))
    params = {"n_personas": 3, **({} if value is None else {"temperature": value})}
    resume = lambda: run_scenario(  # noqa: E731
        "trust-population", params, out=tmp_path / "r", resume=True, progress=False
    )
    if value is None:
        assert resume().manifest["status"] == "complete"
    else:
        with pytest.raises(RunError, match="temperature"):
            resume()


def test_resume_of_a_complete_run_changes_nothing(tmp_path: Path) -> None:
    first = run_scenario("trust-population", {"n_personas": 3}, out=tmp_path / "r", progress=False)
    before = (tmp_path / "r" / "events.sqlite").read_bytes()
    again = run_scenario(
        "trust-population", {"n_personas": 3}, out=tmp_path / "r", resume=True, progress=False
    )
    assert again.metrics == first.metrics
    assert (tmp_path / "r" / "events.sqlite").read_bytes() == before


def test_existing_run_dir_is_not_overwritten(tmp_path: Path, capsys) -> None:
    run_scenario("trust-population", {"n_personas": 2}, out=tmp_path / "r", progress=False)
    assert main(["run", "trust-population", "--out", str(tmp_path / "r"), "--no-progress"]) == 2
    assert "--resume" in capsys.readouterr().err
    assert main(["run", "trust-population", "--out", str(tmp_path / "none"), "--resume"]) == 2
