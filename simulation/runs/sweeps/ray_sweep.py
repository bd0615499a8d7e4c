"""A sweep's cells as Ray tasks, with each endpoint's limits held by one Ray actor.

Each cell is one Ray task that runs the scenario into the cell's own run directory, resuming
whatever an earlier attempt left there, so a retried cell continues rather than restarts. A
cell that fails with an error worth retrying (a model endpoint that failed, an I/O error) is
retried by Ray; one that fails on every attempt is reported while the other cells go on.

Endpoint limits: the driver starts one registry actor; the first cell that calls an endpoint
(`base_url` + model) has it start that endpoint's actor, which holds the sweep's `concurrency`
slots and paces its `requests_per_minute` for every cell on every worker. Cells that run the
scripted behaviour model call no endpoint and take no slot. A model on a pool of replicas
(`openai:NAME@pool:POOL`, repeated `--base-url`) has one actor for the pool (the sweep's limits)
and one per replica (that replica's own `concurrency` and `rpm`), shared the same way.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from personasim.simulation.llm.cache import default_cache_dir
from personasim.simulation.llm.chat import Backend, LLMError
from personasim.simulation.llm.endpoint_pool import EndpointPool
from personasim.simulation.llm.limiter import endpoint_key
from personasim.simulation.runs.lifecycle.run_config import RunConfig
from personasim.simulation.runs.lifecycle.run_dir import RunError, RunResult
from personasim.simulation.runs.sweeps.sweep_cells import (
    CellFailure,
    ScenarioRef,
    SweepCell,
    run_cell,
)

try:
    import ray
    from ray.exceptions import RayError, RayTaskError
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise RunError(
        "--executor ray needs Ray: pip install 'personasim[ray]' (or run with --executor local)"
    ) from exc

__all__ = ["CELL_RETRIES", "RETRIED_ERRORS", "RayEndpointLimiter", "run_cells_on_ray"]

CELL_RETRIES = 2
"""Further attempts Ray makes at a cell that failed (each resumes the cell's run)."""
RETRIED_ERRORS: tuple[type[BaseException], ...] = (LLMError, OSError)
"""Errors worth another attempt; bad input (RunError, ScenarioError) fails the same way again.
A worker that dies is always retried."""


@ray.remote
class EndpointLimits:
    """One endpoint's concurrency slots and request pacing, for every cell of a sweep.

    Slots are counted per holder (a cell), so the slots of a cell whose worker died can be
    given back when the cell is retried or ends.
    """

    def __init__(self, concurrency: int, requests_per_minute: float | None) -> None:
        self._slots = asyncio.Semaphore(concurrency)
        self._held: Counter[str] = Counter()
        self._interval = 60 / requests_per_minute if requests_per_minute else 0.0
        self._next = 0.0
        self.in_use = 0
        self.peak = 0

    async def acquire(self, holder: str) -> None:
        await self._slots.acquire()
        self._held[holder] += 1
        self.in_use += 1
        self.peak = max(self.peak, self.in_use)

    async def release(self, holder: str, _acquired: Any = None) -> None:
        if self._held[holder] > 0:
            self._held[holder] -= 1
            self.in_use -= 1
            self._slots.release()

    async def release_holder(self, holder: str) -> None:
        for _ in range(self._held.pop(holder, 0)):
            self.in_use -= 1
            self._slots.release()

    async def reserve(self) -> float:
        """Seconds to wait before sending: requests evenly paced, as `AsyncLimiter(1, 60/rpm)`."""
        now = time.monotonic()
        at = max(now, self._next)
        self._next = at + self._interval
        return at - now

    async def stats(self) -> dict[str, int]:
        return {"in_use": self.in_use, "peak": self.peak}


@ray.remote
class LimiterRegistry:
    """The sweep's endpoint actors by key, started on first use; owned by the driver."""

    def __init__(self, concurrency: int, requests_per_minute: float | None) -> None:
        self._limits = (concurrency, requests_per_minute)
        self._actors: dict[str, Any] = {}

    async def get(self, key: str, limits: tuple[int, float | None] | None = None) -> Any:
        """The endpoint's actor, started with `limits` (a replica's own), else the sweep's."""
        if key not in self._actors:
            self._actors[key] = EndpointLimits.remote(*(limits or self._limits))
        return self._actors[key]

    async def release_holder(self, holder: str) -> None:
        # A copy: calls interleave at each await (an async actor), and `get` may add an actor.
        for actor in list(self._actors.values()):
            await actor.release_holder.remote(holder)

    async def stats(self) -> dict[str, dict[str, int]]:
        return {key: await actor.stats.remote() for key, actor in list(self._actors.items())}


class _Slots:
    """`async with`: one of the endpoint's slots, held in its actor."""

    def __init__(self, actor: Any, holder: str) -> None:
        self._actor, self._holder = actor, holder

    async def __aenter__(self) -> None:
        acquired = self._actor.acquire.remote(self._holder)
        try:
            await acquired
        except asyncio.CancelledError:
            # Given back once the acquire completes (Ray resolves the argument first).
            self._actor.release.remote(self._holder, acquired)
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._actor.release.remote(self._holder)


class _Pacer:
    def __init__(self, actor: Any) -> None:
        self._actor = actor

    async def acquire(self) -> None:
        delay = await self._actor.reserve.remote()
        if delay > 0:
            await asyncio.sleep(delay)


class RayEndpointLimiter:
    """An `EndpointLimiter` whose slots and pacing live in an `EndpointLimits` actor."""

    def __init__(self, actor: Any, holder: str, paced: bool) -> None:
        self.slots = _Slots(actor, holder)
        self.pacer = _Pacer(actor) if paced else None


def _cell_task(
    scenario: ScenarioRef,
    cell: SweepCell,
    config: RunConfig,
    registry: Any,
    paced: bool,
) -> RunResult:
    """One cell on a Ray worker: slots left by an earlier attempt that died are given back."""
    if registry is None:
        return run_cell(scenario, cell, config)
    ray.get(registry.release_holder.remote(cell.name))

    def replica_limiter(key: str, concurrency: int, rpm: float | None) -> RayEndpointLimiter:
        actor = ray.get(registry.get.remote(key, (concurrency, rpm)))
        return RayEndpointLimiter(actor, cell.name, rpm is not None)

    def limiter_for(backend: Backend) -> RayEndpointLimiter | None:
        if isinstance(backend, EndpointPool):
            backend.share_limits(replica_limiter)
        key = endpoint_key(backend.identity())
        if key is None:
            return None
        return RayEndpointLimiter(ray.get(registry.get.remote(key)), cell.name, paced)

    try:
        return run_cell(scenario, cell, config, limiter_for)
    finally:
        ray.get(registry.release_holder.remote(cell.name))


def run_cells_on_ray(
    scenario: ScenarioRef,
    cells: Sequence[SweepCell],
    config: RunConfig,
    *,
    address: str | None = None,
    retries: int = CELL_RETRIES,
    shared_limits: bool = True,
) -> tuple[list[RunResult | None], list[CellFailure]]:
    """Every cell as a Ray task; results in the cells' order (None for a cell that failed).

    `shared_limits=False` lets each cell keep its own limits (endpoints whose quota is per
    client, not per endpoint; and the tests' control case).
    """
    portable = _portable(config)
    cells = [replace(cell, run_dir=cell.run_dir.resolve()) for cell in cells]
    started_here = not ray.is_initialized()
    if started_here:
        _start_ray(address)
    limits = portable.limits
    registry = LimiterRegistry.remote(limits.concurrency, limits.requests_per_minute)
    try:
        task = ray.remote(_cell_task).options(
            max_retries=retries, retry_exceptions=list(RETRIED_ERRORS)
        )
        paced = limits.requests_per_minute is not None
        shared = registry if shared_limits else None
        pending = {task.remote(scenario, cell, portable, shared, paced): cell for cell in cells}
        results: dict[str, RunResult] = {}
        failed: list[CellFailure] = []
        waiting = list(pending)
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            cell = pending[done[0]]
            try:
                results[cell.name] = ray.get(done[0])
            except RayError as exc:
                failed.append(CellFailure(cell.name, cell.run_dir, _reason(exc)))
    finally:
        ray.kill(registry)
        if started_here:
            ray.shutdown()
    return [results.get(cell.name) for cell in cells], failed


PROBE_TIMEOUT_S = 5.0
"""How long a cluster address may take to accept a connection before the sweep gives up (Ray
itself retries an unreachable head for minutes)."""


def _probe(address: str) -> None:
    """A clear error at once when `host:port` (or `ray://host:port`) accepts no connection;
    other addresses ("auto", "local") are left to Ray."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), PROBE_TIMEOUT_S).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise RunError(
            f"--ray-address {address}: nothing answers there ({reason} within "
            f"{PROBE_TIMEOUT_S:g} s); is the Ray head running (`ray start --head`)?"
        ) from None


def _start_ray(address: str | None) -> None:
    """Join the cluster at `address`, or start a local Ray; a failure is one clear error."""
    if address:
        _probe(address)
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray"
        raise RunError(f"--executor ray: cannot start or reach {where} ({exc})") from None


def _portable(config: RunConfig) -> RunConfig:
    """The config a worker can use: no progress bar; the cache where the driver's is.

    Other paths (a prompt pack) are recorded in the manifest as given, so a cell stays
    resumable by either executor; on a remote cluster give them as absolute paths.
    """
    cache_dir = config.cache_dir
    if config.use_cache:
        cache_dir = Path(cache_dir or default_cache_dir()).resolve()
    return replace(config, progress=False, cache_dir=cache_dir)


def _reason(exc: RayError) -> str:
    """The cell's own error in one line (a worker that died says so)."""
    cause = exc.cause if isinstance(exc, RayTaskError) and exc.cause is not None else exc
    text = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {text[-1] if text else ''}"
