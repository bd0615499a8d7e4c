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
from .classroom import Classroom, Grade, GradedBy, extract_final_answer, extract_last_number
from .gsm8k import QuestionFileError, WordProblem, load_word_problems, sample_problems
from .persona_gym import TASKS, GymFileError, GymQuestion, PersonaGym
from .trust_game import TrustGame, TrustOutcome
from .trust_reference import HumanReference, human_reference
from .trust_transfer import TransferReading, read_transfer

__all__ = [
    "TASKS",
    "CareerChat",
    "CareerChatFileError",
    "Classroom",
    "Grade",
    "GradedBy",
    "GymFileError",
    "GymQuestion",
    "HumanReference",
    "PersonaGym",
    "Profile",
    "QuestionFileError",
    "SurveyItem",
    "TransferReading",
    "TrustGame",
    "TrustOutcome",
    "WordProblem",
    "extract_final_answer",
    "extract_last_number",
    "human_reference",
    "load_profiles",
    "load_survey",
    "load_word_problems",
    "read_transfer",
    "sample_problems",
    "synthetic_profiles",
]
