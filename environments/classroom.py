"""A classroom where students answer word problems and the answer key grades them (seed 000).

The environment holds the sampled questions and their gold numbers and grades a response by its
closing `Final Answer: {number}` (the format the persona prompts of Figure 2 ask for, also
"The final answer is N" and `\\boxed{N}`), comparing numbers, not strings; how a number is read
(minus signs, `$-5`, `~18`, words, `1,5`) is `numeric_answers`'. The no-persona prompt asks
only for "the final answer as a number", so such a response is also graded by its last "the
answer is" or its last number (`graded_by="last_number"`). A response without
one is graded wrong and flagged (`final_answer_found` false), so metrics can count it
separately: that is a grading outcome, not a parse failure to re-ask. Who answers, and how they
were prompted, is not its business; the scenario passes those labels through to the
`classroom.graded` event.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from personasim.simulation import Environment, InvalidActionError, SimAgent, Simulation

from .gsm8k import WordProblem
from .numeric_answers import read_final_answer, read_last_number

__all__ = [
    "ANSWER_TOLERANCE",
    "Classroom",
    "Grade",
    "GradedBy",
    "extract_final_answer",
    "extract_last_number",
]

ANSWER_TOLERANCE = 1e-6
"""Numbers closer than this count as equal (`0.70` and `0.7`, `45.00` and `45`)."""

GradedBy = Literal["final_answer", "last_number"]
"""How a response is read: its last `Final Answer:` (or `\\boxed{}`) or, where the prompt asks
for no such line (no persona), also its last "the answer is", then its last number."""

extract_final_answer = read_final_answer
"""The number of the last final answer of a response, or None (`numeric_answers`)."""
extract_last_number = read_last_number
"""A no-persona answer's number, or None (`numeric_answers`)."""


@dataclass(frozen=True)
class Grade:
    """The outcome of one graded response."""

    question_id: str
    answer: float | None
    gold: float
    correct: bool

    @property
    def final_answer_found(self) -> bool:
        return self.answer is not None


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
        graded_by: GradedBy = "final_answer",
        **labels: Any,
    ) -> Grade:
        """Grade `response` to `question_id`; `labels` (strategy, level...) go into the event."""
        gold = self.problem(question_id).gold
        read = extract_final_answer if graded_by == "final_answer" else extract_last_number
        answer = read(response)
        correct = answer is not None and math.isclose(answer, gold, abs_tol=ANSWER_TOLERANCE)
        grade = Grade(question_id, answer, gold, correct)
        self.emit(
            "classroom.graded",
            {
                "question_id": question_id,
                "answer": answer,
                "gold": gold,
                "correct": correct,
                "final_answer_found": grade.final_answer_found,
                "graded_by": graded_by,
                **labels,
            },
            agent_id=agent.agent_id,
        )
        return grade
