"""When a request has waited so long that a duplicate is likely to answer first.

A hung request (a server that accepted it and never answers) would otherwise cost a whole
`--timeout` and, since a round waits for its last unit, hold up the round. `LLMClient` sends one
duplicate of a request once it has been in flight longer than `HedgePolicy.delay()`: three times
the endpoint's observed 95th-percentile latency, and never less than a floor (2 s), so ordinary
slow answers are not duplicated. The first answer wins; the other request is cancelled. Only
answers count as observations (an error is fast and says nothing about how long answers take),
and no request is hedged before `min_samples` answers have been seen. The rules for errors and
for a duplicate that hangs too are `LLMClient._hedged`'s (docs/events.md, "Hedged requests").
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

__all__ = ["HedgePolicy", "LatencyWindow"]


@dataclass(frozen=True)
class HedgePolicy:
    """Hedge after max(`multiplier` × p95, `floor`) seconds in flight; `enabled=False` never."""

    enabled: bool = True
    multiplier: float = 3.0
    floor: float = 2.0
    min_samples: int = 20
    window: int = 256

    def __post_init__(self) -> None:
        if not (math.isfinite(self.multiplier) and self.multiplier >= 1):
            raise ValueError("the hedge multiplier must be at least 1")
        if not (math.isfinite(self.floor) and self.floor > 0):
            raise ValueError("the hedge floor must be positive")
        if self.min_samples < 1 or self.window < self.min_samples:
            raise ValueError("min_samples must be at least 1 and at most the window")

    def to_json(self) -> dict[str, float | bool]:
        return {"enabled": self.enabled, "multiplier": self.multiplier, "floor_s": self.floor}


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

    def _refresh(self) -> None:
        self._since_refresh = 0
        p95 = self.p95()
        if p95 is None or not self.policy.enabled:
            self._delay = None
        else:
            self._delay = max(self.policy.multiplier * p95, self.policy.floor)
