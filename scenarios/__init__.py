"""Built-in scenarios, one file each; importing this package registers them."""

from .career_chat import CareerChatParams, CareerChatScenario
from .career_chat_import import MODEL_BEHAVIOR_ADAPTION
from .classroom import ClassroomParams, ClassroomScenario
from .persona_gym import PersonaGymParams, PersonaGymScenario
from .persona_gym_import import PUBLISHED_SCORES
from .persona_journey import PersonaJourney, PersonaJourneyParams
from .trust_beliefs import TrustBeliefs, TrustBeliefsParams
from .trust_conditioning import TrustConditioning, TrustConditioningParams
from .trust_forecast import TrustForecast, TrustForecastParams
from .trust_population import TrustPopulation, TrustPopulationParams

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
