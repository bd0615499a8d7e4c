"""A worker process of `--workers N` (decision_workers.py): runs the driver's jobs (decisions)
on its own `Simulation`, with its own model clients and its share of the limits."""

from __future__ import annotations

import asyncio
import importlib
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, BinaryIO

from personasim.simulation.core.model import Simulation
from personasim.simulation.log.event_log import EventLog
from personasim.simulation.log.events import INCIDENT_SCOPE, SCHEMA_VERSION, Event, EventStore
from personasim.simulation.runs.lifecycle.long_lived_heap import long_lived_heap
from personasim.simulation.runs.lifecycle.model_clients import build_models
from personasim.simulation.runs.lifecycle.run_start import open_cache
from personasim.simulation.runs.workers.decision_workers import WorkerSpec
from personasim.simulation.runs.workers.worker_frames import (
    Outbox,
    error_record,
    frame,
    read_first_frame,
    read_frame,
)

__all__ = ["main"]


class _Outgoing(EventStore):
    """A worker's event store: each job's events are kept for its reply; incidents go to the
    driver at once."""

    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox
        self.batches: dict[str, list[Event]] = {}

    def append(self, events: Sequence[Event]) -> list[Event]:
        if events and events[0].scope == INCIDENT_SCOPE:
            self.outbox.put(("incident", 0, _rows(events)))
        elif events:
            self.batches[events[0].scope] = list(events)
        return list(events)

    def read(self, kinds: Iterable[str] | None = None) -> Iterator[Event]:
        return iter(())

    def schema_version(self) -> int:
        return SCHEMA_VERSION

    def close(self) -> None:
        self.batches.clear()


Row = tuple[str, dict[str, Any], int | None, str | None, float]


def _rows(events: Iterable[Event]) -> list[Row]:
    """Events as the driver writes them again: with the time they happened here."""
    return [(e.kind, e.payload, e.round, e.agent_id, e.ts) for e in events]


def _worker_sim(spec: WorkerSpec, store: _Outgoing) -> Simulation:
    """The worker's own `Simulation`: the run's models, built as the driver builds them but
    with this worker's part of the limits, its events kept per job."""
    config = spec.config
    log = EventLog(store)
    cache = open_cache(config.use_cache, config.cache_dir)
    models = build_models(config, log, cache, rekey=spec.rekey, worker=spec.worker)
    return Simulation(
        seed=config.seed,
        models=models,
        log=log,
        response_format=config.settings.response_format,
        max_tokens=config.settings.max_tokens,
        roles=spec.roles,
    )


class _Jobs:
    """A worker's jobs under way and the questions they wait on."""

    def __init__(self, sim: Simulation, store: _Outgoing, outbox: Outbox) -> None:
        self.sim, self.store, self.outbox = sim, store, outbox
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.questions: dict[int, asyncio.Future[Any]] = {}
        self.targets: dict[str, Callable[..., Any]] = {}

    def start(self, job_id: int, target: str, job: Any) -> None:
        self.tasks[job_id] = asyncio.get_running_loop().create_task(self._do(job_id, target, job))

    def answer(self, job_id: int, reply: Any) -> None:
        question = self.questions.get(job_id)
        if question is not None and not question.done():
            question.set_result(reply)

    def cancel(self, job_id: int, _: None = None) -> None:
        if (task := self.tasks.get(job_id)) is not None:
            task.cancel()

    def _function(self, target: str) -> Callable[..., Any]:
        if target not in self.targets:
            module, _, name = target.partition(":")
            self.targets[target] = getattr(importlib.import_module(module), name)
        return self.targets[target]

    async def _do(self, job_id: int, target: str, job: Any) -> None:
        async def ask(question: Any) -> Any:
            self.questions[job_id] = asyncio.get_running_loop().create_future()
            self.outbox.put(("ask", job_id, question))
            try:
                return await self.questions[job_id]
            finally:
                self.questions.pop(job_id, None)

        scope = f"job/{job_id}"
        try:
            function = self._function(target)
            result = await self.sim.log.branch(scope, lambda: function(self.sim, job, ask))
            reply = ("done", job_id, (result, _rows(self.store.batches.pop(scope, []))))
        except asyncio.CancelledError:
            return
        except Exception as exc:  # every failure goes back to the driver, which raises it
            reply = ("failed", job_id, error_record(exc))
        finally:
            self.tasks.pop(job_id, None)
        self.outbox.put(reply)

    async def stop(self) -> None:
        for task in list(self.tasks.values()):
            task.cancel()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)


async def _serve(spec: WorkerSpec, out: BinaryIO) -> None:
    """Run the driver's jobs until its end of stdin closes."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    outbox = Outbox(lambda data: (out.write(data), out.flush()))
    store = _Outgoing(outbox)
    try:
        spec.load_scenario()
        sim = _worker_sim(spec, store)
    except Exception as exc:  # said to the driver, which stops the run with it
        out.write(frame(f"{type(exc).__name__}: {exc}"))
        out.flush()
        return
    out.write(frame("ready"))
    out.flush()
    jobs = _Jobs(sim, store, outbox)
    try:
        with long_lived_heap():  # the worker's models live as long as it does
            await _take_jobs(reader, jobs)
    finally:
        await jobs.stop()
        outbox.put(("reports", 0, sim.models.endpoint_reports()))
        outbox.flush()
        await sim.models.aclose()


async def _take_jobs(reader: asyncio.StreamReader, jobs: _Jobs) -> None:
    """Start, answer or cancel jobs as the driver says, until it closes the worker's stdin."""
    handlers = {"job": jobs.start, "answer": jobs.answer, "cancel": jobs.cancel}
    while True:
        try:
            kind, job_id, *body = await read_frame(reader)
        except asyncio.IncompleteReadError:
            return
        handlers[kind](job_id, *body)


def main() -> int:
    """A worker process: the spec frame first, then jobs (see decision_workers.py)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's: it closes our stdin
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr  # nothing else may write to the frames' pipe
    spec: WorkerSpec = read_first_frame()
    asyncio.run(_serve(spec, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
