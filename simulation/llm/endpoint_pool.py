"""One model on several replicas: routing, per-replica limits, cooldown and failover.

`EndpointPool` is a `Backend` whose identity is the pool's name and the model's (so request
keys, the cache, resume's model check and the Ray limiter key are the same whichever replica
answers). It does not send anything itself: `LLMClient` asks it for a `Router` and, for every
attempt, enters the router's context, which

- picks the replica with the fewest outstanding requests relative to its limit and weight
  (`(outstanding + 1) / (limit × weight)`, ties taken in turn), avoiding a replica that is
  already serving the same request (a hedged duplicate goes to another replica when one can
  take it) or that has just failed it;
- waits for that replica's own slot and pacing (its `EndpointLimiter`: local, or a Ray actor
  shared by a sweep's workers); a hedged duplicate that finds the slots full goes beyond them
  from the client's budget (simulation/llm/hedging.py);
- yields the replica's backend, and reads how the attempt ended: `max_failures` 5xx answers,
  timeouts or dropped connections in a row, or one refused connection, put the replica on
  cooldown for `cooldown_s`; then one request at a time probes it, and an answer brings it back.
  The failed attempt comes out as a `TransientLLMError` with `retry_after=0`, so the client's
  one retry layer re-sends it at once, to another replica. A refused connection stops the run
  (a `PermanentLLMError`, as with one URL) only when every replica refused.
- a 429 (the replica is busy: its Retry-After is for it, not for the pool), a 5xx, a timeout
  or a dropped connection is likewise re-sent at once, to another replica that may take the
  request; the replica that failed it is passed over for that request until its Retry-After
  (or `cooldown_s`) is over. Only when no other replica may take it does the client's backoff,
  or the server's Retry-After, apply.

A replica's limit is its own `concurrency`, else its part of the run's; in a worker process of
`--workers N`, the worker's part of that (`take_share`, simulation/llm/apportion.py), which may
be 0: the worker then never sends there.

Errors that would repeat on every replica (a rejected parameter, key or model, a prompt over the
context) are left as they are and stop the run. Each replica's requests, failures, cooldowns and
answer latencies are counted for the manifest (`report`).
"""

from __future__ import annotations

import asyncio
import math
import time
from array import array
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, nullcontext
from typing import Any

import aiohttp

from personasim.simulation.llm.apportion import endpoint_limits, rate_share, worker_shares
from personasim.simulation.llm.chat import (
    Backend,
    ChatRequest,
    ChatResponse,
    LLMError,
    PermanentLLMError,
    Router,
    TransientLLMError,
)
from personasim.simulation.llm.direct_post import StatusFailure
from personasim.simulation.llm.endpoint_errors import error_causes
from personasim.simulation.llm.endpoints_file import EndpointConfig, PoolConfig
from personasim.simulation.llm.hedging import Overrun
from personasim.simulation.llm.limiter import EndpointLimiter, LimiterFactory, LocalLimiter

__all__ = ["HEALTH_FAILURES", "EndpointPool", "failure_kind", "nearest_rank"]

HEALTH_FAILURES = frozenset({"server_error", "timeout", "connection"})
"""Failures that say a replica is unwell (a 429 says it is busy; a 4xx, that the request is)."""
_IDLE_WAIT_S = 0.1
"""How often a request looks again for a replica when every one is cooling down or probed."""
_RESEND_ELSEWHERE = frozenset({"rate_limited", *HEALTH_FAILURES})
"""Failures after which the request goes at once to another replica, when one may take it."""
_PASSED_OVER_MAX = 4096
"""Requests with a replica to pass over that are remembered before the expired are dropped."""


def failure_kind(exc: BaseException) -> str:
    """What an attempt's error says about the replica: `rate_limited` (429), `server_error`
    (5xx), `rejected` (another status), `timeout`, `connection` (refused, reset, unknown host,
    TLS) or `other` (a reply that could not be read)."""
    causes = list(error_causes(exc))
    for cause in causes:
        if isinstance(cause, StatusFailure):
            if cause.status == 429:
                return "rate_limited"
            return "server_error" if cause.status >= 500 else "rejected"
    if any(isinstance(cause, TimeoutError) for cause in causes):
        return "timeout"
    if any(isinstance(cause, OSError | aiohttp.ClientError) for cause in causes):
        return "connection"
    return "other"


def nearest_rank(ordered: Sequence[float], q: float) -> float:
    """The nearest-rank `q` quantile of sorted values (numpy's `inverted_cdf`)."""
    return ordered[max(math.ceil(q * len(ordered)), 1) - 1]


class _Replica:
    """One endpoint of the pool: its backend, limits, health and counts."""

    def __init__(self, index: int, config: EndpointConfig, backend: Backend, url: str) -> None:
        self.index, self.config, self.backend, self.url = index, config, backend, url
        self.limit = config.concurrency or 1
        self.limiter: EndpointLimiter = LocalLimiter(self.limit, config.rpm)
        self.outstanding = 0
        self.streak = 0  # health failures in a row
        self.cooling_until: float | None = None  # set aside until then; then probed
        self.probing = False
        self.refused = False  # its last failure was a refused connection
        self.counts: Counter[str] = Counter()
        self.latencies = array("d")

    def may_take(self, now: float) -> bool:
        """Has a slot in this process, and is healthy; or its cooldown is over and no probe is
        out."""
        if self.limit == 0:
            return False
        if self.cooling_until is None:
            return True
        return now >= self.cooling_until and not self.probing and self.outstanding == 0

    def report(self, total: int) -> dict[str, Any]:
        ordered = sorted(self.latencies)
        requests = self.counts["requests"]
        failures = {k: v for k, v in self.counts.items() if k in _FAILURE_KINDS}
        row: dict[str, Any] = {
            "url": self.url,
            "key_env": self.config.key_env,
            "concurrency": self.limit,
            "rpm": self.config.rpm,
            "weight": self.config.weight,
            "requests": requests,
            "share": requests / total if total else None,
            "answered": self.counts["answered"],
            "failed": sum(failures.values()),
            "failures": dict(sorted(failures.items())),
            "cancelled": self.counts["cancelled"],
            "beyond_limit": self.counts["beyond_limit"],
            "cooldowns": self.counts["cooldowns"],
            "latency_s": {
                f"p{round(100 * q)}": round(nearest_rank(ordered, q), 6) for q in (0.5, 0.9, 0.99)
            }
            if ordered
            else None,
        }
        if not total:
            row["share_note"] = "the pool sent no request"
        if not ordered:
            row["latency_note"] = "no answer from this endpoint"
        return row


_FAILURE_KINDS = ("rate_limited", "server_error", "rejected", "timeout", "connection", "other")


class EndpointPool(Backend):
    """A model served by the replicas of a pool (see the module's doc)."""

    name = "pool"

    def __init__(
        self,
        pool: str,
        model: str,
        config: PoolConfig,
        backends: Sequence[Backend],
        *,
        kind: str = "openai",
        urls: Sequence[str] | None = None,
    ) -> None:
        if len(backends) != len(config.endpoints):
            raise ValueError("one backend per endpoint of the pool")
        self.pool, self.model, self.config, self.kind = pool, model, config, kind
        urls = list(urls or (e.url for e in config.endpoints))
        self.replicas = [
            _Replica(i, endpoint, backend, url)
            for i, (endpoint, backend, url) in enumerate(
                zip(config.endpoints, backends, urls, strict=True)
            )
        ]
        self._make: LimiterFactory | None = None
        self._share: tuple[int, int, int] | None = None
        self._bound = False
        self._turn = 0
        self._serving: dict[int, list[int]] = {}  # id(request) → replicas sending it now
        self._passed_over: dict[int, dict[int, float]] = {}  # id(request) → {replica: until}

    def identity(self) -> dict[str, Any]:
        return {"backend": self.kind, "pool": self.pool, "model": self.model}

    def share_limits(self, make: LimiterFactory) -> None:
        """Hold each replica's limits in `make(key, concurrency, rpm)` (a sweep's Ray actors)
        instead of this process; called before the client binds the pool."""
        self._make = make

    def take_share(self, index: int, count: int, concurrency: int) -> None:
        """This process is worker `index` of `count` of a run with `concurrency` requests in
        flight: each replica keeps this worker's part of its run-wide limit (the parts of all
        workers add up to it); called before the client binds the pool."""
        self._share = (index, count, concurrency)

    def limits(self, concurrency: int) -> tuple[list[int], list[int]]:
        """Each replica's run-wide limit (its own `concurrency`, else its part of the run's),
        and its limit in this process (in a worker, the worker's part of the run-wide one)."""
        own = [replica.config.concurrency for replica in self.replicas]
        if self._share is None:
            run_wide = endpoint_limits(own, concurrency)
            return run_wide, run_wide
        index, count, concurrency = self._share
        run_wide = endpoint_limits(own, concurrency)
        return run_wide, worker_shares(run_wide, count)[index]

    def router(self, concurrency: int) -> Router:
        """Each replica with its limit in this process (`limits`) and its part of its rate."""
        run_wide, limits = self.limits(concurrency)
        if not any(limits):
            raise ValueError(f"pool {self.pool!r} has no request in flight for this process")
        for replica, limit, whole in zip(self.replicas, limits, run_wide, strict=True):
            replica.limit = limit
            rpm = rate_share(replica.config.rpm, limit, whole)
            if self._make is None:
                replica.limiter = LocalLimiter(max(limit, 1), rpm)
            else:
                key = f"{replica.url} {self.model}"
                replica.limiter = self._make(key, max(limit, 1), rpm)
        self._bound = True
        return self.route

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        """One attempt on one replica (`LLMClient` uses `router` instead)."""
        if not self._bound:
            self.router(16)
        async with self.route(request) as backend:
            return await backend.complete(request, timeout)

    @asynccontextmanager
    async def route(
        self, request: ChatRequest, overrun: Overrun | None = None
    ) -> AsyncIterator[Backend]:
        """One attempt of `request` on the replica picked for it (see the module's doc);
        `overrun`: a hedged duplicate's claim to go beyond a full replica's slots."""
        key = id(request)
        while (replica := self._pick(self._passed_over_for(key))) is None:
            await asyncio.sleep(_IDLE_WAIT_S)
        probe = replica.cooling_until is not None
        replica.probing |= probe
        replica.outstanding += 1
        serving = self._serving.setdefault(key, [])
        serving.append(replica.index)
        settled = False
        try:
            beyond = overrun is not None and overrun.skips(replica.limiter.slots)
            async with nullcontext() if beyond else replica.limiter.slots:
                if replica.limiter.pacer is not None:
                    await replica.limiter.pacer.acquire()
                replica.counts["requests"] += 1
                replica.counts["beyond_limit"] += beyond
                started = time.perf_counter()
                try:
                    yield replica.backend
                except asyncio.CancelledError:
                    replica.counts["cancelled"] += 1
                    raise
                except LLMError as exc:
                    settled = True
                    replacement = self._failed(replica, exc, key)
                    if replacement is exc:
                        raise
                    raise replacement from exc
                settled = True
                self._passed_over.pop(key, None)
                self._answered(replica, time.perf_counter() - started)
        finally:
            if probe and not settled:
                replica.probing = False  # cancelled before its outcome: probe again later
            replica.outstanding -= 1
            serving.remove(replica.index)
            if not serving:
                del self._serving[key]

    def _passed_over_for(self, key: int) -> list[int]:
        """The replicas a request goes to only if no other may take it: those sending it now,
        and those that failed it lately (until their Retry-After or cooldown is over)."""
        avoid = list(self._serving.get(key, ()))
        if (passed := self._passed_over.get(key)) is not None:
            now = time.monotonic()
            avoid += [index for index, until in passed.items() if now < until]
        return avoid

    def _pass_over(self, key: int, replica: _Replica, seconds: float) -> None:
        now = time.monotonic()
        if len(self._passed_over) >= _PASSED_OVER_MAX:  # requests that gave up, or ended
            self._passed_over = {
                k: v for k, v in self._passed_over.items() if max(v.values()) > now
            }
        self._passed_over.setdefault(key, {})[replica.index] = now + seconds

    def _pick(self, avoid: Sequence[int]) -> _Replica | None:
        """The replica that may take a request with the lowest load for its limit and weight;
        one in `avoid` only if no other may take it."""
        now = time.monotonic()
        count = len(self.replicas)
        start, self._turn = self._turn, (self._turn + 1) % count
        best: _Replica | None = None
        best_key = (True, math.inf)
        for offset in range(count):
            replica = self.replicas[(start + offset) % count]
            if not replica.may_take(now):
                continue
            load = (replica.outstanding + 1) / (replica.limit * replica.config.weight)
            candidate = (replica.index in avoid, load)
            if best is None or candidate < best_key:
                best, best_key = replica, candidate
        return best

    def _answered(self, replica: _Replica, seconds: float) -> None:
        replica.counts["answered"] += 1
        replica.latencies.append(seconds)
        replica.streak = 0
        replica.refused = False
        if replica.probing:  # the probe came back: the replica is in service again
            replica.probing = False
            replica.cooling_until = None

    def _failed(self, replica: _Replica, exc: LLMError, key: int) -> LLMError:
        """Count the failure; put the replica on cooldown when it says so; the error to raise
        (the same, or a transient one that re-sends at once when another replica may answer)."""
        kind = failure_kind(exc)
        replica.counts[kind] += 1
        probing, replica.probing = replica.probing, False
        if kind not in _RESEND_ELSEWHERE:
            return exc
        if kind == "rate_limited":
            return self._elsewhere(replica, exc, key, "answered 429 (busy)")
        refused = isinstance(exc, PermanentLLMError)  # refused, unknown host, TLS
        replica.refused = refused
        replica.streak += 1
        cooling = replica.cooling_until is not None and not probing
        if not cooling and (probing or refused or replica.streak >= self.config.max_failures):
            replica.cooling_until = time.monotonic() + self.config.cooldown_s
            replica.counts["cooldowns"] += 1
            replica.streak = 0
        if replica.cooling_until is None:  # an ordinary transient failure
            return self._elsewhere(replica, exc, key, "failed")
        if not any(other is not replica and not other.refused for other in self.replicas):
            return exc  # no replica left that may answer
        return TransientLLMError(
            f"{replica.url} of pool {self.pool!r} set aside for {self.config.cooldown_s:g} s "
            f"({exc}); the request is sent to another endpoint",
            retry_after=0.0,
        )

    def _elsewhere(self, replica: _Replica, exc: LLMError, key: int, what: str) -> LLMError:
        """A transient failure of one request on one replica: re-sent at once to another that
        may take it now, passing this one over (for a 429 until its Retry-After is over); with
        no other, the error as it is (the client's backoff, or the Retry-After, applies)."""
        retry_after = getattr(exc, "retry_after", None)
        self._pass_over(key, replica, retry_after or self.config.cooldown_s)
        now = time.monotonic()
        passed = self._passed_over_for(key)
        if not any(
            other.may_take(now) and not other.refused and other.index not in passed
            for other in self.replicas
        ):
            return exc
        return TransientLLMError(
            f"{replica.url} of pool {self.pool!r} {what} ({exc}); the request is sent to "
            "another endpoint",
            retry_after=0.0,
        )

    def report(self) -> dict[str, Any]:
        """For the manifest: the pool, and per endpoint its limits, requests, share, failures
        by kind, cooldowns and answer latency percentiles (nearest rank, seconds)."""
        total = sum(replica.counts["requests"] for replica in self.replicas)
        return {
            "pool": self.pool,
            "model": self.model,
            "max_failures": self.config.max_failures,
            "cooldown_s": self.config.cooldown_s,
            "requests": total,
            "endpoints": [replica.report(total) for replica in self.replicas],
        }

    async def aclose(self) -> None:
        for replica in self.replicas:
            await replica.backend.aclose()
