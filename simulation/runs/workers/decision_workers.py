"""`--workers N`: a round's fresh decisions run in N worker processes.

Why: a decision costs the driver about 1.4 ms of CPU against a remote endpoint, a quarter of
it LangGraph's per-run cost and most of the rest the HTTP client (benchmarks/README.md), so one
process tops out near 700 decisions/s, fewer than a rack of GPU servers answers. Here each
worker process runs whole decisions — the decision graph, its own model client and connections,
its share of the limits — while the Mesa model, the scenario's state, the event log and its
order stay in the driver:

- the driver sends a decision's task (agent, round, request, repairs allowed) to the worker with
  the fewest decisions outstanding (`agents/decision.py` decides which decisions may go: those
  of a unit with nothing logged yet; a resumed unit is re-derived in the driver);
- the replies are read in the driver, by the scenario's own parser (a closure over its game and
  prompts, which never leaves the driver): the worker sends the text and gets back the value, or
  the error and the reminder its re-ask adds;
- the worker sends back the decision and the events it emitted (`llm.call`, `decision.*`), which
  the driver writes into the decision's unit of work in their order, each with the time it
  happened in the worker, so each unit's events are those of a single-process run of the same
  seed (their `ts` and `seq` aside). Incidents (a replica set aside) are written at once, as
  in one process.

Limits are split, not shared: worker i of n gets its part of `--concurrency` and of `--rpm`,
and of each endpoint's limit in flight (its own, or its part of `--concurrency`) and rate:
whole parts that add up to each limit exactly (simulation/llm/apportion.py), so the workers
together never have more requests at an endpoint than it takes. A worker may get 0 of an
endpoint whose limit is below the number of workers (it never sends there); a pool with fewer
requests in flight in all than there are workers is refused before the run starts
(`check_workers`). The response cache is one SQLite file for all processes (safe: WAL and a
busy timeout, simulation/llm/cache.py).

Frames between the two sides are length-prefixed pickles over the worker's stdin and stdout
(the worker writes anything else to stderr). No secret is sent: a worker reads its keys from the
environment it inherits, as the driver does.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from personasim.simulation.core.model import Simulation
from personasim.simulation.core.scenario import Scenario
from personasim.simulation.llm.apportion import endpoint_limits
from personasim.simulation.llm.chat import PermanentLLMError
from personasim.simulation.log.event_log import EventLog
from personasim.simulation.runs.lifecycle.run_config import RunConfig
from personasim.simulation.runs.lifecycle.run_dir import RunError
from personasim.simulation.runs.lifecycle.scenario_file import (
    load_scenario_file,
    scenario_file_record,
)
from personasim.simulation.runs.workers.worker_frames import Outbox, frame, read_frame, rebuilt

__all__ = ["DecisionWorkers", "WorkerSpec", "check_workers", "with_workers"]


T = TypeVar("T")

WORKER_MODULE = "personasim.simulation.runs.workers.decision_worker"
"""What each worker process runs (`python -m`)."""


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker needs to build its own `Simulation` and models: the run's configuration,
    its roles as bound, the request-key mapping of a run resumed at another endpoint, which
    worker it is (`worker`: index and count, set by `share`), and the scenario's module or file
    for scripted rules. Sent to the worker as a pickle."""

    config: RunConfig
    roles: dict[str, tuple[str, ...]]
    rekey: tuple[str, str] | None = None
    modules: tuple[str, ...] = ()
    scenario_file: dict[str, str] | None = None
    worker: tuple[int, int] | None = None

    @staticmethod
    def scenario_sources(scenario: type[Scenario]) -> dict[str, Any]:
        """Where a worker finds the scenario's scripted rules: its file, else its module."""
        record = scenario_file_record(scenario)
        if record is not None:
            return {"scenario_file": record}
        return {"modules": (scenario.__module__,)}

    def share(self, index: int, count: int) -> WorkerSpec:
        """The spec of worker `index` of `count`, which takes its part of each limit."""
        return replace(self, worker=(index, count))

    def client_limits(self) -> tuple[int, float | None]:
        """This worker's requests in flight and per minute: its parts of the run's (the parts
        of all workers add up to them); the run's own outside a worker."""
        return self.config.limits.share(self.worker)

    def load_scenario(self) -> None:
        """Register the scenario's scripted rules (importing its module or loading its file),
        which only the scripted model reads; other models need nothing from the scenario."""
        specs = (self.config.model, *(s for specs in self.roles.values() for s in specs))
        if not any(spec.split(":", 1)[0] == "scripted" for spec in specs):
            return
        if self.scenario_file is not None:
            load_scenario_file(self.scenario_file["path"], self.scenario_file["class"])
        for module in self.modules:
            importlib.import_module(module)


class _Worker:
    """The driver's end of one worker process: its jobs under way, by id."""

    def __init__(self, process: asyncio.subprocess.Process, log: EventLog) -> None:
        self.process = process
        self.log = log
        self.jobs: dict[int, tuple[asyncio.Future[Any], Callable[[Any], Any]]] = {}
        self.reports: list[dict[str, Any]] = []
        self.outbox = Outbox(self._write)
        self.gone: PermanentLLMError | None = None
        self.reader = asyncio.get_running_loop().create_task(self._read())
        self._next = 0

    async def run(self, target: str, job: Any, answer: Callable[[Any], Any]) -> Any:
        if self.gone is not None:
            raise self.gone
        self._next += 1
        job_id = self._next
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.jobs[job_id] = (future, answer)
        self.outbox.put(("job", job_id, target, job))
        try:
            result, events = await future
        except asyncio.CancelledError:
            if self.gone is None:
                self.outbox.put(("cancel", job_id, None))
            raise
        finally:
            self.jobs.pop(job_id, None)
        for kind, payload, round_index, agent_id, ts in events:
            self.log.emit(kind, payload, round=round_index, agent_id=agent_id, ts=ts)
        return result

    def _write(self, data: bytes) -> None:
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.write(data)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        try:
            while True:
                self._handle(*await read_frame(self.process.stdout))
        except (asyncio.IncompleteReadError, ConnectionError):
            self.gone = PermanentLLMError(
                f"worker process {self.process.pid} exited; its error, if any, is on stderr"
            )
            for future, _ in self.jobs.values():
                if not future.done():
                    future.set_exception(self.gone)

    def _handle(self, kind: str, job_id: int, body: Any) -> None:
        if kind == "incident":
            for event_kind, payload, round_index, agent_id, ts in body:
                self.log.incident(event_kind, payload, round=round_index, agent_id=agent_id, ts=ts)
            return
        if kind == "reports":
            self.reports = body
            return
        future, answer = self.jobs.get(job_id, (None, None))
        if future is None or future.done():
            return
        if kind == "ask":
            self._answer(job_id, future, answer, body)
        elif kind == "done":
            future.set_result(body)
        else:  # "failed"
            future.set_exception(rebuilt(body, self.process.pid))

    def _answer(self, job_id: int, future: asyncio.Future[Any], answer: Any, question: Any) -> None:
        """A question the job sent back (a reply to read), answered here; an error raised
        while answering is the job's error, as it would be in one process."""
        try:
            reply = answer(question)
        except Exception as exc:
            future.set_exception(exc)
            self.outbox.put(("cancel", job_id, None))
            return
        self.outbox.put(("answer", job_id, reply))

    async def close(self) -> None:
        self.outbox.flush()
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), timeout=10)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        await self.reader


class DecisionWorkers:
    """The run's worker processes (`Offload`): started before the first round, closed after
    the last; `run` hands a job to the one with the fewest jobs under way."""

    def __init__(self, spec: WorkerSpec, count: int, log: EventLog) -> None:
        if count < 2:
            raise ValueError("worker processes are for 2 or more (1 is the driver alone)")
        self.spec, self.count, self.log = spec, count, log
        self._workers: list[_Worker] = []

    async def start(self) -> None:
        """Start the workers and wait until each has built its models (a Python start-up
        each, about a second), so no request's timeout runs while they start. A worker that
        cannot start, or a stop while they start, leaves none running."""
        processes: list[asyncio.subprocess.Process] = []
        try:
            for index in range(self.count):
                process = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", WORKER_MODULE,
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                )  # fmt: skip
                processes.append(process)
                assert process.stdin is not None
                process.stdin.write(frame(self.spec.share(index, self.count)))
            for process in processes:
                assert process.stdout is not None
                try:
                    ready = await read_frame(process.stdout)
                except asyncio.IncompleteReadError:
                    ready = "the process exited; its error is on stderr"
                if ready != "ready":
                    raise RunError(f"a worker process could not start: {ready}")
        except BaseException:
            for process in processes:
                if process.returncode is None:
                    process.kill()
                    await asyncio.shield(process.wait())
            raise
        self._workers = [_Worker(process, self.log) for process in processes]

    async def run(self, target: str, job: Any, answer: Callable[[Any], Any]) -> Any:
        worker = min(self._workers, key=lambda w: len(w.jobs))
        return await worker.run(target, job, answer)

    def pids(self) -> list[int]:
        """The worker processes' ids (a benchmark reads their CPU time)."""
        return [worker.process.pid for worker in self._workers]

    async def close(self) -> list[dict[str, Any]]:
        """Stop the workers; returns their endpoint pools' reports, each marked with its
        worker (a pool's counts are per process)."""
        workers, self._workers = self._workers, []
        await asyncio.gather(*(w.close() for w in workers))
        return [
            {**report, "worker": index}
            for index, worker in enumerate(workers, start=1)
            for report in worker.reports
        ]


async def with_workers(
    sim: Simulation,
    spec: WorkerSpec,
    count: int,
    manifest: dict[str, Any],
    play: Coroutine[Any, Any, T],
) -> T:
    """Await `play` with `count` worker processes for `sim`'s fresh decisions (none when
    `count` is 1), started and stopped inside it, so a stop while they start stops them too;
    their endpoint reports go to the manifest."""
    if count == 1:
        return await play
    workers = DecisionWorkers(spec, count, sim.log)
    try:
        await workers.start()
    except BaseException:
        play.close()  # it never runs
        raise
    sim.offload = workers
    try:
        return await play
    finally:
        sim.offload = None
        if reports := await workers.close():
            manifest["endpoints"] = reports


def check_workers(config: RunConfig, given: Any) -> None:
    """`--workers` as the runner takes it, checked before anything is written: a model spec
    each worker can build (`given`: a backend object, a Ray sweep's limiter or a rescore's
    source run cannot be), at least one request in flight per worker of `--concurrency`, and
    of every pool (in all: a worker may have no slot at one of its endpoints, not at all)."""
    workers, concurrency, endpoints = config.workers, config.limits.concurrency, config.endpoints
    if workers == 1:
        return
    if given:
        raise RunError(
            f"--workers builds {config.model!r} in each worker process: not with {given}"
        )
    if concurrency < workers:
        raise RunError(
            f"--workers {workers} needs --concurrency of at least {workers} (one request in "
            f"flight per worker), got {concurrency}"
        )
    for name, pool in (endpoints.pools if endpoints else {}).items():
        limits = endpoint_limits([e.concurrency for e in pool.endpoints], concurrency)
        if sum(limits) < workers:
            raise RunError(
                f"--workers {workers}: the endpoints of pool {name!r} allow {sum(limits)} "
                f"requests in flight in all, fewer than one per worker: use at most "
                f"{sum(limits)} workers, or raise the endpoints' concurrency"
            )
