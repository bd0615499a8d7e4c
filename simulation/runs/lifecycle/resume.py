"""Resuming a run directory (`--resume`, `--retry-failed`, `--allow-endpoint-change`).

A run may be resumed only with the settings it started with (its fingerprint, fingerprint.py),
the endpoint URL aside when the user allows the change; whether it is complete is read from its
log, never from the manifest alone (docs/events.md).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

from personasim.simulation.llm.chat import Backend
from personasim.simulation.log.event_log import ResumeState
from personasim.simulation.log.sqlite_store import EventStoreError, SQLiteEventStore
from personasim.simulation.runs.lifecycle.fingerprint import (
    endpoint_change,
    fingerprint_diff,
    input_changes,
)
from personasim.simulation.runs.lifecycle.input_files import ENDPOINTS_INPUT
from personasim.simulation.runs.lifecycle.run_dir import (
    EVENTS_FILE,
    METRICS_FILE,
    RunError,
    RunResult,
    read_manifest,
    utc_now,
)

__all__ = [
    "already_complete",
    "endpoint_rekey",
    "has_lost_calls",
    "keep_request_keys",
    "load_resumable",
    "log_is_complete",
]


def load_resumable(
    run_dir: Path,
    manifest: dict[str, Any],
    allow_endpoint_change: bool = False,
    params_at_default: Collection[str] = (),
) -> dict[str, Any]:
    """The run directory's manifest, when its fingerprint is this command's; else one error
    with a line per differing field. An endpoint change is recorded in `manifest`.

    `params_at_default`: this command's parameters left at their defaults; one the run's
    manifest lacks was added to the scenario since the run started (a newer personasim), and
    its default is what the run did, so it is no difference."""
    previous = read_manifest(run_dir)
    manifest["endpoint_changes"] = list(previous.get("endpoint_changes", []))
    _check_inputs(run_dir, previous, manifest, allow_endpoint_change)
    differences = fingerprint_diff(
        _with_added_params(previous, manifest, params_at_default), manifest
    )
    change = endpoint_change(previous, manifest)
    if change is not None and differences == [f"model.base_url: {change[0]} → {change[1]}"]:
        changes = manifest["endpoint_changes"]
        current = changes[-1]["to"] if changes else change[0]
        if change[1] != current and not allow_endpoint_change:
            raise RunError(
                f"cannot resume {run_dir}: its model's endpoint changed ({current} → "
                f"{change[1]}) for the same model name; pass --allow-endpoint-change if it "
                "serves the same model, or start a new run"
            )
        if change[1] != current:
            changes.append({"from": current, "to": change[1], "at": utc_now()})
        manifest["model"] = previous["model"]  # request keys stay those of the run's start
        differences = []
    if differences:
        raise RunError(
            f"cannot resume {run_dir}: this command differs from the run's start in "
            f"{len(differences)} field(s); repeat the original settings or start a new run\n  "
            + "\n  ".join(differences)
        )
    return previous


def _check_inputs(
    run_dir: Path, previous: dict[str, Any], manifest: dict[str, Any], allow_endpoint_change: bool
) -> None:
    """Refuse an input file whose content changed since the run started, one line naming it
    (an endpoints file only without `--allow-endpoint-change`; with it, the change is
    recorded in the manifest's `input_changes`)."""
    changes = list(previous.get("input_changes", []))
    changed = input_changes(previous, manifest)
    if ENDPOINTS_INPUT in changed and allow_endpoint_change:
        del changed[ENDPOINTS_INPUT]
        before, after = previous["inputs"][ENDPOINTS_INPUT], manifest["inputs"][ENDPOINTS_INPUT]
        changes.append({"input": ENDPOINTS_INPUT, "from": before, "to": after, "at": utc_now()})
    elif ENDPOINTS_INPUT in changed:
        changed[ENDPOINTS_INPUT] += "; pass --allow-endpoint-change if it serves the same model"
    if changed:
        raise RunError(
            f"cannot resume {run_dir}: {'; '.join(changed.values())}; restore it or start a new run"
        )
    if changes:
        manifest["input_changes"] = changes


def _with_added_params(
    previous: dict[str, Any], manifest: dict[str, Any], at_default: Collection[str]
) -> dict[str, Any]:
    """`previous` with the parameters it lacks that this command leaves at their defaults."""
    before, now = previous.get("params") or {}, manifest.get("params") or {}
    added = {name: now[name] for name in at_default if name in now and name not in before}
    return {**previous, "params": {**before, **added}} if added else previous


def log_is_complete(run_dir: Path, previous: dict[str, Any]) -> bool:
    """Whether the log (not the manifest) shows the run complete: one `run.completed` and the
    events the manifest recorded when it finished. False: resume re-executes the run."""
    path = run_dir / EVENTS_FILE
    if not path.is_file():
        raise RunError(f"{path}: the log is missing; start a new run or restore it")
    try:
        with SQLiteEventStore(path) as store:
            count, sha256 = store.digest()
            completed = sum(1 for _ in store.read(kinds=("run.completed",)))
    except EventStoreError as exc:
        raise RunError(
            f"{exc}; `personasim export {run_dir} --salvage` copies the events it can still "
            "read into a new run directory that can be resumed"
        ) from None
    if count == 0 and previous["status"] == "complete":
        raise RunError(f"{path}: the log is empty; start a new run or restore it")
    if completed > 1:
        raise RunError(
            f"{path}: the log holds {completed} run.completed events (two processes wrote it); "
            "it cannot be resumed: start a new run"
        )
    recorded = previous.get("log")
    if completed == 1 and recorded and recorded != {"events": count, "sha256": sha256}:
        raise RunError(
            f"{path}: the log does not match its manifest ({recorded['events']} events "
            f"recorded, {count} found); restore the run directory or start a new run"
        )
    # A run stopped between its last event and its manifest is re-derived whole and finished.
    return completed == 1 and previous["status"] == "complete"


def has_lost_calls(run_dir: Path) -> bool:
    """Whether the run's log has a unit whose decision was lost to a failed model call."""
    with SQLiteEventStore(run_dir / EVENTS_FILE) as store:
        return bool(ResumeState.from_store(store).lost_calls)


def already_complete(
    run_dir: Path, previous: dict[str, Any], retry_failed: bool = False
) -> RunResult:
    """A resume of a run whose log shows it complete: its metrics, nothing run."""
    if not (run_dir / METRICS_FILE).is_file():
        raise RunError(
            f"{run_dir} is complete but has no {METRICS_FILE}; "
            f"`personasim metrics {run_dir}` recomputes it from the log"
        )
    metrics = json.loads((run_dir / METRICS_FILE).read_text())
    nothing = "no failed call to retry" if retry_failed else "nothing to resume"
    return RunResult(run_dir, previous, metrics, [f"already complete; {nothing}"])


def endpoint_rekey(manifest: dict[str, Any]) -> tuple[str, str] | None:
    """(URL the run's requests are keyed under, URL they now go to) after an endpoint change."""
    changes = manifest.get("endpoint_changes") or []
    return (manifest["model"]["base_url"], changes[-1]["to"]) if changes else None


def keep_request_keys(backend: Backend, rekey: tuple[str, str] | None) -> None:
    """After an allowed endpoint change, a backend sending to the new URL keeps the run's
    request keys (and identity) of its first URL, so the log and the resumed run agree."""
    if rekey is not None and backend.identity().get("base_url") == rekey[1]:
        keyed_as = getattr(backend, "keyed_as", None)
        if keyed_as is not None:
            keyed_as(rekey[0])
