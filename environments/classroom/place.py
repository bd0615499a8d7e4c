"""A classroom where students answer word problems and the answer key grades them (seed 000).

The environment holds the sampled questions and their gold numbers and grades a response as a
careful grader reads it (`numeric_answers.read_answer`, one rule for the no-persona baseline
and every persona): its explicit final statement ("Final Answer: N", "the answer is N",
`\\boxed{N}`, "#### N", "Answer: N"), else its last number; two different explicit answers are
"ambiguous" and no number is read. A response without a number, or an ambiguous one, is graded
wrong and flagged (`reading`), so metrics can count it apart: that is a grading outcome, not a
parse failure to re-ask. Whether the reply kept the paper's asked format is the scenario's to
say (`format_compliant`). Who answers, and how they were prompted, is not its business; the
scenario passes those labels through to the `classroom.graded` event.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from personasim.environments.classroom.gsm8k import WordProblem
from personasim.environments.classroom.numeric_answers import (
    TOLERANCE,
    AnswerReading,
    Reading,
    read_answer,
)
from personasim.simulation import Environment, InvalidActionError, SimAgent, Simulation

__all__ = ["ANSWER_TOLERANCE", "Classroom", "Grade"]

ANSWER_TOLERANCE = TOLERANCE
"""Numbers closer than this count as equal (`0.70` and `0.7`, `45.00` and `45`)."""


@dataclass(frozen=True)
class Grade:
    """The outcome of one graded response."""

    question_id: str
    answer: float | None
    gold: float
    correct: bool
    reading: Reading = "explicit"

    @property
    def final_answer_found(self) -> bool:
        """The response states its final answer explicitly (and unambiguously)."""
        return self.reading == "explicit"


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
        **labels: Any,
    ) -> Grade:
        """Grade `response` to `question_id`; `format_compliant` (None: no format was asked)
        and `labels` (strategy, level...) go into the event."""
        gold = self.problem(question_id).gold
        read: AnswerReading = read_answer(response)
        answer = read.value
        correct = answer is not None and math.isclose(answer, gold, abs_tol=ANSWER_TOLERANCE)
        grade = Grade(question_id, answer, gold, correct, read.reading)
        self.emit(
            "classroom.graded",
            {
                "question_id": question_id,
                "answer": answer,
                "gold": gold,
                "correct": correct,
                "final_answer_found": grade.final_answer_found,
                "reading": read.reading,
                "stated": list(read.stated),
                "format_compliant": format_compliant,
                **labels,
            },
            agent_id=agent.agent_id,
        )
        return grade
