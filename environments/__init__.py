"""Places agents act in: their rules and state, no prompts."""

from .career_chat import (
    CareerChat,
    CareerChatFileError,
    Profile,
    SurveyItem,
    load_profiles,
    load_survey,
    synthetic_profiles,
)
from .classroom import Classroom, Grade
from .gsm8k import QuestionFileError, WordProblem, load_word_problems, sample_problems
from .numeric_answers import AnswerReading, Reading, follows_format, read_answer
from .persona_gym import TASKS, GymFileError, GymQuestion, PersonaGym
from .trust_game import TrustGame, TrustOutcome
from .trust_reference import HumanReference, human_reference
from .trust_transfer import TransferReading, read_transfer

__all__ = [
    "TASKS",
    "AnswerReading",
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
    "Reading",
    "SurveyItem",
    "TransferReading",
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
