"""Places agents act in: their rules and state, no prompts."""

from .classroom import Classroom, Grade, extract_final_answer
from .gsm8k import QuestionFileError, WordProblem, load_word_problems, sample_problems
from .persona_gym import TASKS, GymFileError, GymQuestion, PersonaGym
from .trust_game import TrustGame, TrustOutcome

__all__ = [
    "TASKS",
    "Classroom",
    "Grade",
    "GymFileError",
    "GymQuestion",
    "PersonaGym",
    "QuestionFileError",
    "TrustGame",
    "TrustOutcome",
    "WordProblem",
    "extract_final_answer",
    "load_word_problems",
    "sample_problems",
]
