"""LLMClient around in-process fake backends: cache, retries, timeouts, concurrency, keys.

No HTTP here; the OpenAI-compatible backend is tested against the fake server elsewhere.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path
from typing import Any

import pytest

from personasim.simulation import (
    Backend,
    ChatRequest,
    ChatResponse,
    EndpointDownError,
    LLMCallFailedError,
    LLMClient,
    Message,
    PermanentLLMError,
    ResponseCache,
    RetryPolicy,
    ScriptedBackend,
    TransientLLMError,
)

FAST = RetryPolicy(max_attempts=3, initial_backoff=0.001, max_backoff=0.002, jitter=0)
_instances = itertools.count()


def request(text: str = "Hello?", **fields: Any) -> ChatRequest:
    return ChatRequest(messages=(Message(role="user", content=text),), **fields)


class Recorder:
    """Collects what the client emits, in the EventLog.emit signature."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any], dict[str, Any]]] = []

    def __call__(self, kind: str, payload: dict[str, Any], **where: Any) -> None:
        self.events.append((kind, payload, where))

    def kinds(self) -> list[str]:
        return [kind for kind, _, _ in self.events]


class FakeBackend(Backend):
    """Runs a list of behaviours, one per call (the last one repeats)."""

    def __init__(self, *behaviours: Any) -> None:
        self.behaviours = list(behaviours) or ["ok"]
        self.calls = 0
        self.instance = next(_instances)

    def identity(self) -> dict[str, Any]:
        return {"backend": "fake", "model": "fake-model", "instance": self.instance}

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        behaviour = self.behaviours[min(self.calls, len(self.behaviours) - 1)]
        self.calls += 1
        if isinstance(behaviour, BaseException):
            raise behaviour
        if behaviour == "hang":
            await asyncio.sleep(3600)
        text = behaviour if isinstance(behaviour, str) and behaviour != "hang" else "late"
        return ChatResponse(text=f"{text}#{self.calls}", model="fake-model")


# --- cache ----------------------------------------------------------------------------------


def test_second_identical_request_is_a_cache_hit(tmp_path: Path) -> None:
    backend, emit = FakeBackend("answer"), Recorder()
    cache = ResponseCache(tmp_path / "cache")
    client = LLMClient(backend, cache=cache, emit=emit)

    async def twice() -> tuple[ChatResponse, ChatResponse]:
        first = await client.complete(request(), agent_id="p1", round=2)
        second = await client.complete(request(), agent_id="p1", round=2)
        return first, second

    try:
        first, second = asyncio.run(twice())
    finally:
        cache.close()
    assert first.text == second.text == "answer#1"
    assert backend.calls == 1 and client.calls == 1 and client.cache_hits == 1

    (_, live, where), (_, hit, _) = emit.events
    assert emit.kinds() == ["llm.call", "llm.call"]
    assert where == {"agent_id": "p1", "round": 2}
    assert (live["cached"], live["source"], live["attempts"]) == (False, "model", 1)
    assert (hit["cached"], hit["source"], hit["attempts"]) == (True, "cache", 0)
    assert hit["request_key"] == live["request_key"] == backend.cache_key(request())
    assert hit["response"] == live["response"] == first.model_dump(exclude_none=True)
    assert live["messages"] == [{"role": "user", "content": "Hello?"}]


def test_cache_is_shared_across_clients(tmp_path: Path) -> None:
    backend = FakeBackend("answer")
    cache = ResponseCache(tmp_path / "cache")
    try:
        asyncio.run(LLMClient(backend, cache=cache).complete(request()))
        again = LLMClient(backend, cache=cache)
        assert asyncio.run(again.complete(request())).text == "answer#1"
    finally:
        cache.close()
    assert backend.calls == 1 and again.calls == 0 and again.cache_hits == 1


def test_other_sample_index_is_another_key_and_another_call(tmp_path: Path) -> None:
    backend = FakeBackend("answer")
    assert backend.cache_key(request(sample_index=0)) != backend.cache_key(request(sample_index=1))
    cache = ResponseCache(tmp_path / "cache")
    client = LLMClient(backend, cache=cache)

    async def both() -> list[str]:
        return [(await client.complete(request(sample_index=i))).text for i in (0, 1, 0)]

    try:
        assert asyncio.run(both()) == ["answer#1", "answer#2", "answer#1"]
    finally:
        cache.close()
    assert backend.calls == 2 and client.cache_hits == 1


def test_without_cache_every_request_reaches_the_backend() -> None:
    backend = FakeBackend("a")
    client = LLMClient(backend, cache=None)

    async def twice() -> None:
        await client.complete(request())
        await client.complete(request())

    asyncio.run(twice())
    assert backend.calls == client.calls == 2 and client.cache_hits == 0


# --- retries --------------------------------------------------------------------------------


def test_transient_errors_are_retried_until_success() -> None:
    backend, emit = (
        FakeBackend(TransientLLMError("503"), TransientLLMError("503"), "ok"),
        Recorder(),
    )
    client = LLMClient(backend, cache=None, retry=FAST, emit=emit)
    assert asyncio.run(client.complete(request())).text == "ok#3"
    assert backend.calls == client.calls == 3
    ((kind, payload, _),) = emit.events
    assert kind == "llm.call" and payload["attempts"] == 3


def test_transient_errors_give_up_after_max_attempts() -> None:
    backend, emit = FakeBackend(TransientLLMError("server overloaded")), Recorder()
    client = LLMClient(backend, cache=None, retry=FAST, emit=emit)
    with pytest.raises(EndpointDownError, match="after 3 attempt") as info:
        asyncio.run(client.complete(request(), agent_id="p9", round=1))
    assert info.value.attempts == 3
    assert isinstance(info.value.__cause__, TransientLLMError)
    assert backend.calls == 3
    ((kind, payload, where),) = emit.events
    assert kind == "llm.error"
    assert payload["attempts"] == 3
    assert payload["request_key"] == backend.cache_key(request())
    assert "server overloaded" in payload["error"]
    assert where == {"agent_id": "p9", "round": 1}


def test_giving_up_on_a_live_endpoint_is_a_lost_call_and_on_a_dead_one_stops() -> None:
    """After an answer, a call that runs out of attempts is unlucky (`LLMCallFailedError`, a
    failed decision); the next one, with nothing answered in between, finds the endpoint down."""
    backend = FakeBackend("ok", TransientLLMError("503"))
    client = LLMClient(backend, cache=None, retry=FAST)

    async def three() -> tuple[BaseException, BaseException]:
        await client.complete(request("first"))
        with pytest.raises(LLMCallFailedError, match="after 3 attempt") as lost:
            await client.complete(request("second"))
        with pytest.raises(EndpointDownError, match="after 3 attempt") as down:
            await client.complete(request("third"))
        return lost.value, down.value

    lost, down = asyncio.run(three())
    assert lost.request_key == backend.cache_key(request("second"))
    assert (lost.attempts, down.attempts, backend.calls) == (3, 3, 7)


def test_one_allowed_attempt_gives_up_after_it() -> None:
    """The first attempt runs outside the retry loop; with one attempt allowed, its transient
    failure must still end as the loop's 'gave up', and a later permanent one keep its count."""
    backend = FakeBackend(TransientLLMError("503"))
    client = LLMClient(backend, cache=None, retry=RetryPolicy(max_attempts=1))
    with pytest.raises(EndpointDownError, match="after 1 attempt") as info:
        asyncio.run(client.complete(request()))
    assert (info.value.attempts, backend.calls) == (1, 1)
    backend = FakeBackend(TransientLLMError("503"), PermanentLLMError("bad request"))
    client = LLMClient(backend, cache=None, retry=FAST)
    with pytest.raises(PermanentLLMError, match="bad request") as permanent:
        asyncio.run(client.complete(request()))
    assert (permanent.value.attempts, backend.calls) == (2, 2)


def test_permanent_errors_are_not_retried() -> None:
    backend, emit = FakeBackend(PermanentLLMError("bad key")), Recorder()
    client = LLMClient(backend, cache=None, retry=FAST, emit=emit)
    with pytest.raises(PermanentLLMError, match="bad key") as info:
        asyncio.run(client.complete(request()))
    assert info.value.attempts == 1
    assert backend.calls == 1
    ((kind, payload, _),) = emit.events
    assert (kind, payload["attempts"]) == ("llm.error", 1)


def test_failures_go_to_the_incident_writer_when_given() -> None:
    emit, incident = Recorder(), Recorder()
    backend = FakeBackend(PermanentLLMError("unknown model"))
    client = LLMClient(backend, cache=None, retry=FAST, emit=emit, incident=incident)
    with pytest.raises(PermanentLLMError):
        asyncio.run(client.complete(request(), agent_id="p1", round=4))
    assert emit.events == []
    ((kind, payload, where),) = incident.events
    assert (kind, payload["attempts"], where) == ("llm.error", 1, {"agent_id": "p1", "round": 4})


def test_retry_after_is_honoured() -> None:
    backend = FakeBackend(TransientLLMError("429", retry_after=0.2), "ok")
    client = LLMClient(backend, cache=None, retry=FAST)
    started = time.perf_counter()
    assert asyncio.run(client.complete(request())).text == "ok#2"
    elapsed = time.perf_counter() - started
    assert 0.2 <= elapsed < 1.0
    assert backend.calls == 2


def test_retry_after_is_capped_by_the_policy() -> None:
    policy = RetryPolicy(
        max_attempts=2, initial_backoff=0.001, max_backoff=0.002, jitter=0, max_retry_after=0.01
    )
    backend = FakeBackend(TransientLLMError("429", retry_after=30.0), "ok")
    started = time.perf_counter()
    assert asyncio.run(LLMClient(backend, cache=None, retry=policy).complete(request())).text
    assert time.perf_counter() - started < 1.0


def test_timeout_cuts_a_hanging_attempt_and_the_retry_succeeds() -> None:
    policy = RetryPolicy(max_attempts=2, timeout=0.1, initial_backoff=0.001, max_backoff=0.002)
    backend, emit = FakeBackend("hang", "ok"), Recorder()
    client = LLMClient(backend, cache=None, retry=policy, emit=emit)
    started = time.perf_counter()
    assert asyncio.run(client.complete(request())).text == "ok#2"
    elapsed = time.perf_counter() - started
    assert 0.1 <= elapsed < 1.0
    assert emit.events[0][1]["attempts"] == 2


def test_timeout_on_every_attempt_fails_with_the_timeout_named() -> None:
    policy = RetryPolicy(max_attempts=2, timeout=0.05, initial_backoff=0.001, max_backoff=0.002)
    backend = FakeBackend("hang")
    with pytest.raises(EndpointDownError, match=r"no answer within 0\.05s") as info:
        asyncio.run(LLMClient(backend, cache=None, retry=policy).complete(request()))
    assert info.value.attempts == 2 and backend.calls == 2


@pytest.mark.parametrize(
    "settings",
    [{"max_attempts": 0}, {"timeout": 0}, {"timeout": -1.0}, {"timeout": float("nan")}],
)
def test_retry_policy_validation(settings: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**settings)


# --- concurrency ----------------------------------------------------------------------------


class CountingBackend(Backend):
    def __init__(self) -> None:
        self.in_flight = 0
        self.peak = 0
        self.calls = 0
        self.instance = next(_instances)

    def identity(self) -> dict[str, Any]:
        return {"backend": "counting", "instance": self.instance}

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        self.calls += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(0.01)
        finally:
            self.in_flight -= 1
        return ChatResponse(text=request.messages[0].content)


def test_concurrency_cap() -> None:
    backend = CountingBackend()
    client = LLMClient(backend, cache=None, concurrency=3)

    async def many() -> list[str]:
        replies = await asyncio.gather(*(client.complete(request(f"q{i}")) for i in range(12)))
        return [r.text for r in replies]

    assert asyncio.run(many()) == [f"q{i}" for i in range(12)]
    assert backend.calls == 12
    assert backend.peak == 3
    assert backend.in_flight == 0


def test_concurrency_must_be_positive() -> None:
    with pytest.raises(ValueError):
        LLMClient(FakeBackend(), concurrency=0)


# --- cache keys -----------------------------------------------------------------------------


def test_cache_key_ignores_task_and_hints_for_real_backends() -> None:
    backend = FakeBackend()
    base = backend.cache_key(request())
    assert backend.cache_key(request(hints={"traits": {"Age": "65+"}})) == base
    assert backend.cache_key(request(task="trust.trustor")) == base
    assert backend.cache_key(request(temperature=0.0)) != base
    assert backend.cache_key(request("Hi?")) != base
    assert backend.cache_key(request(response_format={"type": "json_object"})) != base
    assert FakeBackend().cache_key(request()) != base  # identity is part of the key


def test_cache_key_ignores_retry_settings() -> None:
    backend = FakeBackend()
    assert LLMClient(backend, retry=FAST).backend.cache_key(request()) == backend.cache_key(
        request()
    )


def test_scripted_cache_key_includes_task_and_hints() -> None:
    backend = ScriptedBackend(seed=0)
    base = backend.cache_key(request(task="t", hints={"endowment": 10}))
    assert backend.cache_key(request(task="t", hints={"endowment": 10})) == base
    assert backend.cache_key(request(task="u", hints={"endowment": 10})) != base
    assert backend.cache_key(request(task="t", hints={"endowment": 11})) != base
    assert ScriptedBackend(seed=1).cache_key(request(task="t", hints={"endowment": 10})) != base


def test_scripted_backend_refuses_unregistered_tasks() -> None:
    backend = ScriptedBackend()
    with pytest.raises(PermanentLLMError, match=r"'no\.such\.task'"):
        asyncio.run(backend.complete(request(task="no.such.task"), 1.0))

    emit = Recorder()
    client = LLMClient(backend, cache=None, retry=FAST, emit=emit)
    with pytest.raises(PermanentLLMError, match=r"no\.such\.task") as info:
        asyncio.run(client.complete(request(task="no.such.task")))
    assert info.value.attempts == 1 and client.calls == 1
    assert emit.kinds() == ["llm.error"]


def test_requests_per_minute_paces_requests() -> None:
    """600 requests/min is one every 0.1 s: five requests span at least 0.4 s."""
    started: list[float] = []

    class Timed(CountingBackend):
        async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
            started.append(time.perf_counter())
            return await super().complete(request, timeout)

    async def main() -> None:
        client = LLMClient(Timed(), requests_per_minute=600, concurrency=5)
        await asyncio.gather(*(client.complete(request(f"q{i}")) for i in range(5)))

    asyncio.run(main())
    assert len(started) == 5
    assert max(started) - min(started) >= 0.39


def test_scripted_backend_never_invents_logprobs() -> None:
    """A rule that gives no logprobs answers like an endpoint without them (None)."""
    from personasim.simulation import scripted_behaviour

    @scripted_behaviour("test.no-logprobs")
    def plain(request: ChatRequest, rng: Any) -> str:
        return "an answer"

    asked = ChatRequest(
        messages=(Message(role="user", content="q"),),
        logprobs=True,
        top_logprobs=5,
        task="test.no-logprobs",
    )
    response = asyncio.run(ScriptedBackend().complete(asked, timeout=1))
    assert response.text == "an answer" and response.logprobs is None
