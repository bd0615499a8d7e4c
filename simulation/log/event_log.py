"""Writing events in units of work, and skipping finished units when a run resumes.

A run is sequential code ("main" scope) that fans out into concurrent branches (one agent's
decision, say). Main-scope events are written as they happen; a branch's events are buffered and
committed in one transaction when the branch finishes, so the store never holds half a branch.

Resume re-executes the run deterministically: main-scope events already in the log and whole
branches already committed are re-derived (their model calls answered from the log) but not
written again; everything after them is written as usual. Re-derivation rebuilds the in-memory
state of agents and environments without any special restore code.

A model call that ran out of attempts is logged as its decision's `decision.failed` (reason
`call_failed`, or `context_exceeded` for a prompt the unit's conversation made too long, with
the request's key); re-derivation fails that call again, so the unit comes
out as it was. `ResumeState.retry_failed` instead marks those units to run again: the new attempt
is committed under the same scope, after a `unit.retried` event carrying its attempt number, and
the earlier attempt stays in the log. `latest_attempts` is what metrics read: each unit's last.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from personasim.simulation.log.events import INCIDENT_SCOPE, MAIN_SCOPE, Event, EventStore

__all__ = ["RETRIED_KIND", "EventLog", "ResumeMismatchError", "ResumeState", "latest_attempts"]

T = TypeVar("T")

RETRIED_KIND = "unit.retried"
"""The first event of a unit's second or later attempt (`--retry-failed`); payload `attempt`."""


def latest_attempts(events: Iterable[Event]) -> list[Event]:
    """The log without the attempts of a unit that a later attempt replaced (what metrics and
    validity count); events must come in `seq` order, as stores read them."""
    events = list(events)
    last = {e.scope: e.seq for e in events if e.kind == RETRIED_KIND}
    if not last:
        return events
    return [e for e in events if e.scope not in last or (e.seq or 0) >= last[e.scope]]


LOST_CALL_REASONS = ("call_failed", "context_exceeded")
"""A `decision.failed`'s reasons when its model call failed rather than its answer being
unusable: out of attempts, or a prompt the unit's own conversation made too long."""


def _is_lost_call(event: Event) -> bool:
    """A `decision.failed` whose model call failed (not an unusable answer)."""
    return (
        event.kind == "decision.failed"
        and event.payload.get("reason") in LOST_CALL_REASONS
        and "request_key" in event.payload
    )


class ResumeMismatchError(RuntimeError):
    """Re-executing a run did not reproduce its log: code, data or parameters changed."""


@dataclass
class ResumeState:
    """What an interrupted run's log already holds."""

    main_kinds: list[str] = field(default_factory=list)
    branch_kinds: dict[str, list[str]] = field(default_factory=dict)
    responses: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    """Logged model answers by scope, then request key, in log order; a call that ran out of
    attempts is `{"error": ...}` in its place."""
    attempts: dict[str, int] = field(default_factory=dict)
    """The attempt number of each unit's last attempt in the log, for units retried (else 1)."""
    lost_calls: set[str] = field(default_factory=set)
    """Units (branch scopes) whose last attempt has a decision lost to a failed call."""
    retrying: dict[str, int] = field(default_factory=dict)
    """Units to run again (`retry_failed`), with the attempt number the new attempt gets."""
    request_keys: dict[str, list[str | None]] = field(default_factory=dict)
    """By scope, the `request_key` of each logged event in order (None for events without
    one), of the unit's last attempt: a resumed unit must send exactly the requests its logged
    events name."""

    @classmethod
    def from_store(cls, store: EventStore) -> ResumeState:
        state = cls()
        branches: dict[str, list[str]] = defaultdict(list)
        for event in store.read():
            scope = event.scope
            if scope == INCIDENT_SCOPE:
                continue
            if event.kind == RETRIED_KIND:  # a later attempt replaces the unit's earlier ones
                branches[scope].clear()
                state.request_keys.pop(scope, None)
                state.responses.pop(scope, None)
                state.lost_calls.discard(scope)
                state.attempts[scope] = event.payload["attempt"]
            if scope == MAIN_SCOPE:
                state.main_kinds.append(event.kind)
            else:
                branches[scope].append(event.kind)
            state.request_keys.setdefault(scope, []).append(event.payload.get("request_key"))
            if event.kind == "llm.call":
                state._answer(scope, event.payload["request_key"], event.payload["response"])
            elif _is_lost_call(event):
                lost = {"error": event.payload["error"], "reason": event.payload["reason"]}
                state._answer(scope, event.payload["request_key"], lost)
                if scope != MAIN_SCOPE:
                    state.lost_calls.add(scope)
        state.branch_kinds = dict(branches)
        return state

    def _answer(self, scope: str, key: str, answer: dict[str, Any]) -> None:
        self.responses.setdefault(scope, {}).setdefault(key, []).append(answer)

    def retry_failed(self) -> list[str]:
        """Mark the units with a decision lost to a failed call to run again; returns them.

        Their answered calls are still served from the log (a retry asks only what failed);
        a unit whose answers were merely unusable is not retried — that is the model's answer.
        """
        for scope in sorted(self.lost_calls):
            self.branch_kinds.pop(scope, None)
            answers = self.responses.get(scope, {})
            for key in list(answers):
                answers[key] = [a for a in answers[key] if "error" not in a]
            self.retrying[scope] = self.attempts.get(scope, 1) + 1
        retried, self.lost_calls = sorted(self.lost_calls), set()
        return retried

    @property
    def event_count(self) -> int:
        return len(self.main_kinds) + sum(len(k) for k in self.branch_kinds.values())


class _Scope:
    """Events of one unit of work; `logged` holds the kinds the log already has for it."""

    def __init__(
        self, name: str, logged: list[str] | None, logged_keys: list[str | None] | None = None
    ) -> None:
        self.name = name
        self.logged = logged
        self.logged_keys = logged_keys or []
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
        self.check_key(event.payload.get("request_key"))
        self.position += 1

    def check_key(self, key: str | None) -> None:
        """The request a re-derived event names must be the one its logged event names."""
        logged = self.logged_keys[self.position] if self.position < len(self.logged_keys) else None
        if key != logged:
            raise ResumeMismatchError(
                f"resume refused in scope {self.name!r} at event #{self.position + 1}: the log's "
                f"request {_short(logged)} differs from the one this run would send "
                f"({_short(key)}); prompts, model or settings changed since the run started. "
                "Start a new run instead of resuming."
            )

    def sent_before(self, key: str) -> bool:
        """Whether this unit's logged events name the request `key`."""
        return key in self.logged_keys


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
        self._main = _Scope(
            MAIN_SCOPE, self.resume.main_kinds, self.resume.request_keys.get(MAIN_SCOPE)
        )
        self._current: ContextVar[_Scope | None] = ContextVar("personasim_scope", default=None)
        self.written = 0

    def emit(
        self,
        kind: str,
        payload: dict[str, Any] | None = None,
        *,
        round: int | None = None,
        agent_id: str | None = None,
        ts: float | None = None,
    ) -> None:
        """Append an event to the current unit of work; `ts`: when it happened, if not now
        (an event of a worker process, written here when its decision returns)."""
        scope = self._current.get() or self._main
        when = self._clock() if ts is None else ts
        event = Event(kind, payload or {}, round, agent_id, scope.name, when)
        if scope.replaying() or (scope.logged is not None and scope is not self._main):
            try:
                scope.check(event)  # a finished branch must re-derive exactly what it logged
            except ResumeMismatchError as exc:
                raise self._explained(exc) from None
        elif scope is self._main:
            self._write([event])
        else:
            scope.pending.append(event)

    def _event(self, kind: str, payload: dict[str, Any], scope: str) -> Event:
        return Event(kind, payload, None, None, scope, self._clock())

    def _explained(self, exc: ResumeMismatchError) -> ResumeMismatchError:
        """A divergence during `--retry-failed` most likely comes from a retried unit whose new
        outcome later units depend on (an agent's memory of earlier rounds)."""
        if not self.resume.retrying:
            return exc
        units = list(self.resume.retrying)
        named = ", ".join(units[:3]) + (f" and {len(units) - 3} more" if len(units) > 3 else "")
        return ResumeMismatchError(
            f"{exc} — with --retry-failed: a retried unit ({named}) changed what later units "
            "saw, so they cannot be kept; resume without --retry-failed"
        )

    def scope_name(self) -> str:
        """The unit of work being written (its name in `sim.concurrently`, or the main scope):
        a rescore hands each unit the answers the same unit of its source run got."""
        return (self._current.get() or self._main).name

    def logged_response(self, request_key: str) -> dict[str, Any] | None:
        """The answer the current unit of work got for this request before the run stopped.

        Answers are kept per unit and handed out in log order, so two units that sent the same
        request, or one unit that sent it twice, each get back exactly what they got then.
        """
        scope = self._current.get() or self._main
        if scope.replaying() and not scope.sent_before(request_key):
            # Refused before any model is asked: the answer would not be the logged one.
            scope.check_key(request_key)
        answers = self.resume.responses.get(scope.name, {}).get(request_key)
        return answers.pop(0) if answers else None

    def incident(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        round: int | None = None,
        agent_id: str | None = None,
        ts: float | None = None,
    ) -> None:
        """Write an event about the run itself at once (see INCIDENT_SCOPE)."""
        if not self.replaying():
            when = self._clock() if ts is None else ts
            self._write([Event(kind, payload, round, agent_id, INCIDENT_SCOPE, when)])

    def replaying(self) -> bool:
        """True while the current unit of work is being re-derived from the log."""
        return (self._current.get() or self._main).replaying()

    def fresh_unit(self) -> bool:
        """True inside a unit of work that has nothing in the log yet: no event to re-derive and
        no logged answer to hand out, so its work may be done anywhere (a worker process) and
        its events written here when it returns."""
        scope = self._current.get()
        if scope is None or scope.logged is not None:
            return False
        return not self.resume.responses.get(scope.name)

    async def branch(self, name: str, work: Callable[[], Awaitable[T]]) -> T:
        """Run `work` as one unit of work, committed whole when it returns.

        A branch opened inside another runs as part of the outer one.
        """
        if self._current.get() is not None:
            return await work()
        if name in (MAIN_SCOPE, INCIDENT_SCOPE):
            raise ValueError(f"{name!r} is a reserved scope name; name the unit of work otherwise")
        scope = _Scope(name, self.resume.branch_kinds.get(name), self.resume.request_keys.get(name))
        if (attempt := self.resume.retrying.get(name)) is not None:
            scope.pending.append(self._event(RETRIED_KIND, {"attempt": attempt}, name))
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


def _short(key: str | None) -> str:
    return f"key {key[:12]}…" if key else "none"
