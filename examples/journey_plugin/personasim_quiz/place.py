"""The `quiz` place: a persona answers one general-knowledge question with a number."""

from __future__ import annotations

import re

from personasim.agents import DecisionParseError, DecisionTask
from personasim.scenarios.persona_journey import JourneyPlace, journey_place
from personasim.scenarios.persona_journey.memory import Traveller, keep_exchange
from personasim.simulation import ChatRequest, Environment, Message, Simulation

QUESTION = "How many days does a leap year have? End your answer with 'ANSWER: <number>'."
RIGHT = 366


class QuizDesk(Environment):
    """Grades answers; each one is an event of the log."""

    kind = "quiz_desk"

    def grade(self, agent_id: str, answer: int) -> bool:
        right = answer == RIGHT
        self.emit("quiz.graded", {"answer": answer, "right": right}, agent_id=agent_id)
        return right


def read_answer(reply: str) -> int:
    """The number after 'ANSWER:'; anything else is re-asked, never guessed."""
    found = re.findall(r"ANSWER:\s*(\d+)", reply)
    if len(found) != 1:
        raise DecisionParseError("end with exactly one 'ANSWER: <number>'")
    return int(found[0])


@journey_place("quiz")
class QuizPlace(JourneyPlace):
    def build(self, sim: Simulation) -> Environment:
        self.desk = QuizDesk(sim, name="quiz")
        return self.desk

    def description(self) -> str:
        return "a quiz with one question"  # the journey's pack has no `place.quiz`

    async def visit(self, t: Traveller) -> None:
        profile = t.agent.persona.profile_text()
        task = DecisionTask(
            name="quiz.answer",
            request=ChatRequest(
                messages=(Message(role="user", content=f"You are:\n{profile}\n\n{QUESTION}"),),
                task="quiz.answer",
                hints={"traits": dict(t.agent.persona.traits)},
            ),
            parse=read_answer,
            reminder=lambda error: f"Your answer could not be read ({error}). {QUESTION}",
            details={"place": "quiz", "step": len(t.visited)},
        )
        decision, task = await self.journey.decide(t, task)  # with the persona's memory
        if decision.ok:
            right = self.desk.grade(t.agent.agent_id, decision.value)
            keep_exchange(t, task, decision.reply)
            t.summaries.append(f"You took a quiz and were {'right' if right else 'wrong'}.")
