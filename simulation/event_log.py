"""Writing events in units of work, and skipping finished units when a run resumes.

A run is sequential code ("main" scope) that fans out into concurrent branches (one agent's
decision, say). Main-scope events are written as they happen; a branch's events are buffered and
committed in one transaction when the branch finishes, so the store never holds half a branch.

Resume re-executes the run deterministically: main-scope events already in the log and whole
branches already committed are re-derived (their model calls answered from the log) but not
written again; everything after them is written as usual. Re-derivation rebuilds the in-memory
state of agents and environments without any special restore code.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .events import INCIDENT_SCOPE, MAIN_SCOPE, Event, EventStore

__all__ = ["EventLog", "ResumeMismatchError", "ResumeState"]

T = TypeVar("T")


class ResumeMismatchError(RuntimeError):
    """Re-executing a run did not reproduce its log: code, data or parameters changed."""


@dataclass
class ResumeState:
    """What an interrupted run's log already holds."""

    main_kinds: list[str] = field(default_factory=list)
    branch_kinds: dict[str, list[str]] = field(default_factory=dict)
    responses: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    """Logged model answers by scope, then request key, in log order."""

    @classmethod
    def from_store(cls, store: EventStore) -> ResumeState:
        state = cls()
        branches: dict[str, list[str]] = defaultdict(list)
        for event in store.read():
            if event.scope == INCIDENT_SCOPE:
                continue
            if event.scope == MAIN_SCOPE:
                state.main_kinds.append(event.kind)
            else:
                branches[event.scope].append(event.kind)
            if event.kind == "llm.call":
                by_key = state.responses.setdefault(event.scope, {})
                by_key.setdefault(event.payload["request_key"], []).append(
                    event.payload["response"]
                )
        state.branch_kinds = dict(branches)
        return state

    @property
    def event_count(self) -> int:
        return len(self.main_kinds) + sum(len(k) for k in self.branch_kinds.values())


class _Scope:
    """Events of one unit of work; `logged` holds the kinds the log already has for it."""

    def __init__(self, name: str, logged: list[str] | None) -> None:
        self.name = name
        self.logged = logged
        self.pending: list[Event] = []
        self.position = 0

    def replaying(self) -> bool:
        return self.logged is not None and self.position < len(self.logged)

    def check(self, event: Event) -> None:
        """Compare a re-derived event with the logged one at the same position."""
        assert self.logged is not None
        if self.position >= len(self.logged):
            raise ResumeMismatchError(
                f"resume diverged in scope {self.name!r}: re-execution produced more than the "
                f"{len(self.logged)} events the log holds for it ({event.kind!r} is extra); "
                "start a new run instead of resuming"
            )
        expected = self.logged[self.position]
        if expected != event.kind:
            raise ResumeMismatchError(
                f"resume diverged in scope {self.name!r} at event #{self.position + 1}: the log "
                f"has {expected!r}, re-execution produced {event.kind!r}. The code, data or "
                "parameters changed since the run started; start a new run instead of resuming."
            )
        self.position += 1


class EventLog:
    """The one writer of a run's events (see the module docstring for the scope rules)."""

    def __init__(
        self,
        store: EventStore,
        resume: ResumeState | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.resume = resume or ResumeState()
        self._clock = clock
        self._main = _Scope(MAIN_SCOPE, self.resume.main_kinds)
        self._current: ContextVar[_Scope | None] = ContextVar("personasim_scope", default=None)
        self.written = 0

    def emit(
        self,
        kind: str,
        payload: dict[str, Any] | None = None,
        *,
        round: int | None = None,
        agent_id: str | None = None,
    ) -> None:
        scope = self._current.get() or self._main
        event = Event(kind, payload or {}, round, agent_id, scope.name, self._clock())
        if scope.replaying() or (scope.logged is not None and scope is not self._main):
            scope.check(event)  # a finished branch must re-derive exactly what it logged
        elif scope is self._main:
            self._write([event])
        else:
            scope.pending.append(event)

    def logged_response(self, request_key: str) -> dict[str, Any] | None:
        """The answer the current unit of work got for this request before the run stopped.

        Answers are kept per unit and handed out in log order, so two units that sent the same
        request, or one unit that sent it twice, each get back exactly what they got then.
        """
        scope = self._current.get() or self._main
        answers = self.resume.responses.get(scope.name, {}).get(request_key)
        return answers.pop(0) if answers else None

    def incident(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        round: int | None = None,
        agent_id: str | None = None,
    ) -> None:
        """Write an event about the run itself at once (see INCIDENT_SCOPE)."""
        if not self.replaying():
            self._write([Event(kind, payload, round, agent_id, INCIDENT_SCOPE, self._clock())])

    def replaying(self) -> bool:
        """True while the current unit of work is being re-derived from the log."""
        return (self._current.get() or self._main).replaying()

    async def branch(self, name: str, work: Callable[[], Awaitable[T]]) -> T:
        """Run `work` as one unit of work, committed whole when it returns.

        A branch opened inside another runs as part of the outer one.
        """
        if self._current.get() is not None:
            return await work()
        if name in (MAIN_SCOPE, INCIDENT_SCOPE):
            raise ValueError(f"{name!r} is a reserved scope name; name the unit of work otherwise")
        scope = _Scope(name, self.resume.branch_kinds.get(name))
        token = self._current.set(scope)
        try:
            result = await work()
        finally:
            self._current.reset(token)
        self._finish_branch(scope)
        return result

    def _finish_branch(self, scope: _Scope) -> None:
        if scope.logged is not None and scope.position != len(scope.logged):
            raise ResumeMismatchError(
                f"resume diverged in scope {scope.name!r}: the log has {len(scope.logged)} "
                f"events, re-execution produced {scope.position}; start a new run instead"
            )
        self._write(scope.pending)

    def _write(self, events: list[Event]) -> None:
        self.store.append(events)
        self.written += len(events)
