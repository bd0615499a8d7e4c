"""Endpoint pools (repeated `--base-url`, `--endpoints FILE`): routing, per-endpoint limits,
cooldown and probe, failover when a replica dies mid-run, hedging to another replica, and
request keys that do not depend on the replica. Real HTTP to fake servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import trustor_reply
from fake_openai import FakeOpenAIServer

from personasim.simulation import (
    ChatRequest,
    EndpointPool,
    HedgePolicy,
    LLMClient,
    Message,
    OpenAIBackend,
    PermanentLLMError,
    RetryPolicy,
    RunError,
    SQLiteEventStore,
    load_endpoints,
    make_backend,
    run_scenario,
)
from personasim.simulation.cli.main import main
from personasim.simulation.llm.endpoint_pool import nearest_rank
from personasim.simulation.llm.limiter import endpoint_key

FAST = RetryPolicy(max_attempts=4, initial_backoff=0.01, max_backoff=0.02, jitter=0)


def request(text: str) -> ChatRequest:
    return ChatRequest(messages=(Message(role="user", content=text),))


def pool_file(tmp_path: Path, text: str, name: str = "endpoints.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


async def ask(client: LLMClient, prompts: list[str]) -> None:
    try:
        await asyncio.gather(*(client.complete(request(p)) for p in prompts))
    finally:
        await client.aclose()


# -- identity ---------------------------------------------------------------------------------


def test_a_single_url_keeps_the_keys_it_had_before_pools(monkeypatch: pytest.MonkeyPatch) -> None:
    """Computed on the code before endpoint pools existed: an old cache still hits."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    backend = make_backend("openai:fake-model", "http://127.0.0.1:8000/v1")
    assert isinstance(backend, OpenAIBackend)
    asked = ChatRequest(
        messages=(Message(role="user", content="Give 4 dollars?"),), temperature=0.0, max_tokens=8
    )
    assert backend.cache_key(asked) == (
        "c90a083f4ae9a79fd6a2b06812ee32a0797e24c4a1c8527a935e30f716da7386"
    )
    assert endpoint_key(backend.identity()) == "http://127.0.0.1:8000/v1 fake-model"
    listed = make_backend("openai:fake-model", ["http://127.0.0.1:8000/v1"])  # given once
    assert listed.cache_key(asked) == backend.cache_key(asked)


def test_a_pool_is_one_model_whichever_replicas_serve_it(tmp_path: Path) -> None:
    two = make_backend("openai:m", ["http://a:1/v1", "http://b:2/v1"])
    three = make_backend("openai:m", ["http://c:3/v1", "http://a:1/v1", "http://d:4/v1"])
    alone = make_backend("openai:m", "http://a:1/v1")
    asked = request("hello")
    assert isinstance(two, EndpointPool)
    assert two.identity() == {"backend": "openai", "pool": "base-url", "model": "m"}
    assert two.cache_key(asked) == three.cache_key(asked) != alone.cache_key(asked)
    assert endpoint_key(two.identity()) == "pool:base-url m"
    endpoints = load_endpoints(
        pool_file(tmp_path, '[[pools.gpus.endpoints]]\nurl = "http://a:1/v1"\n')
    )
    named = make_backend("openai:m@pool:gpus", endpoints=endpoints)
    assert named.identity() == {"backend": "openai", "pool": "gpus", "model": "m"}
    assert named.cache_key(asked) != two.cache_key(asked)  # the pool's name is part of it


# -- routing and limits -----------------------------------------------------------------------


def test_equal_replicas_share_the_requests_evenly() -> None:
    with FakeOpenAIServer(latency=0.02) as a, FakeOpenAIServer(latency=0.02) as b:
        backend = make_backend("openai:fake-model", [a.base_url, b.base_url])
        client = LLMClient(backend, concurrency=8, retry=FAST)
        asyncio.run(ask(client, [f"q{i}" for i in range(80)]))
        counts = (a.request_count, b.request_count)
        peaks = (a.peak_in_flight, b.peak_in_flight)
    assert sum(counts) == 80
    assert 32 <= counts[0] <= 48, counts  # 40-60% each
    assert max(peaks) <= 4  # --concurrency 8 over two replicas: 4 each
    report = backend.report()
    assert [e["requests"] for e in report["endpoints"]] == list(counts)
    assert all(e["failed"] == 0 and e["latency_s"]["p50"] >= 0.02 for e in report["endpoints"])


def test_each_endpoint_keeps_its_own_concurrency(tmp_path: Path) -> None:
    """Limits 2 and 6: neither is exceeded, and the larger one answers about three times as
    many (at the same latency, an endpoint's share follows its limit)."""
    with FakeOpenAIServer(latency=0.05) as small, FakeOpenAIServer(latency=0.05) as large:
        path = pool_file(
            tmp_path,
            f"""
[[pools.p.endpoints]]
url = "{small.base_url}"
concurrency = 2
[[pools.p.endpoints]]
url = "{large.base_url}"
concurrency = 6
""",
        )
        backend = make_backend("openai:fake-model@pool:p", endpoints=load_endpoints(path))
        client = LLMClient(backend, concurrency=8, retry=FAST)
        asyncio.run(ask(client, [f"q{i}" for i in range(120)]))
        peaks = (small.peak_in_flight, large.peak_in_flight)
        counts = (small.request_count, large.request_count)
    assert peaks == (2, 6)
    assert sum(counts) == 120 and 2.4 < counts[1] / counts[0] < 3.6, counts


def test_each_endpoint_keeps_its_own_rate(tmp_path: Path) -> None:
    """rpm = 600 on one endpoint: its requests leave 0.1 s apart though 4 may be in flight."""
    arrivals: list[float] = []

    def record(body: dict[str, Any]) -> str:
        arrivals.append(time.monotonic())
        return "ok"

    with FakeOpenAIServer(record) as paced:
        path = pool_file(
            tmp_path,
            f'[[pools.p.endpoints]]\nurl = "{paced.base_url}"\nconcurrency = 4\nrpm = 600\n',
        )
        backend = make_backend("openai:fake-model@pool:p", endpoints=load_endpoints(path))
        client = LLMClient(backend, concurrency=4, retry=FAST)
        asyncio.run(ask(client, [f"q{i}" for i in range(6)]))
    gaps = np.diff(arrivals)
    assert len(arrivals) == 6 and gaps.min() >= 0.1 - 0.02, gaps


def test_a_hedged_request_goes_to_the_other_replica() -> None:
    """The request hangs on the replica it reached first; its duplicate goes to the other."""
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    async def hang_once(body: dict[str, Any]) -> str:
        prompt = body["messages"][0]["content"]
        with lock:
            seen[prompt] += 1
            first = seen[prompt] == 1
        if prompt == "hang" and first:
            await asyncio.sleep(30)
        return "ok"

    policy = RetryPolicy(timeout=20, hedge=HedgePolicy(floor=0.3, min_samples=5))
    with FakeOpenAIServer(hang_once) as a, FakeOpenAIServer(hang_once) as b:
        backend = make_backend("openai:fake-model", [a.base_url, b.base_url])
        client = LLMClient(backend, concurrency=4, retry=policy)

        async def run() -> float:
            await asyncio.gather(*(client.complete(request(f"w{i}")) for i in range(8)))
            started = time.perf_counter()
            await client.complete(request("hang"))
            took = time.perf_counter() - started
            await client.aclose()
            return took

        took = asyncio.run(run())
        got_hang = [sum(r["messages"][0]["content"] == "hang" for r in s.requests) for s in (a, b)]
    assert took < 5 and client.hedges == 1
    assert got_hang == [1, 1]  # one on each replica


# -- health -----------------------------------------------------------------------------------


def test_a_failing_endpoint_cools_down_and_is_probed_back(tmp_path: Path) -> None:
    with FakeOpenAIServer() as sick, FakeOpenAIServer() as well:
        path = pool_file(
            tmp_path,
            f"""[pools.p]
max_failures = 2
cooldown_s = 1.0
[[pools.p.endpoints]]
url = "{sick.base_url}"
[[pools.p.endpoints]]
url = "{well.base_url}"
""",
        )
        backend = make_backend("openai:fake-model@pool:p", endpoints=load_endpoints(path))
        client = LLMClient(backend, concurrency=2, retry=FAST)
        sick.fail_always("500")

        async def run() -> tuple[int, int]:
            for i in range(10):  # one at a time: "in a row" is exact
                await client.complete(request(f"a{i}"))
            during = sick.request_count
            for i in range(10):
                await client.complete(request(f"b{i}"))
            cooled = sick.request_count - during
            sick.fail_always(None)
            await asyncio.sleep(1.1)  # the cooldown ends
            for i in range(10):
                await client.complete(request(f"c{i}"))
            await client.aclose()
            return during, cooled

        during, cooled = asyncio.run(run())
    report = backend.report()["endpoints"]
    assert during == 2 and cooled == 0  # two 500s in a row, then none while cooling
    assert report[0]["failures"] == {"server_error": 2} and report[0]["cooldowns"] == 1
    assert report[0]["answered"] >= 3  # probed, answered, back in service
    assert report[1]["failed"] == 0 and report[1]["answered"] + report[0]["answered"] == 30


def test_when_every_endpoint_refuses_the_run_stops_as_with_one_url() -> None:
    with FakeOpenAIServer() as a, FakeOpenAIServer() as b:
        urls = [a.base_url, b.base_url]
    backend = make_backend("openai:fake-model", urls)  # both servers are gone
    client = LLMClient(backend, concurrency=2, retry=FAST)
    with pytest.raises(PermanentLLMError, match="cannot connect"):
        asyncio.run(ask(client, ["q"]))
    assert [e["failures"] for e in backend.report()["endpoints"]] == [{"connection": 1}] * 2


def test_a_replica_killed_mid_run_loses_nothing(tmp_path: Path) -> None:
    """One of two servers stops after its 8th request (in-flight ones are cut off, new ones
    refused): the run finishes on the other with exactly one decision per persona."""
    n, killed = 40, threading.Event()
    with FakeOpenAIServer(latency=0.1) as doomed, FakeOpenAIServer(latency=0.1) as survivor:

        def count_then_die(body: dict[str, Any]) -> str:
            if doomed.request_count >= 8:
                killed.set()
            return trustor_reply(body)

        doomed.responder = count_then_die
        survivor.responder = trustor_reply
        stopper = threading.Thread(target=lambda: killed.wait(30) and doomed.stop())
        stopper.start()
        result = run_scenario(
            "trust-population",
            {"n_personas": n},
            model="openai:fake-model",
            base_url=[doomed.base_url, survivor.base_url],
            out=tmp_path / "run",
            concurrency=8,
            retry=FAST,
            progress=False,
        )
        stopper.join()
    assert killed.is_set() and result.manifest["status"] == "complete"
    with SQLiteEventStore(tmp_path / "run" / "events.sqlite") as store:
        events = list(store.read())
    decided = Counter(e.agent_id for e in events if e.kind == "decision.made")
    assert len(decided) == n and set(decided.values()) == {1}
    kinds = Counter(e.kind for e in events)
    assert kinds["llm.call"] == n and kinds["decision.failed"] == 0 and kinds["llm.error"] == 0
    pool = result.manifest["endpoints"][0]
    dead, alive = pool["endpoints"]
    assert dead["cooldowns"] >= 1 and dead["failed"] >= 1 and dead["answered"] < n / 2
    assert alive["answered"] + dead["answered"] == n and alive["failed"] == 0


# -- reports and files ------------------------------------------------------------------------


def test_latency_percentiles_are_nearest_rank() -> None:
    values = sorted(np.random.default_rng(3).exponential(size=101).tolist())
    for q in (0.5, 0.9, 0.99):
        assert nearest_rank(values, q) == np.percentile(values, 100 * q, method="inverted_cdf")


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_the_cli_pools_repeated_base_urls_and_endpoints_files(tmp_path: Path, capsys) -> None:
    trust = ["run", "trust-population", "--n-personas", "6", "--no-progress"]
    model = ["--model", "openai:fake-model"]
    with FakeOpenAIServer(trustor_reply) as a, FakeOpenAIServer(trustor_reply) as b:
        urls = ["--base-url", a.base_url, "--base-url", b.base_url]
        assert main([*trust, *model, *urls, "--out", str(tmp_path / "r1")]) == 0
        path = pool_file(
            tmp_path,
            f"pools:\n  gpus:\n    endpoints:\n      - url: {a.base_url}\n"
            f"        key_env: POOL_TEST_KEY\n      - url: {b.base_url}\n",
            "endpoints.yaml",
        )
        pooled = ["--model", "openai:fake-model@pool:gpus", "--endpoints", str(path)]
        with pytest.MonkeyPatch.context() as env:
            env.setenv("POOL_TEST_KEY", "sk-pool-secret-123")
            assert main([*trust, *pooled, "--out", str(tmp_path / "r2")]) == 0
        sent = a.requests[-1]["headers"]["Authorization"]
    assert sent == "Bearer sk-pool-secret-123"
    for run, pool in (("r1", "base-url"), ("r2", "gpus")):
        text = (tmp_path / run / "manifest.json").read_text()
        manifest = json.loads(text)
        assert manifest["model"] == {"backend": "openai", "pool": pool, "model": "fake-model"}
        assert sum(e["requests"] for e in manifest["endpoints"][0]["endpoints"]) == 6
        assert "sk-pool-secret" not in text
    with SQLiteEventStore(tmp_path / "r2" / "events.sqlite") as store:
        assert not any("sk-pool-secret" in json.dumps(e.payload) for e in store.read())


BAD_FILES = [
    (
        "endpoints.toml",
        '[pools.gpus]\n\n[[pools.gpus.endpoints]]\nurl = "http://a/v1"\n\n'
        '[[pools.gpus.endpoints]]\nurl = "http://b/v1"\nconcurrency = 0\n',
        "endpoints.toml:8: pools.gpus.endpoints[1].concurrency: Input should be greater than or "
        "equal to 1",
    ),
    (
        "endpoints.yaml",
        "pools:\n  gpus:\n    endpoints:\n      - url: http://a/v1\n        api_key: sk-abc123\n",
        "endpoints.yaml:5: pools.gpus.endpoints[0].api_key: keys are never written in the "
        "endpoints file",
    ),
    (
        "endpoints.yaml",
        "pools:\n  gpus:\n    endpoints:\n      - url: http://a/v1\n        key_env: sk-abc123\n",
        "endpoints.yaml:5: pools.gpus.endpoints[0].key_env: must be the NAME of an environment",
    ),
    ("endpoints.toml", "[pools.gpus]\nendpoints = [\n", "endpoints.toml: not valid TOML"),
    (
        "endpoints.toml",
        '[[pools.gpus.endpoints]]\nurl = "ftp://a"\n',
        "endpoints.toml:2: pools.gpus.endpoints[0].url: must be an http:// or https:// URL",
    ),
    ("endpoints.yaml", "pools: {}\n", "endpoints.yaml:1: pools: Dictionary should have at least"),
    (
        "endpoints.toml",
        '[[pools."a b".endpoints]]\nurl = "http://a/v1"\n',
        "endpoints.toml:1: pools.a b: a pool's name is letters",
    ),
]


@pytest.mark.parametrize(("name", "text", "expected"), BAD_FILES)
def test_a_bad_endpoints_file_names_file_line_and_field(
    tmp_path: Path, capsys, name: str, text: str, expected: str
) -> None:
    path = pool_file(tmp_path, text, name)
    args = ["run", "trust-population", "--model", "openai:m@pool:gpus", "--endpoints", str(path)]
    assert main([*args, "--out", str(tmp_path / "run")]) == 2
    printed = capsys.readouterr().err
    assert printed.startswith("error: ") and f"{tmp_path}/{expected}" in printed, printed
    assert "sk-abc123" not in printed
    assert not (tmp_path / "run").exists()


def test_pools_that_are_missing_or_unused_are_refused(tmp_path: Path, capsys) -> None:
    path = pool_file(tmp_path, '[[pools.gpus.endpoints]]\nurl = "http://a/v1"\n')
    run = ["run", "trust-population", "--out", str(tmp_path / "run")]
    checks = [
        (["--model", "openai:m@pool:cpus", "--endpoints", str(path)], "no pool 'cpus'"),
        (["--model", "openai:m@pool:gpus"], "pass --endpoints FILE that defines it"),
        (["--model", "openai:m", "--endpoints", str(path)], "no model of the run uses"),
        (["--model", "openai:m", "--base-url", "http://a/v1", "--base-url", "http://a/v1"],
         "--base-url http://a/v1 is given twice"),
        (["--model", "openai:m", "--endpoints", str(path) + ".json"], "use a .toml, .yaml"),
        (["--model", "openai:m", "--endpoints", str(tmp_path / "none.toml")], "cannot read it"),
    ]  # fmt: skip
    for extra, expected in checks:
        assert main([*run, *extra]) == 2, extra
        assert expected in capsys.readouterr().err, extra
    assert not (tmp_path / "run").exists()


def test_resume_checks_the_pool_not_its_replicas(tmp_path: Path) -> None:
    """A pool run resumes with other replicas (same pool, same model); with one URL instead of
    the pool it is refused, naming the model."""
    out = tmp_path / "run"
    options: dict[str, Any] = dict(model="openai:fake-model", out=out, progress=False)
    with (
        FakeOpenAIServer(trustor_reply) as a,
        FakeOpenAIServer(trustor_reply) as b,
        FakeOpenAIServer(trustor_reply) as c,
    ):
        run_scenario("trust-population", {"n_personas": 4}, base_url=[a.base_url, b.base_url],
                     **options)  # fmt: skip
        again = run_scenario("trust-population", {"n_personas": 4}, resume=True,
                             base_url=[c.base_url, b.base_url], **options)  # fmt: skip
        assert again.report == ["already complete; nothing to resume"]
        with pytest.raises(RunError, match=r"model\.pool: base-url → \(not recorded\)"):
            run_scenario("trust-population", {"n_personas": 4}, resume=True,
                         base_url=c.base_url, **options)  # fmt: skip


def test_weight_sets_the_share_while_no_endpoint_is_full(tmp_path: Path) -> None:
    """Equal limits (8), weights 3 and 1, 4 requests in flight: about 3 to 1."""
    with FakeOpenAIServer(latency=0.02) as heavy, FakeOpenAIServer(latency=0.02) as light:
        path = pool_file(
            tmp_path,
            f'[[pools.p.endpoints]]\nurl = "{heavy.base_url}"\nconcurrency = 8\nweight = 3\n'
            f'[[pools.p.endpoints]]\nurl = "{light.base_url}"\nconcurrency = 8\n',
        )
        backend = make_backend("openai:fake-model@pool:p", endpoints=load_endpoints(path))
        client = LLMClient(backend, concurrency=4, retry=FAST)
        asyncio.run(ask(client, [f"q{i}" for i in range(80)]))
        counts = (heavy.request_count, light.request_count)
    assert sum(counts) == 80 and 2.0 <= counts[0] / counts[1] <= 4.0, counts


def test_a_sweep_passes_the_endpoints_file_to_the_cells_that_name_a_pool(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(trustor_reply) as a, FakeOpenAIServer(trustor_reply) as b:
        path = pool_file(
            tmp_path,
            f'[[pools.p.endpoints]]\nurl = "{a.base_url}"\n'
            f'[[pools.p.endpoints]]\nurl = "{b.base_url}"\n',
        )
        args = ["sweep", "trust-population", "--models", "scripted,openai:fake-model@pool:p"]
        args += ["--n-personas", "4", "--endpoints", str(path), "--no-progress"]
        assert main([*args, "--out", str(tmp_path / "sweep")]) == 0
        served = a.request_count + b.request_count
    manifests = [json.loads(m.read_text()) for m in (tmp_path / "sweep").glob("*/manifest.json")]
    pools = [m["model"].get("pool") for m in manifests]
    assert sorted(pools, key=str) == [None, "p"] and served == 4
