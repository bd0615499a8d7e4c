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
    ANSWER_FIELDS,
    READER_NAME,
    TOLERANCE,
    follows_format,
    grammar_reading,
    math_verify_reading,
    read_answer,
    read_number,
)
from personasim.environments.classroom.place import ANSWER_TOLERANCE, Classroom, Grade

__all__ = [
    "ANSWER_FIELDS",
    "ANSWER_TOLERANCE",
    "READER_NAME",
    "SHIPPED_PROBLEMS",
    "TOLERANCE",
    "Classroom",
    "Grade",
    "QuestionFileError",
    "WordProblem",
    "follows_format",
    "gold_answer",
    "grammar_reading",
    "load_word_problems",
    "math_verify_reading",
    "parse_number",
    "read_answer",
    "read_number",
    "sample_problems",
    "shipped_problems",
]
