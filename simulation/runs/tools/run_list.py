"""Finding run directories in a folder and summarising each from its manifest alone.

Shared by `personasim runs` (a table in the terminal) and `personasim view DIR` (the run list
page), so both list the same runs the same way. Only JSON is read (each manifest, and the lock
file that says a run is being written): no scenario, scenario file or log is opened, so listing
a folder of someone else's runs never executes their code. A manifest that cannot be read is a
row marked `damaged`, with the reason, never a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from personasim.simulation.runs.lifecycle.run_dir import (
    EVENTS_FILE,
    MANIFEST_FILE,
    RunError,
    read_manifest,
)
from personasim.simulation.runs.lifecycle.run_lock import lock_holder

__all__ = ["COLUMNS", "MAX_DEPTH", "RunRow", "find_runs", "run_row"]

MAX_DEPTH = 3
"""Levels below DIR searched: a folder of folders of sweeps' cells."""
SIZE_PARAMS = (("n_personas", "personas"), ("n_users", "users"), ("n_questions", "questions"))
"""The scenario parameters that say how many agents or items a run has, in the order read."""
COLUMNS = ("path", "status", "scenario", "model", "n", "validity", "started")


@dataclass(frozen=True)
class RunRow:
    """One run as listed; `sort_key` orders rows newest first (a damaged manifest by its
    file's time)."""

    path: str
    status: str
    scenario: str
    model: str
    n: str
    validity: str
    started: str
    sort_key: str

    def cells(self) -> tuple[str, ...]:
        return tuple(getattr(self, name) for name in COLUMNS)


def find_runs(directory: Path) -> list[RunRow]:
    """A row per run directory at or below `directory`, newest first."""
    rows = sorted(
        (run_row(found, directory) for found in _run_dirs(directory, MAX_DEPTH)),
        key=lambda row: row.path,
    )
    return sorted(rows, key=lambda row: row.sort_key, reverse=True)  # ties: by path


def _run_dirs(directory: Path, depth: int) -> Iterator[Path]:
    """Directories holding a manifest (or a log without one), not searched further; hidden
    folders (the response cache) and unreadable ones are skipped."""
    if (directory / MANIFEST_FILE).exists() or (directory / EVENTS_FILE).exists():
        yield directory
        return
    if depth == 0:
        return
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        if is_dir and not entry.name.startswith("."):
            yield from _run_dirs(Path(entry.path), depth - 1)


def run_row(run_dir: Path, base: Path) -> RunRow:
    """The row of one run directory, read from its manifest alone."""
    path = run_dir.relative_to(base).as_posix() if run_dir != base else "."
    try:
        manifest = read_manifest(run_dir)
        status = manifest["status"]
        if status != "complete" and lock_holder(run_dir) is not None:
            status = "running"
        return RunRow(
            path=path,
            status=status,
            scenario=str(manifest["scenario"]),
            model=_model(manifest),
            n=_size(manifest.get("params")),
            validity=_validity(manifest, partial=status != "complete"),
            started=_started(manifest.get("created_at")),
            sort_key=str(manifest.get("created_at") or _file_time(run_dir / MANIFEST_FILE)),
        )
    except RunError as exc:
        reason = str(exc).removeprefix(f"{run_dir / MANIFEST_FILE}: ").removeprefix(f"{run_dir}: ")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        reason = f"unexpected content ({type(exc).__name__}: {exc})"
    return RunRow(path, "damaged", "", "", "", reason, "", _file_time(run_dir / MANIFEST_FILE))


def _model(manifest: Mapping[str, Any]) -> str:
    """The models the run's roles named (each once), else what its backend record says."""
    roles = manifest.get("roles") or {}
    specs = list(dict.fromkeys(str(s) for specs in roles.values() for s in specs))
    if specs:
        return ", ".join(specs)
    described = manifest["model"]
    name = described.get("spec") or described.get("model") or described.get("backend", "?")
    return str(name)


def _size(params: Any) -> str:
    """How many personas (users, questions) the run has, from its parameters."""
    if not isinstance(params, Mapping):
        return ""
    for name, unit in SIZE_PARAMS:
        if name in params:
            value = params[name]
            return f"all {unit}" if value is None else f"{value} {unit}"
    return ""


def _validity(manifest: Mapping[str, Any], partial: bool) -> str:
    """`valid`, or `not valid: ` and the first reason in a few words (`so far` for a run not
    complete: its decisions until it stopped); `not judged yet` before the run recorded any
    (it is running, or was killed before it could)."""
    validity = manifest.get("validity") or {}
    overall = validity.get("overall")
    if not isinstance(overall, Mapping):
        return "not judged yet"
    verdict = _verdict(validity, overall)
    return f"{verdict} so far" if partial else verdict


def _verdict(validity: Mapping[str, Any], overall: Mapping[str, Any]) -> str:
    """The first reason the run is not valid, in the order `validity_summary` gives them."""
    if overall["ok"]:
        return "valid"
    if not overall.get("decisions"):
        return "not valid: no decision made"
    limit = overall["max_failure_rate"]
    if overall["failure_rate"] > limit:
        return (
            f"not valid: {overall['failed']}/{overall['decisions']} decisions failed "
            f"({overall['failure_rate']:.0%} > {limit:.0%})"
        )
    for reader, entry in (validity.get("readings") or {}).items():
        if not entry.get("ok", True):
            return f"not valid: {reader} unreadable {entry['unread_rate']:.0%} > {limit:.0%}"
    for task, entry in (validity.get("tasks") or {}).items():
        if not entry.get("ok", True):
            return f"not valid: {task} {entry['failed']}/{entry['decisions']} failed"
    if isinstance(audit := validity.get("readings_audit"), Mapping) and not audit.get("ok"):
        return "not valid: reading audit failed"
    return "not valid"


def _started(created_at: Any) -> str:
    """`2026-11-27 15:28Z` from the manifest's `2026-11-27T15:28:07Z`."""
    text = str(created_at or "")
    return f"{text[:10]} {text[11:16]}Z" if len(text) >= 16 else text


def _file_time(path: Path) -> str:
    """A damaged run's place among the others: its manifest's (or folder's) time, in the
    manifest's format."""
    import time

    for candidate in (path, path.parent):
        try:
            return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(candidate.stat().st_mtime))
        except OSError:
            continue
    return ""
