"""`SimAgent`: the Mesa agent every personasim agent derives from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mesa

if TYPE_CHECKING:
    from personasim.simulation.core.environment import Environment
    from personasim.simulation.core.model import Simulation

__all__ = ["SimAgent"]


class SimAgent(mesa.Agent):
    """A Mesa agent with a stable string id, announced in the log when created.

    `describe()` is what replay and metrics know about the agent (its persona, its archetype),
    so subclasses put everything analysis needs there.
    """

    model: Simulation

    def __init__(self, model: Simulation, agent_id: str) -> None:
        super().__init__(model)
        self.agent_id = agent_id
        self.location: Environment | None = None
        model.register_agent_id(self)
        model.emit(
            "agent.created", {"type": type(self).__name__, **self.describe()}, agent_id=agent_id
        )

    def describe(self) -> dict[str, Any]:
        """JSON-ready facts about this agent for the `agent.created` event."""
        return {}

    def move_to(self, environment: Environment) -> None:
        """Leave wherever the agent is and enter `environment`."""
        if self.location is not None:
            self.location.leave(self)
        environment.enter(self)
