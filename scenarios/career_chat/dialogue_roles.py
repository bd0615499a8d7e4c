"""The three roles of the career-chat dialogues (seed 003, §3): simulated user, out-of-context
detector, assistant; and the optional job-title classifier (`--role classifier`). Each is a
Mesa agent deciding through the decision graph; the prompts are the scenario's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from personasim.agents.persona import Persona
from personasim.agents.persona_agent import PersonaAgent
from personasim.agents.researcher import ResearcherAgent

if TYPE_CHECKING:
    from personasim.simulation import Simulation

__all__ = ["Assistant", "JobTitleClassifier", "OutOfContextDetector", "UserSimulator"]


class UserSimulator(PersonaAgent):
    """A user seeking career advice, playing one profile (Figure 6)."""

    def __init__(
        self,
        model: Simulation,
        profile: dict[str, Any],
        counterfactual: dict[str, str] | None = None,
    ) -> None:
        """`counterfactual`: for a twin of a profile, `of`, `attribute` and `level` (logged)."""
        attributes = {k: v for k, v in profile.items() if k != "id"}
        persona = Persona(str(profile["id"]), attributes, {}, counterfactual)
        super().__init__(model, persona)


class OutOfContextDetector(ResearcherAgent):
    """Checks each question against the profile and first-person framing (Figure 7)."""

    def __init__(self, model: Simulation, agent_id: str = "ooc-detector") -> None:
        super().__init__(model, agent_id, role="out-of-context detector (Figure 7)")


class Assistant(ResearcherAgent):
    """The QA model under study: answers the dialogue and the value survey (§3, §5)."""

    def __init__(self, model: Simulation, agent_id: str = "assistant") -> None:
        super().__init__(model, agent_id, role="assistant (qa_llm, BA_user, BA_dialogue)")


class JobTitleClassifier(ResearcherAgent):
    """Labels each distinct job title with a category and a position level (the authors used a
    zero-shot classifier, §5.1); only with `--role classifier=…`."""

    def __init__(self, model: Simulation, agent_id: str = "job-classifier") -> None:
        super().__init__(model, agent_id, role="job-title classifier (--role classifier)")
