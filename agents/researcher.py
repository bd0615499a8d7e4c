"""`ResearcherAgent`: the model asked about people in general rather than playing one.

Belief elicitation (seed 001, §4.1) asks the model, as "a researcher studying interpersonal
trust", how an attribute relates to trust. It is an agent so that its questions and answers
are logged, replayed and resumed like any persona's decisions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from personasim.agents.decision import Decision, DecisionTask, decide
from personasim.simulation import SimAgent

if TYPE_CHECKING:
    from personasim.simulation import Simulation

__all__ = ["ResearcherAgent"]


class ResearcherAgent(SimAgent):
    """Answers elicitation questions through the same decision graph as personas."""

    def __init__(self, model: Simulation, agent_id: str, role: str) -> None:
        self.role = role
        super().__init__(model, agent_id=agent_id)

    def describe(self) -> dict[str, Any]:
        return {"role": self.role}

    async def decide(self, task: DecisionTask) -> Decision:
        return await decide(self.model, self.agent_id, task)
