"""The answers of PersonaGym's tasks (seed 002): their schemas and the evaluator's score.

The reasoners answer JSON in every response format (the prompts ask for these schemas in text);
the persona and the evaluators answer text, or these schemas under a structured format. The
scenario and the scripted rules both import them from here, since agents cannot import
scenarios. An evaluator ends 'Therefore, the final score is N' (Appendix A.5), a whole number 1–5;
several different final scores without a correction marker between them are ambiguous.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from personasim.agents.decision import DecisionParseError, parse_nonempty
from personasim.simulation import InvalidActionError, corrected

__all__ = [
    "Evaluation",
    "GeneratedQuestion",
    "PersonaAnswer",
    "QuestionSet",
    "ScoreExamples",
    "SettingSelection",
    "checked",
    "parse_score",
    "read_answer",
    "read_score",
]

T = TypeVar("T")

_FINAL_SCORE = re.compile(
    r"(?:therefore,?\s*)?(?:the\s+)?final score is(?:[:*$\s]|\\boxed\{)*(-?\d+(?:\.\d+)?)",
    re.IGNORECASE,
)


class SettingSelection(BaseModel):
    settings: list[str] = Field(description="the selected environments, spelled as listed")


class GeneratedQuestion(BaseModel):
    setting: str = Field(description="the setting the question is set in, spelled as listed")
    question: str = Field(description="the question put to the persona")


class QuestionSet(BaseModel):
    questions: list[GeneratedQuestion]


class ScoreExamples(BaseModel):
    score_1: str = Field(min_length=1, description="an answer that deserves score 1")
    score_2: str = Field(min_length=1, description="an answer that deserves score 2")
    score_3: str = Field(min_length=1, description="an answer that deserves score 3")
    score_4: str = Field(min_length=1, description="an answer that deserves score 4")
    score_5: str = Field(min_length=1, description="an answer that deserves score 5")


class PersonaAnswer(BaseModel):
    """The persona's answer to a question, under a structured response format."""

    response: str


class Evaluation(BaseModel):
    """An evaluator's justification and 'Therefore, the final score is N' (Appendix A.5),
    under a structured response format."""

    justification: str
    score: int = Field(ge=1, le=5)


def parse_score(reply: str) -> dict[str, Any]:
    """The score in 'Therefore, the final score is N', a whole number 1–5. Stated more than
    once with different scores, the last one counts only after a correction marker ("wait",
    "actually"...: the contract's `corrected`); else the reply is ambiguous and re-asked."""
    matches = list(_FINAL_SCORE.finditer(reply))
    if not matches:
        raise DecisionParseError("it does not end with 'Therefore, the final score is N'")
    statements = [(m.start(), _number(m.group(1))) for m in matches]
    reading = corrected(statements, reply)
    if reading is None or not reading.ok:
        why = reading.reason if reading is not None else "no score"
        raise DecisionParseError(f"{why}; state one final score")
    justification = reply[: matches[-1].start()].strip()
    return _scored(float(reading.value), justification)


def _number(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() else value


def read_score(evaluation: Evaluation) -> dict[str, Any]:
    """A structured evaluation as `parse_score` would return it."""
    return _scored(evaluation.score, evaluation.justification.strip())


def _scored(value: float, justification: str) -> dict[str, Any]:
    if value != int(value) or not 1 <= value <= 5:
        raise DecisionParseError(f"the score must be a whole number from 1 to 5, got {value:g}")
    return {"score": int(value), "justification": justification}


def read_answer(answer: PersonaAnswer) -> str:
    """A structured answer's text, which must not be empty (as in text)."""
    return parse_nonempty(answer.response)


def checked(check: Callable[..., T], *args: Any) -> T:
    """The gym's check of a reasoner's answer; what it rejects is re-asked with its reason."""
    try:
        return check(*args)
    except InvalidActionError as exc:
        raise DecisionParseError(str(exc)) from None
