"""Admission of a round's units (`Simulation(max_active_units=K)`): at most K under way, the rest
waiting before they start; a nested `concurrently` is not held back (no deadlock); the run's
bound follows its models' concurrency (`active_units`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from personasim.simulation import EventLog, LLMClient, ScriptedBackend, Simulation, SQLiteEventStore
from personasim.simulation.runs.runner import active_units


class Tracker:
    def __init__(self) -> None:
        self.now = self.peak = 0
        self.started: list[str] = []

    async def unit(self, name: str) -> str:
        self.started.append(name)
        self.now += 1
        self.peak = max(self.peak, self.now)
        await asyncio.sleep(0.01)
        self.now -= 1
        return name


def simulation(store: SQLiteEventStore, limit: int | None) -> Simulation:
    client = LLMClient(ScriptedBackend())
    return Simulation(seed=0, llm=client, log=EventLog(store), max_active_units=limit)


def test_at_most_k_units_run_at_once_in_order(tmp_path: Path) -> None:
    for limit, expected_peak in ((3, 3), (None, 20)):
        tracker = Tracker()
        with SQLiteEventStore(tmp_path / f"{limit}.sqlite") as store:
            sim = simulation(store, limit)
            names = [f"u{i:02d}" for i in range(20)]
            work = {name: (lambda name=name, t=tracker: t.unit(name)) for name in names}
            done = asyncio.run(sim.concurrently(work))
        assert done == {name: name for name in names}
        assert tracker.peak == expected_peak
        assert tracker.started == names  # admitted first come, first served


def test_a_nested_round_inside_a_unit_does_not_deadlock(tmp_path: Path) -> None:
    tracker = Tracker()
    with SQLiteEventStore(tmp_path / "e.sqlite") as store:
        sim = simulation(store, 1)

        async def outer(name: str) -> int:
            inner = {f"{name}-{i}": (lambda n=f"{name}-{i}": tracker.unit(n)) for i in range(3)}
            return len(await sim.concurrently(inner))

        work = {name: (lambda name=name: outer(name)) for name in ("a", "b")}
        done = asyncio.run(asyncio.wait_for(sim.concurrently(work), timeout=10))
    assert done == {"a": 3, "b": 3}
    assert tracker.peak == 3  # one outer unit at a time, its inner units all at once


def test_the_bound_is_twice_the_requests_the_models_can_have_in_flight() -> None:
    assert active_units(16, "scripted", {"persona": ("scripted",)}) == 32
    roles = {"student": ("openai:a",), "judge": ("openai:b",)}
    assert active_units(64, "openai:a", roles) == 2 * 64 * 2
