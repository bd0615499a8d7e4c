"""`RunConfig` (a run's options, built once) and `RunContext` (what a run holds while it runs).

The flat keyword options `run_scenario` has always taken build the same config as the explicit
one; a config and options together give the options' values; a bad value is refused with the
message the runner always gave, before anything is written; a worker's spec, which carries the
config to a worker process, survives pickling; and the context keeps and marks a run that
fails with events in its log, and removes a run directory that fails before its first event.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import re
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any

import pytest

from personasim.simulation import (
    ClientLimits,
    RetryPolicy,
    RunConfig,
    RunError,
    RunSettings,
    Scenario,
    ScenarioParams,
    lock_holder,
    run_scenario,
)
from personasim.simulation.runs.lifecycle.run_context import RunContext
from personasim.simulation.runs.lifecycle.validity import ValidityLimits
from personasim.simulation.runs.workers.decision_workers import WorkerSpec

ENDPOINTS = '[[pools.gpus.endpoints]]\nurl = "http://127.0.0.1:9/v1"\nconcurrency = 3\n'


def test_flat_options_build_the_explicit_config(tmp_path: Path) -> None:
    retry = RetryPolicy(max_attempts=2, timeout=5)
    settings = RunSettings("json_object", 64, ValidityLimits(0.1, 3))
    flat = RunConfig.from_options(
        model="openai:m", base_url="http://127.0.0.1:9/v1", seed=3, out=tmp_path / "r",
        concurrency=4, requests_per_minute=60.0, retry=retry, settings=settings,
        roles={"judge": ("scripted",)}, workers=2, progress=False, use_cache=False,
    )  # fmt: skip
    explicit = RunConfig(
        model="openai:m",
        base_url="http://127.0.0.1:9/v1",
        seed=3,
        out=tmp_path / "r",
        limits=ClientLimits(4, 60.0, retry),
        settings=settings,
        roles={"judge": ("scripted",)},
        workers=2,
        progress=False,
        use_cache=False,
    )
    assert flat == explicit
    # None for settings, roles and retry has always meant the default
    assert RunConfig.from_options(settings=None, roles=None, retry=None) == RunConfig()
    assert RunConfig().limits == ClientLimits(16, None, RetryPolicy())


def test_a_config_is_frozen_and_reads_its_endpoints_file_once(tmp_path: Path) -> None:
    file = tmp_path / "endpoints.toml"
    file.write_text(ENDPOINTS)
    config = RunConfig.from_options(model="openai:m@pool:gpus", endpoints=file)
    with pytest.raises(FrozenInstanceError):
        config.seed = 1  # type: ignore[misc]
    assert config.endpoints is not None and config.endpoints.source == str(file)
    file.unlink()  # read once: a copy of the config needs no file
    assert RunConfig.from_options(config, seed=2).endpoints == config.endpoints


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"seed": -1}, "seed must be an integer of at least 0, got -1"),
        (
            {"retry_failed": True},
            "--retry-failed asks a run's failed units again: it needs --resume",
        ),
        ({"workers": 0}, "--workers must be at least 1, got 0"),
        ({"concurrency": 0}, "concurrency must be at least 1, got 0"),
        ({"requests_per_minute": float("nan")}, "requests_per_minute must be a number greater"),
        ({"endpoints": "no-such-file.toml"}, "no-such-file.toml"),
    ],
)
def test_a_bad_value_is_refused_with_the_runners_message(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(RunError, match=re.escape(message)):
        RunConfig.from_options(**options)


def test_settings_and_unknown_options_are_refused() -> None:
    with pytest.raises(RunError, match=re.escape("--response-format 'xml': use one of text")):
        RunSettings(response_format="xml")  # type: ignore[arg-type]
    with pytest.raises(RunError, match="--max-tokens must be at least 1"):
        RunSettings(max_tokens=0)
    with pytest.raises(TypeError, match="unknown run option\\(s\\): concurency"):
        RunConfig.from_options(concurency=4)


def test_options_override_a_config(tmp_path: Path) -> None:
    base = RunConfig(
        model="scripted:drift=0.1", seed=2, limits=ClientLimits(8, 30.0), use_cache=False
    )
    merged = RunConfig.from_options(base, concurrency=2, out=tmp_path / "r", progress=False)
    assert merged.limits == ClientLimits(2, 30.0)  # the rate limit kept, the cap replaced
    assert (merged.model, merged.seed, merged.use_cache) == ("scripted:drift=0.1", 2, False)
    assert base.limits.concurrency == 8 and base.out is None  # the base is untouched
    result = run_scenario(
        "trust-population", {"n_personas": 2}, config=merged, seed=5, requests_per_minute=None
    )
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert (manifest["seed"], manifest["model_spec"]) == (5, "scripted:drift=0.1")
    assert (manifest["client"]["concurrency"], manifest["client"]["requests_per_minute"]) == (
        2,
        None,
    )
    assert result.run_dir == tmp_path / "r"


def test_a_worker_spec_survives_pickling(tmp_path: Path) -> None:
    """The spec a worker process reads from its pipe: the run's config (an endpoints file and a
    retry policy inside), its bound roles, the request-key mapping and its share."""
    file = tmp_path / "endpoints.toml"
    file.write_text(ENDPOINTS)
    config = RunConfig.from_options(
        model="openai:m@pool:gpus", endpoints=file, roles={"persona": ["openai:m@pool:gpus"]},
        concurrency=6, requests_per_minute=90.0, retry=RetryPolicy(max_attempts=2),
    )  # fmt: skip
    spec = WorkerSpec(
        config,
        {"persona": ("openai:m@pool:gpus",)},
        ("http://127.0.0.1:8/v1", "http://127.0.0.1:9/v1"),
        modules=("personasim.scenarios.trust.population",),
    ).share(1, 4)
    again = pickle.loads(pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL))
    assert again == spec
    assert again.config.endpoints == config.endpoints
    assert again.client_limits() == (2, 22.5)  # its part of 6 in flight and of 90 a minute


class RoundsParams(ScenarioParams):
    rounds: int = 3


class FailsInRoundTwo(Scenario):
    """Emits an event a round and raises in round 2 while `failing` is set."""

    name = "fails-in-round-two"
    summary = "raises in its second round"
    Params = RoundsParams
    failing = True

    def setup(self, sim: Any) -> None:
        pass

    async def play_round(self, sim: Any, round_index: int) -> None:
        sim.emit("test.round", {"round": round_index})
        if round_index == 2 and type(self).failing:
            raise RuntimeError("boom in round 2")

    @classmethod
    def compute_metrics(cls, events: Any) -> dict[str, Any]:
        return {"events": len(events)}


def test_a_run_that_fails_mid_round_is_kept_marked_and_resumable(
    tmp_path: Path, monkeypatch
) -> None:
    out = tmp_path / "r"
    config = RunConfig(out=out, use_cache=False, progress=False)
    with pytest.raises(RuntimeError, match="boom in round 2") as raised:
        run_scenario(FailsInRoundTwo, config=config)
    assert raised.value.run_dir == out  # type: ignore[attr-defined]  # the CLI names it
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["status"], manifest["error"]) == (
        "interrupted",
        "RuntimeError: boom in round 2",
    )
    assert not (out / "metrics.json").exists()
    assert lock_holder(out) is None  # the lock went with the context
    monkeypatch.setattr(FailsInRoundTwo, "failing", False)
    result = run_scenario(FailsInRoundTwo, config=config, resume=True)
    assert result.manifest["status"] == "complete"
    assert result.metrics["metrics"]["events"] > 0


def test_a_context_that_fails_before_the_first_event_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "r"
    manifest = {"scenario": "x"}

    async def fail_inside() -> None:
        async with RunContext(RunConfig(out=out, use_cache=False), "x", manifest) as ctx:
            assert ctx.run_dir == out and lock_holder(out) is not None
            raise ValueError("before any event")

    with pytest.raises(ValueError, match="before any event") as raised:
        asyncio.run(fail_inside())
    assert raised.value.removed_run_dir == out  # type: ignore[attr-defined]
    assert not out.exists()


def test_the_architecture_pages_example_runs(tmp_path: Path, monkeypatch) -> None:
    """docs/architecture.md's `run_config` example ("A run's lifetime"), as written."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text()
    (example,) = re.findall(r"<!-- example: run_config -->\n```python\n(.*?)```", text, re.S)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(compile(example, "docs/architecture.md", "exec"), namespace)
    assert namespace["again"].report == ["already complete; nothing to resume"]
    manifest = json.loads((tmp_path / "runs" / "config-example" / "manifest.json").read_text())
    assert (manifest["seed"], manifest["client"]["concurrency"]) == (1, 4)
