"""Built-in scenarios, one package per paper; importing this package registers them."""

from personasim.scenarios.career_chat.importer import MODEL_BEHAVIOR_ADAPTION
from personasim.scenarios.career_chat.scenario import CareerChatParams, CareerChatScenario
from personasim.scenarios.classroom.scenario import ClassroomParams, ClassroomScenario
from personasim.scenarios.persona_gym.importer import PUBLISHED_SCORES
from personasim.scenarios.persona_gym.scenario import PersonaGymParams, PersonaGymScenario
from personasim.scenarios.persona_journey.scenario import PersonaJourney, PersonaJourneyParams
from personasim.scenarios.trust.beliefs import TrustBeliefs, TrustBeliefsParams
from personasim.scenarios.trust.conditioning import TrustConditioning, TrustConditioningParams
from personasim.scenarios.trust.forecast import TrustForecast, TrustForecastParams
from personasim.scenarios.trust.population import TrustPopulation, TrustPopulationParams

__all__ = [
    "MODEL_BEHAVIOR_ADAPTION",
    "PUBLISHED_SCORES",
    "CareerChatParams",
    "CareerChatScenario",
    "ClassroomParams",
    "ClassroomScenario",
    "PersonaGymParams",
    "PersonaGymScenario",
    "PersonaJourney",
    "PersonaJourneyParams",
    "TrustBeliefs",
    "TrustBeliefsParams",
    "TrustConditioning",
    "TrustConditioningParams",
    "TrustForecast",
    "TrustForecastParams",
    "TrustPopulation",
    "TrustPopulationParams",
]
