"""`LLMClient`: the one way agents reach a model.

Around any backend it adds, in this order: answers already in the run's log (resume), the
response cache, a concurrency cap, a requests-per-minute limit, a per-attempt timeout and one
retry layer (exponential backoff with jitter; a Retry-After from the server replaces it), with
one hedged duplicate for a request that has waited far past the endpoint's usual latency, sent
even when every slot is taken, out of a small budget beyond the limit
(`simulation/llm/hedging.py`); a pool of replicas (`endpoint_pool.py`) is asked for a replica
per attempt, inside all of these. Every finished call is an `llm.call` event; every call that
failed an `llm.error` incident, written at once. A call that ran out of attempts on transient errors
raises `LLMCallFailedError`, which the decision graph records as a failed decision; a permanent
error (refused connection, bad key, unknown model...) stops the run.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    wait_exponential_jitter,
)

from personasim.simulation.llm.cache import ResponseCache
from personasim.simulation.llm.chat import (
    Backend,
    ChatRequest,
    ChatResponse,
    LLMError,
    PromptTooLongError,
    TransientLLMError,
)
from personasim.simulation.llm.endpoint_errors import timeout_error
from personasim.simulation.llm.hedging import (
    BeyondLimit,
    HedgePolicy,
    LatencyWindow,
    Overrun,
    hung_message,
)
from personasim.simulation.llm.limiter import EndpointLimiter, LocalLimiter, endpoint_key
from personasim.simulation.llm.model_pool import ModelPool

__all__ = [
    "ContextExceededError",
    "EndpointDownError",
    "HedgePolicy",
    "LLMCallFailedError",
    "LLMClient",
    "ModelPool",
    "RetryPolicy",
]

Emit = Callable[..., None]


class LLMCallFailedError(LLMError):
    """A request that failed with a transient error on every attempt.

    The decision that sent it is recorded as failed (`decision.failed`, reason `call_failed`)
    and the run goes on; `--resume --retry-failed` asks such units again. `request_key` names
    the request, so a resumed run can replay the failure from its log.
    """

    def __init__(self, message: str, request_key: str | None = None) -> None:
        super().__init__(message)
        self.request_key = request_key


class ContextExceededError(LLMCallFailedError):
    """A request longer than the model's context (the server said so).

    Asking again will not help, yet it is one unit's failure, not the endpoint's: the decision
    graph records it as a failed decision with reason `context_exceeded` when the unit's own
    conversation (its earlier replies) made the prompt long, and stops the run only when the
    scenario's first prompt cannot fit (`agents/decision.py`)."""

    reason = "context_exceeded"


def lost_call(logged: dict[str, Any], key: str) -> LLMCallFailedError:
    """The failure a run's log records for a call, raised again when the run is re-derived."""
    kind = (
        ContextExceededError if logged.get("reason") == "context_exceeded" else LLMCallFailedError
    )
    return kind(logged["error"], key)


class EndpointDownError(LLMError):
    """A request ran out of attempts and the endpoint has answered nothing since the previous
    request that did, nor since this one was first sent (or never answered at all): it is down,
    not unlucky, so the run stops instead of turning every remaining decision into a failure.
    The run is left resumable."""


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. None of these values changes an answer, so none is in the cache key."""

    max_attempts: int = 5
    timeout: float = 60.0
    initial_backoff: float = 0.5
    max_backoff: float = 8.0
    jitter: float = 0.5
    """Waits between attempts: 0.5, 1, 2, 4 s (capped at 8) plus up to 0.5 s of jitter (the
    openai SDK's initial and largest delays); a Retry-After from the server replaces it. A
    round waits for its slowest unit, so a longer schedule costs every round a call that
    needed it (benchmarks/bench_faults.py)."""
    max_retry_after: float = 600.0
    hedge: HedgePolicy = field(default_factory=HedgePolicy)

    def __post_init__(self) -> None:
        if self.max_attempts < 1 or not (math.isfinite(self.timeout) and self.timeout > 0):
            raise ValueError("max_attempts must be at least 1 and timeout positive")


class LLMClient:
    """Shared by all agents of a run; safe to call from many concurrent tasks."""

    def __init__(
        self,
        backend: Backend,
        *,
        cache: ResponseCache | None = None,
        retry: RetryPolicy | None = None,
        concurrency: int = 16,
        requests_per_minute: float | None = None,
        emit: Emit | None = None,
        incident: Emit | None = None,
        replay: Callable[[str], dict[str, Any] | None] | None = None,
        limiter: EndpointLimiter | None = None,
        recorded: Callable[[str, str | None], dict[str, Any] | None] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.backend = backend
        self._identity = backend.identity()
        self.cache = cache
        self.retry = retry or RetryPolicy()
        self.concurrency = concurrency
        # Limits shared with other runs (a sweep's workers), else this run's own.
        limiter = limiter or LocalLimiter(concurrency, requests_per_minute)
        self._slots, self._limiter = limiter.slots, limiter.pacer
        self._router = backend.router(concurrency)  # a pool of replicas picks one per attempt
        self._emit = emit or (lambda *args, **kwargs: None)
        self._incident = incident or self._emit
        self._replay = replay or (lambda key: None)
        self._recorded = recorded or (lambda key, role: None)
        """Another run's logged answer to a request of this role (a rescore's source run);
        it raises where that run must answer and cannot, so no model is asked in its place."""
        self._backoff = wait_exponential_jitter(
            multiplier=self.retry.initial_backoff,
            max=self.retry.max_backoff,
            jitter=self.retry.jitter,
        )
        self.calls = 0
        self.cache_hits = 0
        self.hedges = 0
        self.hedges_beyond_limit = 0
        self._hedging = 0
        self._last_answer: float | None = None  # when the endpoint last answered a request
        self._last_give_up = -math.inf  # when a call last ran out of attempts
        # Only an endpoint is hedged: an in-process backend (scripted) answers or fails at once.
        hedge = self.retry.hedge
        on_endpoint = endpoint_key(self._identity) is not None
        self._latency = LatencyWindow(hedge) if hedge.enabled and on_endpoint else None
        self._beyond = BeyondLimit(hedge.budget(concurrency))
        self._hedge_cap = max(1, concurrency // 4)
        """Duplicates under way at once (one per request, within the call's attempts): when
        the whole endpoint slows down, duplicates add to its load."""

    async def complete(
        self,
        request: ChatRequest,
        *,
        agent_id: str | None = None,
        round: int | None = None,
        role: str | None = None,
    ) -> ChatResponse:
        """Answer `request`, from the log or cache when possible, else from the backend."""
        key = self.backend.cache_key(request)
        started = time.perf_counter()
        source, response = self._stored(key, role)
        call = _Call()
        if response is None:
            try:
                response = await self._call_with_retries(request, call)
            except LLMError as exc:
                failure = exc
                if isinstance(exc, PromptTooLongError):
                    failure = ContextExceededError(str(exc), key)
                    failure.attempts = exc.attempts
                if isinstance(failure, LLMCallFailedError):
                    failure.request_key = key
                self._record_failure(request, key, failure, agent_id, round)
                if failure is exc:
                    raise
                raise failure from exc
            source = "model"
            if self.cache is not None:
                self.cache.put(key, response)
        self._record_call(request, key, response, source, call, started, agent_id, round, role)
        return response

    def _stored(self, key: str, role: str | None) -> tuple[str, ChatResponse | None]:
        """An answer the run already has: from its own log (resume), else from the run it
        rescores (`source_run`), else from the cache.

        A call the log records as failed (its unit's `decision.failed`) fails again, so a
        resumed run re-derives that unit as it was; `--retry-failed` asks it anew instead.
        """
        if (logged := self._replay(key)) is not None:
            if "error" in logged:
                raise lost_call(logged, key)
            return "log", ChatResponse.model_validate(logged)
        if (earlier := self._recorded(key, role)) is not None:
            if "error" in earlier:
                raise lost_call(earlier, key)
            return "source_run", ChatResponse.model_validate(earlier)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            self.cache_hits += 1
            return "cache", hit
        return "model", None

    async def _call_with_retries(self, request: ChatRequest, call: _Call) -> ChatResponse:
        """The first attempt runs on its own: most calls succeed at once, and setting up the
        retry loop costs more than the rest of the client. A transient failure then enters the
        loop as its first attempt's outcome, so waits and attempt counts are the loop's.

        `max_attempts` bounds the requests sent, a hedged duplicate included."""
        try:
            return await self._attempt(request, call)
        except TransientLLMError as exc:
            first: TransientLLMError | None = exc
        except LLMError as exc:
            exc.attempts = call.requests
            raise
        retrying = AsyncRetrying(
            stop=lambda state: call.requests >= self.retry.max_attempts,
            wait=self._wait,
            retry=retry_if_exception_type(TransientLLMError),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    if first is not None:  # attempt 1, already made
                        failed, first = first, None
                        raise failed
                    response = await self._attempt(request, call)
        except TransientLLMError as exc:
            failure = self._gave_up(
                f"{self._where()}: gave up after {call.requests} attempt(s): {exc}", call
            )
            failure.attempts = call.requests
            raise failure from exc
        except LLMError as exc:
            exc.attempts = call.requests
            raise
        return response

    async def _attempt(self, request: ChatRequest, call: _Call) -> ChatResponse:
        """One attempt: one request, or, once it has waited past the hedge delay, that request
        and one duplicate, whichever comes back first (the other is cancelled)."""
        if self._latency is None:
            return await self._send(request, call)
        return await self._hedged(request, call, self._latency)

    async def _hedged(
        self, request: ChatRequest, call: _Call, latency: LatencyWindow
    ) -> ChatResponse:
        """The request, and one duplicate once it is past the hedge delay; the first outcome
        decides (the rules are in docs/events.md, "Hedged requests")."""
        loop = asyncio.get_running_loop()
        sent: list[float] = []  # when the first request left (after its slot and pacing)
        tasks = {loop.create_task(self._send(request, call, sent))}
        hedging = False
        try:
            while True:
                # The delay is looked up again each time: a request sent before the endpoint's
                # latency was known (the run's first burst) is hedged once it is.
                if (wait := latency.wait(sent, loop.time())) <= 0:
                    if call.requests >= self.retry.max_attempts:
                        return await tasks.pop()  # no request of the call's left to duplicate
                    if self._hedging < self._hedge_cap:
                        break
                    wait = latency.policy.floor  # as many duplicates as allowed are out
                done, _ = await asyncio.wait(tasks, timeout=wait)
                if done:
                    return done.pop().result()
            hedging = True
            self._hedging += 1
            (first,) = tasks
            dup_sent: list[float] = []
            duplicate = loop.create_task(self._send(request, call, dup_sent, duplicate=True))
            tasks.add(duplicate)
            while tasks:
                wait = latency.wait(dup_sent, loop.time())
                done, _ = await asyncio.wait(
                    tasks,
                    timeout=wait if wait > 0 else latency.policy.floor,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if not done:
                    if dup_sent and self._answered_since(dup_sent[0]):
                        raise TransientLLMError(hung_message(loop.time() - sent[0]))
                    # the duplicate waits for its slot, or nothing was answered since it left:
                    # slow (a long answer), not hung; each request's timeout still ends it
                    continue
                for task in done:
                    if task.exception() is None:
                        return task.result()
                if duplicate in done or not isinstance(first.exception(), TransientLLMError):
                    # An error from the duplicate is the endpoint's answer to this attempt:
                    # the first request, past the hedge delay, is presumed hung, and the
                    # retry loop asks again rather than wait out its timeout.
                    raise next(iter(done)).exception()  # type: ignore[misc]
                tasks.discard(first)  # failed (its timeout): the duplicate is under way
            raise AssertionError("unreachable: the duplicate is always awaited")
        finally:
            if hedging:
                self._hedging -= 1
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)

    def _answered_since(self, moment: float) -> bool:
        """Whether the endpoint answered a request after `moment` (the loop's clock): then a
        request and its duplicate both unanswered are hung, not merely slow."""
        return self._last_answer is not None and self._last_answer > moment

    def _gave_up(self, message: str, call: _Call) -> LLMError:
        """A failed decision if the endpoint answered some request since the last call that
        gave up, or since this one was first sent (it is alive, this call was unlucky); else
        the endpoint is down. A dead endpoint thus costs at most the calls in flight when it
        died, not one failed decision per remaining unit."""
        since = min(call.first_sent, self._last_give_up)
        self._last_give_up = time.monotonic()
        if self._last_answer is not None and self._last_answer > since:
            return LLMCallFailedError(message)
        return EndpointDownError(message)

    async def _send(
        self,
        request: ChatRequest,
        call: _Call,
        sent: list[float] | None = None,
        duplicate: bool = False,
    ) -> ChatResponse:
        """One HTTP request, within a concurrency slot and the request pacing (and, on a pool,
        the slot and pacing of the replica it goes to). A `duplicate` (hedge) whose slots are
        all taken goes beyond them when the budget has room (`hedging.py`), else it waits for
        one; it counts as hedged only once it is sent."""
        if not duplicate:
            async with self._slots:
                return await self._paced(request, call, sent, None)
        overrun = Overrun(self._beyond)
        try:
            if overrun.skips(self._slots):
                return await self._paced(request, call, sent, overrun)
            async with self._slots:
                return await self._paced(request, call, sent, overrun)
        finally:
            overrun.close()

    async def _paced(
        self, request: ChatRequest, call: _Call, sent: list[float] | None, overrun: Overrun | None
    ) -> ChatResponse:
        """The request once it has its slot: after its pacing, to the backend or the replica."""
        if self._limiter is not None:
            await self._limiter.acquire()
        if self._router is None:
            return await self._exchange(self.backend, request, call, sent, overrun)
        async with self._router(request, overrun) as replica:
            return await self._exchange(replica, request, call, sent, overrun)

    async def _exchange(
        self,
        backend: Backend,
        request: ChatRequest,
        call: _Call,
        sent: list[float] | None,
        overrun: Overrun | None,
    ) -> ChatResponse:
        """The request itself, under the per-attempt timeout, once it may be sent (`overrun`:
        a duplicate's, which says whether it went beyond the limit)."""
        self.calls += 1
        call.requests += 1
        if overrun is not None:
            call.hedged = True
            self.hedges += 1
            if overrun.taken:
                call.beyond_limit = True
                self.hedges_beyond_limit += 1
        if call.requests == 1:
            call.first_sent = time.monotonic()
        started = time.perf_counter()
        if sent is not None:
            sent.append(asyncio.get_running_loop().time())
        try:
            async with asyncio.timeout(self.retry.timeout):
                response = await backend.complete(request, self.retry.timeout)
        except TimeoutError as exc:
            raise timeout_error(self.retry.timeout) from exc
        self._last_answer = time.monotonic()
        if self._latency is not None:
            self._latency.observe(time.perf_counter() - started)
        return response

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, TransientLLMError) and exc.retry_after is not None:
            return min(exc.retry_after, self.retry.max_retry_after)
        return self._backoff(state)

    def _where(self) -> str:
        identity = self.backend.identity()
        keys = ("base_url", "pool", "model")
        where = " ".join(str(identity[k]) for k in keys if k in identity)
        return where or str(identity.get("backend", "model"))

    def _record_call(
        self,
        request: ChatRequest,
        key: str,
        response: ChatResponse,
        source: str,
        call: _Call,
        started: float,
        agent_id: str | None,
        round: int | None,
        role: str | None,
    ) -> None:
        payload: dict[str, Any] = {
            "request_key": key,
            "task": request.task,
            "role": role,
            "backend": self._identity,
            "sampling": request.sampling(),
            "messages": request.plain_messages(),
            "response": response.model_dump(exclude_none=True),
            "cached": source != "model",
            "source": source,
            "attempts": call.requests,
            "hedged": call.hedged,
            "beyond_limit": call.beyond_limit,
            "latency_s": elapsed_since(started),
        }
        if request.response_format is not None:  # text requests log as they always have
            payload["response_format"] = request.response_format
        self._emit("llm.call", payload, agent_id=agent_id, round=round)

    def _record_failure(
        self,
        request: ChatRequest,
        key: str,
        exc: LLMError,
        agent_id: str | None,
        round: int | None,
    ) -> None:
        self._incident(
            "llm.error",
            {
                "request_key": key,
                "task": request.task,
                "attempts": exc.attempts,
                "error": str(exc),
                "error_class": type(exc).__name__,
            },
            agent_id=agent_id,
            round=round,
        )

    async def aclose(self) -> None:
        await self.backend.aclose()


class _Call:
    """One logical request: the HTTP requests sent for it, whether one was a duplicate, and
    whether a duplicate went beyond the limit."""

    __slots__ = ("beyond_limit", "first_sent", "hedged", "requests")

    def __init__(self) -> None:
        self.requests = 0
        self.hedged = False
        self.beyond_limit = False
        self.first_sent = math.inf


def elapsed_since(started: float) -> float:
    return float(f"{time.perf_counter() - started:.6f}")
