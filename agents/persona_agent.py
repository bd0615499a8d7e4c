"""`PersonaAgent`: a Mesa agent that plays a persona and decides through the decision graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from personasim.agents.counterfactual import common_draws
from personasim.agents.decision import Decision, DecisionTask, decide
from personasim.agents.persona import Persona
from personasim.simulation import SimAgent

if TYPE_CHECKING:
    from personasim.simulation import Simulation

__all__ = ["PersonaAgent"]


class PersonaAgent(SimAgent):
    """Owns the persona and a memory across rounds; each decision is one graph run."""

    def __init__(self, model: Simulation, persona: Persona) -> None:
        self.persona = persona
        self.memory: list[dict[str, Any]] = []
        super().__init__(model, agent_id=persona.id)

    def describe(self) -> dict[str, Any]:
        return {"persona": self.persona.to_record()}

    async def decide(self, task: DecisionTask) -> Decision:
        return await decide(self.model, self.agent_id, common_draws(task, self.persona))

    def remember(self, **observation: Any) -> None:
        """Keep what happened (e.g. a round's outcome) for later prompts."""
        self.memory.append({"round": self.model.round, **observation})
