"""Grading several answers in one evaluator request, as the PersonaGym authors' code does.

Their `score_answers` sends each evaluator the rubrics of five answers at once, wrapped in
`prompts/rubric_grading/prompt.txt`, and reads the reply's "(1) Evaluation: … (5) Evaluation: …"
sections, each ending "Therefore, the final score is N" (`--grading-batch 5`). A reply is read
section by section: the usable evaluations are kept, and one that is missing or has no score
1–5 is marked unusable (score None, with the reason), so that the scenario re-asks the
evaluator about those answers only, as a smaller batch. A reply whose sections cannot be told
apart (no section, a number twice, out of order or beyond N), or in which no evaluation is
usable, is unusable as a whole and re-asked as usual; out of re-asks, each answer still
unscored is a recorded failure (their code scores a missing evaluation 0 and drops it from the
mean, silently).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from pydantic import BaseModel, Field, create_model

from personasim.agents.decision import DecisionParseError
from personasim.scenarios.persona_gym.answers import Evaluation, parse_score, read_score

__all__ = ["batch_format", "batch_schema", "parse_batch", "read_batch", "unusable"]

_SECTION = re.compile(r"\(\s*(\d+)\s*\)\s*\**\s*Evaluation\s*\**\s*:", re.IGNORECASE)


def batch_format(n: int) -> str:
    """The numbered format block of the authors' wrapper, for `n` answers."""
    return "\n".join(f"({i}) Evaluation:" for i in range(1, n + 1))


@cache
def batch_schema(n: int) -> type[BaseModel]:
    """The batch reply under a structured response format: the `n` evaluations, in order. At
    least one is required; fewer than `n` mark the missing ones unusable (`read_batch`), as in
    a text reply."""
    return create_model(
        f"EvaluationBatch{n}",
        __doc__=f"The evaluations of the {n} responses, in the order of the rubrics.",
        evaluations=(list[Evaluation], Field(min_length=1, max_length=n)),
    )


def parse_batch(reply: str, n: int) -> list[dict[str, Any]]:
    """The `n` evaluations of a text reply, numbered (1)…(n) in order: each
    `{"score", "justification"}`, or `{"score": None, "unusable": why}` where its section is
    missing or its score cannot be read. Raises when the sections cannot be told apart or
    none is usable."""
    marks = list(_SECTION.finditer(reply))
    numbers = [int(m.group(1)) for m in marks]
    if not numbers or numbers != sorted(set(numbers)) or not 1 <= numbers[-1] <= n:
        found = ", ".join(f"({k})" for k in numbers) or "none"
        raise DecisionParseError(
            f"expected evaluations (1) to ({n}) in order, each starting '(i) Evaluation:'; "
            f"found {found}"
        )
    ends = [m.start() for m in marks[1:]] + [len(reply)]
    sections = {k: reply[m.end() : end] for k, m, end in zip(numbers, marks, ends, strict=True)}
    evaluations = [_section(sections.get(i), i) for i in range(1, n + 1)]
    if all(e["score"] is None for e in evaluations):
        raise DecisionParseError("; ".join(e["unusable"] for e in evaluations))
    return evaluations


def _section(text: str | None, i: int) -> dict[str, Any]:
    if text is None:
        return {"score": None, "unusable": f"evaluation ({i}) is missing"}
    try:
        return parse_score(text)
    except DecisionParseError as exc:
        return {"score": None, "unusable": f"evaluation ({i}): {exc}"}


def unusable(evaluations: list[dict[str, Any]]) -> list[int]:
    """The positions (0-based) of a batch's evaluations that could not be read."""
    return [i for i, e in enumerate(evaluations) if e["score"] is None]


def read_batch(answer: Any, n: int) -> list[dict[str, Any]]:
    """A structured batch (at most `n`, checked by `batch_schema`) as `parse_batch` returns it:
    the evaluations it lacks at the end are unusable."""
    given = [read_score(e) for e in answer.evaluations]
    return given + [_section(None, i) for i in range(len(given) + 1, n + 1)]
