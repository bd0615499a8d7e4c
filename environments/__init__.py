"""Places agents act in: their rules and state, no prompts."""

from personasim.environments.career_chat import (
    CareerChat,
    CareerChatFileError,
    Profile,
    SurveyItem,
    load_profiles,
    load_survey,
    synthetic_profiles,
)
from personasim.environments.classroom.gsm8k import (
    QuestionFileError,
    WordProblem,
    load_word_problems,
    sample_problems,
)
from personasim.environments.classroom.numeric_answers import follows_format, read_answer
from personasim.environments.classroom.place import Classroom, Grade
from personasim.environments.persona_gym.place import TASKS, GymFileError, GymQuestion, PersonaGym
from personasim.environments.trust_game.place import TrustGame, TrustOutcome
from personasim.environments.trust_game.reference import HumanReference, human_reference
from personasim.environments.trust_game.transfer import read_transfer

__all__ = [
    "TASKS",
    "CareerChat",
    "CareerChatFileError",
    "Classroom",
    "Grade",
    "GymFileError",
    "GymQuestion",
    "HumanReference",
    "PersonaGym",
    "Profile",
    "QuestionFileError",
    "SurveyItem",
    "TrustGame",
    "TrustOutcome",
    "WordProblem",
    "follows_format",
    "human_reference",
    "load_profiles",
    "load_survey",
    "load_word_problems",
    "read_answer",
    "read_transfer",
    "sample_problems",
    "synthetic_profiles",
]
