"""`--workers N`: decisions run in worker processes give a single-process run's results.

Real processes (each worker is `python -m ...decision_worker`), real HTTP to the local fake
server, real SQLite logs. Each comparison runs the same seed once in one process and once with
two workers and compares metrics.json byte for byte and the events of each unit of work (`ts`
and `seq` ignored, and `latency_s`, the one measured value in a payload).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from conftest import trustor_reply
from fake_openai import FakeOpenAIServer, StatusFault

from personasim.simulation import (
    HedgePolicy,
    PermanentLLMError,
    RetryPolicy,
    RunConfig,
    RunError,
    ScriptedBackend,
    SQLiteEventStore,
    run_scenario,
)
from personasim.simulation.cli.main import main as cli
from personasim.simulation.runs.workers.decision_workers import WorkerSpec

PATIENT = RetryPolicy(
    max_attempts=3, timeout=30, initial_backoff=0.01, max_backoff=0.05, hedge=HedgePolicy(False)
)
"""No attempt may time out or be hedged on a busy machine (both depend on the clock, in one
process as in two), or the two runs differ by it."""
UNITS = ("main", "incident")


def events_by_unit(run_dir: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Each unit's events in log order, without what differs between two runs' clocks."""
    units: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        for e in store.read():
            payload = {k: v for k, v in e.payload.items() if k != "latency_s"}
            units[e.scope].append((e.kind, e.round, e.agent_id, payload))
    return dict(units)


def assert_same_runs(one: Path, two: Path) -> None:
    assert (one / "metrics.json").read_bytes() == (two / "metrics.json").read_bytes()
    assert events_by_unit(one) == events_by_unit(two)


def unusable_for_some(body: dict[str, Any]) -> str:
    """A third of first answers are unusable (re-asked, so the reply is read in the driver
    and the reminder comes back), the rest as `trustor_reply`."""
    first = body["messages"][0]["content"]
    if len(body["messages"]) == 1 and int(hashlib.sha256(first.encode()).hexdigest(), 16) % 3 == 0:
        return "I would rather not say."
    return trustor_reply(body)


@pytest.mark.slow  # an integration run; the fast tier stays under 5 minutes
def test_scripted_drift_gives_the_same_run_with_two_workers(tmp_path: Path) -> None:
    runs = [
        run_scenario(
            "trust-population",
            {"n_personas": 30, "population": "synthetic"},
            model="scripted:drift=0.15",
            out=tmp_path / f"w{workers}",
            use_cache=False,
            progress=False,
            workers=workers,
        )
        for workers in (1, 2)
    ]
    assert runs[1].manifest["client"]["workers"] == 2
    metrics = runs[0].metrics["metrics"]
    assert metrics["reasks"] > 0 and metrics["n_decisions"] > 20  # the repair path ran too
    assert_same_runs(runs[0].run_dir, runs[1].run_dir)


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_a_scenario_files_scripted_rules_reach_the_workers(tmp_path: Path) -> None:
    """A scenario file is loaded in each worker (its rules registered there); two rounds, so
    the second round's prompts carry memory the driver kept."""
    example = Path(__file__).resolve().parent.parent / "examples" / "coin_guess.py"
    for workers in (1, 2):
        run_scenario(
            example,
            {"n_personas": 4, "rounds": 2},
            model="scripted",
            out=tmp_path / f"w{workers}",
            use_cache=False,
            progress=False,
            workers=workers,
        )
    assert_same_runs(tmp_path / "w1", tmp_path / "w2")


@pytest.mark.slow  # an integration run; the fast tier stays under 5 minutes
def test_fake_server_gives_the_same_run_with_two_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-workers")
    with FakeOpenAIServer(responder=unusable_for_some, latency=0.01) as server:
        for workers in (1, 2):
            run_scenario(
                "trust-population",
                {"n_personas": 24},
                model="openai:fake-model",
                base_url=server.base_url,
                out=tmp_path / f"w{workers}",
                use_cache=False,
                progress=False,
                concurrency=8,
                retry=PATIENT,
                workers=workers,
            )
        assert server.peak_in_flight <= 8  # the two workers' shares add up to the run's limit
    reasks = [e for events in events_by_unit(tmp_path / "w2").values() for e in events]
    assert any(kind == "decision.reask" for kind, *_ in reasks)
    assert_same_runs(tmp_path / "w1", tmp_path / "w2")


@pytest.mark.slow  # an integration run; the fast tier stays under 5 minutes
def test_a_pool_with_two_workers_records_each_workers_endpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-workers")
    with (
        FakeOpenAIServer(responder=trustor_reply) as first,
        FakeOpenAIServer(responder=trustor_reply) as second,
    ):
        result = run_scenario(
            "trust-population",
            {"n_personas": 16},
            model="openai:fake-model",
            base_url=[first.base_url, second.base_url],
            out=tmp_path / "r",
            use_cache=False,
            progress=False,
            concurrency=4,
            retry=PATIENT,
            workers=2,
        )
        sent = first.request_count + second.request_count
    assert result.metrics["metrics"]["n_decisions"] == 16
    reports = result.manifest["endpoints"]
    assert sorted(r["worker"] for r in reports) == [1, 2]
    assert sum(r["requests"] for r in reports) == sent == 16
    assert all(e["concurrency"] == 1 for r in reports for e in r["endpoints"])  # 4 / 2 / 2


@pytest.mark.slow
def test_resume_with_workers_finishes_an_interrupted_run_as_one_process_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run stopped part-way by a permanent error, resumed with two workers: its finished
    units are re-derived in the driver, the rest run in the workers; the outcome is the
    uninterrupted single-process run's."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-workers")
    options: dict[str, Any] = dict(
        use_cache=False, progress=False, concurrency=2, retry=PATIENT, workers=2
    )
    with FakeOpenAIServer(responder=trustor_reply) as server:
        answered = []

        def stop_after_six(body: dict[str, Any]) -> str:
            answered.append(1)
            if len(answered) == 6:
                server.enqueue_faults(StatusFault(401))
            return trustor_reply(body)

        server.responder = stop_after_six
        params = {"n_personas": 12}
        with pytest.raises(PermanentLLMError, match="401"):
            run_scenario(
                "trust-population", params, model="openai:fake-model",
                base_url=server.base_url, out=tmp_path / "r", **options,
            )  # fmt: skip
        manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
        assert manifest["status"] == "interrupted"
        server.responder = trustor_reply
        resumed = run_scenario(
            "trust-population", params, model="openai:fake-model", base_url=server.base_url,
            out=tmp_path / "r", resume=True, **options,
        )  # fmt: skip
        fresh = run_scenario(
            "trust-population", params, model="openai:fake-model", base_url=server.base_url,
            out=tmp_path / "one", **{**options, "workers": 1},
        )  # fmt: skip
    assert resumed.metrics["metrics"]["n_decisions"] == 12
    assert (resumed.run_dir / "metrics.json").read_bytes() == (
        fresh.run_dir / "metrics.json"
    ).read_bytes()
    units = {k: v for k, v in events_by_unit(resumed.run_dir).items() if k not in UNITS}
    assert units == {k: v for k, v in events_by_unit(fresh.run_dir).items() if k not in UNITS}


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_a_permanent_error_in_a_worker_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-workers")
    with FakeOpenAIServer(responder=trustor_reply) as server:
        server.enqueue_faults(401)
        with pytest.raises(PermanentLLMError, match="401"):
            run_scenario(
                "trust-population",
                {"n_personas": 1},
                model="openai:fake-model",
                base_url=server.base_url,
                out=tmp_path / "r",
                use_cache=False,
                progress=False,
                concurrency=2,
                retry=PATIENT,
                workers=2,
            )
        assert server.request_count == 1  # not retried: the error kept its class


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"backend": ScriptedBackend(seed=0)}, "not with a backend object"),
        ({"model": "scripted", "concurrency": 1}, "--concurrency of at least 2"),
        ({"model": "scripted", "workers": 0}, "at least 1"),
    ],
)
def test_workers_refuse_what_they_cannot_split(
    tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(RunError, match=message):
        run_scenario(
            "trust-population",
            {"n_personas": 1},
            out=tmp_path / "r",
            progress=False,
            **{"workers": 2, **options},
        )
    assert not (tmp_path / "r").exists()


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_the_command_line_takes_workers(tmp_path: Path) -> None:
    code = cli(
        ["run", "trust-population", "--n-personas", "4", "--workers", "2", "--no-cache",
         "--no-progress", "--out", str(tmp_path / "r")]
    )  # fmt: skip
    assert code == 0
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["client"]["workers"] == 2 and manifest["status"] == "complete"


def worker_pids() -> list[int]:
    """This process's worker processes, from /proc (Linux)."""
    pids = []
    for status in Path("/proc").glob("[0-9]*/status"):
        with contextlib.suppress(OSError):
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines())
            cmdline = (status.parent / "cmdline").read_bytes()
            if int(fields["PPid"]) == os.getpid() and b"decision_worker" in cmdline:
                pids.append(int(status.parent.name))
    return pids


@pytest.mark.slow
def test_a_worker_killed_mid_run_stops_it_and_resume_finishes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL to one worker while its decisions wait on the server: the run stops, named and
    interrupted (no decision made up), and `--resume` ends with one decision per persona."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-workers")
    killed: list[int] = []

    def kill_a_worker(body: dict[str, Any]) -> str:
        if not killed:
            killed.append(worker_pids()[0])
            os.kill(killed[0], signal.SIGKILL)
        return trustor_reply(body)

    options: dict[str, Any] = dict(
        model="openai:fake-model", out=tmp_path / "r", use_cache=False, progress=False,
        concurrency=4, retry=PATIENT, workers=2,
    )  # fmt: skip
    with FakeOpenAIServer(responder=kill_a_worker, latency=0.2) as server:
        with pytest.raises(PermanentLLMError, match=r"worker process \d+ exited") as stopped:
            run_scenario("trust-population", {"n_personas": 8}, base_url=server.base_url, **options)
        assert str(killed[0]) in str(stopped.value)
        manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
        assert manifest["status"] == "interrupted"
        result = run_scenario(
            "trust-population", {"n_personas": 8}, base_url=server.base_url, resume=True,
            **options,
        )  # fmt: skip
    decided = [
        agent_id
        for events in events_by_unit(result.run_dir).values()
        for kind, _, agent_id, _ in events
        if kind in ("decision.made", "decision.failed")
    ]
    assert sorted(decided) == sorted(set(decided)) and len(decided) == 8
    assert result.manifest["status"] == "complete"


def test_a_worker_that_cannot_load_the_scenario_says_why(tmp_path: Path) -> None:
    """A scenario class whose module a worker cannot import (this test module: the workers
    start from the repository's root, without pytest's path) while the scripted model needs
    its rules: the run stops before its first event with the worker's error, no worker left,
    and no run directory (nothing had been logged: docs/events.md, "Stops and faults")."""
    from personasim.scenarios.trust.population import TrustPopulation

    class Local(TrustPopulation):
        pass

    with pytest.raises(RunError, match="could not start: ModuleNotFoundError"):
        run_scenario(
            Local, {"n_personas": 2}, model="scripted", out=tmp_path / "r", use_cache=False,
            progress=False, workers=2,
        )  # fmt: skip
    assert not (tmp_path / "r").exists()
    assert worker_pids() == []


def test_each_limit_is_split_into_parts_that_add_up_to_it(tmp_path: Path) -> None:
    """The run's and each endpoint's limits, split over 3 workers as each worker builds its
    pool: whole requests in flight that add up to each limit, rates in proportion to them."""
    from personasim.simulation.llm.model_spec import make_backend

    file = tmp_path / "endpoints.toml"
    file.write_text(
        '[[pools.gpus.endpoints]]\nurl = "http://127.0.0.1:9/v1"\nconcurrency = 7\nrpm = 90\n'
        '[[pools.gpus.endpoints]]\nurl = "http://127.0.0.1:10/v1"\n'
    )
    config = RunConfig.from_options(
        model="openai:m@pool:gpus", endpoints=file, concurrency=16, requests_per_minute=300.0,
        retry=PATIENT, use_cache=False,
    )  # fmt: skip
    spec = WorkerSpec(config, {})
    shares = [spec.share(index, 3) for index in range(3)]
    assert [s.client_limits() for s in shares] == [(6, 100.0), (5, 100.0), (5, 100.0)]
    pools = []
    for share in shares:
        pool = make_backend(share.config.model, None, 0, share.config.endpoints)
        pool.take_share(*share.worker, share.config.limits.concurrency)
        pool.router(share.client_limits()[0])
        pools.append(pool)
    first, second = zip(*(pool.replicas for pool in pools), strict=True)
    # 7 in flight: 3, 2, 2; the second endpoint's 8 (its half of --concurrency 16): the deal
    # goes on where the first stopped, so worker 0 does not take both remainders
    assert [r.limit for r in first] == [3, 2, 2]
    assert [r.limit for r in second] == [2, 3, 3]
    rates = [r.limiter.pacer.time_period for r in first]  # seconds per request
    assert sum(60 / period for period in rates) == pytest.approx(90)
    with pytest.raises(RunError, match="allow 15 requests in flight in all, fewer than one per"):
        run_scenario(
            "trust-population", {"n_personas": 1}, model="openai:m@pool:gpus", endpoints=file,
            out=tmp_path / "r", progress=False, workers=16, concurrency=16,
        )  # fmt: skip
