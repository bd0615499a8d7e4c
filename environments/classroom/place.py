"""A classroom where students answer word problems and the answer key grades them (seed 000).

The environment holds the sampled questions and their gold numbers and grades a response as a
careful grader reads it (`numeric_answers.read_answer`, one reader for the no-persona baseline
and every persona): its explicit final statement, read by the grammar and by math-verify,
which must agree. A response whose reading is *unreadable* (no explicit final answer, or a
withdrawn result) or *ambiguous* (two answers, or two readers that disagree) is graded not
right and counted apart by its status: that is a grading outcome, not a parse failure to
re-ask. Each grade's reading is logged (`reading.made`, reader `math_answer`) for the audit.
Whether the reply kept the paper's asked format is the scenario's to say (`format_compliant`).
Who answers, and how they were prompted, is not its business; the scenario passes those labels
through to the `classroom.graded` event.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from personasim.environments.classroom.gsm8k import WordProblem
from personasim.environments.classroom.numeric_answers import READER_NAME, TOLERANCE, read_answer
from personasim.simulation import (
    Environment,
    InvalidActionError,
    Reading,
    ReadStatus,
    SimAgent,
    Simulation,
)

__all__ = ["ANSWER_TOLERANCE", "Classroom", "Grade"]

ANSWER_TOLERANCE = TOLERANCE
"""Numbers closer than this count as equal (`0.70` and `0.7`, `45.00` and `45`)."""


@dataclass(frozen=True)
class Grade:
    """The outcome of one graded response: the number read (None unless `status` is
    "read"), whether it is the gold, and how it was read."""

    question_id: str
    answer: float | None
    gold: float
    correct: bool
    status: ReadStatus = "read"
    reason: str | None = None
    by: str = ""


class Classroom(Environment):
    """The questions of a run and their answer key; grades responses and logs each grade."""

    kind = "classroom"

    def __init__(
        self, sim: Simulation, problems: Sequence[WordProblem], name: str | None = None
    ) -> None:
        if not problems:
            raise ValueError("a classroom needs at least one question")
        self.problems = {p.id: p for p in problems}
        super().__init__(sim, name)

    def settings(self) -> dict[str, Any]:
        return {"questions": {p.id: p.gold for p in self.problems.values()}}

    def problem(self, question_id: str) -> WordProblem:
        if question_id not in self.problems:
            raise InvalidActionError(f"no question {question_id!r} in {self.name!r}")
        return self.problems[question_id]

    def grade(
        self,
        agent: SimAgent,
        question_id: str,
        response: str,
        format_compliant: bool | None = None,
        reading: Reading | None = None,
        **labels: Any,
    ) -> Grade:
        """Grade `response` to `question_id`: right only when its reading is a value equal to
        the gold. `reading`: how it was read, when not by the rules here (a bound reader
        role's reading); `format_compliant` (None: no format was asked) and `labels`
        (strategy, level...) go into the `classroom.graded` event and the `reading.made`."""
        problem = self.problem(question_id)
        gold = problem.gold
        reading = reading or read_answer(response, problem.question)
        answer = reading.value if reading.ok else None
        correct = answer is not None and math.isclose(answer, gold, abs_tol=ANSWER_TOLERANCE)
        grade = Grade(
            question_id, answer, gold, correct, reading.status, reading.reason, reading.by
        )
        self.sim.record_reading(  # the question too: the audit's reader model reads with it
            agent.agent_id, READER_NAME, response, reading,
            question_id=question_id, problem=problem.question, **labels,
        )  # fmt: skip
        self.emit(
            "classroom.graded",
            {
                "question_id": question_id,
                "answer": answer,
                "gold": gold,
                "correct": correct,
                "status": reading.status,
                "reason": reading.reason,
                "by": reading.by,
                "candidates": list(reading.candidates),
                "format_compliant": format_compliant,
                **labels,
            },
            agent_id=agent.agent_id,
        )
        return grade
