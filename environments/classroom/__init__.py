"""The classroom (seed 000): students answer word problems and the answer key grades them;
the word problems and the reader of the number an answer gives."""

from personasim.environments.classroom.gsm8k import (
    SHIPPED_PROBLEMS,
    QuestionFileError,
    WordProblem,
    gold_answer,
    load_word_problems,
    parse_number,
    sample_problems,
    shipped_problems,
)
from personasim.environments.classroom.numeric_answers import (
    MAX_LEAD_WORDS,
    NOT_OWN,
    TOLERANCE,
    AnswerReading,
    Reading,
    follows_format,
    read_answer,
    read_number,
    words_to_number,
)
from personasim.environments.classroom.place import ANSWER_TOLERANCE, Classroom, Grade

__all__ = [
    "ANSWER_TOLERANCE",
    "MAX_LEAD_WORDS",
    "NOT_OWN",
    "SHIPPED_PROBLEMS",
    "TOLERANCE",
    "AnswerReading",
    "Classroom",
    "Grade",
    "QuestionFileError",
    "Reading",
    "WordProblem",
    "follows_format",
    "gold_answer",
    "load_word_problems",
    "parse_number",
    "read_answer",
    "read_number",
    "sample_problems",
    "shipped_problems",
    "words_to_number",
]
