"""Grading several answers in one evaluator request, as the PersonaGym authors' code does.

Their `score_answers` sends each evaluator the rubrics of five answers at once, wrapped in
`prompts/rubric_grading/prompt.txt`, and reads the reply's "(1) Evaluation: … (5) Evaluation: …"
sections, each ending "Therefore, the final score is N" (`--grading-batch 5`). A batch is read
whole: every one of its N evaluations must be there, in order, with a score 1–5, or the batch is
re-asked; out of re-asks, each of its N answers is a recorded failure (their code scores a
missing evaluation 0 and drops it from the mean, silently).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from pydantic import BaseModel, Field, create_model

from .decision import DecisionParseError
from .persona_gym_answers import Evaluation, parse_score, read_score

__all__ = ["batch_format", "batch_schema", "parse_batch", "read_batch"]

_SECTION = re.compile(r"\(\s*(\d+)\s*\)\s*\**\s*Evaluation\s*\**\s*:", re.IGNORECASE)


def batch_format(n: int) -> str:
    """The numbered format block of the authors' wrapper, for `n` answers."""
    return "\n".join(f"({i}) Evaluation:" for i in range(1, n + 1))


@cache
def batch_schema(n: int) -> type[BaseModel]:
    """The batch reply under a structured response format: exactly `n` evaluations, in order."""
    return create_model(
        f"EvaluationBatch{n}",
        __doc__=f"The evaluations of the {n} responses, in the order of the rubrics.",
        evaluations=(list[Evaluation], Field(min_length=n, max_length=n)),
    )


def parse_batch(reply: str, n: int) -> list[dict[str, Any]]:
    """The `n` evaluations of a text reply, numbered (1)…(n) in order, each with its score."""
    marks = list(_SECTION.finditer(reply))
    numbers = [int(m.group(1)) for m in marks]
    if numbers != list(range(1, n + 1)):
        found = ", ".join(f"({k})" for k in numbers) or "none"
        raise DecisionParseError(
            f"expected evaluations (1) to ({n}) in order, each starting '(i) Evaluation:'; "
            f"found {found}"
        )
    ends = [m.start() for m in marks[1:]] + [len(reply)]
    evaluations = []
    for i, (mark, end) in enumerate(zip(marks, ends, strict=True), 1):
        try:
            evaluations.append(parse_score(reply[mark.end() : end]))
        except DecisionParseError as exc:
            raise DecisionParseError(f"evaluation ({i}): {exc}") from None
    return evaluations


def read_batch(answer: Any) -> list[dict[str, Any]]:
    """A structured batch (its count checked by `batch_schema`) as `parse_batch` returns it."""
    return [read_score(e) for e in answer.evaluations]
