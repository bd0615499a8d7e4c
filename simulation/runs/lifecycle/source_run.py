"""The run a rescore reads: its logged answers, its scores, and the record NEW keeps of it.

A rescore re-plays its source run's scenario with the same settings; every request of a role
it does not rescore is answered from the source run's log (the same unit of work, the same
request, in log order), never by a model. A request the source never sent stops the rescore:
the scenario, its data or its prompts changed since the source ran.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from personasim.simulation.core.scoring import ScoreItems
from personasim.simulation.log.event_log import EventLog, ResumeMismatchError, ResumeState
from personasim.simulation.log.sqlite_store import EventStoreError, SQLiteEventStore
from personasim.simulation.runs.lifecycle.run_dir import EVENTS_FILE, RunError, read_manifest

__all__ = ["SOURCE_SCORES", "SourceRun", "SourceRunMismatchError"]

SOURCE_SCORES = "rescore.source"
"""The event a rescore logs first: the source run's identity and each item's score there."""


class SourceRunMismatchError(ResumeMismatchError):
    """The rescore asked a request its source run never sent (code, data or prompts changed)."""


@dataclass
class SourceRun:
    """A complete run being rescored: `rescored` roles are asked anew, the others answered
    from `answers` (by unit, then request key, in log order)."""

    run_dir: Path
    manifest: dict[str, Any]
    rescored: dict[str, tuple[str, ...]]
    scores: ScoreItems
    items: dict[str, float] = field(default_factory=dict)
    answers: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)

    @classmethod
    def read(
        cls,
        run_dir: Path,
        rescored: Mapping[str, tuple[str, ...]],
        scores: ScoreItems,
        manifest: dict[str, Any] | None = None,
    ) -> SourceRun:
        """The source run as its log holds it; it must be complete and match its manifest."""
        manifest = manifest or read_manifest(run_dir)
        if manifest["status"] != "complete":
            raise RunError(
                f"{run_dir} is {manifest['status']}, not complete: resume it first "
                "(a rescore judges a finished run)"
            )
        try:
            with SQLiteEventStore(run_dir / EVENTS_FILE) as store:
                if store.digest() != _recorded_digest(manifest):
                    raise RunError(
                        f"{run_dir / EVENTS_FILE} does not match its manifest's log record; "
                        "restore the run directory before rescoring it"
                    )
                answers = ResumeState.from_store(store).responses
                decisions = [(e.agent_id, e.payload) for e in store.read(kinds=("decision.made",))]
        except EventStoreError as exc:
            raise RunError(f"{run_dir}: {exc}") from None
        source = cls(run_dir, manifest, dict(rescored), scores, answers=answers)
        source.items = scores.items(decisions)
        return source

    def record(self) -> dict[str, Any]:
        """NEW's manifest `rescore_of`: which run, its log's hash, the roles asked anew."""
        return {
            "run": str(self.run_dir.resolve()),
            "log_events": self.manifest["log"]["events"],
            "log_sha256": self.manifest["log"]["sha256"],
            "roles": {role: list(specs) for role, specs in self.rescored.items()},
            "roles_before": {role: self.manifest["roles"][role] for role in self.rescored},
        }

    def event(self) -> dict[str, Any]:
        """The payload of NEW's `rescore.source` event (the agreement is computed from it)."""
        return {**self.record(), "scores": self.scores.describe(), "items": self.items}

    def answerer(self, log: EventLog) -> Callable[[str, str | None], dict[str, Any] | None]:
        """The `recorded` hook of NEW's model clients: None for a rescored role (ask its
        model), the source's answer for any other, and an error where it has none."""

        def answer(key: str, role: str | None) -> dict[str, Any] | None:
            if role in self.rescored:
                return None
            scope = log.scope_name()
            logged = self.answers.get(scope, {}).get(key)
            if not logged:
                raise SourceRunMismatchError(
                    f"rescore: {self.run_dir} has no answer for a request of role {role!r} in "
                    f"unit {scope!r}; the scenario, its data or its prompts changed since that "
                    "run (a rescore asks no role but the rescored ones)"
                )
            return logged.pop(0)

        return answer


def _recorded_digest(manifest: Mapping[str, Any]) -> tuple[int, str]:
    log = manifest.get("log") or {}
    return log.get("events"), log.get("sha256")
