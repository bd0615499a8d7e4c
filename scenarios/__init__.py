"""Built-in scenarios, one file each; importing this package registers them."""

from personasim.scenarios.career_chat import CareerChatParams, CareerChatScenario
from personasim.scenarios.career_chat_import import MODEL_BEHAVIOR_ADAPTION
from personasim.scenarios.classroom import ClassroomParams, ClassroomScenario
from personasim.scenarios.persona_gym import PersonaGymParams, PersonaGymScenario
from personasim.scenarios.persona_gym_import import PUBLISHED_SCORES
from personasim.scenarios.persona_journey import PersonaJourney, PersonaJourneyParams
from personasim.scenarios.trust_beliefs import TrustBeliefs, TrustBeliefsParams
from personasim.scenarios.trust_conditioning import TrustConditioning, TrustConditioningParams
from personasim.scenarios.trust_forecast import TrustForecast, TrustForecastParams
from personasim.scenarios.trust_population import TrustPopulation, TrustPopulationParams

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
