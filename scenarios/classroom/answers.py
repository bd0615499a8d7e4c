"""Reading the classroom scenario's answers (seed 000, REVERSO): the text parsers and the
answer schemas of `--response-format json_schema|json_object`.

Each schema's fields are what its prompt asks for, and each is read into the value its text
parser gives, so grading, events and metrics are the same in every format: a student's answer
becomes the text the Classroom grades, closed by the schema's final answer. Grading itself is
the Classroom's (environments).
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import BaseModel, Field

from personasim.agents.decision import DecisionParseError
from personasim.simulation import corrected

__all__ = [
    "ContrastScore",
    "Refinement",
    "StudentAnswer",
    "answer_text",
    "parse_judge_score",
    "parse_refinement",
    "parse_response",
    "read_answer",
    "read_judge_score",
    "read_refinement",
]

# "Revised Response:", "**Revised Response:**", "**Revised Response**", "### Revised Response"
# (a heading: bold, or alone on its line); the words inside a sentence are not a label.
_REVISED = re.compile(
    r"[#*\s]*\brevised\s+response\b\**\s*?(?::\**|(?<=\*\*)|[ \t]*(?=\n))", re.IGNORECASE
)
_REFLECTION = re.compile(r"^[#*\s]*reflection(?:\**\s*:\**|\*\*|[ \t]*\n)\s*", re.IGNORECASE)
_SCORE = re.compile(
    r"score\**\s*[:=](?:\*\*|\\boxed\{|\s)*([0-9]+(?:[.,][0-9]+)?)(?![0-9])", re.IGNORECASE
)


def parse_response(reply: str) -> str:
    """A student's answer is its text; only an empty one is unusable (and re-asked)."""
    if not reply.strip():
        raise DecisionParseError("the answer is empty")
    return reply.strip()


def parse_refinement(reply: str) -> dict[str, Any]:
    """Self-refinement's 'Reflection: ... Revised Response: ... Final Answer: N'.

    The revised response (through its final answer) is what gets graded; the label may be a
    markdown heading without a colon. A reply without the label is read whole, as a careful
    grader reads it: its final answer is the revision's (`labelled` False, so the format
    compliance counts it; a reflection quoting an earlier, different final answer then makes
    the reading ambiguous, counted apart). Only an empty reply or revision is re-asked.
    """
    if not reply.strip():
        raise DecisionParseError("the reply is empty")
    parts = _REVISED.split(reply, maxsplit=1)
    if len(parts) < 2:
        return {"reflection": "", "revised_response": reply.strip(), "labelled": False}
    reflection, revised = (part.strip() for part in parts)
    if not revised:
        raise DecisionParseError("the revised response is empty")
    return {
        "reflection": _REFLECTION.sub("", reflection),
        "revised_response": revised,
        "labelled": _REFLECTION.match(reflection) is not None,
    }


def parse_judge_score(reply: str) -> int:
    """The judge's 'Score: N' with N in 1–3: one score, or the same score repeated, or a
    later one after a correction ("Score: 2 ... wait, Score: 3"); different scores without a
    correction are ambiguous and re-asked with the reason (the shared rule, `corrected`). A
    score off the integer scale ("2.5") is not rounded or truncated: it is re-asked, then a
    counted failure, with the reason."""
    scores = [(m.start(), m[1]) for m in _SCORE.finditer(reply)]
    if not scores:
        raise DecisionParseError("it does not end with 'Score: N'")
    reading = corrected([(at, float(written.replace(",", "."))) for at, written in scores], reply)
    if reading is None or not reading.ok:
        shown = ", ".join(dict.fromkeys(written for _, written in scores))
        raise DecisionParseError(f"it gives different scores ({shown}); give one 'Score: N'")
    written = next(w for _, w in reversed(scores) if float(w.replace(",", ".")) == reading.value)
    if not float(reading.value).is_integer():
        raise DecisionParseError(f"the score must be a whole number 1, 2 or 3, got {written}")
    return _checked_score(int(reading.value))


def _checked_score(score: int) -> int:
    if score not in (1, 2, 3):
        raise DecisionParseError(f"the score must be 1, 2 or 3, got {score}")
    return score


class StudentAnswer(BaseModel):
    """An answer, a two-stage rewrite or the no-persona answer: the response and 'Final
    Answer: {number}' (Figure 2). Null is no final answer: graded wrong and counted."""

    response: str
    final_answer: float | None


class Refinement(BaseModel):
    """Self-refinement: 'Reflection: {reflection} Revised Response: {new_response} Final
    Answer: {number}' (Figures 2 and 5)."""

    reflection: str
    revised_response: str
    final_answer: float | None


class ContrastScore(BaseModel):
    """The judge's explanation and 'Score: N' (Table 4)."""

    explanation: str
    score: int = Field(ge=1, le=3)


def _written(value: float) -> str:
    """A number as GSM8K writes it: thousands commas, no trailing zeros."""
    if value.is_integer():
        return f"{int(value):,}"
    return f"{value:,.10f}".rstrip("0").rstrip(".")


def answer_text(response: str, final_answer: float | None) -> str:
    """The response the Classroom grades: the student's text closed by 'Final Answer: N' from
    the schema's number; without a number, the text alone. A text that itself states a
    different final answer is then ambiguous, as a careful grader would find it."""
    text = response.strip()
    if final_answer is None:
        return text
    if not math.isfinite(final_answer):
        raise DecisionParseError(f"the final answer must be a finite number, got {final_answer}")
    return f"{text} Final Answer: {_written(final_answer)}".strip()


def read_answer(answer: StudentAnswer) -> str:
    """A structured answer as the text `parse_response` would return."""
    return parse_response(answer_text(answer.response, answer.final_answer))


def read_refinement(answer: Refinement) -> dict[str, Any]:
    """A structured self-refinement as `parse_refinement` would return it (the schema's
    fields are its labels)."""
    revised = answer_text(answer.revised_response, answer.final_answer)
    if not revised:
        raise DecisionParseError("the revised response is empty")
    return {"reflection": answer.reflection.strip(), "revised_response": revised, "labelled": True}


def read_judge_score(answer: ContrastScore) -> int:
    return _checked_score(answer.score)
