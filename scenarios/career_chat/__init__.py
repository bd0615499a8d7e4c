"""`career-chat` (seed 003): sociodemographic adaptation, profile vs dialogue. The scenario,
its pack, tasks, scripted double, metrics, reports and the importer of the authors' answers."""

from personasim.scenarios.career_chat import scripted  # noqa: F401 - registers the scripted rules
from personasim.scenarios.career_chat.importer import MODEL_BEHAVIOR_ADAPTION
from personasim.scenarios.career_chat.scenario import CareerChatParams, CareerChatScenario

__all__ = [
    "MODEL_BEHAVIOR_ADAPTION",
    "CareerChatParams",
    "CareerChatScenario",
]
