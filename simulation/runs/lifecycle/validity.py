"""Run validity: how many of a run's decisions yielded a usable answer, counted from its log.

A run whose model rarely answers in the requested format still finishes and writes its
metrics, but those metrics describe the few answers that parsed. Validity says so in the
manifest, per decision task and overall, and `personasim run` exits 3 when a failure rate is
over the limit, so a script never mistakes such a run for a good one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from personasim.simulation.log.events import Event
from personasim.simulation.runs.lifecycle.reading_audit import audit_failure

__all__ = [
    "DECISION_KINDS",
    "ValidityLimits",
    "validity_from_events",
    "validity_summary",
    "with_readings",
]

DECISION_KINDS = ("decision.made", "decision.failed", "decision.reask")
CALL_FAILED = "call_failed"
"""A `decision.failed`'s reason when its model call ran out of attempts."""
CONTEXT_EXCEEDED = "context_exceeded"
"""A `decision.failed`'s reason when the unit's own conversation outgrew the model's context
(the other reason is `unparsable`: no usable answer after the re-asks)."""


@dataclass(frozen=True)
class ValidityLimits:
    """When a run counts as valid, and when a group is too small to read; both are in the
    log's `run.started` event, so metrics computed from the log alone can use them."""

    max_failure_rate: float = 0.2
    min_group_n: int = 5

    def __post_init__(self) -> None:
        if not 0.0 <= self.max_failure_rate <= 1.0:
            raise ValueError("--max-failure-rate must be between 0 and 1")
        if self.min_group_n < 1:
            raise ValueError("--min-group-n must be at least 1")

    def to_json(self) -> dict[str, Any]:
        return {"max_failure_rate": self.max_failure_rate, "min_group_n": self.min_group_n}


def validity_from_events(events: Iterable[Event], limits: ValidityLimits) -> dict[str, Any]:
    """Per decision task and overall: decisions, parsed, failed (of which lost to a model call
    that ran out of attempts: `failed_calls`, or to a conversation longer than the model's
    context: `context_exceeded`), re-asks, failure rate, ok."""
    counts: dict[str, Counter[str]] = {}
    for event in events:
        if event.kind in DECISION_KINDS:
            count = counts.setdefault(event.payload["task"], Counter())
            count[event.kind] += 1
            count[CALL_FAILED] += event.payload.get("reason") == CALL_FAILED
            count[CONTEXT_EXCEEDED] += event.payload.get("reason") == CONTEXT_EXCEEDED
    tasks = {name: _entry(c, limits) for name, c in sorted(counts.items())}
    overall = _entry(sum(counts.values(), Counter()), limits)
    overall["ok"] = overall["ok"] and all(task["ok"] for task in tasks.values())
    return {"overall": overall, "tasks": tasks}


def with_readings(
    validity: dict[str, Any], readings: dict[str, dict[str, Any]], limits: ValidityLimits
) -> dict[str, Any]:
    """`validity` with each reader's counts (`reading_counts`): a reader whose texts were
    unreadable or ambiguous more often than the failure-rate limit allows makes the run not
    valid — its values describe only the texts it could read (a classroom answer that states
    no final answer is graded not right, and too many of them make accuracy meaningless)."""
    checked = {}
    for reader, count in readings.items():
        unread = count["unreadable"] + count["ambiguous"]
        rate = round(unread / count["n"], 6) if count["n"] else None
        ok = rate is None or rate <= limits.max_failure_rate
        checked[reader] = {**count, "unread_rate": rate, "ok": ok}
    overall = {**validity["overall"]}
    overall["ok"] = overall["ok"] and all(entry["ok"] for entry in checked.values())
    return {**validity, "overall": overall, "readings": checked}


def _entry(counts: Counter[str], limits: ValidityLimits) -> dict[str, Any]:
    parsed, failed = counts["decision.made"], counts["decision.failed"]
    decisions = parsed + failed
    entry: dict[str, Any] = {
        "decisions": decisions,
        "parsed": parsed,
        "failed": failed,
        "failed_calls": counts[CALL_FAILED],
        "context_exceeded": counts[CONTEXT_EXCEEDED],
        "reasks": counts["decision.reask"],
        "failure_rate": round(failed / decisions, 6) if decisions else None,
        "max_failure_rate": limits.max_failure_rate,
    }
    if decisions == 0:
        entry.update(ok=False, failure_rate_undefined="no decision was made")
    else:
        entry["ok"] = entry["failure_rate"] <= limits.max_failure_rate
    return entry


def validity_summary(validity: dict[str, Any]) -> str | None:
    """The line that opens a run's summary when it is not valid (None when it is)."""
    overall = validity["overall"]
    if overall["ok"]:
        return None
    readings = " Also ".join(
        reason for reason in (_unread_failure(validity), audit_failure(validity)) if reason
    )
    if overall["decisions"] == 0:
        return "RUN NOT VALID: no decision was made, so the metrics describe no answer"
    bad = [
        f"{name} {t['failed']} of {t['decisions']} failed ({t['failure_rate']:.0%})"
        for name, t in validity["tasks"].items()
        if not t["ok"]
    ]
    if readings and not bad and overall["failure_rate"] <= overall["max_failure_rate"]:
        return f"RUN NOT VALID: {readings}"
    return (
        f"RUN NOT VALID: failure rate over the limit of {overall['max_failure_rate']:.0%} — "
        f"{'; '.join(bad) or 'overall ' + format(overall['failure_rate'], '.0%')}. "
        "The metrics describe only the answers that parsed; see manifest.json 'validity' and "
        "`personasim replay` for the model's replies" + (f". Also {readings}" if readings else "")
    )


def _unread_failure(validity: dict[str, Any]) -> str | None:
    """Why too many unreadable or ambiguous texts make a run not valid, in words."""
    bad = [
        f"{reader} {entry['unreadable']} unreadable and {entry['ambiguous']} ambiguous of "
        f"{entry['n']} ({entry['unread_rate']:.0%})"
        for reader, entry in validity.get("readings", {}).items()
        if not entry["ok"]
    ]
    if not bad:
        return None
    limit = validity["overall"]["max_failure_rate"]
    return (
        f"more texts than the limit of {limit:.0%} could not be read — {'; '.join(bad)}; "
        "their values count as not right or missing"
    )
