"""The run directory: what a run (or an import, or a salvage) writes, and how.

A run directory holds `manifest.json` (written first with status "interrupted", rewritten with
"complete" only at the very end, with the log's event count and SHA-256), `events.sqlite`,
`metrics.json` and `reports/` (only once complete). This module is the one writer of those
files: the runner, `personasim import` and salvage all go through it, so an imported run is
checked by `metrics --check` and resumed by `--resume` exactly like one that was run here.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from personasim.simulation.core.metric_extensions import (
    extended_kinds,
    extended_metrics,
    extended_reports,
)
from personasim.simulation.core.scenario import Scenario, get_scenario
from personasim.simulation.log.event_log import RETRIED_KIND, latest_attempts
from personasim.simulation.log.events import (
    SCHEMA_VERSION,
    EventStore,
    NoRunHeaderError,
    events_frame,
    run_header,
)
from personasim.simulation.log.sqlite_store import SQLiteEventStore
from personasim.simulation.runs.lifecycle.atomic_files import write_json_atomic
from personasim.simulation.runs.lifecycle.reading_audit import logged_readings, reading_counts
from personasim.simulation.runs.lifecycle.run_lock import LOCK_FILE, refuse_if_locked
from personasim.simulation.runs.lifecycle.validity import (
    DECISION_KINDS,
    ValidityLimits,
    validity_from_events,
    with_readings,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "EVENTS_FILE",
    "MANIFEST_FILE",
    "METRICS_FILE",
    "PACKAGES",
    "REPORTS_DIR",
    "RunError",
    "RunResult",
    "compute_run_metrics",
    "create_run_dir",
    "finish_manifest",
    "llm_usage",
    "make_writable_dir",
    "metric_events",
    "new_manifest",
    "package_versions",
    "plan_run_dir",
    "read_manifest",
    "utc_now",
    "write_json",
    "write_manifest",
    "write_metrics",
    "write_run_reports",
]

MANIFEST_FILE = "manifest.json"
EVENTS_FILE = "events.sqlite"
METRICS_FILE = "metrics.json"
REPORTS_DIR = "reports"
PACKAGES = ("personasim", "mesa", "langgraph", "langchain-core", "openai", "numpy", "scipy")
"""Packages whose versions every manifest records."""


class RunError(RuntimeError):
    """A run could not start or did not finish; the message says what to do next."""


@dataclass
class RunResult:
    run_dir: Path
    manifest: dict[str, Any]
    metrics: dict[str, Any]
    report: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        """False when a decision task's failure rate is over the run's limit (exit code 3)."""
        return bool(self.manifest["validity"]["overall"]["ok"])


def create_run_dir(out: str | Path | None, scenario: str, resume: bool = False) -> Path:
    """The run directory to write: `out`, or a new `runs/SCENARIO-TIME` when None.

    Without `resume` it must be new or empty (a lock file aside); with it, it must hold a run.
    """
    run_dir = plan_run_dir(out, scenario, resume)
    make_writable_dir(run_dir, "--out")
    return run_dir


def plan_run_dir(out: str | Path | None, scenario: str, resume: bool = False) -> Path:
    """`create_run_dir`'s checks and name, nothing made: another process writing `out` is
    named first (it is why a directory is not empty)."""
    if out is None:
        if resume:
            raise RunError("--resume needs --out RUN_DIR: the run directory to resume")
        base = Path("runs") / f"{scenario}-{time.strftime('%Y%m%d-%H%M%S')}"
        run_dir, n = base, 1
        while run_dir.exists():
            n += 1
            run_dir = base.with_name(f"{base.name}-{n}")
        return run_dir
    run_dir = Path(out)
    refuse_if_locked(run_dir, "then resume" if resume else "or choose another --out")
    has_run = (run_dir / MANIFEST_FILE).exists()
    if resume and not has_run:
        raise RunError(f"{run_dir}: no run to resume here (no {MANIFEST_FILE})")
    if not resume and run_dir.is_dir() and any(p.name != LOCK_FILE for p in run_dir.iterdir()):
        raise RunError(
            f"{run_dir} already exists and is not empty; pass --resume to continue the run "
            "there, or choose another --out"
        )
    return run_dir


def make_writable_dir(directory: Path, flag: str) -> Path | None:
    """Create a directory, or say in one line why it cannot be (nothing is left behind).

    The first folder it made (`directory` or a parent), None when it was there already."""
    if directory.exists() and not directory.is_dir():
        raise RunError(f"{flag} {directory} is a file, not a directory; choose another {flag}")
    first_new = next((p for p in (*reversed(directory.parents), directory) if not p.exists()), None)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # Named per process: a sweep's workers probe the shared cache folder at the same time.
        probe = directory / f".personasim-write-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        if first_new is not None:
            shutil.rmtree(first_new, ignore_errors=True)
        reason = exc.strerror or str(exc)
        raise RunError(f"cannot write to {directory} ({reason}); choose another {flag}") from None
    return first_new


def new_manifest(
    settings: Mapping[str, Any],
    scenario: str,
    params: Mapping[str, Any],
    seed: int,
    model: Mapping[str, Any],
) -> dict[str, Any]:
    """The fields every manifest starts with, status "interrupted" until it is finished.

    `settings` is `RunSettings.to_json()`; callers add what is their own (client limits,
    roles, prompts, the import record).
    """
    return {
        **settings,
        "schema_version": SCHEMA_VERSION,
        "scenario": scenario,
        "params": dict(params),
        "seed": seed,
        "model": dict(model),
        "packages": package_versions(),
        "status": "interrupted",
        "created_at": utc_now(),
    }


def read_manifest(run_dir: str | Path) -> dict[str, Any]:
    """The run directory's manifest, or a RunError saying why it is not one."""
    path = Path(run_dir) / MANIFEST_FILE
    try:
        manifest = json.loads(path.read_text())
    except (FileNotFoundError, NotADirectoryError):
        raise RunError(f"{run_dir}: not a run directory (no {MANIFEST_FILE})") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunError(f"{path}: unreadable manifest ({exc})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("status"), str):
        raise RunError(f"{path}: not a personasim manifest (no status)")
    return manifest


def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    """Write `manifest.json` as it stands (atomically)."""
    write_json(run_dir / MANIFEST_FILE, manifest)


def finish_manifest(
    run_dir: Path,
    manifest: dict[str, Any],
    store: EventStore,
    validity: ValidityLimits,
    status: str,
    error: str | None = None,
) -> None:
    """Record how the run ended: status, the log's event count and SHA-256 (what resume and
    `metrics --check` compare the log with), model usage and validity, all from the log."""
    decisions = latest_attempts(store.read(kinds=(*DECISION_KINDS, RETRIED_KIND)))
    checked = validity_from_events(decisions, validity)
    checked = with_readings(checked, _reading_counts(store), validity)
    count, sha256 = store.digest() if isinstance(store, SQLiteEventStore) else (None, None)
    manifest.update(
        status=status,
        finished_at=utc_now(),
        log={"events": count, "sha256": sha256},
        llm=llm_usage(store),
        validity={**validity.to_json(), **checked},
    )
    manifest.pop("error", None)
    if error:
        manifest["error"] = error
    write_manifest(run_dir, manifest)


def _reading_counts(store: EventStore) -> dict[str, Any]:
    """Per reader of model text: texts read, read with a value, unreadable, ambiguous."""
    return reading_counts(logged_readings(store.read(kinds=("reading.made",))))


def llm_usage(store: EventStore) -> dict[str, int]:
    """Model calls and tokens counted from the log, so they survive interruption and resume;
    a rescore's answers read from the run it rescores are counted apart (no model call).
    `hedged`: answered calls that sent a duplicate; `beyond_limit`: those whose duplicate went
    beyond the concurrency (simulation/llm/hedging.py)."""
    usage = dict(calls=0, cache_hits=0, failures=0, prompt_tokens=0, completion_tokens=0)
    usage.update(hedged=0, beyond_limit=0)
    for event in store.read(kinds=("llm.call", "llm.error")):
        payload = event.payload
        usage["calls"] += payload["attempts"]
        usage["hedged"] += bool(payload.get("hedged"))
        usage["beyond_limit"] += bool(payload.get("beyond_limit"))
        if event.kind == "llm.error":
            usage["failures"] += 1
        elif payload.get("source") == "source_run":  # a rescore's answers read from its run
            usage["source_run_answers"] = usage.get("source_run_answers", 0) + 1
        elif payload["cached"]:
            usage["cache_hits"] += 1
        else:
            usage["prompt_tokens"] += payload["response"]["usage"]["prompt_tokens"]
            usage["completion_tokens"] += payload["response"]["usage"]["completion_tokens"]
    return usage


def compute_run_metrics(
    store: EventStore, scenario_cls: type[Scenario] | None = None
) -> dict[str, Any]:
    """The run's metrics from its log alone (what `personasim metrics` recomputes).

    The scenario is found by name in the registry unless given.
    """
    scenario_cls = scenario_cls or _scenario_of(store)
    events = metric_events(store, extended_kinds(scenario_cls))
    try:
        header = run_header(events)
    except NoRunHeaderError as exc:
        raise RunError(str(exc)) from None
    return {
        "scenario": header["scenario"],
        "model": header["model"],
        "partial": not (events["kind"] == "run.completed").any(),
        "metrics": extended_metrics(scenario_cls, events),
    }


RUN_KINDS = ("run.started", "run.completed", RETRIED_KIND)
"""Read for every run's metrics, whatever kinds its scenario declares."""


def metric_events(store: EventStore, kinds: Iterable[str] | None = None) -> pd.DataFrame:
    """The frame metrics are computed from: the log's latest attempts (`latest_attempts`),
    only `kinds` (and `RUN_KINDS`) when given, read row by row with shared strings, so that
    memory grows with what the metrics read rather than with the whole log."""
    retried = {e.scope: e.seq or 0 for e in store.read(kinds=(RETRIED_KIND,))}
    wanted = None if kinds is None else sorted({*kinds, *RUN_KINDS})
    latest = (
        e
        for e in store.read(kinds=wanted)
        if e.scope not in retried or (e.seq or 0) >= retried[e.scope]
    )
    return events_frame(latest, shared=True)


def _scenario_of(store: EventStore) -> type[Scenario]:
    """The scenario named by the log's `run.started` event."""
    for event in store.read(kinds=("run.started",)):
        return get_scenario(event.payload["scenario"])
    raise RunError("the event log has no run.started event; it is not a personasim run")


def write_metrics(run_dir: Path, metrics: dict[str, Any]) -> None:
    """Write `metrics.json` (atomically)."""
    write_json(run_dir / METRICS_FILE, metrics)


def write_run_reports(
    run_dir: Path, metrics: dict[str, Any], scenario_cls: type[Scenario] | None = None
) -> list[Path]:
    """The scenario's tables and figures, in `RUN_DIR/reports/`."""
    scenario_cls = scenario_cls or get_scenario(metrics["scenario"])
    directory = run_dir / REPORTS_DIR
    directory.mkdir(exist_ok=True)
    return extended_reports(scenario_cls, metrics["metrics"], directory)


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write atomically (atomic_files.py), so a crash never leaves a half-written file behind
    (nor, when the disk is full, an empty temporary one)."""
    write_json_atomic(path, data)


def utc_now() -> str:
    """The time stamps of a manifest: UTC, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def package_versions() -> dict[str, str]:
    """The installed version of each of `PACKAGES` ("not installed" when it is not)."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = "not installed"
    return versions
