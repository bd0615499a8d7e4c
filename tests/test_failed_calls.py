"""A model call that runs out of attempts is a counted failed decision, not the end of the run;
a dead endpoint still stops it at once; `--resume --retry-failed` asks the lost units again."""

from __future__ import annotations

import asyncio
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

from personasim.simulation import (
    Event,
    EventLog,
    LLMCallFailedError,
    LLMClient,
    RetryPolicy,
    ScriptedBackend,
    SQLiteEventStore,
    run_scenario,
)
from personasim.simulation.cli.main import main
from personasim.simulation.log.event_log import ResumeState, latest_attempts

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


def cli_args(server: FakeOpenAIServer, out: Path) -> list[str]:
    return [
        "run", "trust-population", "--n-personas", str(N), "--model", "openai:fake-model",
        "--base-url", server.base_url, "--concurrency", "4", "--max-attempts", "2",
        "--no-progress", "--out", str(out),
    ]  # fmt: skip


def cli(server: FakeOpenAIServer, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "personasim.simulation.cli.main", *cli_args(server, out), *extra],
        env={**os.environ, "OPENAI_API_KEY": "sk-test"},
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.slow
def test_retry_failed_asks_the_lost_units_again_on_real_processes(tmp_path: Path, capsys) -> None:
    """The retry runs in its own process; the run before it and the checks after it run here,
    through the same CLI entry point (each process start costs seconds on a loaded machine)."""
    run = tmp_path / "r"
    with FakeOpenAIServer(responder=Doomed(n=2)) as server:
        argv = cli_args(server, run)
        assert main(argv) == 0
        assert len(lost(run)) == 2
        before = events(run)
        server.responder = trustor_reply  # the endpoint recovered
        assert main([*argv, "--resume"]) == 0  # without the flag: nothing to do
        assert "already complete; nothing to resume" in capsys.readouterr().out
        retry = cli(server, run, "--resume", "--retry-failed")
        assert retry.returncode == 0, retry.stderr
        assert "retried 2 unit(s) with a failed model call" in retry.stdout
        assert main([*argv, "--resume", "--retry-failed"]) == 0
        assert "already complete; no failed call to retry" in capsys.readouterr().out

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
    assert main(["metrics", str(run), "--check"]) == 0
    assert "identical to the recomputed metrics" in capsys.readouterr().out


def test_retry_failed_needs_resume(tmp_path: Path, capsys) -> None:
    code = main(["run", "trust-population", "--out", str(tmp_path / "r"), "--retry-failed"])
    assert code == 2
    assert "--retry-failed asks a run's failed units again: it needs --resume" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "r").exists()


def test_resume_replays_a_lost_call_and_retry_failed_asks_it_again(tmp_path: Path) -> None:
    """A plain resume re-derives a lost call as lost (no request); `retry_failed` drops only
    the failure, keeps the unit's answered calls, and opens the new attempt with its number."""
    answered = {"text": "ok", "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
    failed = {"task": "t", "reason": "call_failed", "request_key": "b" * 64, "error": "gave up"}
    with SQLiteEventStore(tmp_path / "events.sqlite") as store:
        store.append(
            [
                Event("llm.call", {"request_key": "a" * 64, "response": answered}, scope="r1/p1"),
                Event("decision.failed", {**failed, "attempts": 1}, scope="r1/p1"),
                Event("decision.made", {"task": "t", "attempts": 1, "value": 3}, scope="r1/p2"),
            ]
        )
        state = ResumeState.from_store(store)
        assert state.lost_calls == {"r1/p1"}
        replay = EventLog(store, state)
        client = LLMClient(ScriptedBackend(), replay=replay.logged_response)

        async def lost_again() -> None:
            assert replay.logged_response("a" * 64) == answered  # in log order
            with pytest.raises(LLMCallFailedError, match="gave up"):
                client._stored("b" * 64, None)
            replay.emit("llm.call", {"request_key": "a" * 64, "response": answered})
            replay.emit("decision.failed", {**failed, "attempts": 1})  # re-derived, not written

        asyncio.run(replay.branch("r1/p1", lost_again))
        assert client.calls == 0

        state = ResumeState.from_store(store)
        assert state.retry_failed() == ["r1/p1"]
        retry = EventLog(store, state)

        async def asked_again() -> None:
            assert retry.logged_response("a" * 64) == answered
            assert retry.logged_response("b" * 64) is None  # to be asked anew
            retry.emit("decision.made", {"task": "t", "attempts": 1, "value": 5})

        asyncio.run(retry.branch("r1/p1", asked_again))
        logged = list(store.read())
        assert [e.kind for e in logged[3:]] == ["unit.retried", "decision.made"]
        assert logged[3].payload == {"attempt": 2}
        kept = [(e.scope, e.kind) for e in latest_attempts(logged)]
        assert kept == [
            ("r1/p2", "decision.made"),
            ("r1/p1", "unit.retried"),
            ("r1/p1", "decision.made"),
        ]
        assert ResumeState.from_store(store).attempts == {"r1/p1": 2}
        assert ResumeState.from_store(store).lost_calls == set()
