"""The decision tasks of career-chat (seed 003): what each step sends and how it is read.

The scenario says who decides what and when; this module builds each request from the prompt
pack (`career-chat.yaml` beside it, or `--prompts FILE`), so the scenario file stays readable
top to bottom. Agents cannot import environments, so a profile comes in as its record (a dict with
`id`), a dialogue as its transcript (speaker, text) and a survey item as anything with the
`SurveyQuestion` fields.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel

from personasim.agents.decision import DecisionParseError, DecisionTask, parse_nonempty
from personasim.agents.structured import json_task
from personasim.scenarios.career_chat import answers
from personasim.scenarios.career_chat.jobs import CATEGORY_LABELS, LEVEL_LABELS
from personasim.simulation import ChatRequest, Message
from personasim.simulation.llm.prompts import PromptPack

__all__ = [
    "CLASSIFY_TEMPERATURE",
    "JUDGE_TEMPERATURE",
    "REASONING_MAX_TOKENS",
    "REASONING_TEMPERATURE",
    "CareerTasks",
    "SurveyQuestion",
    "reasoning_of",
]

Transcript = Sequence[tuple[str, str]]
"""A dialogue as (speaker, text) pairs, speaker "user" or "assistant"."""

HISTORY_LINE = {"user": "history_user", "assistant": "history_chatbot"}
"""The pack entry of a transcript line in the follow-up prompt's history, by speaker."""

JUDGE_TEMPERATURE = 0.7
"""§4.1: the judge's repeated samples must differ ("10 random seeds")."""

CLASSIFY_TEMPERATURE = 0.0
"""The job-title classifier answers greedily: one title, one answer, as the authors' zero-shot
classifier took its highest-scoring label."""

REASONING_TEMPERATURE = 0.6
REASONING_MAX_TOKENS = 4096
"""The first, free query of a reasoning model (§5.2, Figure 12), as the authors' code asks it
(`values_prediction.py`: "default setting for reasoning model", "larger window")."""


class SurveyQuestion(Protocol):
    index: int
    profile_text: str
    dialogue_text: str
    options: tuple[str, ...]


def reasoning_of(text: str) -> str:
    """A reasoning model's thinking: the reply up to `</think>` (all of it without the tag), as
    the authors' code cuts it, without a leading `<think>`; empty thinking is unusable."""
    thinking = text.split("</think>")[0].strip().removeprefix("<think>").strip()
    if not thinking:
        raise DecisionParseError("no reasoning before </think>")
    return thinking


@dataclass(frozen=True)
class CareerTasks:
    """Builds the tasks of the three rounds at the scenario's temperatures."""

    prompts: PromptPack
    max_repairs: int
    temperature: float
    """Dialogue generation (user, detector, assistant)."""
    probe_temperature: float
    inconsistency_rate: float
    """Scripted backend only: how often the scripted user contradicts its profile."""

    def profile_text(self, profile: dict[str, Any]) -> str:
        """The profile as the prompts show it (pack entry `profile`)."""
        return self.prompts.render("profile", **profile)

    def _messages(self, system: str, prompt: str) -> tuple[Message, ...]:
        """The pack entry `system` as the system prompt, then `prompt` as the user's turn."""
        return (
            Message(role="system", content=self.prompts.text(system)),
            Message(role="user", content=prompt),
        )

    def _json(
        self,
        name: str,
        role: str,
        messages: tuple[Message, ...],
        answer: tuple[type[BaseModel], Callable[[Any], Any]],
        details: dict[str, Any],
        hints: dict[str, Any],
        **request: Any,
    ) -> DecisionTask:
        """A task whose prompt asks for JSON; a structured format sends its schema too."""
        return json_task(
            name,
            ChatRequest(
                messages=messages,
                **{"temperature": self.temperature, **request},
                task=name,
                hints=hints,
            ),
            *answer,
            lambda error: self.prompts.render("json_reminder", error=error),
            max_repairs=self.max_repairs,
            details=details,
            role=role,
        )

    # --- round 1: the dialogue --------------------------------------------------------------

    def user(self, profile: dict[str, Any], history: Transcript, turn: int) -> DecisionTask:
        shown = self.profile_text(profile)
        if turn == 1:
            prompt = self.prompts.render("user_initial", profile=shown)
            messages = self._messages("user_system", prompt)
            answer: tuple[type[BaseModel], Callable[[Any], Any]] = (
                answers.FirstQuestion,
                answers.read_first_question,
            )
        else:
            lines = (self.prompts.render(HISTORY_LINE[role], said=said) for role, said in history)
            prompt = self.prompts.render("user_followup", profile=shown, history="\n".join(lines))
            messages = self._messages("user_followup_system", prompt)
            answer = answers.FollowUp, answers.read_follow_up
        hints = {
            "profile": profile,
            "turn": turn,
            "asked": sum(role == "user" for role, _ in history),
            "inconsistency_rate": self.inconsistency_rate,
        }
        return self._json("career.user", "user", messages, answer, {"user": profile["id"]}, hints)

    def detector(self, profile: dict[str, Any], question: str, turn: int) -> DecisionTask:
        shown = self.profile_text(profile)
        prompt = self.prompts.render("ooc_prompt", profile=shown, question=question)
        return self._json(
            "career.ooc",
            "detector",
            self._messages("ooc_system", prompt),
            (answers.Verdict, answers.read_verdict),
            {"user": profile["id"], "turn": turn},
            {"profile": profile, "question": question},
        )

    def assistant(self, user_id: str, transcript: Transcript, turn: int) -> DecisionTask:
        return DecisionTask(
            name="career.assistant",
            role="assistant",
            request=ChatRequest(
                messages=as_messages(transcript),
                temperature=self.temperature,
                task="career.assistant",
                hints={"turn": turn},
            ),
            parse=parse_nonempty,
            reminder=lambda error: self.prompts.text("answer_reminder"),
            max_repairs=self.max_repairs,
            details={"user": user_id, "turn": turn},
            schema=answers.AssistantReply,
            read=answers.read_reply,
        )

    # --- round 2: the value survey ----------------------------------------------------------

    def _probe_messages(
        self, profile: dict[str, Any], transcript: Transcript, fmt: str, item: SurveyQuestion
    ) -> tuple[tuple[Message, ...], dict[str, Any]]:
        """Figure 12: BA_user (the profile in the prompt) or BA_dialogue (the dialogue)."""
        options = "\n".join(item.options)
        if fmt == "profile":
            shown = self.profile_text(profile)
            prompt = self.prompts.render(
                "ba_user_prompt", profile=shown, question=item.profile_text, options=options
            )
            return self._messages("ba_user_system", prompt), {"profile": profile}
        ask = self.prompts.render(
            "ba_dialogue_prompt", question=item.dialogue_text, options=options
        )
        messages = (
            Message(role="system", content=self.prompts.text("ba_dialogue_system")),
            *as_messages(transcript),
            Message(role="user", content=ask),
        )
        asked = "\n".join(said for role, said in transcript if role == "user")
        return messages, {"dialogue": asked}

    def reasoning(
        self, profile: dict[str, Any], transcript: Transcript, fmt: str, item: SurveyQuestion
    ) -> DecisionTask:
        """A reasoning model's first, unconstrained query (§5.2): its thinking is the value."""
        messages, hints = self._probe_messages(profile, transcript, fmt, item)
        return DecisionTask(
            name="career.reasoning",
            role="respondent",
            request=ChatRequest(
                messages=messages,
                temperature=REASONING_TEMPERATURE,
                max_tokens=REASONING_MAX_TOKENS,
                task="career.reasoning",
                hints={**hints, "format": fmt, "item": item.index},
            ),
            parse=reasoning_of,
            reminder=lambda error: self.prompts.text("reasoning_reminder"),
            max_repairs=self.max_repairs,
            details={"user": profile["id"], "format": fmt, "item": item.index},
        )

    def probe(
        self,
        profile: dict[str, Any],
        transcript: Transcript,
        fmt: str,
        item: SurveyQuestion,
        reasoning: str | None = None,
    ) -> DecisionTask:
        """The survey answer with top-5 logprobs; after a reasoning pass, its thinking is the
        assistant's turn before the answer, as the authors' code appends it."""
        messages, hints = self._probe_messages(profile, transcript, fmt, item)
        if reasoning is not None:
            thought = self.prompts.render("reasoning_turn", reasoning=reasoning)
            messages = (*messages, Message(role="assistant", content=thought))
        details: dict[str, Any] = {"user": profile["id"], "format": fmt, "item": item.index}
        if reasoning is not None:
            details["reasoned"] = True
        return self._json(
            "career.probe",
            "respondent",
            messages,
            (answers.OptionAnswer, answers.read_option),
            details,
            {**hints, "format": fmt, "item": item.index},
            temperature=self.probe_temperature,
            logprobs=True,
            top_logprobs=5,
        )

    # --- round 3: the judge -----------------------------------------------------------------

    def judge(
        self, profile: dict[str, Any], transcript: Transcript, dimension: str, sample: int
    ) -> DecisionTask:
        questions = [said for role, said in transcript if role == "user"]
        listed = "\n".join(
            self.prompts.render("judge_question", number=i, question=q)
            for i, q in enumerate(questions, 1)
        )
        prompt = self.prompts.render(
            "judge_prompt", profile=self.profile_text(profile), questions=listed
        )
        return self._json(
            "career.judge",
            "judge",
            self._messages(f"judge_{dimension}", prompt),
            (answers.Rating, answers.read_rating),
            {"user": profile["id"], "dimension": dimension, "sample": sample},
            {"profile": profile, "questions": questions, "dimension": dimension},
            temperature=JUDGE_TEMPERATURE,
            sample_index=sample,
        )

    # --- job labels by a bound classifier (`--role classifier=…`) -------------------------

    def classify(self, title: str) -> DecisionTask:
        """One job title's category and position level, chosen among the word rule's labels
        (the authors' zero-shot classifier's, with "Other")."""
        prompt = self.prompts.render(
            "classify_prompt",
            title=title,
            categories=", ".join(CATEGORY_LABELS),
            levels=", ".join(LEVEL_LABELS),
        )
        return self._json(
            "career.classify",
            "classifier",
            self._messages("classify_system", prompt),
            (answers.JobLabelsAnswer, answers.read_job_labels),
            {"title": title},
            {"title": title},
            temperature=CLASSIFY_TEMPERATURE,
        )


def as_messages(transcript: Transcript) -> tuple[Message, ...]:
    return tuple(Message(role=role, content=said) for role, said in transcript)  # type: ignore[arg-type]
