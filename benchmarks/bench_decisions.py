"""Benchmark: personasim's own cost per persona decision, and rounds against a fake endpoint.

Why: with a real model the run should be bound by the endpoint's latency, not by our own
bookkeeping. Part A runs the trust-population scenario against a model that answers instantly,
so everything measured is the framework's cost; it then times each layer of a decision alone to
show where that cost goes. Part B runs a round against the fake OpenAI-compatible server
(tests/fake_openai.py, in its own process) at a fixed latency L and concurrency C and compares
the round's wall time with the best possible one, ceil(N/C)*L.

Everything is timed in-process around the scenario's setup and rounds (a TrustPopulation
subclass records them), so Python start-up, imports, run-directory writes and the end-of-run
metrics are not in the per-decision numbers; they are printed separately.

    python benchmarks/bench_decisions.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, cast

from rich.console import Console
from rich.table import Table

from personasim.agents import DecisionTask, PersonaAgent, decide
from personasim.environments.trust_game.transfer import read_transfer
from personasim.scenarios.trust.population import TrustPopulation, TrustPopulationParams
from personasim.simulation import (
    Backend,
    ChatRequest,
    ChatResponse,
    Event,
    EventLog,
    EventStore,
    LLMClient,
    Simulation,
    SQLiteEventStore,
    Usage,
    run_scenario,
)

REPLY = "My belief is that people are fair. Finally, I will give 4 dollars"
FAKE_SERVER = Path(__file__).resolve().parent.parent / "tests" / "fake_openai.py"
SEED = 0


# -- timing helpers ------------------------------------------------------------------------


class GCClock:
    """Seconds spent in Python's cyclic garbage collector (a gc.callbacks hook), because with
    many decisions in flight the collector is a large share of the framework's cost."""

    def __init__(self) -> None:
        self.total = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.total += time.perf_counter() - self._started


GC_CLOCK = GCClock()


@dataclass
class Span:
    """Wall, CPU (whole process, all threads) and GC seconds of one measured stretch."""

    wall: float = 0.0
    cpu: float = 0.0
    gc: float = 0.0


@contextlib.contextmanager
def measure(span: Span) -> Iterator[Span]:
    """Add the enclosed block's wall, process CPU and garbage-collector time to `span`."""
    wall, cpu, collector = time.perf_counter(), time.process_time(), GC_CLOCK.total
    try:
        yield span
    finally:
        span.wall += time.perf_counter() - wall
        span.cpu += time.process_time() - cpu
        span.gc += GC_CLOCK.total - collector


@dataclass
class RunTiming:
    """What one run_scenario call spent where; filled in by the timed scenario."""

    setup: Span
    round: Span
    total: Span
    calls: int = 0
    decisions: int = 0


def timed_scenario(timing: RunTiming) -> type[TrustPopulation]:
    """TrustPopulation that records its setup and round times into `timing`.

    It keeps the name "trust-population" and is not registered, so the runner's metrics
    (looked up by name from the log) are the real scenario's; it is passed to run_scenario as
    a class.
    """

    class TimedTrustPopulation(TrustPopulation):
        def setup(self, sim: Simulation) -> None:
            with measure(timing.setup):
                super().setup(sim)

        async def play_round(self, sim: Simulation, round_index: int) -> None:
            calls = sim.llm.calls
            with measure(timing.round):
                await super().play_round(sim, round_index)
            timing.calls += sim.llm.calls - calls
            timing.decisions += len(self.trustors)

    return TimedTrustPopulation


def timed_run(workdir: Path, n: int, **run_kwargs: Any) -> RunTiming:
    """One trust-population run of `n` synthetic personas, checked to have parsed every reply."""
    timing = RunTiming(Span(), Span(), Span())
    out = Path(tempfile.mkdtemp(prefix=f"n{n}-", dir=workdir))
    fresh_readers()
    with measure(timing.total):
        result = run_scenario(
            timed_scenario(timing),
            {"n_personas": n, "population": "synthetic"},
            seed=SEED,
            out=out,
            use_cache=False,
            progress=False,
            **run_kwargs,
        )
    metrics = result.metrics["metrics"]
    if metrics["n_decisions"] != n or metrics["parse_failures"] or metrics["reasks"]:
        raise SystemExit(f"benchmark run is not clean (n={n}): {metrics}")
    return timing


def median_run(runs: Sequence[RunTiming]) -> RunTiming:
    """The run with the median round wall time (kept whole, so its columns agree)."""
    ordered = sorted(runs, key=lambda r: r.round.wall)
    return ordered[(len(ordered) - 1) // 2]


# -- an instant model ------------------------------------------------------------------------


class InstantBackend(Backend):
    """Answers every request at once with a reply the trust scenario parses, so a run
    measures only the framework around the model."""

    name = "instant"

    def identity(self) -> dict[str, Any]:
        return {"backend": "instant"}

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        return ChatResponse(
            text=REPLY, usage=Usage(prompt_tokens=1, completion_tokens=1), model="instant"
        )


class NullStore(EventStore):
    """Keeps each appended batch in memory, so the layers can be timed without SQLite and the
    same batches can then be written to SQLite on their own."""

    def __init__(self) -> None:
        self.batches: list[list[Event]] = []

    def append(self, events: Sequence[Event]) -> list[Event]:
        self.batches.append(list(events))
        return list(events)

    def read(self, kinds: Iterable[str] | None = None) -> Iterator[Event]:
        return iter(())

    def schema_version(self) -> int:
        return 1

    def close(self) -> None:
        pass


class StubSim:
    """Just what decide() touches (ask, emit), answering instantly: the graph alone."""

    response_format = "text"
    offload = None  # the decisions run here

    def __init__(self) -> None:
        self.response = ChatResponse(text=REPLY)

    async def ask(
        self, request: ChatRequest, *, agent_id: str, role: str = "persona", member: int = 0
    ) -> ChatResponse:
        return self.response

    def emit(self, kind: str, payload: dict[str, Any] | None = None, **_: Any) -> None:
        pass


# -- part A ----------------------------------------------------------------------------------

LAYERS = {
    "prompt": ("build the prompt", "DecisionTask: template + ChatRequest"),
    "client": ("model call via LLMClient", "cache key, retry/timeout wrappers, llm.call payload"),
    "graph": ("decision graph alone", "decide() with model and log stubbed: LangGraph + parse"),
    "decide": ("decide()", "graph + LLMClient + events buffered in a branch"),
    "turn": ("one trustor's turn", "prompt + decide() + game transfer/repay, in a branch"),
    "round": ("concurrent round, no storage", "play_round(): all turns at once, TaskGroup"),
    "sqlite": ("SQLite commit per turn", "the round's event batches, appended in a loop (grouped)"),
}
"""Layers of a decision timed on their own (key: row label, what it covers)."""


def fresh_readers() -> None:
    """Empty the readers' caches, so no measured pass reads a reply an earlier pass read (a
    reply repeated within one pass is read once, as in a run)."""
    read_transfer.cache_clear()


async def _sequential(count: int, step: Callable[[int], Awaitable[object]], span: Span) -> None:
    with measure(span):
        for i in range(count):
            await step(i)


async def _layer_pass(n: int) -> tuple[dict[str, Span], list[list[Event]]]:
    """One pass over n synthetic personas per layer; rows before "round" go one decision after
    another. Returns the spans and the round's event batches (for the SQLite row)."""
    store = NullStore()
    log = EventLog(store)
    client = LLMClient(InstantBackend(), emit=log.emit)
    sim = Simulation(seed=SEED, llm=client, log=log)
    scenario = TrustPopulation(TrustPopulationParams(n_personas=n, population="synthetic"))
    scenario.prepare()
    scenario.setup(sim)
    sim.begin_round(1)
    trustors: list[PersonaAgent] = scenario.trustors
    tasks: list[DecisionTask] = [scenario._trustor_task(t) for t in trustors]
    bare = LLMClient(InstantBackend())  # its events go nowhere
    stub = cast(Simulation, StubSim())
    spans = {key: Span() for key in LAYERS}

    with measure(spans["prompt"]):
        for t in trustors:
            scenario._trustor_task(t)
    await _sequential(
        n, lambda i: bare.complete(tasks[i].request, agent_id=trustors[i].agent_id), spans["client"]
    )
    fresh_readers()
    await _sequential(n, lambda i: decide(stub, trustors[i].agent_id, tasks[i]), spans["graph"])
    fresh_readers()
    await _sequential(
        n,
        lambda i: log.branch(f"d/{i}", lambda: decide(sim, trustors[i].agent_id, tasks[i])),
        spans["decide"],
    )
    fresh_readers()
    await _sequential(
        n, lambda i: log.branch(f"t/{i}", lambda: scenario._play(trustors[i])), spans["turn"]
    )
    sim.begin_round(2)  # a trustor plays once per round; round 1 was the sequential turns
    store.batches.clear()
    fresh_readers()
    with measure(spans["round"]):
        await scenario.play_round(sim, 2)
    await client.aclose()
    return spans, list(store.batches)


def layer_pass(workdir: Path, n: int) -> dict[str, Span]:
    spans, batches = asyncio.run(_layer_pass(n))
    path = Path(tempfile.mkdtemp(prefix="sqlite-", dir=workdir)) / "events.sqlite"
    with SQLiteEventStore(path) as store, measure(spans["sqlite"]):
        asyncio.run(_append_in_loop(store, batches))
    return spans


async def _append_in_loop(store: SQLiteEventStore, batches: list[list[Event]]) -> None:
    """Appends as a round makes them, inside the event loop, so the store groups the commits."""
    for batch in batches:
        store.append(batch)
    store.flush()


def median_span(spans: Sequence[Span]) -> Span:
    return sorted(spans, key=lambda s: s.wall)[(len(spans) - 1) // 2]


def part_a(console: Console, workdir: Path, sizes: list[int], repeats: int) -> RunTiming:
    """Tables A and A2; returns the median run at the first size (the baseline for B)."""
    timed_run(workdir, 20, backend=InstantBackend())  # warm-up: first-use costs out of the way
    results = {
        n: median_run([timed_run(workdir, n, backend=InstantBackend()) for _ in range(repeats)])
        for n in sizes
    }
    table = Table(
        title=f"A. Framework cost per decision, instant model (median of {repeats} runs)",
        caption="round = scenario.play_round only (personas and agents are built before it, in "
        "setup); per decision = round / N; GC = time inside Python's cyclic garbage collector, "
        "part of the CPU column; total = the whole run_scenario call (run dir, setup, round, "
        "metrics)",
    )
    for col in (
        "N",
        "setup s",
        "round wall s",
        "round CPU s",
        "wall ms/decision",
        "CPU ms/decision",
        "GC ms/decision",
        "total run s",
    ):
        table.add_column(col, justify="right")
    for n, r in results.items():
        table.add_row(
            str(n),
            f"{r.setup.wall:.3f}",
            f"{r.round.wall:.3f}",
            f"{r.round.cpu:.3f}",
            f"{1000 * r.round.wall / r.decisions:.2f}",
            f"{1000 * r.round.cpu / r.decisions:.2f}",
            f"{1000 * r.round.gc / r.decisions:.2f}",
            f"{r.total.wall:.3f}",
        )
    console.print(table)

    n = sizes[0]
    passes = [layer_pass(workdir, n) for _ in range(repeats)]
    table = Table(
        title=f"A2. Where a decision's time goes (N={n}, median of {repeats} passes)",
        caption="rows 1-5 run one decision after another; decide() includes the two rows above "
        "it, a turn includes decide() and the prompt; the last row is table A's round at this N",
    )
    table.add_column("layer")
    table.add_column("covers")
    for col in ("wall µs/decision", "CPU µs/decision", "GC µs/decision"):
        table.add_column(col, justify="right")
    rows = [(*LAYERS[key], median_span([p[key] for p in passes])) for key in LAYERS]
    base = results[n]
    rows.append(
        ("full round (table A)", "play_round in a real run, TaskGroup + SQLite", base.round)
    )
    for label, covers, span in rows:
        table.add_row(
            label,
            covers,
            f"{1e6 * span.wall / n:.0f}",
            f"{1e6 * span.cpu / n:.0f}",
            f"{1e6 * span.gc / n:.0f}",
        )
    console.print(table)
    return base


# -- part B ----------------------------------------------------------------------------------


class FakeServer:
    """tests/fake_openai.py in its own process, so its CPU is not counted as the client's."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.process: subprocess.Popen[str] | None = None
        self.base_url = ""

    def start(self) -> FakeServer:
        command = [sys.executable, str(FAKE_SERVER), "--port", "0", "--latency", str(self.latency)]
        self.process = subprocess.Popen(
            [*command, "--reply", REPLY], stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http"):
            self.stop()
            raise SystemExit(f"the fake server did not start (it said {self.base_url!r})")
        return self

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


@contextlib.contextmanager
def dummy_api_key() -> Iterator[None]:
    """A throwaway key for the fake server, so a real OPENAI_API_KEY is never sent to it."""
    saved = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = "sk-benchmark-dummy"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = saved


def part_b(
    console: Console,
    workdir: Path,
    grid: list[tuple[int, int, float]],
    repeats: int,
    baseline: RunTiming,
) -> None:
    """Table B: one fake-server process per latency, each grid point run `repeats` times."""
    rows: list[tuple[int, int, float, RunTiming]] = []
    servers: list[FakeServer] = []
    try:
        with dummy_api_key():
            for latency in sorted({lat for _, _, lat in grid}):
                server = FakeServer(latency).start()
                servers.append(server)
                kwargs = {"model": "openai:fake-model", "base_url": server.base_url}
                timed_run(workdir, 16, concurrency=16, **kwargs)  # warm-up
                for n, c, lat in grid:
                    if lat == latency:
                        runs = [
                            timed_run(workdir, n, concurrency=c, **kwargs) for _ in range(repeats)
                        ]
                        rows.append((n, c, lat, median_run(runs)))
                server.stop()
    finally:
        for server in servers:
            server.stop()

    base_ms = 1000 * baseline.round.cpu / baseline.decisions
    table = Table(
        title=f"B. One round against the fake OpenAI server (median of {repeats} runs)",
        caption="ideal = ⌈N/C⌉·L, the ceiling: the best a round can do; client CPU = this "
        "process's CPU during the round / model calls (the server runs in another process); "
        f"for comparison, the instant-model cost in table A is {base_ms:.2f} ms/decision",
    )
    for col in (
        "N",
        "C",
        "L s",
        "round wall s",
        "ideal s",
        "wall / ideal",
        "client CPU ms/call",
        "GC ms/call",
        "calls",
    ):
        table.add_column(col, justify="right")
    for n, c, lat, r in sorted(rows):
        ideal = math.ceil(n / c) * lat
        table.add_row(
            str(n),
            str(c),
            f"{lat:g}",
            f"{r.round.wall:.3f}",
            f"{ideal:.3f}",
            f"{r.round.wall / ideal:.2f}",
            f"{1000 * r.round.cpu / r.calls:.2f}",
            f"{1000 * r.round.gc / r.calls:.2f}",
            str(r.calls),
        )
    console.print(table)


# -- main ------------------------------------------------------------------------------------


def environment(console: Console) -> None:
    def ver(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "-"

    cpus = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cpus
    packages = ", ".join(
        f"{p} {ver(p)}" for p in ("personasim", "langgraph", "openai", "aiohttp", "mesa")
    )
    console.print(
        f"[bold]personasim decision benchmark[/]  {date.today().isoformat()}\n"
        f"python {platform.python_version()} ({platform.python_implementation()}), "
        f"{platform.platform()}, {cpus} CPUs ({usable} usable)\n{packages}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="personasim's cost per decision, and rounds against a fake OpenAI server"
    )
    parser.add_argument("--quick", action="store_true", help="N=200 and a 2-point grid (~15 s)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per point (median kept)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")

    if args.quick:
        sizes = [200]
        grid = [(64, c, 0.05) for c in (8, 64)]
    else:
        sizes = [200, 1000]
        grid = [(n, c, lat) for n in (64, 256) for c in (8, 64) for lat in (0.05, 0.2)]

    console = Console()
    if not console.is_terminal:
        console = Console(width=150)  # piped into a file: do not wrap the tables at 80 columns
    environment(console)
    gc.callbacks.append(GC_CLOCK)
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="personasim-bench-") as tmp:
            workdir = Path(tmp)
            baseline = part_a(console, workdir, sizes, args.repeats)
            part_b(console, workdir, grid, args.repeats, baseline)
    finally:
        gc.callbacks.remove(GC_CLOCK)
    console.print(f"benchmark took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
