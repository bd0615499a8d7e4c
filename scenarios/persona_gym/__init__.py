"""`persona-gym` (seed 002): PersonaGym and PersonaScore. The scenario, its packs, tasks,
scripted double, metrics, figures and the importer of the published scores."""

from personasim.scenarios.persona_gym import scripted  # noqa: F401 - registers the scripted rules
from personasim.scenarios.persona_gym.importer import PUBLISHED_SCORES
from personasim.scenarios.persona_gym.scenario import PersonaGymParams, PersonaGymScenario

__all__ = [
    "PUBLISHED_SCORES",
    "PersonaGymParams",
    "PersonaGymScenario",
]
