"""Reading an event table (see `simulation.events_frame`) and shaping numbers for metrics."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

__all__ = [
    "DEFAULT_MIN_GROUP_N",
    "agent_payloads",
    "min_group_n",
    "payloads",
    "rounded",
    "shown",
]

DEFAULT_MIN_GROUP_N = 5
"""Groups smaller than this are flagged when a run's log does not say otherwise."""


def payloads(events: pd.DataFrame, kind: str) -> list[dict[str, Any]]:
    """The payloads of one kind of event, in log order."""
    return events.loc[events["kind"] == kind, "payload"].tolist()


def agent_payloads(events: pd.DataFrame, kind: str) -> list[dict[str, Any]]:
    """`{"agent_id", "payload"}` of one kind of event, in log order."""
    return events.loc[events["kind"] == kind, ["agent_id", "payload"]].to_dict("records")


def min_group_n(events: pd.DataFrame) -> int:
    """The run's smallest group size that is not flagged as small: `run.started`'s
    `validity.min_group_n`, or 5 for a log written before runs carried it. Read from the log
    so that metrics stay a pure function of the events."""
    started = payloads(events, "run.started")
    validity = (started[0].get("validity") if started else None) or {}
    return int(validity.get("min_group_n", DEFAULT_MIN_GROUP_N))


def rounded(value: float | None) -> float | None:
    """6 decimals for metrics files; None stays None (an optional value, not a statistic).

    A NaN is an undefined statistic that lost its reason: use `analysis.stat_fields` with an
    `Undefined` instead; here it raises.
    """
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        raise ValueError("NaN reached a metric: return Undefined(reason) for an undefined value")
    return round(float(value), 6)


def shown(value: float | None, digits: int = 2) -> str:
    """A number for a report line: fixed decimals, or "n/a" when absent (for a statistic
    that can be undefined use `analysis.shown_stat`, which gives the reason)."""
    return "n/a" if value is None else f"{value:.{digits}f}"
