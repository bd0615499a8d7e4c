"""`Environment`: a place agents enter and leave, with rules that emit events.

Environments hold state and validate actions; they know nothing of prompts. One simulation can
hold several, and an agent is in at most one at a time (`SimAgent.move_to` moves it on).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from personasim.simulation.core.agent import SimAgent
    from personasim.simulation.core.model import Simulation

__all__ = ["Environment", "InvalidActionError"]


class InvalidActionError(ValueError):
    """An action the environment's rules forbid (e.g. sending more than the endowment)."""


class Environment:
    """Base class: subclasses set `kind` and add their rules."""

    kind: ClassVar[str] = "environment"

    def __init__(self, sim: Simulation, name: str | None = None) -> None:
        self.sim = sim
        self.name = name or self.kind
        self.occupants: dict[str, SimAgent] = {}
        sim.add_environment(self)
        self.emit("env.created", {"kind": self.kind, "settings": self.settings()})

    def settings(self) -> dict[str, Any]:
        """JSON-ready rules of this place, logged when it is created."""
        return {}

    def emit(self, kind: str, payload: dict[str, Any], agent_id: str | None = None) -> None:
        self.sim.emit(kind, {"env": self.name, **payload}, agent_id=agent_id)

    def enter(self, agent: SimAgent) -> None:
        if agent.location is not None and agent.location is not self:
            raise InvalidActionError(
                f"{agent.agent_id} is in {agent.location.name!r}; use agent.move_to({self.name!r})"
            )
        agent.location = self
        self.occupants[agent.agent_id] = agent
        self.emit("env.entered", {}, agent_id=agent.agent_id)

    def leave(self, agent: SimAgent) -> None:
        if self.occupants.pop(agent.agent_id, None) is None:
            raise InvalidActionError(f"{agent.agent_id} is not in {self.name!r}")
        agent.location = None
        self.emit("env.left", {}, agent_id=agent.agent_id)
