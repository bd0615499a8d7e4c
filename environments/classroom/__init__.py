"""The classroom (seed 000): students answer word problems and the answer key grades them;
the word problems and the reader of the number an answer gives."""

from __future__ import annotations

from personasim.simulation.core.lazy_exports import lazy_exports

_EXPORTS: dict[str, str] = {
    "ANSWER_FIELDS": "personasim.environments.classroom.numeric_answers",
    "ANSWER_TOLERANCE": "personasim.environments.classroom.place",
    "READER_NAME": "personasim.environments.classroom.numeric_answers",
    "SHIPPED_PROBLEMS": "personasim.environments.classroom.gsm8k",
    "TOLERANCE": "personasim.environments.classroom.numeric_answers",
    "Classroom": "personasim.environments.classroom.place",
    "Grade": "personasim.environments.classroom.place",
    "QuestionFileError": "personasim.environments.classroom.gsm8k",
    "WordProblem": "personasim.environments.classroom.gsm8k",
    "follows_format": "personasim.environments.classroom.numeric_answers",
    "gold_answer": "personasim.environments.classroom.gsm8k",
    "grammar_reading": "personasim.environments.classroom.numeric_answers",
    "load_word_problems": "personasim.environments.classroom.gsm8k",
    "math_verify_reading": "personasim.environments.classroom.numeric_answers",
    "parse_number": "personasim.environments.classroom.gsm8k",
    "read_answer": "personasim.environments.classroom.numeric_answers",
    "read_number": "personasim.environments.classroom.numeric_answers",
    "sample_problems": "personasim.environments.classroom.gsm8k",
    "shipped_problems": "personasim.environments.classroom.gsm8k",
}
"""Each public name and the module that defines it, imported on first use."""

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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
