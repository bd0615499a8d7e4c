"""The OpenAI-compatible path end to end, over real HTTP, against the local fake server."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from conftest import trustor_reply
from fake_openai import FakeOpenAIServer, HangFault, RateLimitFault
from langchain_openai import ChatOpenAI

from personasim.simulation import (
    ChatRequest,
    LangChainBackend,
    LLMClient,
    Message,
    OpenAIBackend,
    PermanentLLMError,
    RetryPolicy,
    SQLiteEventStore,
    run_scenario,
)
from personasim.simulation.cli.main import main

SECRET = "sk-personasim-test-SECRET-7f3a9c"
FAST_RETRY = RetryPolicy(max_attempts=4, timeout=0.5, initial_backoff=0.01, max_backoff=0.05)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAIServer(responder=trustor_reply) as fake:
        yield fake


def run(server: FakeOpenAIServer, out: Path, n: int = 12, **kwargs):
    kwargs.setdefault("retry", FAST_RETRY)
    return run_scenario(
        "trust-population",
        {"n_personas": n},
        model="openai:fake-model",
        base_url=server.base_url,
        out=out,
        progress=False,
        **kwargs,
    )


def llm_calls(run_dir: Path) -> list[dict]:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return [e.payload for e in store.read(["llm.call"])]


def test_faults_are_retried_and_the_run_completes(server, tmp_path: Path, isolated_cache) -> None:
    server.enqueue_faults(RateLimitFault(retry_after="0.05"), "500", HangFault(), "malformed")
    result = run(server, tmp_path / "r", concurrency=1)
    metrics = result.metrics["metrics"]
    assert metrics["n_decisions"] == 12 and metrics["parse_failures"] == 0
    assert metrics["reasks"] == 1  # the malformed answer was re-asked once
    # 12 decisions + 1 re-ask answered, plus 3 failed attempts (429, 500, hang)
    assert result.manifest["llm"]["calls"] == 16
    assert server.request_count == 16
    assert result.manifest["status"] == "complete"
    assert sum(c["attempts"] for c in llm_calls(result.run_dir)) == 16
    assert all(r["model"] == "fake-model" for r in server.requests)
    assert all(r["temperature"] == 0.05 for r in server.requests)
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"


def test_api_key_never_reaches_a_file(server, tmp_path: Path, isolated_cache) -> None:
    run(server, tmp_path / "r")
    assert main(["export", str(tmp_path / "r")]) == 0
    files = [p for d in (tmp_path / "r", isolated_cache) for p in d.rglob("*") if p.is_file()]
    assert len(files) >= 4
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["model"] == {
        "backend": "openai",
        "base_url": server.base_url,
        "model": "fake-model",
    }


def test_retry_after_is_honoured(server, tmp_path: Path) -> None:
    server.enqueue_faults(RateLimitFault(retry_after="0.6"))
    started = time.perf_counter()
    result = run(server, tmp_path / "r", n=1)
    assert time.perf_counter() - started >= 0.6  # our own backoff would have waited ≤ 0.05 s
    assert llm_calls(result.run_dir)[0]["attempts"] == 2


def test_a_hang_is_cut_by_the_per_attempt_timeout(server, tmp_path: Path) -> None:
    server.enqueue_faults(HangFault())
    started = time.perf_counter()
    result = run(server, tmp_path / "r", n=1)
    assert time.perf_counter() - started < 5
    assert llm_calls(result.run_dir)[0]["attempts"] == 2
    assert result.metrics["metrics"]["n_decisions"] == 1


def test_malformed_answers_become_counted_parse_failures(server, tmp_path: Path) -> None:
    server.responder = lambda body: "I would rather not say."
    result = run(server, tmp_path / "r", n=5)
    metrics = result.metrics["metrics"]
    assert metrics["parse_failures"] == 5
    assert metrics["reasks"] == 10  # two re-asks each, then given up
    assert metrics["n_decisions"] == 0 and metrics["mean_sent"] is None
    assert server.request_count == 15
    reask = server.requests[-1]["messages"]
    assert [m["role"] for m in reask] == ["user", "assistant", "user", "assistant", "user"]
    assert "Finally, I will give N dollars" in reask[-1]["content"]
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        assert not list(store.read(["trust.transfer", "decision.made"]))


def test_out_of_range_amount_is_reasked(server, tmp_path: Path) -> None:
    replies = iter(["Finally, I will give 50 dollars", "Finally, I will give 4 dollars"])
    server.responder = lambda body: next(replies)
    result = run(server, tmp_path / "r", n=1)
    assert result.metrics["metrics"]["mean_sent"] == 4
    assert "between 0 and 10" in server.requests[1]["messages"][-1]["content"]


def test_rejected_key_is_not_retried(server, tmp_path: Path) -> None:
    server.enqueue_faults(401)
    with pytest.raises(PermanentLLMError, match="401"):
        run(server, tmp_path / "r", n=1, concurrency=1)
    assert server.request_count == 1
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and "401" in manifest["error"]


def test_logprobs_round_trip(server) -> None:
    async def ask():
        client = LLMClient(OpenAIBackend("fake-model", base_url=server.base_url))
        request = ChatRequest(
            messages=(Message(role="user", content="hi"),), logprobs=True, top_logprobs=3
        )
        try:
            return await client.complete(request)
        finally:
            await client.aclose()

    response = asyncio.run(ask())
    assert response.logprobs is not None and len(response.logprobs) == len(response.text.split())
    assert len(response.logprobs[0].top) == 3
    assert server.requests[0]["logprobs"] is True and server.requests[0]["top_logprobs"] == 3


def test_langchain_chat_model_runs_a_scenario(server, tmp_path: Path) -> None:
    model = ChatOpenAI(
        model="fake-model",
        base_url=server.base_url,
        api_key=SECRET,
        max_retries=0,
        temperature=0.05,
    )
    result = run_scenario(
        "trust-population",
        {"n_personas": 4},
        out=tmp_path / "r",
        backend=LangChainBackend(model),
        progress=False,
    )
    assert result.metrics["metrics"]["n_decisions"] == 4
    assert result.manifest["model"]["backend"] == "langchain"
    assert server.request_count == 4
    assert result.manifest["llm"]["prompt_tokens"] > 0
