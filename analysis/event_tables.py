"""Reading an event table (see `simulation.events_frame`) and shaping numbers for metrics."""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["agent_payloads", "payloads", "rounded", "shown"]


def payloads(events: pd.DataFrame, kind: str) -> list[dict[str, Any]]:
    """The payloads of one kind of event, in log order."""
    return events.loc[events["kind"] == kind, "payload"].tolist()


def agent_payloads(events: pd.DataFrame, kind: str) -> list[dict[str, Any]]:
    """`{"agent_id", "payload"}` of one kind of event, in log order."""
    return events.loc[events["kind"] == kind, ["agent_id", "payload"]].to_dict("records")


def rounded(value: float | None) -> float | None:
    """6 decimals for metrics files; None for an undefined value (None or NaN)."""
    return None if value is None or pd.isna(value) else round(float(value), 6)


def shown(value: float | None, digits: int = 2) -> str:
    """A metric for a report line: fixed decimals, or "n/a" when undefined."""
    return "n/a" if value is None else f"{value:.{digits}f}"
