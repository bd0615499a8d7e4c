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
from personasim.simulation.runs.reading_audit import audit_failure

__all__ = ["DECISION_KINDS", "ValidityLimits", "validity_from_events", "validity_summary"]

DECISION_KINDS = ("decision.made", "decision.failed", "decision.reask")
CALL_FAILED = "call_failed"
"""A `decision.failed`'s reason when its model call ran out of attempts (else `unparsable`)."""


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
    that ran out of attempts: `failed_calls`), re-asks, failure rate, ok."""
    counts: dict[str, Counter[str]] = {}
    for event in events:
        if event.kind in DECISION_KINDS:
            count = counts.setdefault(event.payload["task"], Counter())
            count[event.kind] += 1
            count[CALL_FAILED] += event.payload.get("reason") == CALL_FAILED
    tasks = {name: _entry(c, limits) for name, c in sorted(counts.items())}
    overall = _entry(sum(counts.values(), Counter()), limits)
    overall["ok"] = overall["ok"] and all(task["ok"] for task in tasks.values())
    return {"overall": overall, "tasks": tasks}


def _entry(counts: Counter[str], limits: ValidityLimits) -> dict[str, Any]:
    parsed, failed = counts["decision.made"], counts["decision.failed"]
    decisions = parsed + failed
    entry: dict[str, Any] = {
        "decisions": decisions,
        "parsed": parsed,
        "failed": failed,
        "failed_calls": counts[CALL_FAILED],
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
    audit = audit_failure(validity)
    if overall["decisions"] == 0:
        return "RUN NOT VALID: no decision was made, so the metrics describe no answer"
    bad = [
        f"{name} {t['failed']} of {t['decisions']} failed ({t['failure_rate']:.0%})"
        for name, t in validity["tasks"].items()
        if not t["ok"]
    ]
    if audit and not bad and overall["failure_rate"] <= overall["max_failure_rate"]:
        return f"RUN NOT VALID: {audit}"
    return (
        f"RUN NOT VALID: failure rate over the limit of {overall['max_failure_rate']:.0%} — "
        f"{'; '.join(bad) or 'overall ' + format(overall['failure_rate'], '.0%')}. "
        "The metrics describe only the answers that parsed; see manifest.json 'validity' and "
        "`personasim replay` for the model's replies" + (f". Also {audit}" if audit else "")
    )
