"""When a request has waited so long that a duplicate is likely to answer first.

A hung request (a server that accepted it and never answers) would otherwise cost a whole
`--timeout` and, since a round waits for its last unit, hold up the round. `LLMClient` sends one
duplicate of a request once it has been in flight longer than `LatencyWindow.delay()`: 1.5 times
the endpoint's observed 95th-percentile answer latency, kept between a floor (0.5 s) and a
ceiling (30 s), so an ordinary slow answer is rarely duplicated and a hang costs about one and
a half of the endpoint's slow answers, not a fixed 2 s. Only answers count as observations (an
error is fast and says nothing about how long answers take), and no request is hedged before
`min_samples` answers have been seen (before 20, the nearest-rank p95 is the slowest answer).

A duplicate does not wait for a free slot: when the run's (or its endpoint's) requests in
flight are at their limit — as they are when hung requests hold every slot — it is sent beyond
it, out of a `BeyondLimit` budget of `beyond` × `--concurrency` requests at once (at least 1).
Such duplicates are counted (`beyond_limit` in `llm.call`, the manifest's `llm`). The rules for
errors and for a duplicate that hangs too are `LLMClient._hedged`'s (docs/events.md, "Hedged
requests").
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["BeyondLimit", "HedgePolicy", "LatencyWindow", "Overrun", "hung_message", "slots_full"]


@dataclass(frozen=True)
class HedgePolicy:
    """Hedge after `multiplier` × p95 seconds in flight, kept within [`floor`, `ceiling`];
    `enabled=False` never. A duplicate may exceed the concurrency by `beyond` of it."""

    enabled: bool = True
    multiplier: float = 1.5
    floor: float = 0.5
    ceiling: float = 30.0
    min_samples: int = 5
    window: int = 256
    beyond: float = 0.1

    def __post_init__(self) -> None:
        if not (math.isfinite(self.multiplier) and self.multiplier >= 1):
            raise ValueError("the hedge multiplier must be at least 1")
        if not (math.isfinite(self.floor) and 0 < self.floor <= self.ceiling):
            raise ValueError("the hedge floor must be positive and at most the ceiling")
        if not math.isfinite(self.ceiling):
            raise ValueError("the hedge ceiling must be finite")
        if self.min_samples < 1 or self.window < self.min_samples:
            raise ValueError("min_samples must be at least 1 and at most the window")
        if not (math.isfinite(self.beyond) and 0 <= self.beyond <= 1):
            raise ValueError("the share a hedge may exceed the concurrency by is from 0 to 1")

    def budget(self, concurrency: int) -> int:
        """Duplicates that may be in flight beyond `concurrency` at once (0 when `beyond` is)."""
        return max(1, math.ceil(self.beyond * concurrency)) if self.beyond > 0 else 0

    def to_json(self) -> dict[str, float | bool]:
        return {
            "enabled": self.enabled,
            "multiplier": self.multiplier,
            "floor_s": self.floor,
            "ceiling_s": self.ceiling,
            "beyond_limit": self.beyond,
        }

    @classmethod
    def from_json(cls, recorded: Mapping[str, Any]) -> HedgePolicy:
        """The policy a manifest recorded (`to_json`); what it lacks (an older run's) is the
        default."""
        default = cls()
        return cls(
            enabled=bool(recorded.get("enabled", default.enabled)),
            multiplier=float(recorded.get("multiplier", default.multiplier)),
            floor=float(recorded.get("floor_s", default.floor)),
            ceiling=max(
                float(recorded.get("ceiling_s", default.ceiling)),
                float(recorded.get("floor_s", default.floor)),
            ),
            beyond=float(recorded.get("beyond_limit", default.beyond)),
        )


class LatencyWindow:
    """The latencies of the endpoint's last `policy.window` answers, and the hedge delay.

    The percentile is recomputed every `_REFRESH` answers, not on every call: it is on the path
    of every request and moves slowly.
    """

    _REFRESH = 16

    def __init__(self, policy: HedgePolicy) -> None:
        self.policy = policy
        self._seen: deque[float] = deque(maxlen=policy.window)
        self._since_refresh = 0
        self._delay: float | None = None

    def observe(self, seconds: float) -> None:
        self._seen.append(seconds)
        self._since_refresh += 1
        if self._delay is None or self._since_refresh >= self._REFRESH:
            self._refresh()

    def p95(self) -> float | None:
        """Nearest-rank 95th percentile of the window (None before `min_samples` answers)."""
        if len(self._seen) < self.policy.min_samples:
            return None
        ordered = sorted(self._seen)
        return ordered[math.ceil(0.95 * len(ordered)) - 1]

    def delay(self) -> float | None:
        """Seconds in flight after which a duplicate is sent (None: do not hedge yet)."""
        return self._delay

    def wait(self, sent: list[float], now: float) -> float:
        """Seconds to wait before looking again whether to hedge a request sent at `sent[0]`
        (0 or less: hedge now). Until the delay is known, or while the request waits for its
        slot (`sent` empty), look again after the floor or the delay."""
        if (delay := self._delay) is None:
            return self.policy.floor
        if not sent:
            return delay
        return sent[0] + delay - now

    def _refresh(self) -> None:
        self._since_refresh = 0
        p95 = self.p95()
        policy = self.policy
        if p95 is None or not policy.enabled:
            self._delay = None
        else:
            self._delay = min(max(policy.multiplier * p95, policy.floor), policy.ceiling)


class BeyondLimit:
    """The hedged duplicates a client may have in flight beyond its limits: at most `size` at
    once; `sent` counts every one sent so."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.in_flight = 0
        self.sent = 0

    def take(self) -> bool:
        """One request's place beyond the limit, if the budget has one now."""
        if self.in_flight >= self.size:
            return False
        self.in_flight += 1
        self.sent += 1
        return True

    def give_back(self) -> None:
        self.in_flight -= 1


class Overrun:
    """One duplicate's claim on a `BeyondLimit` budget: taken at most once, by whichever slots
    it finds full (the client's, or on a pool its endpoint's), given back when it ends."""

    __slots__ = ("budget", "holding", "taken")

    def __init__(self, budget: BeyondLimit) -> None:
        self.budget = budget
        self.taken = False
        self.holding = False

    def skips(self, slots: object) -> bool:
        """Whether the duplicate goes without waiting for `slots`: they are full, and it holds
        (or now takes) a place beyond the limit."""
        if not slots_full(slots):
            return False
        if not self.taken:
            self.taken = self.holding = self.budget.take()
        return self.taken

    def close(self) -> None:
        """The request ended: its place goes back to the budget (`taken` still says it had one)."""
        if self.holding:
            self.holding = False
            self.budget.give_back()


def hung_message(waited: float) -> str:
    """Both the request and its duplicate are past the hedge delay while the endpoint answered
    other requests: the attempt ends as a timeout would, so a double hang costs two hedge
    delays, not a whole `--timeout`."""
    return (
        f"no answer within {waited:.1f}s from the request nor from its duplicate, while the "
        "endpoint answered other requests: both presumed hung"
    )


def slots_full(slots: object) -> bool:
    """Whether a limiter's slots are all taken now. Only slots that can say so (an asyncio
    semaphore's `locked()`) are ever exceeded; a limiter held elsewhere (a sweep's Ray actor)
    cannot, and its duplicates wait for a slot like any request."""
    locked = getattr(slots, "locked", None)
    return bool(locked()) if callable(locked) else False
