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


def test_the_hedge_delay_is_one_and_a_half_p95_between_a_floor_and_a_ceiling() -> None:
    window = LatencyWindow(HedgePolicy(min_samples=20))
    rng = np.random.default_rng(7)
    samples = rng.exponential(1.0, size=19)
    for seconds in samples:
        window.observe(float(seconds))
    assert window.delay() is None  # too few answers to know the endpoint yet
    samples = np.append(samples, 1.5)
    window.observe(1.5)
    p95 = float(np.percentile(samples, 95, method="inverted_cdf"))  # nearest rank
    assert window.p95() == pytest.approx(p95)
    assert 0.5 < 1.5 * p95 < 30  # neither bound applies: the delay follows the latency
    assert window.delay() == pytest.approx(1.5 * p95)
    fast = LatencyWindow(HedgePolicy())
    slow = LatencyWindow(HedgePolicy())
    for _ in range(20):
        fast.observe(0.05)
        slow.observe(40.0)
    assert fast.delay() == 0.5  # the floor: a lagging event loop is not a hang
    assert slow.delay() == 30.0  # the ceiling
    off = LatencyWindow(HedgePolicy(enabled=False, min_samples=1))
    off.observe(1.0)
    assert off.delay() is None


def test_a_recorded_policy_is_read_back_and_an_older_one_keeps_its_values() -> None:
    policy = HedgePolicy(multiplier=2.0, floor=0.4, ceiling=9.0, beyond=0.2)
    assert HedgePolicy.from_json(policy.to_json()) == policy
    older = HedgePolicy.from_json({"enabled": True, "multiplier": 3.0, "floor_s": 2.0})
    assert (older.multiplier, older.floor, older.ceiling) == (3.0, 2.0, 30.0)
    assert [HedgePolicy(beyond=b).budget(c) for b, c in ((0.1, 128), (0.1, 8), (0, 8))] == [
        13,
        1,  # at least one
        0,  # none: duplicates wait for a slot
    ]


async def ask_after_warm_up(
    server: FakeOpenAIServer,
    policy: RetryPolicy,
    *,
    concurrency: int = 16,
    faults: tuple[str, ...] = (),
    last: int = 1,
) -> tuple[LLMClient, Recorder, float]:
    """Five ordinary answers (so the endpoint's latency is known), then `faults` queued and
    `last` more requests at once; returns how long those took."""
    emit = Recorder()
    backend = OpenAIBackend("fake-model", base_url=server.base_url)
    client = LLMClient(backend, retry=policy, concurrency=concurrency, emit=emit)
    try:
        for i in range(5):
            await client.complete(request(f"warm-up {i}"))
        server.enqueue_faults(*faults)
        started = time.perf_counter()
        asked = (client.complete(request(f"the last one {i}")) for i in range(last))
        answers = await asyncio.gather(*asked)
        assert all(answer.text for answer in answers)
        return client, emit, time.perf_counter() - started
    finally:
        await client.aclose()


async def ask_all(
    server: FakeOpenAIServer, concurrency: int, hang_last: bool, timeout: float = 5.0
) -> tuple[LLMClient, Recorder, float]:
    """The warm-up, then one more request, which hangs when `hang_last`."""
    policy = RetryPolicy(max_attempts=3, timeout=timeout, hedge=QUICK_HEDGE)
    faults = ("hang",) if hang_last else ()
    return await ask_after_warm_up(server, policy, concurrency=concurrency, faults=faults)


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


def test_a_hedge_does_not_wait_for_a_slot_the_hung_request_holds() -> None:
    """One request allowed in flight, and it hangs: the duplicate goes beyond the limit (the
    budget's one place), is counted as such, and answers long before the timeout."""
    with FakeOpenAIServer(latency=0.02) as server:
        client, emit, took = asyncio.run(
            ask_all(server, concurrency=1, hang_last=True, timeout=5.0)
        )
        peak, requests = server.peak_in_flight, server.request_count
    assert (peak, requests) == (2, 5 + 2)
    assert took < 2.0
    last = emit.events[-1][1]
    assert (last["attempts"], last["hedged"], last["beyond_limit"]) == (2, True, True)
    assert (client.hedges, client.hedges_beyond_limit) == (1, 1)
    assert not any(payload["beyond_limit"] for _, payload in emit.events[:-1])


def test_without_a_budget_a_hedge_waits_for_a_slot_like_any_request() -> None:
    """`beyond=0`: the duplicate cannot be sent beside the hung request that holds the one
    slot; it goes once that request times out, and its answer is taken."""
    with FakeOpenAIServer(latency=0.02) as server:
        client, emit, took = asyncio.run(
            ask_after_warm_up(
                server,
                RetryPolicy(
                    max_attempts=3,
                    timeout=1.0,
                    hedge=HedgePolicy(floor=0.3, min_samples=5, beyond=0),
                ),
                concurrency=1,
                faults=("hang",),
            )
        )
        peak, requests = server.peak_in_flight, server.request_count
    assert (peak, requests) == (1, 5 + 2)
    assert took >= 1.0
    last = emit.events[-1][1]
    assert (last["attempts"], last["hedged"], last["beyond_limit"]) == (2, True, False)
    assert (client.hedges, client.hedges_beyond_limit) == (1, 0)


def test_hangs_that_fill_every_slot_do_not_stall_the_requests() -> None:
    """Eight slots, and the eight requests sent at once all hang (the stall of issue 37: no
    duplicate could be sent, nothing answered for the whole timeout). With one place beyond
    the limit and two duplicates at a time, each answered duplicate frees its hung request's
    slot for the next one: all eight are answered long before the 10 s timeout."""
    with FakeOpenAIServer(latency=0.02) as server:
        client, emit, took = asyncio.run(
            ask_after_warm_up(
                server,
                RetryPolicy(max_attempts=3, timeout=10.0, hedge=QUICK_HEDGE),
                concurrency=8,
                faults=("hang",) * 8,
                last=8,
            )
        )
        peak = server.peak_in_flight
    assert took < 3.0
    # the eight hung requests (the server keeps them) and the duplicates: one beyond the
    # limit, at most two (a quarter of the concurrency) at once
    assert 9 <= peak <= 10
    calls = [payload for kind, payload in emit.events if kind == "llm.call"][5:]
    assert len(calls) == 8 and all(c["hedged"] and c["attempts"] == 2 for c in calls)
    assert client.hedges_beyond_limit >= 1


def test_an_error_from_the_duplicate_ends_the_attempt_at_once() -> None:
    """Hung request, then a 500 to its duplicate: the retry asks again at once instead of
    waiting out the hung request's timeout."""
    with FakeOpenAIServer(latency=0.02) as server:
        client, emit, took = asyncio.run(
            ask_after_warm_up(
                server,
                RetryPolicy(
                    max_attempts=4, timeout=30.0, initial_backoff=0.01, jitter=0, hedge=QUICK_HEDGE
                ),
                faults=("hang", "500"),
            )
        )
    assert took < 5.0  # not the 30 s timeout
    last = emit.events[-1][1]
    assert (last["attempts"], last["hedged"], client.hedges) == (3, True, 1)


async def double_hang_beside_answers(server: FakeOpenAIServer) -> tuple[Recorder, float]:
    """The warm-up, then one call whose request and duplicate both hang, while other calls
    to the endpoint are answered after the duplicate left; returns how long that call took."""
    emit = Recorder()
    policy = RetryPolicy(
        max_attempts=5, timeout=30.0, initial_backoff=0.01, jitter=0, hedge=QUICK_HEDGE
    )
    client = LLMClient(OpenAIBackend("fake-model", base_url=server.base_url), retry=policy,
                       concurrency=16, emit=emit)  # fmt: skip
    try:
        for i in range(5):
            await client.complete(request(f"warm-up {i}"))
        server.enqueue_faults("hang", "hang")  # the call's request, then its duplicate
        started = time.perf_counter()
        hung = asyncio.create_task(client.complete(request("the hung one")))
        while server.request_count < 7:  # its request and its duplicate have arrived
            await asyncio.sleep(0.01)
        await asyncio.gather(*(client.complete(request(f"beside {i}")) for i in range(3)))
        answer = await hung
        assert answer.text
        return emit, time.perf_counter() - started
    finally:
        await client.aclose()


def test_when_the_duplicate_hangs_too_the_attempt_ends_without_the_timeout() -> None:
    """Both past the hedge delay while the endpoint answers others: the attempt ends as a
    timeout would and the retry answers, long before the 30 s timeout."""
    with FakeOpenAIServer(latency=0.02) as server:
        emit, took = asyncio.run(double_hang_beside_answers(server))
    assert 0.6 <= took < 5.0  # two hedge delays of 0.3 s, then the retry
    (hung,) = [p for kind, p in emit.events if kind == "llm.call" and p["attempts"] > 1]
    assert (hung["attempts"], hung["hedged"]) == (3, True)


def test_a_slow_answer_while_the_endpoint_answers_nothing_else_is_waited_for() -> None:
    """One long answer on a busy local server (SmolLM2 writing a long reply): its duplicate is
    no faster, and nothing else is answered meanwhile, so neither is presumed hung: the
    attempt waits for the first answer within --timeout instead of giving up (with two
    attempts allowed, giving up at two hedge delays would fail the call)."""
    with FakeOpenAIServer(latency=0.02) as server:

        async def slow_after_warm_up() -> tuple[Recorder, float]:
            emit = Recorder()
            policy = RetryPolicy(max_attempts=2, timeout=30.0, jitter=0, hedge=QUICK_HEDGE)
            backend = OpenAIBackend("fake-model", base_url=server.base_url)
            client = LLMClient(backend, retry=policy, concurrency=1, emit=emit)
            try:
                for i in range(5):
                    await client.complete(request(f"warm-up {i}"))
                server.latency = 1.5  # five hedge delays of 0.3 s
                started = time.perf_counter()
                answer = await client.complete(request("a long answer"))
                assert answer.text
                return emit, time.perf_counter() - started
            finally:
                await client.aclose()

        emit, took = asyncio.run(slow_after_warm_up())
    assert 1.4 <= took < 5.0
    last = emit.events[-1][1]
    assert (last["attempts"], last["hedged"]) == (2, True)  # the request and one duplicate
