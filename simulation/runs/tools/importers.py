"""Outputs produced elsewhere turned into a run directory (`personasim import`).

A scenario (or its analysis) registers an `ImportFormat`: the files it reads, its options, and
a `build` function that turns them into events of our schema. `import_run` then writes what a
run writes — manifest, event log, metrics, reports — through the run-directory API the runner
uses too (`run_dir.py`), so `metrics --check`, `replay`, tables and figures work on the
imported outputs unchanged. What marks the run as imported: the
`run.started` event and the manifest carry `import` (format, and per source file its name,
size and SHA-256); no `llm.call` is logged (no model was called here), and the manifest's
`llm` counts are zero.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from personasim.simulation.base.registry import Registry, origin_of
from personasim.simulation.core.metric_extensions import extended_report
from personasim.simulation.core.scenario import ScenarioError, get_scenario
from personasim.simulation.core.stages import printed_stages, stage
from personasim.simulation.log.event_log import EventLog
from personasim.simulation.log.sqlite_store import SQLiteEventStore
from personasim.simulation.runs.lifecycle.run_dir import (
    EVENTS_FILE,
    RunResult,
    compute_run_metrics,
    create_run_dir,
    finish_manifest,
    new_manifest,
    write_manifest,
    write_metrics,
    write_run_reports,
)
from personasim.simulation.runs.runner import RunSettings

__all__ = [
    "IMPORT_FORMATS",
    "IMPORT_FORMATS_ENTRY_POINT_GROUP",
    "ImportFormat",
    "ImportedEvent",
    "ImportedRun",
    "file_identity",
    "get_import_format",
    "import_format",
    "import_formats",
    "import_run",
    "register_import_format",
]


@dataclass(frozen=True)
class ImportedEvent:
    """One event to log: kind, payload, and optionally its agent and round."""

    kind: str
    payload: dict[str, Any]
    agent_id: str | None = None
    round: int | None = None


@dataclass(frozen=True)
class ImportedRun:
    """What a format's `build` returns: the scenario's parameters, the model it describes
    (the manifest's `model`), and the events after `run.started`."""

    params: dict[str, Any]
    model: dict[str, Any]
    events: list[ImportedEvent]


@dataclass(frozen=True)
class ImportFormat:
    """`files`: required input files, option name → help; `options`: optional values,
    option name → (default, help). `build(files, options)` raises ScenarioError on bad input,
    naming the file and line."""

    scenario: str
    name: str
    summary: str
    files: Mapping[str, str]
    build: Callable[[Mapping[str, Path], Mapping[str, str]], ImportedRun]
    options: Mapping[str, tuple[str, str]] = field(default_factory=dict)


IMPORT_FORMATS_ENTRY_POINT_GROUP = "personasim.import_formats"
"""Entry-point group of outside packages' import formats (each entry names a module whose
import registers its formats; docs/scenarios.md, "Extension points")."""

IMPORT_FORMATS: Registry[ImportFormat] = Registry(
    "import format", IMPORT_FORMATS_ENTRY_POINT_GROUP, error=ScenarioError
)
"""Every format by `SCENARIO/FORMAT`. Ours register when their scenario's package is imported;
a missing one loads the entry-point group (each entry point once)."""

Build = Callable[[Mapping[str, Path], Mapping[str, str]], ImportedRun]


def register_import_format(fmt: ImportFormat) -> ImportFormat:
    """Register `fmt` under its scenario and name; another format under a taken pair is
    refused (the same `build` loaded again replaces it)."""
    return IMPORT_FORMATS.register(f"{fmt.scenario}/{fmt.name}", fmt, origin_of(fmt.build))


def import_format(
    scenario: str,
    name: str,
    summary: str,
    files: Mapping[str, str],
    options: Mapping[str, tuple[str, str]] | None = None,
) -> Callable[[Build], Build]:
    """Decorator of a format's `build` function: registers it as `ImportFormat(scenario, name,
    summary, files, build, options)` and returns the function unchanged."""

    def register(build: Build) -> Build:
        register_import_format(ImportFormat(scenario, name, summary, files, build, options or {}))
        return build

    return register


def import_formats(scenario: str | None = None) -> list[ImportFormat]:
    """Registered formats, of one scenario or all (the entry-point group's included)."""
    return _sorted(IMPORT_FORMATS.items().values(), scenario)


def get_import_format(scenario: str, name: str) -> ImportFormat:
    fmt = IMPORT_FORMATS.get(f"{scenario}/{name}")
    if fmt is None:
        formats = _sorted(IMPORT_FORMATS.items(strict=False).values(), scenario)
        known = ", ".join(f.name for f in formats) or "none"
        raise ScenarioError(
            f"no import format {name!r} for {scenario} (formats: {known})"
            f"{IMPORT_FORMATS.failure_note()}"
        )
    return fmt


def _sorted(formats: Iterable[ImportFormat], scenario: str | None) -> list[ImportFormat]:
    chosen = [f for f in formats if scenario in (None, f.scenario)]
    return sorted(chosen, key=lambda f: (f.scenario, f.name))


def file_identity(path: Path) -> dict[str, Any]:
    """A source file's identity: name, size and SHA-256 (not its directory, which differs
    between machines). Raises OSError when it cannot be read."""
    data = path.read_bytes()
    return {"file": path.name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _source(flag: str, path: Path) -> dict[str, Any]:
    try:
        return file_identity(path)
    except OSError as exc:
        raise ScenarioError(f"--{flag} {path}: {exc.strerror or exc}") from None


def import_run(
    scenario: str,
    format_name: str,
    files: Mapping[str, Path],
    options: Mapping[str, str] | None = None,
    out: str | Path | None = None,
    settings: RunSettings | None = None,
    progress: bool = False,
) -> RunResult:
    """Read the files with the format, then write a complete run directory at `out`.

    Every input is read and checked before the directory is created. With `progress`, each
    stage (reading, events, metrics and the analysis's own stages, reports) is printed on
    stderr with the time elapsed."""
    with printed_stages(enabled=progress):
        return _import_run(scenario, format_name, files, options, out, settings)


def _import_run(
    scenario: str,
    format_name: str,
    files: Mapping[str, Path],
    options: Mapping[str, str] | None,
    out: str | Path | None,
    settings: RunSettings | None,
) -> RunResult:
    scenario_cls = get_scenario(scenario)  # imports its package, which registers its formats
    fmt = get_import_format(scenario, format_name)
    missing = [f"--{name}" for name in fmt.files if files.get(name) is None]
    if missing:
        raise ScenarioError(f"import {scenario} --format {format_name} needs {', '.join(missing)}")
    values = {name: default for name, (default, _) in fmt.options.items()}
    values.update({k: str(v) for k, v in (options or {}).items() if v is not None})
    sources = {name: _source(name, Path(files[name])) for name in fmt.files}
    stage(f"reading {', '.join(s['file'] for s in sources.values())}")
    imported = fmt.build({n: Path(files[n]) for n in fmt.files}, values)
    params = scenario_cls.parse_params(imported.params)
    settings = settings or RunSettings()
    record = {"format": format_name, "options": values, "sources": sources}
    manifest = new_manifest(
        settings.to_json(), scenario, params.model_dump(mode="json"), 0, imported.model
    )
    manifest.update(roles={}, prompts=None)
    manifest["import"] = record
    run_dir = create_run_dir(out, scenario)
    write_manifest(run_dir, manifest)
    with SQLiteEventStore(run_dir / EVENTS_FILE) as store:
        log = EventLog(store)
        header = ("scenario", "params", "seed", "model", "roles", "prompts", "import")
        log.emit("run.started", {k: manifest[k] for k in header + tuple(settings.to_json())})
        stage(f"writing {len(imported.events):,} events")
        for event in imported.events:
            log.emit(event.kind, event.payload, round=event.round, agent_id=event.agent_id)
        log.emit("run.completed")
        stage("computing metrics")
        metrics = compute_run_metrics(store, scenario_cls)
        write_metrics(run_dir, metrics)
        stage("writing reports")
        write_run_reports(run_dir, metrics, scenario_cls)
        finish_manifest(run_dir, manifest, store, settings.validity, "complete")
        stage("done")
    lines = [f"imported {format_name} ({', '.join(s['file'] for s in sources.values())})"]
    return RunResult(
        run_dir, manifest, metrics, lines + extended_report(scenario_cls, metrics["metrics"])
    )
