"""What a fault costs a request: a 429's Retry-After with nothing added on one endpoint, and on
a pool no wait at all (the request goes at once to another endpoint); a hedged duplicate that
finds its endpoint's slots full goes beyond them. Real HTTP to fake servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAIServer, RateLimitFault

from personasim.simulation import (
    ChatRequest,
    HedgePolicy,
    LLMClient,
    Message,
    OpenAIBackend,
    RetryPolicy,
    load_endpoints,
    make_backend,
)

SLOW_BACKOFF = RetryPolicy(max_attempts=4, initial_backoff=3.0, jitter=0, hedge=HedgePolicy(False))
"""A backoff of 3 s: a request answered well under it was not backed off."""


def request(text: str) -> ChatRequest:
    return ChatRequest(messages=(Message(role="user", content=text),))


class Recorder:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __call__(self, kind: str, payload: dict[str, Any], **where: Any) -> None:
        if kind == "llm.call":
            self.calls.append(payload)


async def timed_call(client: LLMClient, text: str) -> float:
    try:
        started = time.perf_counter()
        await client.complete(request(text))
        return time.perf_counter() - started
    finally:
        await client.aclose()


def test_one_endpoint_waits_out_the_retry_after_and_nothing_more() -> None:
    with FakeOpenAIServer(latency=0.01) as server:
        server.enqueue_faults(RateLimitFault(retry_after="0.4"))
        emit = Recorder()
        client = LLMClient(
            OpenAIBackend("fake-model", base_url=server.base_url), retry=SLOW_BACKOFF, emit=emit
        )
        took = asyncio.run(timed_call(client, "hello"))
    assert 0.4 <= took < 2.0  # the server's 0.4 s, not the 3 s backoff on top of it
    assert emit.calls[-1]["attempts"] == 2


def test_on_a_pool_a_429_or_a_500_is_sent_at_once_to_the_other_endpoint() -> None:
    """A 429 asking for 30 s, then a 500, from the replica a fresh pool asks first (the first
    of equally loaded ones): each request goes to the other replica at once, neither the
    Retry-After nor the 3 s backoff is waited."""
    for fault in (RateLimitFault(retry_after="30"), 500):
        with FakeOpenAIServer(latency=0.01) as a, FakeOpenAIServer(latency=0.01) as b:
            a.enqueue_faults(fault)
            backend = make_backend("openai:fake-model", [a.base_url, b.base_url])
            emit = Recorder()
            client = LLMClient(backend, retry=SLOW_BACKOFF, concurrency=4, emit=emit)
            took = asyncio.run(timed_call(client, "hello"))
            requests = (a.request_count, b.request_count)
        assert took < 2.0
        assert emit.calls[-1]["attempts"] == 2 and requests == (1, 1)
        first, second = backend.report()["endpoints"]
        assert (first["failed"], first["answered"], second["answered"]) == (1, 0, 1)


def test_when_every_endpoint_is_busy_the_retry_after_is_waited(tmp_path: Path) -> None:
    """Both replicas answer 429 (Retry-After 0.5 s): the request goes from the first to the
    other at once, then finds none that has not just refused it and waits the server's time
    (not the 3 s backoff)."""
    with FakeOpenAIServer(latency=0.01) as a, FakeOpenAIServer(latency=0.01) as b:
        for server in (a, b):
            server.enqueue_faults(RateLimitFault(retry_after="0.5"))
        backend = make_backend("openai:fake-model", [a.base_url, b.base_url])
        emit = Recorder()
        client = LLMClient(backend, retry=SLOW_BACKOFF, concurrency=4, emit=emit)
        took = asyncio.run(timed_call(client, "hello"))
    assert 0.5 <= took < 2.5
    assert emit.calls[-1]["attempts"] == 3


def test_a_duplicate_goes_beyond_a_full_endpoint_and_is_counted(tmp_path: Path) -> None:
    """A pool of one endpoint that takes one request at once, under a run that allows four:
    the request hangs and holds the endpoint's only slot; its duplicate goes beyond it."""
    with FakeOpenAIServer(latency=0.01) as server:
        file = tmp_path / "endpoints.toml"
        file.write_text(f'[[pools.p.endpoints]]\nurl = "{server.base_url}"\nconcurrency = 1\n')
        backend = make_backend("openai:fake-model@pool:p", None, 0, load_endpoints(file))
        emit = Recorder()
        hedge = HedgePolicy(floor=0.3, min_samples=5)
        client = LLMClient(
            backend, retry=RetryPolicy(timeout=20, hedge=hedge), concurrency=4, emit=emit
        )

        async def run() -> float:
            for i in range(5):
                await client.complete(request(f"warm-up {i}"))
            server.enqueue_faults("hang")
            return await timed_call(client, "the last one")

        took = asyncio.run(run())
        peak = server.peak_in_flight
    assert took < 5.0 and peak == 2
    assert (emit.calls[-1]["hedged"], emit.calls[-1]["beyond_limit"]) == (True, True)
    (endpoint,) = backend.report()["endpoints"]
    assert (endpoint["beyond_limit"], endpoint["cancelled"]) == (1, 1)
