"""Fixed-archetype trustees M_k (seed 001, §5.1): return min(k, received), no model involved."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from personasim.simulation import SimAgent

if TYPE_CHECKING:
    from personasim.simulation import Simulation

__all__ = ["ARCHETYPE_PATTERN", "TrusteeAgent", "archetype_cap"]

ARCHETYPE_PATTERN = r"^M[0-9]+$"


def archetype_cap(archetype: str) -> int:
    """`"M3"` → 3: the most this trustee ever returns."""
    if not re.fullmatch(ARCHETYPE_PATTERN, archetype):
        raise ValueError(f"unknown trustee archetype {archetype!r}; use M<k> such as M1, M3, M5")
    return int(archetype[1:])


class TrusteeAgent(SimAgent):
    """Returns at most `k` dollars whatever it receives, or everything when it received less."""

    def __init__(self, model: Simulation, archetype: str, agent_id: str | None = None) -> None:
        self.archetype = archetype
        self.cap = archetype_cap(archetype)
        super().__init__(model, agent_id=agent_id or f"trustee-{archetype}")

    def describe(self) -> dict[str, Any]:
        return {"archetype": self.archetype, "max_return": self.cap}

    def respond(self, received: float) -> float:
        return min(self.cap, received)
