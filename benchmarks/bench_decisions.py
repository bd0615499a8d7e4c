"""How much time personasim itself spends per persona decision, and how close a round gets to
the latency floor of a model endpoint.

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
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, cast

from rich.console import Console
from rich.table import Table

from personasim.agents import DecisionTask, PersonaAgent, decide
from personasim.scenarios.trust_population import TrustPopulation, TrustPopulationParams
from personasim.simulation import (
    Backend,
    ChatRequest,
    ChatResponse,
    Event,
    EventLog,
    EventStore,
    LLMClient,
    SQLiteEventStore,
    Simulation,
    Usage,
    run_scenario,
)

REPLY = "My belief is that people are fair. Finally, I will give 4 dollars"
FAKE_SERVER = Path(__file__).resolve().parent.parent / "tests" / "fake_openai.py"
SEED = 0


# -- timing helpers ------------------------------------------------------------------------


@dataclass
class Span:
    """Wall and CPU seconds of one measured stretch (CPU is the whole process, all threads)."""

    wall: float = 0.0
    cpu: float = 0.0


@contextlib.contextmanager
def measure(span: Span) -> Iterator[Span]:
    """Add the enclosed block's wall and process CPU time to `span`."""
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield span
    finally:
        span.wall += time.perf_counter() - wall
        span.cpu += time.process_time() - cpu


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

    def read(self, kinds: Any = None) -> Iterator[Event]:
        return iter(())

    def schema_version(self) -> int:
        return 1

    def close(self) -> None:
        pass


class StubSim:
    """Just what decide() touches (ask, emit), answering instantly: the graph alone."""

    def __init__(self) -> None:
        self.response = ChatResponse(text=REPLY)

    async def ask(self, request: ChatRequest, *, agent_id: str) -> ChatResponse:
        return self.response

    def emit(self, kind: str, payload: dict[str, Any] | None = None, **_: Any) -> None:
        pass


# -- part A ----------------------------------------------------------------------------------


@dataclass
class Layer:
    name: str
    what: str
    span: Span
    count: int


async def _sequential(
    count: int, step: Callable[[int], Awaitable[object]], span: Span
) -> None:
    with measure(span):
        for i in range(count):
            await step(i)


async def _layers(n: int) -> tuple[list[Layer], list[list[Event]]]:
    """Time each layer of a decision on its own, one decision after another, for n personas."""
    store = NullStore()
    log = EventLog(store)
    client = LLMClient(InstantBackend(), emit=log.emit, concurrency=16)
    sim = Simulation(seed=SEED, llm=client, log=log)
    scenario = TrustPopulation(TrustPopulationParams(n_personas=n, population="synthetic"))
    scenario.prepare()
    scenario.setup(sim)
    sim.begin_round(1)
    trustors: list[PersonaAgent] = scenario.trustors
    tasks: list[DecisionTask] = [scenario._trustor_task(t) for t in trustors]
    bare = LLMClient(InstantBackend(), concurrency=16)  # emit is a no-op
    stub = cast(Simulation, StubSim())
    spans = {key: Span() for key in ("task", "client", "graph", "decide", "turn", "round")}

    with measure(spans["task"]):
        for t in trustors:
            scenario._trustor_task(t)
    await _sequential(
        n, lambda i: bare.complete(tasks[i].request, agent_id=trustors[i].agent_id), spans["client"]
    )
    await _sequential(n, lambda i: decide(stub, trustors[i].agent_id, tasks[i]), spans["graph"])
    await _sequential(
        n,
        lambda i: log.branch(f"d/{i}", lambda: decide(sim, trustors[i].agent_id, tasks[i])),
        spans["decide"],
    )
    await _sequential(
        n, lambda i: log.branch(f"t/{i}", lambda: scenario._play(trustors[i])), spans["turn"]
    )
    store.batches.clear()
    with measure(spans["round"]):
        await scenario.play_round(sim, 1)
    round_batches = list(store.batches)
    await client.aclose()
    layers = [
        Layer("build the prompt", "DecisionTask for one trustor (template + ChatRequest)",
              spans["task"], n),
        Layer("model call via LLMClient", "cache key, retry/timeout wrappers, llm.call payload",
              spans["client"], n),
        Layer("decision graph alone", "decide() with model and log stubbed (LangGraph + parse)",
              spans["graph"], n),
        Layer("decide()", "graph + LLMClient + events buffered in a branch",
              spans["decide"], n),
        Layer("one trustor's turn", "prompt + decide() + game transfer/repay, in a branch",
              spans["turn"], n),
        Layer("concurrent round, no storage", "play_round(): all turns in one TaskGroup",
              spans["round"], n),
    ]
    return layers, round_batches


def _sqlite_layer(workdir: Path, batches: list[list[Event]]) -> Layer:
    """Write one round's branch batches to a fresh SQLite store, one transaction each."""
    span = Span()
    path = Path(tempfile.mkdtemp(prefix="sqlite-", dir=workdir)) / "events.sqlite"
    with SQLiteEventStore(path) as store, measure(span):
        for batch in batches:
            store.append(batch)
    events = sum(len(b) for b in batches)
    return Layer(
        "SQLite commit of the turn's events",
        f"{events / max(len(batches), 1):.0f} events per transaction (WAL)",
        span,
        len(batches),
    )


def part_a(console: Console, workdir: Path, sizes: list[int], repeats: int) -> dict[int, RunTiming]:
    timed_run(workdir, 20, backend=InstantBackend())  # warm-up: first-use costs out of the way
    results: dict[int, RunTiming] = {}
    for n in sizes:
        runs = [timed_run(workdir, n, backend=InstantBackend()) for _ in range(repeats)]
        results[n] = median_run(runs)

    table = Table(
        title=f"A. Framework cost per decision, instant model (median of {repeats} runs)",
        caption="round = scenario.play_round only (personas and agents built before it, in "
        "setup); total = whole run_scenario call incl. run dir, setup, metrics.json",
    )
    for col in ("N", "setup s", "round wall s", "round CPU s", "wall ms/decision",
                "CPU ms/decision", "total run s"):
        table.add_column(col, justify="right")
    for n, r in results.items():
        table.add_row(
            str(n),
            f"{r.setup.wall:.3f}",
            f"{r.round.wall:.3f}",
            f"{r.round.cpu:.3f}",
            f"{1000 * r.round.wall / r.decisions:.3f}",
            f"{1000 * r.round.cpu / r.decisions:.3f}",
            f"{r.total.wall:.3f}",
        )
    console.print(table)

    n_iso = sizes[0]
    layers, batches = asyncio.run(_layers(n_iso))
    layers.append(_sqlite_layer(workdir, batches))
    full = results[n_iso]
    layers.append(
        Layer("full round (part A)", "play_round in a real run: TaskGroup + SQLite",
              full.round, full.decisions)
    )
    table = Table(
        title=f"A2. Where a decision's time goes (N={n_iso}, one pass each)",
        caption="rows 1-5 run decisions one after another; later rows include earlier ones "
        "(except the prompt and SQLite rows)",
    )
    table.add_column("layer")
    table.add_column("measures")
    table.add_column("wall µs/decision", justify="right")
    table.add_column("CPU µs/decision", justify="right")
    for layer in layers:
        table.add_row(
            layer.name,
            layer.what,
            f"{1e6 * layer.span.wall / layer.count:.0f}",
            f"{1e6 * layer.span.cpu / layer.count:.0f}",
        )
    console.print(table)
    return results


# -- part B ----------------------------------------------------------------------------------


class FakeServer:
    """tests/fake_openai.py in its own process, so its CPU is not counted as the client's."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.process: subprocess.Popen[str] | None = None
        self.base_url = ""

    def start(self) -> FakeServer:
        self.process = subprocess.Popen(
            [sys.executable, str(FAKE_SERVER), "--port", "0", "--latency", str(self.latency),
             "--reply", REPLY],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http"):
            self.stop()
            raise SystemExit(f"fake server did not start (said {self.base_url!r})")
        return self

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


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
    baseline_cpu_ms: float,
) -> None:
    latencies = sorted({lat for _, _, lat in grid})
    servers = {lat: FakeServer(lat) for lat in latencies}
    rows: list[tuple[int, int, float, RunTiming]] = []
    try:
        with dummy_api_key():
            for lat, server in servers.items():
                server.start()
                kwargs = {"model": "openai:fake-model", "base_url": server.base_url}
                timed_run(workdir, 8, concurrency=8, **kwargs)  # warm-up
                for n, c, grid_lat in grid:
                    if grid_lat == lat:
                        rows.append((n, c, lat, timed_run(workdir, n, concurrency=c, **kwargs)))
                server.stop()
    finally:
        for server in servers.values():
            server.stop()

    table = Table(
        title="B. One round against the fake OpenAI server (separate process)",
        caption="ideal = ceil(N/C)·L, the best possible round; client CPU = this process's CPU "
        f"during the round / calls; the instant-model cost from A is {baseline_cpu_ms:.2f} ms",
    )
    for col in ("N", "C", "L s", "round wall s", "ideal s", "wall / ideal",
                "client CPU ms/call", "calls"):
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small grid (~30 s)")
    parser.add_argument("--repeats", type=int, help="runs per N in part A (median kept)")
    args = parser.parse_args(argv)

    if args.quick:
        sizes, repeats = [200], args.repeats or 1
        grid = [(64, c, 0.05) for c in (8, 64)]
    else:
        sizes, repeats = [200, 1000], args.repeats or 3
        grid = [(n, c, lat) for n in (64, 256) for c in (8, 64) for lat in (0.05, 0.2)]

    console = Console()
    environment(console)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="personasim-bench-") as tmp:
        workdir = Path(tmp)
        results = part_a(console, workdir, sizes, repeats)
        base = results[sizes[0]]
        part_b(console, workdir, grid, 1000 * base.round.cpu / base.decisions)
    console.print(f"benchmark took {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
