"""The reading audit: re-read a seeded sample of a run's readings with an independent reader.

Every reader of model text logs what it read (`reading.made`: the reader's name, the text, the
status, the value and the rule that read it). A reader tuned on its own corpus measures that
corpus, so each run can check its readings against a reader that shares none of its rules: the
library reader registered for that reader's name (`register_reader`), or a bound model
(`personasim audit RUN --role reader=SPEC`). For each reader the audit samples readings that
gave a value, re-reads their texts and counts

- **agree**: the auditor reads the same value;
- **disagree**: the auditor reads another value (a wrong read by one of the two);
- **unconfirmed**: the auditor reads no value (it abstains, or finds the text ambiguous).

The estimated wrong-read rate is disagree / (agree + disagree) with a Wilson interval; a reader
whose interval's upper bound is above the limit (default 5 %) makes the run not valid, and so
does a reader of which no sampled reading could be confirmed. A reader with no independent
reader (and no bound model) is listed as not audited, with the reason. A library auditor
agrees by construction with readings both readers already agreed on (`agree`), so it checks
the single-reader readings; a bound model checks every kind (docs/readers.md).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from personasim.simulation.core.reading import Reading, independent_reader, same_value
from personasim.simulation.log.events import Event

__all__ = [
    "AUDIT_FILE",
    "AuditOptions",
    "Reread",
    "apply_audit",
    "audit_failure",
    "audit_readings",
    "audit_summary",
    "library_reread",
    "logged_readings",
    "reading_counts",
    "wilson_interval",
]

AUDIT_FILE = "readings_audit"
"""The report's name under a run's `reports/` (`.md`, and `.json` beside it)."""

Reread = Callable[[str, str, Mapping[str, Any]], Awaitable[Reading | None]]
"""An auditor: (reader name, text, the labels logged beside it) → its reading, or None when
it has no reading for that reader."""

_SHOWN_TEXT = 160
"""Characters of a disagreeing text quoted in the report."""


@dataclass(frozen=True)
class AuditOptions:
    """How many readings per reader to re-read, with which seed, and the validity limit."""

    sample: int = 200
    seed: int = 0
    max_wrong_rate: float = 0.05
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.sample < 1:
            raise ValueError(f"the audit's sample must be at least 1, got {self.sample}")
        if not 0.0 <= self.max_wrong_rate < 1.0:
            raise ValueError(f"--max-wrong-read-rate must be in [0, 1), got {self.max_wrong_rate}")


def logged_readings(events: Iterable[Event]) -> list[dict[str, Any]]:
    """The `reading.made` payloads of a log, each with its event's seq and agent."""
    return [
        {**event.payload, "seq": event.seq, "agent_id": event.agent_id}
        for event in events
        if event.kind == "reading.made"
    ]


def reading_counts(readings: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per reader: how many texts were read, and how many were read, unreadable or ambiguous;
    and how many values each rule or role produced."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    rules: dict[str, Counter[str]] = defaultdict(Counter)
    for reading in readings:
        counts[reading["reader"]][reading["status"]] += 1
        if reading["status"] == "read":
            rules[reading["reader"]][reading.get("by") or "unnamed"] += 1
    return {
        reader: {
            "n": sum(count.values()),
            "read": count["read"],
            "unreadable": count["unreadable"],
            "ambiguous": count["ambiguous"],
            "by": dict(sorted(rules[reader].items())),
        }
        for reader, count in sorted(counts.items())
    }


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of a proportion k/n (scipy); None when n is 0 (undefined)."""
    if n == 0:
        return None
    from scipy.stats import binomtest

    interval = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(interval.low), float(interval.high)


async def library_reread(reader: str, text: str, context: Mapping[str, Any]) -> Reading | None:
    """The independent reader registered for `reader` (None: there is none)."""
    independent = independent_reader(reader)
    return None if independent is None else independent(text, context)


def _context(reading: Mapping[str, Any]) -> dict[str, Any]:
    """The labels logged beside a reading (what its independent reader may need)."""
    own = {"reader", "text", "status", "value", "reason", "by", "candidates", "seq", "agent_id"}
    return {key: value for key, value in reading.items() if key not in own}


async def audit_readings(
    readings: list[dict[str, Any]], options: AuditOptions, reread: Reread, auditor: str
) -> dict[str, Any]:
    """Re-read a seeded sample of each reader's valued readings with `reread`; per reader the
    counts, the wrong-read rate and its interval, and whether it is within the limit."""
    by_reader: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for reading in readings:
        by_reader[reading["reader"]].append(reading)
    rng = random.Random(options.seed)
    results = {}
    for reader, logged in sorted(by_reader.items()):
        valued = [r for r in logged if r["status"] == "read"]
        sample = sorted(rng.sample(valued, min(options.sample, len(valued))), key=_seq)
        results[reader] = await _audit_one(reader, logged, sample, options, reread)
    audited = [r for r in results.values() if r["audited"]]
    return {
        "auditor": auditor,
        "sample": options.sample,
        "seed": options.seed,
        "max_wrong_rate": options.max_wrong_rate,
        "confidence": options.confidence,
        "readers": results,
        "ok": all(r["ok"] for r in audited),
    }


def _seq(reading: Mapping[str, Any]) -> int:
    return int(reading["seq"])


async def _audit_one(
    reader: str,
    logged: list[dict[str, Any]],
    sample: list[dict[str, Any]],
    options: AuditOptions,
    reread: Reread,
) -> dict[str, Any]:
    outcome: Counter[str] = Counter()
    disagreements = []
    for reading in sample:
        second = await reread(reader, reading["text"], _context(reading))
        if second is None:
            return _not_audited(reader, logged, "no independent reader is registered for it")
        if not second.ok:
            outcome["unconfirmed"] += 1
        elif same_value(second.value, reading["value"]):
            outcome["agree"] += 1
        else:
            outcome["disagree"] += 1
            disagreements.append(_disagreement(reading, second))
    return _verdict(reader, logged, sample, outcome, disagreements, options)


def _verdict(
    reader: str,
    logged: list[dict[str, Any]],
    sample: list[dict[str, Any]],
    outcome: Counter[str],
    disagreements: list[dict[str, Any]],
    options: AuditOptions,
) -> dict[str, Any]:
    confirmed = outcome["agree"] + outcome["disagree"]
    interval = wilson_interval(outcome["disagree"], confirmed, options.confidence)
    result: dict[str, Any] = {
        "audited": True,
        "readings": len(logged),
        "valued": sum(r["status"] == "read" for r in logged),
        "sampled": len(sample),
        "agree": outcome["agree"],
        "disagree": outcome["disagree"],
        "unconfirmed": outcome["unconfirmed"],
        "wrong_rate": outcome["disagree"] / confirmed if confirmed else None,
        "interval": list(interval) if interval else None,
        "disagreements": disagreements,
    }
    if not sample:
        result.update(ok=True, note="no reading gave a value, so none was audited")
    elif interval is None:
        result.update(ok=False, undefined=f"the auditor confirmed none of the {len(sample)}")
    else:
        result["ok"] = interval[1] <= options.max_wrong_rate
    return result


def _not_audited(reader: str, logged: list[dict[str, Any]], why: str) -> dict[str, Any]:
    return {"audited": False, "readings": len(logged), "ok": True, "reason": why}


def _disagreement(reading: Mapping[str, Any], second: Reading) -> dict[str, Any]:
    text = " ".join(str(reading["text"]).split())
    return {
        "seq": reading["seq"],
        "agent_id": reading.get("agent_id"),
        "logged": reading["value"],
        "logged_by": reading.get("by"),
        "auditor": second.value,
        "auditor_by": second.by,
        "text": text if len(text) <= _SHOWN_TEXT else text[: _SHOWN_TEXT - 1] + "…",
    }


def audit_summary(audit: Mapping[str, Any]) -> list[str]:
    """One line per reader: the wrong-read estimate with its interval and n, or why none."""
    if not audit["readers"]:
        return ["no reading was logged in this run (a run made before readings were logged)"]
    lines = []
    for reader, result in audit["readers"].items():
        if not result["audited"]:
            lines.append(f"{reader}: not audited ({result['reason']})")
            continue
        head = (
            f"{reader}: {result['sampled']} of {result['valued']} readings with a value "
            f"re-read; {result['agree']} agree, {result['disagree']} disagree, "
            f"{result['unconfirmed']} unconfirmed"
        )
        if result["interval"] is None:
            reason = result.get("note") or result.get("undefined")
            lines.append(f"{head}; wrong-read rate undefined ({reason})")
            continue
        low, high = result["interval"]
        verdict = "within" if result["ok"] else "OVER"
        lines.append(
            f"{head}; wrong-read rate {result['wrong_rate']:.1%} "
            f"[{low:.1%}, {high:.1%}], {verdict} the limit of {audit['max_wrong_rate']:.0%}"
        )
    return lines


def apply_audit(manifest: dict[str, Any], audit: Mapping[str, Any]) -> None:
    """Record the audit in the manifest's validity (without the disagreements, which are in
    the report): a reader over the limit, or none confirmed, makes the run not valid. A later
    audit replaces an earlier one (`ok_before_audit` keeps the decisions' verdict)."""
    validity = manifest.setdefault("validity", {"overall": {"ok": True}})
    validity["readings_audit"] = {
        **{key: value for key, value in audit.items() if key != "readers"},
        "readers": {
            reader: {k: v for k, v in result.items() if k != "disagreements"}
            for reader, result in audit["readers"].items()
        },
    }
    overall = validity["overall"]
    before = overall.setdefault("ok_before_audit", bool(overall.get("ok", True)))
    overall["readings_audit_ok"] = bool(audit["ok"])
    overall["ok"] = before and bool(audit["ok"])


def audit_failure(validity: Mapping[str, Any]) -> str | None:
    """Why the reading audit makes a run not valid, in words (None when it does not)."""
    audit = validity.get("readings_audit")
    if not audit or audit["ok"]:
        return None
    bad = []
    for reader, result in audit["readers"].items():
        if result.get("ok", True):
            continue
        if result.get("interval"):
            bad.append(
                f"{reader} wrong-read rate up to {result['interval'][1]:.1%} "
                f"({result['disagree']} of {result['agree'] + result['disagree']} re-read "
                "differently)"
            )
        else:
            bad.append(f"{reader}: {result.get('undefined', 'nothing confirmed')}")
    return (
        f"the reading audit ({audit['auditor']}) is over the limit of "
        f"{audit['max_wrong_rate']:.0%}: {'; '.join(bad)}; see reports/{AUDIT_FILE}.md"
    )
