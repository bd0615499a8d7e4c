"""A model call that runs out of attempts is a counted failed decision, not the end of the run;
a dead endpoint still stops it at once; `--resume --retry-failed` asks the lost units again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import trustor_reply
from fake_openai import FakeOpenAIServer

from personasim.simulation import RetryPolicy, SQLiteEventStore, run_scenario
from personasim.simulation.cli import main

N = 12
FAST = RetryPolicy(max_attempts=2, initial_backoff=0.01, max_backoff=0.02, jitter=0)


class Doomed:
    """Answers like `trustor_reply`, except that every third distinct prompt, `n` of them,
    fails with HTTP 500 on every attempt (the responder raises): the endpoint is alive, since
    other prompts are answered between two lost ones."""

    def __init__(self, n: int = 2) -> None:
        self.n = n
        self.seen: set[str] = set()
        self.doomed: set[str] = set()
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        prompt = body["messages"][0]["content"]
        with self.lock:
            if prompt not in self.seen:
                self.seen.add(prompt)
                if len(self.seen) % 3 == 0 and len(self.doomed) < self.n:
                    self.doomed.add(prompt)
            if prompt in self.doomed:
                raise RuntimeError("upstream overloaded")
        return trustor_reply(body)


def events(run_dir: Path) -> list[Any]:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return list(store.read())


def lost(run_dir: Path) -> list[dict[str, Any]]:
    return [
        e.payload
        for e in events(run_dir)
        if e.kind == "decision.failed" and e.payload["reason"] == "call_failed"
    ]


def test_a_call_out_of_attempts_is_a_counted_failed_decision(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=Doomed(n=2)) as server:
        result = run_scenario(
            "trust-population",
            {"n_personas": N},
            model="openai:fake-model",
            base_url=server.base_url,
            out=tmp_path / "r",
            concurrency=4,
            retry=FAST,
            progress=False,
        )
    assert result.manifest["status"] == "complete"
    failed = lost(tmp_path / "r")
    assert len(failed) == 2
    for payload in failed:
        assert payload["error_class"] == "LLMCallFailedError"
        assert "gave up after 2 attempt(s)" in payload["error"]
        assert len(payload["request_key"]) == 64
        assert payload["last_reply"] is None
    overall = result.manifest["validity"]["overall"]
    assert (overall["decisions"], overall["failed"], overall["failed_calls"]) == (N, 2, 2)
    assert result.metrics["metrics"]["n_decisions"] == N - 2
    assert result.manifest["llm"]["failures"] == 2  # the llm.error incidents


def test_too_many_lost_calls_make_the_run_not_valid(tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer(responder=Doomed(n=4)) as server:
        code = main(
            [
                "run", "trust-population", "--n-personas", str(N), "--no-progress",
                "--model", "openai:fake-model", "--base-url", server.base_url,
                "--concurrency", "1", "--max-attempts", "1", "--out", str(tmp_path / "r"),
            ]
        )  # fmt: skip
    assert code == 3  # 4 of 12 failed: over the 20% limit, and the run still went to its end
    assert "RUN NOT VALID" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["validity"]["overall"]["failed_calls"] == 4


@pytest.mark.parametrize("fault", ["500", "status:401", "model_not_found"])
def test_a_dead_endpoint_still_stops_the_run_at_once(tmp_path: Path, capsys, fault) -> None:
    """Nothing ever answered (or a permanent error): one error line, exit 1, no failed
    decisions made up from a dead endpoint."""
    with FakeOpenAIServer() as server:
        server.fail_always(fault)
        code = main(
            [
                "run", "trust-population", "--n-personas", str(N), "--no-progress",
                "--model", "openai:fake-model", "--base-url", server.base_url,
                "--concurrency", "1", "--max-attempts", "2", "--out", str(tmp_path / "r"),
            ]
        )  # fmt: skip
        requests = server.request_count
    assert code == 1
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "marked interrupted" in err
    # the first call's attempts, and another unit's sent while it waited to retry; not one
    # request per persona
    assert requests <= 4
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert [e for e in events(tmp_path / "r") if e.kind == "decision.failed"] == []


def cli(server: FakeOpenAIServer, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = [
        "run", "trust-population", "--n-personas", str(N), "--model", "openai:fake-model",
        "--base-url", server.base_url, "--concurrency", "4", "--max-attempts", "2",
        "--no-progress", "--out", str(out), *extra,
    ]  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "personasim.simulation.cli", *args],
        env={**os.environ, "OPENAI_API_KEY": "sk-test"},
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_retry_failed_asks_the_lost_units_again_on_real_processes(tmp_path: Path) -> None:
    run = tmp_path / "r"
    with FakeOpenAIServer(responder=Doomed(n=2)) as server:
        first = cli(server, run)
        assert first.returncode == 0, first.stderr
        assert len(lost(run)) == 2
        before = events(run)
        server.responder = trustor_reply  # the endpoint recovered
        plain = cli(server, run, "--resume")  # without the flag: nothing to do
        assert "already complete; nothing to resume" in plain.stdout
        retry = cli(server, run, "--resume", "--retry-failed")
        assert retry.returncode == 0, retry.stderr
        assert "retried 2 unit(s) with a failed model call" in retry.stdout
        again = cli(server, run, "--resume", "--retry-failed")
        assert "already complete; no failed call to retry" in again.stdout

    after = events(run)
    assert after[: len(before)] == before  # the failed attempts stay in the log, unchanged
    retried = [e for e in after if e.kind == "unit.retried"]
    assert [e.payload for e in retried] == [{"attempt": 2}, {"attempt": 2}]
    lost_scopes = {e.scope for e in before if e.kind == "decision.failed"}
    assert {e.scope for e in retried} == lost_scopes
    for scope in lost_scopes:  # the new attempt follows its marker, in the same unit
        kinds = [e.kind for e in after if e.scope == scope and e.seq > len(before)]
        assert kinds[0] == "unit.retried" and "decision.made" in kinds
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    overall = manifest["validity"]["overall"]
    assert (overall["decisions"], overall["failed"]) == (N, 0)  # the last attempts
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["metrics"]["n_decisions"] == N
    assert sum(e.kind == "run.completed" for e in after) == 1
    check = subprocess.run(
        [sys.executable, "-m", "personasim.simulation.cli", "metrics", str(run), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_retry_failed_needs_resume(tmp_path: Path, capsys) -> None:
    code = main(["run", "trust-population", "--out", str(tmp_path / "r"), "--retry-failed"])
    assert code == 2
    assert "--retry-failed asks a run's failed units again: it needs --resume" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "r").exists()
