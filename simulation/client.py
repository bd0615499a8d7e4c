"""`LLMClient`: the one way agents reach a model.

Around any backend it adds, in this order: answers already in the run's log (resume), the
response cache, a concurrency cap, a requests-per-minute limit, a per-attempt timeout and one
retry layer (exponential backoff with jitter that honours Retry-After). Every finished call is
an `llm.call` event; every call that failed an `llm.error` incident, written at once because
the unit of work it belonged to is abandoned.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiolimiter import AsyncLimiter
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from .cache import ResponseCache
from .endpoint_errors import timeout_error
from .limiter import EndpointLimiter
from .llm import Backend, ChatRequest, ChatResponse, LLMError, TransientLLMError

__all__ = ["LLMCallFailedError", "LLMClient", "ModelPool", "RetryPolicy"]

Emit = Callable[..., None]


class LLMCallFailedError(LLMError):
    """A request that failed on every attempt; the run stops and can be resumed later."""


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. None of these values changes an answer, so none is in the cache key."""

    max_attempts: int = 5
    timeout: float = 60.0
    initial_backoff: float = 1.0
    max_backoff: float = 30.0
    jitter: float = 1.0
    max_retry_after: float = 600.0

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
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.backend = backend
        self._identity = backend.identity()
        self.cache = cache
        self.retry = retry or RetryPolicy()
        self.concurrency = concurrency
        self._slots = asyncio.Semaphore(concurrency)
        # Evenly paced (a bucket of one), so a minute's quota is not spent in a first burst.
        self._limiter = AsyncLimiter(1, 60 / requests_per_minute) if requests_per_minute else None
        if limiter is not None:  # limits shared with other runs (a sweep's workers)
            self._slots, self._limiter = limiter.slots, limiter.pacer
        self._emit = emit or (lambda *args, **kwargs: None)
        self._incident = incident or self._emit
        self._replay = replay or (lambda key: None)
        self._backoff = wait_exponential_jitter(
            multiplier=self.retry.initial_backoff,
            max=self.retry.max_backoff,
            jitter=self.retry.jitter,
        )
        self.calls = 0
        self.cache_hits = 0

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
        source, response = self._stored(key)
        attempts = 0
        if response is None:
            try:
                response, attempts = await self._call_with_retries(request)
            except LLMError as exc:
                self._record_failure(request, key, exc, agent_id, round)
                raise
            source = "model"
            if self.cache is not None:
                self.cache.put(key, response)
        self._record_call(request, key, response, source, attempts, started, agent_id, round, role)
        return response

    def _stored(self, key: str) -> tuple[str, ChatResponse | None]:
        """An answer the run already has: from its own log (resume), else from the cache."""
        if (logged := self._replay(key)) is not None:
            return "log", ChatResponse.model_validate(logged)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            self.cache_hits += 1
            return "cache", hit
        return "model", None

    async def _call_with_retries(self, request: ChatRequest) -> tuple[ChatResponse, int]:
        """The first attempt runs on its own: most calls succeed at once, and setting up the
        retry loop costs more than the rest of the client. A transient failure then enters the
        loop as its first attempt's outcome, so waits and attempt counts are the loop's."""
        attempts = 1
        try:
            return await self._attempt(request), attempts
        except TransientLLMError as exc:
            first: TransientLLMError | None = exc
        except LLMError as exc:
            exc.attempts = attempts
            raise
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.retry.max_attempts),
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
                    attempts += 1
                    response = await self._attempt(request)
        except TransientLLMError as exc:
            failure = LLMCallFailedError(
                f"{self._where()}: gave up after {attempts} attempt(s): {exc}"
            )
            failure.attempts = attempts
            raise failure from exc
        except LLMError as exc:
            exc.attempts = attempts
            raise
        return response, attempts

    async def _attempt(self, request: ChatRequest) -> ChatResponse:
        async with self._slots:
            if self._limiter is not None:
                await self._limiter.acquire()
            self.calls += 1
            try:
                async with asyncio.timeout(self.retry.timeout):
                    return await self.backend.complete(request, self.retry.timeout)
            except TimeoutError as exc:
                raise timeout_error(self.retry.timeout) from exc

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, TransientLLMError) and exc.retry_after is not None:
            return min(exc.retry_after, self.retry.max_retry_after)
        return self._backoff(state)

    def _where(self) -> str:
        identity = self.backend.identity()
        return " ".join(str(identity[k]) for k in ("base_url", "model") if k in identity) or str(
            identity.get("backend", "model")
        )

    def _record_call(
        self,
        request: ChatRequest,
        key: str,
        response: ChatResponse,
        source: str,
        attempts: int,
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
            "attempts": attempts,
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
            {"request_key": key, "task": request.task, "attempts": exc.attempts, "error": str(exc)},
            agent_id=agent_id,
            round=round,
        )

    async def aclose(self) -> None:
        await self.backend.aclose()


def elapsed_since(started: float) -> float:
    return float(f"{time.perf_counter() - started:.6f}")


class ModelPool:
    """The run's main model and any other model its roles are bound to (judges, evaluators).

    Other models are built on first use from their spec (`openai:NAME`...) and share the run's
    cache, limits and log; their answers have their own cache entries because the backend's
    identity is part of every key. `main_spec` is the spec the main model was built from.
    """

    def __init__(
        self,
        main: LLMClient,
        build: Callable[[str], LLMClient] | None = None,
        main_spec: str | None = None,
    ) -> None:
        self.main = main
        self.main_spec = main_spec
        self._build = build
        self._others: dict[str, LLMClient] = {}

    def get(self, spec: str | None = None) -> LLMClient:
        if spec is None or spec == self.main_spec:
            return self.main
        if spec not in self._others:
            if self._build is None:
                raise LLMError(f"this run cannot reach other models (asked for {spec!r})")
            self._others[spec] = self._build(spec)
        return self._others[spec]

    async def aclose(self) -> None:
        for client in (self.main, *self._others.values()):
            await client.aclose()
