"""The career-chat place (seed 003): the dialogue controller and the dialogues it records.

`CareerChat` runs Algorithm 1 (Appendix C) as rules: a dialogue opens, each exchange is a user
question (as the out-of-context detector left it) and the assistant's answer, and the dialogue
ends when the user says its goals are covered, when `max_turns` exchanges were made, or when a
step failed. Every utterance and verdict is an event. It knows no prompts.

Its inputs are read beside it: profiles in `profiles`, the value survey in `survey`, job
labels and human ratings (and the readers they share) in `files`; their formats are documented
in environments/career_chat/data/career_chat_README.md:

- profiles: CSV with a header, or JSONL, with fields `id, age, gender, education, experience,
  job_title, country`; education is one of `EDUCATION_LEVELS`.
- survey: the VSM-2013 CSV layout, columns `questions, full_question, option_1..option_5`,
  `full_question` holding `{question}`; one file per phrasing (profile and dialogue), rows
  aligned by position.
- human ratings: CSV `user,dimension,rating`, dimension one of the judge's four, rating 0–5,
  one row per rater (Appendix E).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from personasim.environments.career_chat.profiles import Profile
from personasim.simulation import Environment, InvalidActionError

if TYPE_CHECKING:
    from personasim.simulation import SimAgent, Simulation

__all__ = [
    "END_REASONS",
    "CareerChat",
    "RecordedDialogue",
    "RecordedTurn",
]


END_REASONS = ("goals_covered", "max_turns", "failed")


@dataclass(frozen=True)
class RecordedTurn:
    """One exchange of a dialogue made elsewhere: the question as asked (after the detector),
    the answer, the user's own proposal and the detector's verdict."""

    question: str
    answer: str
    proposed: str
    out_of_context: bool


@dataclass(frozen=True)
class RecordedDialogue:
    """A whole dialogue made elsewhere: its user's profile, exchanges and end reason."""

    profile: Profile
    turns: tuple[RecordedTurn, ...]
    ended: str


@dataclass
class Dialogue:
    """One user's conversation: alternating user and assistant utterances."""

    turns: list[tuple[str, str]] = field(default_factory=list)
    ended: str | None = None

    @property
    def exchanges(self) -> int:
        return sum(role == "assistant" for role, _ in self.turns)


class CareerChat(Environment):
    """Dialogues between simulated users and the assistant, under Algorithm 1's rules.

    The original controller silently drops a profile whose question the detector flags; here
    the detector's rewrite replaces the question (both are logged), so every profile keeps a
    dialogue and the verdicts stay measurable.
    """

    kind: ClassVar[str] = "career_chat"

    def __init__(self, sim: Simulation, max_turns: int = 5) -> None:
        self.max_turns = max_turns
        self.dialogues: dict[str, Dialogue] = {}
        super().__init__(sim)

    def settings(self) -> dict[str, Any]:
        return {"max_turns": self.max_turns, "ooc": "rewrite"}

    def open(self, user: SimAgent) -> None:
        if user.agent_id in self.dialogues:
            raise InvalidActionError(f"{user.agent_id} already has a dialogue")
        self.dialogues[user.agent_id] = Dialogue()
        self.emit("career.dialogue_started", {}, agent_id=user.agent_id)

    def _open_dialogue(self, user: SimAgent) -> Dialogue:
        dialogue = self.dialogues.get(user.agent_id)
        if dialogue is None or dialogue.ended is not None:
            raise InvalidActionError(f"{user.agent_id} has no open dialogue")
        return dialogue

    def can_continue(self, user: SimAgent) -> bool:
        """Another exchange is allowed: the dialogue is open and under the turn limit."""
        dialogue = self._open_dialogue(user)
        return dialogue.exchanges < self.max_turns

    def ask(self, user: SimAgent, proposed: str, flagged: bool, rewrite: str) -> str:
        """The user's question after the detector: its rewrite if it flagged one."""
        dialogue = self._open_dialogue(user)
        if dialogue.turns and dialogue.turns[-1][0] == "user":
            raise InvalidActionError("the assistant must answer before the next question")
        if not self.can_continue(user):
            raise InvalidActionError(f"{user.agent_id} reached {self.max_turns} exchanges")
        question = rewrite if flagged else proposed
        if not question.strip():
            raise InvalidActionError("an empty question")
        dialogue.turns.append(("user", question))
        payload = {"turn": dialogue.exchanges + 1, "proposed": proposed, "out_of_context": flagged}
        self.emit("career.question", {**payload, "question": question}, agent_id=user.agent_id)
        return question

    def answer(self, user: SimAgent, text: str) -> None:
        dialogue = self._open_dialogue(user)
        if not dialogue.turns or dialogue.turns[-1][0] != "user":
            raise InvalidActionError("no question to answer")
        dialogue.turns.append(("assistant", text))
        self.emit(
            "career.answer", {"turn": dialogue.exchanges, "answer": text}, agent_id=user.agent_id
        )

    def close(self, user: SimAgent, reason: str) -> None:
        if reason not in END_REASONS:
            raise InvalidActionError(f"unknown end reason {reason!r}")
        dialogue = self._open_dialogue(user)
        if dialogue.turns and dialogue.turns[-1][0] == "user":
            dialogue.turns.pop()  # an unanswered question is not part of the dialogue
        dialogue.ended = reason
        self.emit(
            "career.dialogue_ended",
            {"reason": reason, "exchanges": dialogue.exchanges},
            agent_id=user.agent_id,
        )

    def replay(self, user: SimAgent, dialogue: RecordedDialogue) -> None:
        """A dialogue made in another run (`career_dialogues`), logged as if it happened here."""
        self.open(user)
        for turn in dialogue.turns:
            self.ask(user, turn.proposed, turn.out_of_context, turn.question)
            self.answer(user, turn.answer)
        self.close(user, dialogue.ended)

    def transcript(self, user: SimAgent) -> list[tuple[str, str]]:
        return list(self.dialogues[user.agent_id].turns)

    def usable(self, user: SimAgent) -> bool:
        """A finished dialogue with at least one exchange (probed in BA_dialogue)."""
        dialogue = self.dialogues.get(user.agent_id)
        return bool(dialogue and dialogue.ended in ("goals_covered", "max_turns"))
