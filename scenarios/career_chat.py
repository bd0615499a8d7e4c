"""`career-chat`: sociodemographic adaptation, profile vs dialogue (seed 003, §3–§6).

Three rounds:

1. **Dialogues** (§3, Algorithm 1) — one unit per user: the simulated user asks (Figure 6), the
   out-of-context detector checks and, if needed, rewrites the question (Figure 7), the
   assistant answers with the whole history; `CareerChat` ends the dialogue when the user says
   its four goals are covered or after `max_turns` exchanges. A failed step ends it as failed.
2. **Probing** (§5, Appendix F) — one unit per user × format × survey item: BA_user (profile in
   the prompt) and BA_dialogue (the user's dialogue as history, "assume you are me"); answers
   are JSON `{"option_id", "reason"}` asked with top-5 logprobs. The option distribution
   (Appendix G) is computed from the logged response in the metrics; without logprobs it falls
   back to one-hot and is counted.
3. **Judge** (§4.1, Appendix D) — one unit per dialogue: the judge rates the user's questions on
   four dimensions, `judge_samples` times each (distinct sample indices).

Every text sent is an entry of the prompt pack `scenarios/packs/career-chat.yaml` (its source
and kind per entry); the survey items are data (the VSM CSV files). The metrics (§5.1, Tables
1–3, 5, Figures 4–5: JS centroids and group distances per grouping and format, the EMD
consistency against random pairings, confidence, judge means and their human alignment) are
computed from the event log in `analysis/career_chat.py`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
from pydantic import BaseModel, Field, model_validator

from personasim.agents import DecisionTask, json_parser, parse_nonempty
from personasim.agents import career_answers as answers
from personasim.agents.career_chat import Assistant, OutOfContextDetector, UserSimulator
from personasim.analysis import career_chat
from personasim.analysis.career_chat import DIMENSIONS, FORMATS
from personasim.environments.career_chat import (
    CareerChat,
    Profile,
    SurveyItem,
    load_human_ratings,
    load_profiles,
    load_survey,
    shipped_career_file,
    synthetic_profiles,
)
from personasim.simulation import (
    ChatRequest,
    Message,
    Role,
    Scenario,
    ScenarioError,
    ScenarioParams,
    Simulation,
    read_input,
    register_scenario,
)

__all__ = ["CareerChatParams", "CareerChatScenario"]

_HISTORY_LINE = {"user": "history_user", "assistant": "history_chatbot"}
"""The pack entry of a transcript line in the follow-up prompt's history, by speaker."""


class CareerChatParams(ScenarioParams):
    profile_file: Path | None = Field(
        None, description="profiles CSV or JSONL (default: a seeded synthetic population)"
    )
    n_users: int = Field(24, ge=2, description="synthetic users, or the first N of the file")
    survey_file: Path | None = Field(
        None, description="survey items, profile phrasing (VSM CSV; default: shipped)"
    )
    dialogue_survey_file: Path | None = Field(
        None, description="the same items, dialogue phrasing (needed with --survey-file)"
    )
    n_items: int | None = Field(None, ge=1, description="first N survey items (default: all)")
    max_turns: int = Field(5, ge=1, le=20, description="exchanges per dialogue (Appendix C)")
    temperature: float = Field(0.7, ge=0.0, le=2.0, description="dialogue generation")
    probe_temperature: float = Field(0.0, ge=0.0, le=2.0, description="survey answers")
    judge_samples: int = Field(10, ge=0, le=20, description="judge ratings per dimension (0: none)")
    human_ratings: Path | None = Field(
        None, description="CSV user,dimension,rating of human raters (Appendix E)"
    )
    max_repairs: int = Field(2, ge=0, le=5, description="re-asks after an unusable answer")
    emd_repeats: int = Field(100, ge=1, description="random pairings averaged in the baseline")
    bootstrap: int = Field(1000, ge=0, description="user resamples (group-distance intervals)")
    permutations: int = Field(1000, ge=0, description="label permutations (the ratio's p-value)")
    scripted_inconsistency: float = Field(
        0.15, ge=0.0, le=1.0, description="scripted backend only: wrong-age questions rate"
    )

    @model_validator(mode="after")
    def _survey_pair(self) -> CareerChatParams:
        if (self.survey_file is None) != (self.dialogue_survey_file is None):
            raise ValueError("give --survey-file and --dialogue-survey-file together")
        return self


@register_scenario
class CareerChatScenario(Scenario):
    name = "career-chat"
    summary = "career dialogues; value adaptation to profile vs dialogue (seed 003)"
    Params = CareerChatParams
    roles: ClassVar[dict[str, Role]] = {
        "user": Role("the simulated user who asks for career advice (GPT-4o in the paper)"),
        "detector": Role("the out-of-context detector checking each user question"),
        "assistant": Role("the career-advice assistant in the dialogues"),
        "respondent": Role("the probed model answering the value survey (BA_user, BA_dialogue)"),
        "judge": Role("the dialogue-quality judge (Appendix E)"),
    }
    params: CareerChatParams

    # --- inputs ------------------------------------------------------------------------------

    def prepare(self) -> None:
        p = self.params
        profile_path = p.survey_file or shipped_career_file("career_survey_profile.csv")
        dialogue_path = p.dialogue_survey_file or shipped_career_file("career_survey_dialogue.csv")
        self._items = read_input("--survey-file", lambda: load_survey(profile_path, dialogue_path))
        if p.n_items is not None:
            if p.n_items > len(self._items):
                raise ScenarioError(f"--n-items {p.n_items}: the survey has {len(self._items)}")
            self._items = self._items[: p.n_items]
        self._loaded_profiles: tuple[Profile, ...] | None = None
        if p.profile_file is not None:
            profiles = read_input("--profile-file", lambda: load_profiles(p.profile_file))
            self._loaded_profiles = profiles[: p.n_users]
        self._human = load_human_ratings(p.human_ratings) if p.human_ratings else None

    def rounds(self) -> int:
        return 3 if self.params.judge_samples else 2

    # --- setup -------------------------------------------------------------------------------

    def setup(self, sim: Simulation) -> None:
        p = self.params
        profiles = self._loaded_profiles or synthetic_profiles(sim.rng, p.n_users)
        self.chat = CareerChat(sim, max_turns=p.max_turns)
        self.users = [UserSimulator(sim, profile.record()) for profile in profiles]
        self.profiles = {profile.id: profile for profile in profiles}
        for user in self.users:
            user.move_to(self.chat)
        self.detector = OutOfContextDetector(sim)
        self.assistant = Assistant(sim)
        self.judge = Assistant(sim, "judge")
        sim.emit("career.survey", {"items": [_item_record(i) for i in self._items]})
        if self._human is not None:
            sim.emit("career.human_ratings", {"rows": self._human})

    # --- rounds ------------------------------------------------------------------------------

    async def play_round(self, sim: Simulation, round_index: int) -> None:
        work: dict[str, Callable[[], Awaitable[None]]]
        if round_index == 1:
            work = {u.agent_id: (lambda u=u: self._dialogue(u)) for u in self.users}
        elif round_index == 2:
            work = {
                f"{u.agent_id}/{fmt}/q{item.index}": (
                    lambda u=u, f=fmt, i=item: self._probe(u, f, i)
                )
                for u in self.users
                for fmt in FORMATS
                if fmt == "profile" or self.chat.usable(u)
                for item in self._items
            }
        else:
            work = {
                u.agent_id: (lambda u=u: self._judge(u)) for u in self.users if self.chat.usable(u)
            }
        await sim.concurrently(work)

    async def _dialogue(self, user: UserSimulator) -> None:
        """Algorithm 1 for one user, with the detector's rewrite in place of the skip."""
        self.chat.open(user)
        turn = 0
        while self.chat.can_continue(user):
            turn += 1
            proposal = await user.decide(self._user_task(user, turn))
            if not proposal.ok:
                return self.chat.close(user, "failed")
            if proposal.value.get("end_conversation"):
                return self.chat.close(user, "goals_covered")
            question = proposal.value["proposed_question"]
            verdict = await self.detector.decide(self._ooc_task(user, question, turn))
            if not verdict.ok:
                return self.chat.close(user, "failed")
            self.chat.ask(
                user,
                question,
                verdict.value["has_out_of_context"],
                verdict.value["updated_question"],
            )
            answer = await self.assistant.decide(self._assistant_task(user, turn))
            if not answer.ok:
                return self.chat.close(user, "failed")
            self.chat.answer(user, answer.value)
        self.chat.close(user, "max_turns")

    async def _probe(self, user: UserSimulator, fmt: str, item: SurveyItem) -> None:
        await self.assistant.decide(self._probe_task(user, fmt, item))

    async def _judge(self, user: UserSimulator) -> None:
        for dimension in DIMENSIONS:
            for sample in range(self.params.judge_samples):
                await self.judge.decide(self._judge_task(user, dimension, sample))

    # --- decision tasks ----------------------------------------------------------------------

    def _messages(self, system: str, prompt: str) -> tuple[Message, ...]:
        """The pack entry `system` as the system prompt, then `prompt` as the user's turn."""
        return (
            Message(role="system", content=self.prompts.text(system)),
            Message(role="user", content=prompt),
        )

    def _profile_text(self, user: UserSimulator) -> str:
        """The profile as the prompts show it (pack entry `profile`)."""
        return self.prompts.render("profile", **self.profiles[user.agent_id].record())

    def _user_task(self, user: UserSimulator, turn: int) -> DecisionTask:
        profile = self._profile_text(user)
        history = self.chat.transcript(user)
        if turn == 1:
            prompt = self.prompts.render("user_initial", profile=profile)
            messages = self._messages("user_system", prompt)
            schema: type[BaseModel] = answers.FirstQuestion
            read: Callable[[Any], Any] = answers.read_first_question
        else:
            lines = (self.prompts.render(_HISTORY_LINE[role], said=said) for role, said in history)
            prompt = self.prompts.render("user_followup", profile=profile, history="\n".join(lines))
            messages = self._messages("user_followup_system", prompt)
            schema, read = answers.FollowUp, answers.read_follow_up
        hints = {
            "profile": self.profiles[user.agent_id].record(),
            "turn": turn,
            "asked": sum(role == "user" for role, _ in history),
            "inconsistency_rate": self.params.scripted_inconsistency,
        }
        details = {"user": user.agent_id}
        return self._json_task("career.user", messages, hints, schema, read, details, "user")

    def _ooc_task(self, user: UserSimulator, question: str, turn: int) -> DecisionTask:
        prompt = self.prompts.render(
            "ooc_prompt", profile=self._profile_text(user), question=question
        )
        messages = self._messages("ooc_system", prompt)
        hints = {"profile": self.profiles[user.agent_id].record(), "question": question}
        details = {"user": user.agent_id, "turn": turn}
        verdict = answers.Verdict, answers.read_verdict
        return self._json_task("career.ooc", messages, hints, *verdict, details, "detector")

    def _json_reminder(self, error: str) -> str:
        return self.prompts.render("json_reminder", error=error)

    def _json_task(
        self,
        name: str,
        messages: tuple[Message, ...],
        hints: dict[str, Any],
        schema: type[BaseModel],
        read: Callable[[Any], Any],
        details: dict[str, Any],
        role: str,
        temperature: float | None = None,
        sample_index: int = 0,
    ) -> DecisionTask:
        """A task whose prompt asks for JSON; a structured format sends its schema too."""
        return DecisionTask(
            name=name,
            request=ChatRequest(
                messages=messages,
                temperature=self.params.temperature if temperature is None else temperature,
                sample_index=sample_index,
                task=name,
                hints=hints,
            ),
            parse=json_parser(schema, read),
            reminder=self._json_reminder,
            max_repairs=self.params.max_repairs,
            details=details,
            role=role,
            schema=schema,
            read=read,
        )

    def _assistant_task(self, user: UserSimulator, turn: int) -> DecisionTask:
        return DecisionTask(
            name="career.assistant",
            role="assistant",
            request=ChatRequest(
                messages=_history(self.chat.transcript(user)),
                temperature=self.params.temperature,
                task="career.assistant",
                hints={"turn": turn},
            ),
            parse=parse_nonempty,
            reminder=lambda error: self.prompts.text("answer_reminder"),
            max_repairs=self.params.max_repairs,
            details={"user": user.agent_id, "turn": turn},
            schema=answers.AssistantReply,
            read=answers.read_reply,
        )

    def _probe_task(self, user: UserSimulator, fmt: str, item: SurveyItem) -> DecisionTask:
        options = "\n".join(item.options)
        profile = self.profiles[user.agent_id]
        if fmt == "profile":
            prompt = self.prompts.render(
                "ba_user_prompt",
                profile=self._profile_text(user),
                question=item.profile_text,
                options=options,
            )
            messages = self._messages("ba_user_system", prompt)
            hints: dict[str, Any] = {"profile": profile.record()}
        else:
            transcript = self.chat.transcript(user)
            ask = self.prompts.render(
                "ba_dialogue_prompt", question=item.dialogue_text, options=options
            )
            messages = (
                Message(role="system", content=self.prompts.text("ba_dialogue_system")),
                *_history(transcript),
                Message(role="user", content=ask),
            )
            hints = {"dialogue": "\n".join(said for role, said in transcript if role == "user")}
        return DecisionTask(
            name="career.probe",
            role="respondent",
            request=ChatRequest(
                messages=messages,
                temperature=self.params.probe_temperature,
                logprobs=True,
                top_logprobs=5,
                task="career.probe",
                hints={**hints, "format": fmt, "item": item.index},
            ),
            parse=json_parser(answers.OptionAnswer, answers.read_option),
            reminder=self._json_reminder,
            max_repairs=self.params.max_repairs,
            details={"user": user.agent_id, "format": fmt, "item": item.index},
            schema=answers.OptionAnswer,
            read=answers.read_option,
        )

    def _judge_task(self, user: UserSimulator, dimension: str, sample: int) -> DecisionTask:
        questions = [said for role, said in self.chat.transcript(user) if role == "user"]
        listed = "\n".join(
            self.prompts.render("judge_question", number=i, question=q)
            for i, q in enumerate(questions, 1)
        )
        prompt = self.prompts.render(
            "judge_prompt", profile=self._profile_text(user), questions=listed
        )
        messages = self._messages(f"judge_{dimension}", prompt)
        hints = {
            "profile": self.profiles[user.agent_id].record(),
            "questions": questions,
            "dimension": dimension,
        }
        return self._json_task(
            "career.judge",
            messages,
            hints,
            answers.Rating,
            answers.read_rating,
            {"user": user.agent_id, "dimension": dimension, "sample": sample},
            "judge",
            temperature=0.7,  # §4.1: repeated samples must differ ("10 random seeds")
            sample_index=sample,
        )

    # --- metrics and reports (analysis/career_chat.py) --------------------------------------

    @classmethod
    def compute_metrics(cls, events: pd.DataFrame) -> dict[str, Any]:
        return career_chat.compute_metrics(events)

    @classmethod
    def report(cls, metrics: dict[str, Any]) -> list[str]:
        return career_chat.report_lines(metrics)

    @classmethod
    def write_reports(cls, metrics: dict[str, Any], directory: Path) -> list[Path]:
        return career_chat.write_reports(metrics, directory)

    @classmethod
    def summary_rows(cls, metrics: dict[str, Any]) -> list[dict[str, Any]]:
        """Table 3's row with Figure 4's confidences; a sweep labels it with its model."""
        return career_chat.summary_rows(metrics)


def _item_record(item: SurveyItem) -> dict[str, Any]:
    return {"index": item.index, "profile": item.profile_text, "dialogue": item.dialogue_text}


def _history(transcript: Sequence[tuple[str, str]]) -> tuple[Message, ...]:
    return tuple(Message(role=role, content=said) for role, said in transcript)  # type: ignore[arg-type]
