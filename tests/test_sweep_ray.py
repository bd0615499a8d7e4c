"""Sweeps on Ray (`--executor ray`): the same runs as the local executor, endpoint limits held
across cells and workers, failing cells retried, resumed and reported. One local Ray started
in-process (2 CPUs) serves the whole module."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray
from fake_openai import FakeOpenAIServer
from test_sweep_options import check_every_cell, sweep_with_every_option

from personasim.simulation.cli.main import main
from personasim.simulation.core import scenario as scenario_module
from personasim.simulation.llm import scripted
from personasim.simulation.log.sqlite_store import SQLiteEventStore
from personasim.simulation.runs.lifecycle.run_config import RunConfig
from personasim.simulation.runs.sweeps.ray_sweep import CELL_RETRIES, run_cells_on_ray
from personasim.simulation.runs.sweeps.sweep import SweepCell, run_sweep

pytestmark = pytest.mark.slow  # a local Ray cluster per test module

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "coin_guess.py"
FLAKY = '''

import pathlib as _pathlib

_play_round = CoinGuess.play_round


async def _flaky_play_round(self, sim, round_index):
    """rounds=3 fails on every attempt while `broken` exists; rounds=2 fails once, in its
    second round."""
    attempts = _pathlib.Path(__file__).with_name(f"attempts-{self.params.rounds}")
    if self.params.rounds == 3 and attempts.with_name("broken").exists():
        with attempts.open("a") as handle:
            handle.write("attempt\\n")
        raise OSError("the disk is on fire")
    if self.params.rounds == 2 and round_index == 2 and not attempts.exists():
        attempts.write_text("failed once\\n")
        raise OSError("a passing hiccup")
    await _play_round(self, sim, round_index)


CoinGuess.play_round = _flaky_play_round
'''


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(autouse=True)
def restore_registries() -> Iterator[None]:
    """Scenario files loaded here register scenarios; later tests see the registry as before."""
    scenario_module.list_scenarios()  # built-ins imported before the snapshot
    with scenario_module.SCENARIOS.scoped(), scripted.RULES.scoped():
        yield


def test_ray_sweep_equals_the_local_sweep_cell_by_cell(tmp_path: Path) -> None:
    models = ["scripted", "scripted:drift=0.3,seed=2"]
    grid = {"rounds": ["1", "2"]}
    common = dict(params={"n_personas": "4"}, seeds=[3, 4], progress=False)
    local = run_sweep(EXAMPLE, models, grid, out=tmp_path / "local", **common)
    on_ray = run_sweep(EXAMPLE, models, grid, out=tmp_path / "ray", executor="ray", **common)
    assert on_ray.failed == [] and len(on_ray.runs) == 8
    assert [run.manifest["seed"] for run in on_ray.runs] == [3, 4] * 4
    for mine, theirs in zip(local.runs, on_ray.runs, strict=True):
        assert mine.run_dir.name == theirs.run_dir.name
        assert theirs.manifest["status"] == "complete"
        assert (theirs.run_dir / "metrics.json").read_text() == (
            mine.run_dir / "metrics.json"
        ).read_text()
    assert (tmp_path / "ray" / "combined.csv").read_text() == (
        tmp_path / "local" / "combined.csv"
    ).read_text()


def test_every_run_option_reaches_every_ray_cell(tmp_path: Path) -> None:
    code, out, pack, cache = sweep_with_every_option(tmp_path, "ray")
    assert code == 0
    check_every_cell(out, pack, cache)


class InFlight:
    """A fake model that answers after a delay and counts the requests in flight at once."""

    def __init__(self, delay: float) -> None:
        self.delay, self.now, self.peak, self.arrivals = delay, 0, 0, []

    async def __call__(self, body: dict[str, Any]) -> str:
        self.arrivals.append(time.monotonic())
        self.now += 1
        self.peak = max(self.peak, self.now)
        await asyncio.sleep(self.delay)
        self.now -= 1
        return "GUESS: heads"


def coin_cells(out: Path, model: str, rounds: range) -> list[SweepCell]:
    names = [f"rounds={r}" for r in rounds]
    return [
        SweepCell(name, model, {"rounds": r}, {"rounds": r, "n_personas": 4}, out / name)
        for name, r in zip(names, rounds, strict=True)
    ]


def test_the_endpoint_concurrency_holds_across_cells_and_workers(tmp_path: Path) -> None:
    """Two cells run at once, each allowed 2 requests in flight: the endpoint sees at most 2
    together. The control (each cell its own limits) shows the cells do overlap."""
    model = InFlight(delay=0.1)
    with FakeOpenAIServer(responder=model) as server:
        options = RunConfig.from_options(base_url=server.base_url, concurrency=2, use_cache=False)
        cells = coin_cells(tmp_path / "shared", "openai:fake-model", range(1, 5))
        results, failed = run_cells_on_ray(str(EXAMPLE), cells, options)
        shared_peak, requests = model.peak, len(model.arrivals)
        model.peak = 0
        control = coin_cells(tmp_path / "own", "openai:fake-model", range(1, 5))
        run_cells_on_ray(str(EXAMPLE), control, options, shared_limits=False)
    assert failed == [] and all(r is not None for r in results)
    assert requests == 4 * (1 + 2 + 3 + 4)  # every guess reached the endpoint
    assert shared_peak == 2
    assert model.peak > 2


def test_a_pools_replica_limits_hold_across_cells_and_workers(tmp_path: Path) -> None:
    """Two replicas (`--base-url` twice), `concurrency=4`: 2 per replica, shared by every cell;
    the control (each cell its own limits) shows the cells overlap on a replica."""
    replicas = [InFlight(delay=0.1), InFlight(delay=0.1)]
    with FakeOpenAIServer(responder=replicas[0]) as a, FakeOpenAIServer(responder=replicas[1]) as b:
        options = RunConfig.from_options(
            base_url=[a.base_url, b.base_url], concurrency=4, use_cache=False
        )
        cells = coin_cells(tmp_path / "shared", "openai:fake-model", range(1, 5))
        results, failed = run_cells_on_ray(str(EXAMPLE), cells, options)
        shared = [model.peak for model in replicas]
        requests = sum(len(model.arrivals) for model in replicas)
        for model in replicas:
            model.peak = 0
        control = coin_cells(tmp_path / "own", "openai:fake-model", range(1, 5))
        run_cells_on_ray(str(EXAMPLE), control, options, shared_limits=False)
    assert failed == [] and all(r is not None for r in results)
    assert requests == 4 * (1 + 2 + 3 + 4)
    assert shared == [2, 2]
    assert max(model.peak for model in replicas) > 2
    manifest = json.loads((cells[-1].run_dir / "manifest.json").read_text())
    assert manifest["model"]["pool"] == "base-url"


def test_the_endpoint_rate_holds_across_cells(tmp_path: Path) -> None:
    """--rpm 300 for the sweep: requests from all cells evenly paced, 0.2 s apart."""
    model = InFlight(delay=0.0)
    with FakeOpenAIServer(responder=model) as server:
        options = RunConfig.from_options(
            base_url=server.base_url, concurrency=4, requests_per_minute=300, use_cache=False
        )
        cells = coin_cells(tmp_path, "openai:fake-model", range(1, 3))
        _, failed = run_cells_on_ray(str(EXAMPLE), cells, options)
    assert failed == []
    arrivals = model.arrivals
    assert len(arrivals) == 4 * 3
    # Any 5 requests in a row span at least 4 intervals, less 0.3 s for scheduling noise on a
    # busy machine (2 cells each paced alone would send 5 in about 0.4 s).
    spans = [b - a for a, b in zip(arrivals, arrivals[4:], strict=False)]
    assert min(spans) >= 4 * 0.2 - 0.3, spans


def test_a_failing_cell_is_retried_resumed_and_reported(tmp_path: Path, capsys) -> None:
    scenario = tmp_path / "flaky_coins.py"
    scenario.write_text(EXAMPLE.read_text() + FLAKY)
    (tmp_path / "broken").touch()
    out = tmp_path / "sweep"
    args = ["sweep", str(scenario), "--vary", "rounds=1,2,3", "--n-personas", "3"]
    code = main([*args, "--executor", "ray", "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1
    assert "1 of 3 cells failed (scripted__rounds=3)" in err
    assert "OSError: the disk is on fire" in err
    assert not (out / "combined.csv").exists()  # no table passed off as the sweep's
    attempts = (tmp_path / "attempts-3").read_text().splitlines()
    assert len(attempts) == 1 + CELL_RETRIES
    # rounds=2 failed in round 2 and was retried: the retry resumed the run, not restarted it.
    resumed = out / "scripted__rounds=2"
    assert json.loads((resumed / "manifest.json").read_text())["status"] == "complete"
    with SQLiteEventStore(resumed / "events.sqlite") as store:
        kinds = [event.kind for event in store.read()]
    assert kinds.count("run.started") == 1 and kinds.count("run.completed") == 1
    assert kinds.count("round.started") == 2
    for done in ("scripted__rounds=1", "scripted__rounds=2"):
        assert json.loads((out / done / "manifest.json").read_text())["status"] == "complete"
    # The same command, once the cause is gone, resumes the failed cell and writes the table.
    (tmp_path / "broken").unlink()
    assert main([*args, "--executor", "ray", "--out", str(out), "--no-progress"]) == 0
    with SQLiteEventStore(out / "scripted__rounds=3" / "events.sqlite") as store:
        kinds = [event.kind for event in store.read()]
    assert kinds.count("run.started") == 1 and kinds.count("round.started") == 3  # resumed
    assert len((out / "combined.csv").read_text().splitlines()) == 4
