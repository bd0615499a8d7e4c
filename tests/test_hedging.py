"""Hedged requests: one duplicate once a request has waited far past the endpoint's latency,
over real HTTP to the fake server."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np
import pytest
from fake_openai import FakeOpenAIServer

from personasim.simulation import (
    ChatRequest,
    HedgePolicy,
    LLMClient,
    Message,
    OpenAIBackend,
    RetryPolicy,
)
from personasim.simulation.llm.hedging import LatencyWindow

QUICK_HEDGE = HedgePolicy(floor=0.3, min_samples=5)


def request(text: str) -> ChatRequest:
    return ChatRequest(messages=(Message(role="user", content=text),))


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, payload: dict[str, Any], **where: Any) -> None:
        self.events.append((kind, payload))


def test_the_hedge_delay_is_three_p95_with_a_floor() -> None:
    window = LatencyWindow(HedgePolicy(floor=2.0, min_samples=20))
    rng = np.random.default_rng(7)
    samples = rng.exponential(1.0, size=19)
    for seconds in samples:
        window.observe(float(seconds))
    assert window.delay() is None  # too few answers to know the endpoint yet
    samples = np.append(samples, 1.5)
    window.observe(1.5)
    p95 = float(np.percentile(samples, 95, method="inverted_cdf"))  # nearest rank
    assert window.p95() == pytest.approx(p95)
    assert window.delay() == pytest.approx(max(3 * p95, 2.0))
    fast = LatencyWindow(HedgePolicy(floor=2.0, min_samples=20))
    for _ in range(20):
        fast.observe(0.05)
    assert fast.delay() == 2.0  # the floor: ordinary answers are never duplicated
    off = LatencyWindow(HedgePolicy(enabled=False, min_samples=1))
    off.observe(1.0)
    assert off.delay() is None


async def ask_all(
    server: FakeOpenAIServer, concurrency: int, hang_last: bool, timeout: float = 5.0
) -> tuple[LLMClient, Recorder, float]:
    """Five ordinary answers (so the endpoint's latency is known), then one more request,
    which hangs when `hang_last`; returns how long that last one took."""
    emit = Recorder()
    policy = RetryPolicy(max_attempts=3, timeout=timeout, hedge=QUICK_HEDGE)
    client = LLMClient(
        OpenAIBackend("fake-model", base_url=server.base_url),
        retry=policy,
        concurrency=concurrency,
        emit=emit,
    )
    try:
        for i in range(5):
            await client.complete(request(f"warm-up {i}"))
        if hang_last:
            server.enqueue_faults("hang")
        started = time.perf_counter()
        answer = await client.complete(request("the last one"))
        assert answer.text
        return client, emit, time.perf_counter() - started
    finally:
        await client.aclose()


def test_a_hung_request_is_hedged_once_and_the_first_answer_taken() -> None:
    with FakeOpenAIServer(latency=0.02) as server:
        client, emit, took = asyncio.run(ask_all(server, concurrency=4, hang_last=True))
        requests = server.request_count
    assert took < 2.0  # the 5 s timeout was not waited for
    assert requests == 5 + 2  # the hung request and its one duplicate
    assert client.hedges == 1
    calls = [payload for kind, payload in emit.events if kind == "llm.call"]
    assert len(calls) == 6  # the hedged request is one logged call...
    assert (calls[-1]["attempts"], calls[-1]["hedged"]) == (2, True)  # ...with its attempts
    assert all(not c["hedged"] and c["attempts"] == 1 for c in calls[:-1])


def test_no_hedge_when_answers_come_in_time() -> None:
    with FakeOpenAIServer(latency=0.02) as server:
        client, emit, _ = asyncio.run(ask_all(server, concurrency=4, hang_last=False))
        requests = server.request_count
    assert (requests, client.hedges) == (6, 0)
    assert not any(payload["hedged"] for _, payload in emit.events)


def test_a_hedge_waits_for_a_slot_like_any_request() -> None:
    """With one request allowed in flight the duplicate cannot be sent beside the hung one: it
    goes once the hung request times out and frees the slot, and its answer is taken."""
    with FakeOpenAIServer(latency=0.02) as server:
        client, emit, took = asyncio.run(
            ask_all(server, concurrency=1, hang_last=True, timeout=1.0)
        )
        peak, requests = server.peak_in_flight, server.request_count
    assert (peak, requests) == (1, 5 + 2)
    assert took >= 1.0
    last = emit.events[-1][1]
    assert (last["attempts"], last["hedged"], client.hedges) == (2, True, 1)


def test_an_error_from_the_duplicate_ends_the_attempt_at_once() -> None:
    """Hung request, then a 500 to its duplicate: the retry asks again at once instead of
    waiting out the hung request's timeout."""
    with FakeOpenAIServer(latency=0.02) as server:

        async def run() -> tuple[LLMClient, Recorder, float]:
            emit = Recorder()
            policy = RetryPolicy(
                max_attempts=4, timeout=30.0, initial_backoff=0.01, jitter=0, hedge=QUICK_HEDGE
            )
            client = LLMClient(
                OpenAIBackend("fake-model", base_url=server.base_url), retry=policy, emit=emit
            )
            try:
                for i in range(5):
                    await client.complete(request(f"warm-up {i}"))
                server.enqueue_faults("hang", "500")
                started = time.perf_counter()
                await client.complete(request("the last one"))
                return client, emit, time.perf_counter() - started
            finally:
                await client.aclose()

        client, emit, took = asyncio.run(run())
    assert took < 5.0  # not the 30 s timeout
    last = emit.events[-1][1]
    assert (last["attempts"], last["hedged"], client.hedges) == (3, True, 1)


def test_when_the_duplicate_hangs_too_the_attempt_ends_without_the_timeout() -> None:
    """Both past the hedge delay: the attempt ends as a timeout would and the retry (with a
    duplicate of its own if needed) answers, long before the 30 s timeout."""
    with FakeOpenAIServer(latency=0.02) as server:

        async def run() -> tuple[Recorder, float]:
            emit = Recorder()
            policy = RetryPolicy(
                max_attempts=5, timeout=30.0, initial_backoff=0.01, jitter=0, hedge=QUICK_HEDGE
            )
            client = LLMClient(
                OpenAIBackend("fake-model", base_url=server.base_url), retry=policy, emit=emit
            )
            try:
                for i in range(5):
                    await client.complete(request(f"warm-up {i}"))
                server.enqueue_faults("hang", "hang")
                started = time.perf_counter()
                await client.complete(request("the last one"))
                return emit, time.perf_counter() - started
            finally:
                await client.aclose()

        emit, took = asyncio.run(run())
    assert 0.6 <= took < 5.0  # two hedge delays of 0.3 s, then the retry
    last = emit.events[-1][1]
    assert (last["attempts"], last["hedged"]) == (3, True)
