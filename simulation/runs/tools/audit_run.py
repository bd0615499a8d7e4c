"""`personasim audit RUN` and `run --audit N`: the reading audit of one run directory.

The run directory is only read, except for what the audit writes: `reports/readings_audit.md`
and `.json`, and the manifest's `validity.readings_audit` (atomically). Readers are looked up
by the names logged in the run, among the readers the installed packages register; no code the
run directory names is imported. A run another process is writing is refused.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from personasim.simulation.runs.lifecycle.atomic_files import write_text_atomic
from personasim.simulation.runs.lifecycle.reading_audit import (
    AUDIT_FILE,
    AuditOptions,
    Reread,
    apply_audit,
    audit_readings,
    audit_summary,
    library_reread,
    logged_readings,
)
from personasim.simulation.runs.lifecycle.run_dir import write_json

if TYPE_CHECKING:
    from personasim.simulation.log.events import EventStore
    from personasim.simulation.runs.lifecycle.run_config import RunConfig

__all__ = [
    "LIBRARY_AUDITOR",
    "audit_run",
    "audit_store",
    "register_readers",
    "write_audit_report",
]

LIBRARY_AUDITOR = "the independent library readers"


def register_readers() -> None:
    """Import the installed scenarios' packages (by the registry, never a file a run directory
    names), so the readers their environments register are known."""
    from personasim.simulation.core.scenario import list_scenarios

    list_scenarios()


def audit_run(
    run_dir: str | Path, options: AuditOptions, reader: RunConfig | None = None
) -> dict[str, Any]:
    """Audit `run_dir`'s readings with the library readers, or with the reader role played by
    `reader.model` (with its URL, cache, limits and retries; the run's own seed)."""
    return asyncio.run(aaudit_run(run_dir, options, reader))


async def aaudit_run(
    run_dir: str | Path, options: AuditOptions, reader: RunConfig | None = None
) -> dict[str, Any]:
    from personasim.simulation.log.sqlite_store import SQLiteEventStore
    from personasim.simulation.runs.lifecycle.run_dir import EVENTS_FILE, RunError, read_manifest
    from personasim.simulation.runs.lifecycle.run_lock import RunLock

    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    if not (run_dir / EVENTS_FILE).is_file():
        raise RunError(f"{run_dir}: no {EVENTS_FILE} (the run's event log); nothing to audit")
    register_readers()
    with RunLock(run_dir), SQLiteEventStore(run_dir / EVENTS_FILE) as store:
        reread, auditor, closing = _auditor(reader, manifest)
        try:
            audit = await audit_store(run_dir, store, manifest, options, reread, auditor)
        finally:
            await closing()
    return {"audit": audit, "manifest": manifest}


async def audit_store(
    run_dir: Path,
    store: EventStore,
    manifest: dict[str, Any],
    options: AuditOptions,
    reread: Reread = library_reread,
    auditor: str = LIBRARY_AUDITOR,
) -> dict[str, Any]:
    """Audit the readings of `store` (the run's open log), write the report and record the
    audit in `manifest` (written to `run_dir`)."""
    from personasim.simulation.runs.lifecycle.run_dir import write_manifest

    readings = logged_readings(store.read(kinds=("reading.made",)))
    audit = await audit_readings(readings, options, reread, auditor)
    write_audit_report(run_dir / "reports", audit)
    apply_audit(manifest, audit)
    write_manifest(run_dir, manifest)
    return audit


def _auditor(
    reader: RunConfig | None, manifest: dict[str, Any]
) -> tuple[Reread, str, Callable[[], Awaitable[None]]]:
    """The re-reading function, its description and how to close what it opened."""

    async def nothing() -> None:
        return None

    if reader is None:
        return library_reread, LIBRARY_AUDITOR, nothing
    from personasim.simulation.runs.lifecycle.model_clients import build_models
    from personasim.simulation.runs.lifecycle.run_start import open_cache
    from personasim.simulation.runs.tools.reader_role import RoleReader

    config = replace(reader, seed=int(manifest.get("seed") or 0))
    cache = open_cache(config.use_cache, config.cache_dir)
    llm = build_models(config, None, cache).main

    async def close() -> None:
        await llm.aclose()
        if cache is not None:
            cache.close()

    described = llm.backend.describe()
    who = f"{described.get('backend')}:{described.get('model')}"  # the manifest's words
    return RoleReader(llm), f"the reader role ({who})", close


def write_audit_report(reports: Path, audit: Mapping[str, Any]) -> Path:
    """`readings_audit.md` (the summary and every disagreement) and `.json` under `reports`."""
    reports.mkdir(parents=True, exist_ok=True)
    write_json(reports / f"{AUDIT_FILE}.json", dict(audit))
    lines = [
        "# Reading audit",
        "",
        f"Auditor: {audit['auditor']}; up to {audit['sample']} readings per reader, seed "
        f"{audit['seed']}; a reader is within the limit when the upper bound of its "
        f"{audit['confidence']:.0%} Wilson interval is at most {audit['max_wrong_rate']:.0%}.",
        "",
        *[f"- {line}" for line in audit_summary(audit)],
    ]
    for reader, result in audit["readers"].items():
        if result.get("disagreements"):
            lines += ["", f"## {reader}: disagreements", ""]
            lines += [
                "| seq | agent | logged (rule) | auditor (rule) | text |",
                "|---|---|---|---|---|",
            ]
            lines += [_row(d) for d in result["disagreements"]]
    path = reports / f"{AUDIT_FILE}.md"
    write_text_atomic(path, "\n".join(lines) + "\n")
    return path


def _row(d: Mapping[str, Any]) -> str:
    text = str(d["text"]).replace("|", "\\|")
    return (
        f"| {d['seq']} | {d['agent_id'] or '—'} | {d['logged']!r} ({d['logged_by']}) | "
        f"{d['auditor']!r} ({d['auditor_by']}) | {text} |"
    )
