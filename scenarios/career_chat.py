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

Metrics (§5.1, Table 2): JS centroids per group and question, pairwise group distances, the
baseline and ratios per grouping and format; consistency as EMD profile vs dialogue against
seeded random pairings (Table 3); mean confidence (Figure 4); judge means (Table 1) and
agreement with human ratings (Table 5).
"""

from __future__ import annotations

import csv
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from string import Template
from typing import Annotated, Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field, model_validator

from personasim.agents import DecisionParseError, DecisionTask, parse_nonempty, parse_structured
from personasim.agents.career_chat import Assistant, OutOfContextDetector, UserSimulator
from personasim.analysis import model_label, payloads, rounded, save_figure, shown, write_table
from personasim.analysis.career_chat import (
    GROUPINGS,
    N_OPTIONS,
    emd_ordinal,
    group_distances,
    icc3k,
    one_hot,
    option_distribution,
    pearson,
    random_pairing_emd,
)
from personasim.environments.career_chat import (
    CareerChat,
    Profile,
    SurveyItem,
    load_profiles,
    load_survey,
    shipped_career_file,
    synthetic_profiles,
)
from personasim.simulation import (
    MODEL_SPEC_PATTERN,
    ChatRequest,
    Message,
    Scenario,
    ScenarioError,
    ScenarioParams,
    Simulation,
    read_input,
    register_scenario,
)

__all__ = [
    "BA_DIALOGUE_INSTRUCTION",
    "BA_DIALOGUE_SYSTEM",
    "BA_USER_PROMPT",
    "BA_USER_SYSTEM",
    "DIMENSIONS",
    "JUDGE_PROMPTS",
    "OOC_PROMPT",
    "OOC_SYSTEM",
    "USER_FOLLOWUP_PROMPT",
    "USER_INITIAL_PROMPT",
    "CareerChatParams",
    "CareerChatScenario",
]

# ---------------------------------------------------------------------------------------------
# Prompts — every text the models see in this scenario
# ---------------------------------------------------------------------------------------------

# Figure 6, system prompt of both user-simulator prompts.
USER_SYSTEM = (
    "You are role-playing as a user seeking career advice from a chatbot. Always respond "
    "using the JSON format."
)

_GOALS_TEXT = """\
1. Career direction in the next 5 years
2. Career direction in the next 10 years
3. Essential skills for career growth
4. Relevant certifications to obtain"""

# Figure 6, initial prompt.
USER_INITIAL_PROMPT = Template(f"""\
Here are the details of the user you are simulating:
${{profile}}
You aim to engage with a chatbot to explore career guidance in the following areas:
{_GOALS_TEXT}
Start the conversation by asking for short-term career suggestions, either explicitly \
mentioning your age and job title or subtly hinting at them. As the discussion evolves, \
progressively share more personal details to obtain tailored advice and deeper insights.
Always respond using the following JSON format:
{{"proposed_question": ...}}""")

# Figure 6, subsequent prompt; the dialogue is one message block so the simulator keeps its role.
USER_FOLLOWUP_PROMPT = Template(f"""\
Here are the details of the user you are simulating:
${{profile}}
Through the conversation, your goal is to seek career guidance in the following areas:
{_GOALS_TEXT}
If all four areas are addressed, conclude the conversation. Otherwise, generate a follow-up \
question to gather more insights.
Feel free to share additional details about yourself in your follow-up questions, either based \
on the chatbot's responses or as needed for more tailored advice.
Always respond using the following JSON format:
{{"proposed_question": ..., "end_conversation": true/false}}
Conversation history:
${{history}}""")

USER_FOLLOWUP_SYSTEM = (
    "You are role-playing as a user seeking career advice from a chatbot. Review the "
    "conversation history between you (the user) and the chatbot, then continue the "
    "role-play. Always respond in JSON format."
)

# Figure 7.
OOC_SYSTEM = """\
You are an out-of-context detector. Compare the details in a user-provided question with the \
user profile. Ensure the question meets the following criteria:
1. Reflects only information present in the profile.
2. Is written in the first-person perspective and seeks career suggestions.
If the question fails to meet these criteria, rewrite it accordingly.
Respond in JSON format: {"has_out_of_context": true/false, "updated_question": "..."}. Leave \
"updated_question" empty if no discrepancies are found."""

OOC_PROMPT = Template("User profile:\n${profile}\nQuestion:\n${question}")

# Figure 12 (a): BA_user.
BA_USER_SYSTEM = (
    "You are a chatbot designed to provide precise and personalized answers to questions "
    "based on the given user profile. Analyze the question carefully and tailor your response "
    "to match the user's context."
)
ANSWER_FORMAT = 'Answer the question in json format: {"option_id": int, "reason": str}'
BA_USER_PROMPT = Template(
    "Here are the details of the user profile:\n${profile}\nBelow is the question:\n"
    "${question}\n${options}\n" + ANSWER_FORMAT
)

# Figure 12 (b): BA_dialogue, the generated dialogue as history.
BA_DIALOGUE_SYSTEM = (
    "You are a chatbot designed to provide precise and personalized answers to questions. "
    "Analyze the question carefully and tailor your response to match the user's context."
)
BA_DIALOGUE_INSTRUCTION = Template(
    "Assume you are me, help me find the most suitable answer to the following question.\n"
    "Below is the question:\n${question}\n${options}\n" + ANSWER_FORMAT
)

# Appendix D, Figures 8–11 (system prompts, condensed; the scoring rules are kept).
_JUDGE_FORMAT = 'Always respond using the following JSON format: {"rating": int, "reason": str}'
JUDGE_PROMPTS: dict[str, str] = {
    "coverage": "You will be given a set of questions and a persona's attributes. Your task is "
    "to provide a 'total rating' scoring how many attributes are mentioned in the questions, "
    "on a scale of 0 to 5 (the exact number of mentioned attributes); ignore whether the "
    "values are correct. " + _JUDGE_FORMAT,
    "correctness": "You will be given a set of questions and a persona's attributes. Your task "
    "is to provide a 'total rating' scoring whether attribute values are correctly mentioned "
    "in the questions. The initial score is 5; deduct one point for every wrong attribute "
    "value; do not deduct for missing attributes (scale 0 to 5). " + _JUDGE_FORMAT,
    "diversity": "You will be given a set of questions and a persona's attributes. Your task "
    "is to provide a 'total rating' scoring whether the questions repeat similar content: "
    "the more repetitions, the lower the score. Give 5 when all questions have unique "
    "content, down to 1 when all have the same content. " + _JUDGE_FORMAT,
    "relevance": "You will be given a set of questions and a persona's attributes. All "
    "questions seek career advice from a chatbot. Start with a score of 3; add 1 if the "
    "questions react to the chatbot's responses; add 1 if the language is natural and the "
    "questions progress; subtract 1 if the questions keep repeating the self-introduction; "
    "subtract 1 if the language is too polite, like seeking advice from seniors (scale 1 to "
    "5). " + _JUDGE_FORMAT,
}
JUDGE_PROMPT = Template("User profile:\n${profile}\nHere are the questions:\n${questions}")
DIMENSIONS = tuple(JUDGE_PROMPTS)
DIMENSION_LABELS = {
    "coverage": "Attribute Coverage",
    "correctness": "Attribute Correctness",
    "diversity": "Question Diversity",
    "relevance": "Relevance",
}

JSON_REMINDER = Template(
    "Your answer could not be used: ${error}. Answer again with only the JSON."
)
ANSWER_REMINDER = "Your answer was empty. Please answer the question."

FORMATS = ("profile", "dialogue")
"""BA_user and BA_dialogue (§5)."""

# ---------------------------------------------------------------------------------------------
# Structured answers
# ---------------------------------------------------------------------------------------------


class FirstQuestion(BaseModel):
    proposed_question: str = Field(min_length=1)


class FollowUp(BaseModel):
    proposed_question: str = ""
    end_conversation: bool


class Verdict(BaseModel):
    has_out_of_context: bool
    updated_question: str = ""


class OptionAnswer(BaseModel):
    option_id: int = Field(ge=1, le=N_OPTIONS)
    reason: str = ""


class Rating(BaseModel):
    rating: int = Field(ge=0, le=5)
    reason: str = ""


def _parse_first(reply: str) -> dict[str, Any]:
    return parse_structured(reply, FirstQuestion).model_dump()


def _parse_follow_up(reply: str) -> dict[str, Any]:
    answer = parse_structured(reply, FollowUp)
    if not answer.end_conversation and not answer.proposed_question.strip():
        raise DecisionParseError("propose a question or set end_conversation to true")
    return answer.model_dump()


def _parse_verdict(reply: str) -> dict[str, Any]:
    verdict = parse_structured(reply, Verdict)
    if verdict.has_out_of_context and not verdict.updated_question.strip():
        raise DecisionParseError("an out-of-context question needs its updated_question")
    return verdict.model_dump()


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------

ModelSpec = Annotated[str, Field(pattern=MODEL_SPEC_PATTERN)]


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
    judge_model: ModelSpec | None = Field(None, description="judge (default: the run's model)")
    judge_samples: int = Field(3, ge=0, le=20, description="judge ratings per dimension (0: none)")
    human_ratings: Path | None = Field(
        None, description="CSV user,dimension,rating of human raters (Appendix E)"
    )
    max_repairs: int = Field(2, ge=0, le=5, description="re-asks after an unusable answer")
    emd_repeats: int = Field(100, ge=1, description="random pairings averaged in the baseline")
    scripted_inconsistency: float = Field(
        0.15, ge=0.0, le=1.0, description="scripted backend only: wrong-age questions rate"
    )

    @model_validator(mode="after")
    def _survey_pair(self) -> CareerChatParams:
        if (self.survey_file is None) != (self.dialogue_survey_file is None):
            raise ValueError("give --survey-file and --dialogue-survey-file together")
        return self


# ---------------------------------------------------------------------------------------------
# The scenario
# ---------------------------------------------------------------------------------------------


@register_scenario
class CareerChatScenario(Scenario):
    name = "career-chat"
    summary = "career dialogues; value adaptation to profile vs dialogue (seed 003)"
    Params = CareerChatParams
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
        self._human = _load_human_ratings(p.human_ratings) if p.human_ratings else None

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

    def _profile_text(self, user: UserSimulator) -> str:
        return self.profiles[user.agent_id].describe()

    def _user_task(self, user: UserSimulator, turn: int) -> DecisionTask:
        profile = self._profile_text(user)
        history = self.chat.transcript(user)
        if turn == 1:
            messages = (
                Message(role="system", content=USER_SYSTEM),
                Message(role="user", content=USER_INITIAL_PROMPT.substitute(profile=profile)),
            )
            parse: Callable[[str], Any] = _parse_first
        else:
            text = "\n".join(f"{_speaker(role)}: {said}" for role, said in history)
            prompt = USER_FOLLOWUP_PROMPT.substitute(profile=profile, history=text)
            messages = (
                Message(role="system", content=USER_FOLLOWUP_SYSTEM),
                Message(role="user", content=prompt),
            )
            parse = _parse_follow_up
        hints = {
            "profile": self.profiles[user.agent_id].record(),
            "turn": turn,
            "asked": sum(role == "user" for role, _ in history),
            "inconsistency_rate": self.params.scripted_inconsistency,
        }
        return self._json_task("career.user", messages, hints, parse, {"user": user.agent_id})

    def _ooc_task(self, user: UserSimulator, question: str, turn: int) -> DecisionTask:
        prompt = OOC_PROMPT.substitute(profile=self._profile_text(user), question=question)
        messages = (
            Message(role="system", content=OOC_SYSTEM),
            Message(role="user", content=prompt),
        )
        hints = {"profile": self.profiles[user.agent_id].record(), "question": question}
        details = {"user": user.agent_id, "turn": turn}
        return self._json_task("career.ooc", messages, hints, _parse_verdict, details)

    def _json_task(
        self,
        name: str,
        messages: tuple[Message, ...],
        hints: dict[str, Any],
        parse: Callable[[str], Any],
        details: dict[str, Any],
        model: str | None = None,
        temperature: float | None = None,
        sample_index: int = 0,
    ) -> DecisionTask:
        return DecisionTask(
            name=name,
            request=ChatRequest(
                messages=messages,
                temperature=self.params.temperature if temperature is None else temperature,
                sample_index=sample_index,
                task=name,
                hints=hints,
            ),
            parse=parse,
            reminder=lambda error: JSON_REMINDER.substitute(error=error),
            max_repairs=self.params.max_repairs,
            details=details,
            model=model,
        )

    def _assistant_task(self, user: UserSimulator, turn: int) -> DecisionTask:
        return DecisionTask(
            name="career.assistant",
            request=ChatRequest(
                messages=_history(self.chat.transcript(user)),
                temperature=self.params.temperature,
                task="career.assistant",
                hints={"turn": turn},
            ),
            parse=parse_nonempty,
            reminder=lambda error: ANSWER_REMINDER,
            max_repairs=self.params.max_repairs,
            details={"user": user.agent_id, "turn": turn},
        )

    def _probe_task(self, user: UserSimulator, fmt: str, item: SurveyItem) -> DecisionTask:
        options = "\n".join(item.options)
        profile = self.profiles[user.agent_id]
        if fmt == "profile":
            prompt = BA_USER_PROMPT.substitute(
                profile=profile.describe(), question=item.profile_text, options=options
            )
            messages = (
                Message(role="system", content=BA_USER_SYSTEM),
                Message(role="user", content=prompt),
            )
            hints: dict[str, Any] = {"profile": profile.record()}
        else:
            transcript = self.chat.transcript(user)
            ask = BA_DIALOGUE_INSTRUCTION.substitute(question=item.dialogue_text, options=options)
            messages = (
                Message(role="system", content=BA_DIALOGUE_SYSTEM),
                *_history(transcript),
                Message(role="user", content=ask),
            )
            hints = {"dialogue": "\n".join(said for role, said in transcript if role == "user")}
        return DecisionTask(
            name="career.probe",
            request=ChatRequest(
                messages=messages,
                temperature=self.params.probe_temperature,
                logprobs=True,
                top_logprobs=5,
                task="career.probe",
                hints={**hints, "format": fmt, "item": item.index},
            ),
            parse=lambda r: parse_structured(r, OptionAnswer).option_id,
            reminder=lambda error: JSON_REMINDER.substitute(error=error),
            max_repairs=self.params.max_repairs,
            details={"user": user.agent_id, "format": fmt, "item": item.index},
        )

    def _judge_task(self, user: UserSimulator, dimension: str, sample: int) -> DecisionTask:
        questions = [said for role, said in self.chat.transcript(user) if role == "user"]
        listed = "\n".join(f"Question {i}: {q}" for i, q in enumerate(questions, 1))
        prompt = JUDGE_PROMPT.substitute(profile=self._profile_text(user), questions=listed)
        messages = (
            Message(role="system", content=JUDGE_PROMPTS[dimension]),
            Message(role="user", content=prompt),
        )
        hints = {
            "profile": self.profiles[user.agent_id].record(),
            "questions": questions,
            "dimension": dimension,
        }
        return self._json_task(
            "career.judge",
            messages,
            hints,
            lambda r: parse_structured(r, Rating).rating,
            {"user": user.agent_id, "dimension": dimension, "sample": sample},
            model=self.params.judge_model,
            temperature=0.7,  # §4.1: repeated samples must differ ("10 random seeds")
            sample_index=sample,
        )

    # --- metrics and reports -----------------------------------------------------------------

    @classmethod
    def compute_metrics(cls, events: pd.DataFrame) -> dict[str, Any]:
        header = payloads(events, "run.started")[0]
        params = header["params"]
        profiles = _profiles(events)
        probes = _probe_table(events)
        human = payloads(events, "career.human_ratings")
        judge = _judge_table(events)
        return {
            "model": model_label(header["model"]),
            "n_users": len(profiles),
            "n_items": len(payloads(events, "career.survey")[0]["items"]),
            "dialogues": _dialogue_stats(events),
            "probes": {fmt: _probe_stats(probes, fmt) for fmt in FORMATS},
            "adaptation": {fmt: _adaptation(probes, profiles, fmt) for fmt in FORMATS},
            "consistency": _consistency(probes, header["seed"], params["emd_repeats"]),
            "judge": _judge_means(judge),
            "human_alignment": _alignment(judge, human[0]["rows"]) if human else None,
            "failures": _task_counts(events, "decision.failed"),
            "reasks": _task_counts(events, "decision.reask"),
        }

    @classmethod
    def report(cls, metrics: dict[str, Any]) -> list[str]:
        d, c = metrics["dialogues"], metrics["consistency"]
        lines = [
            f"{metrics['model']}: {d['n']} dialogues ({_counts_text(d['ended'])}), "
            f"{d['questions']} questions, {d['out_of_context']} rewritten by the detector",
            f"  consistency EMD {shown(c['distance'], 3)} vs random pairings "
            f"{shown(c['baseline'], 3)} (ratio {shown(c['ratio'], 3)}, {c['n_users']} users)",
        ]
        for fmt in FORMATS:
            probe = metrics["probes"][fmt]
            lines.append(
                f"  BA_{'user' if fmt == 'profile' else 'dialogue'}: {probe['n']} answers, "
                f"confidence {shown(probe['confidence'], 3)}, one-hot fallbacks "
                f"{probe['one_hot_fallback']}"
            )
            for grouping, result in metrics["adaptation"][fmt].items():
                widest = max(result["pairs"], key=lambda r: r["distance"], default=None)
                if widest:
                    lines.append(
                        f"    {grouping}: baseline {shown(result['baseline'], 3)}, widest "
                        f"{widest['group_a']} vs {widest['group_b']} ratio "
                        f"{shown(widest['ratio'], 3)}"
                    )
        judge = ", ".join(f"{k} {shown(v, 3)}" for k, v in metrics["judge"]["means"].items())
        lines.append(f"  judge: {judge or 'n/a'}; failures: {_counts_text(metrics['failures'])}")
        return lines

    @classmethod
    def write_reports(cls, metrics: dict[str, Any], directory: Path) -> list[Path]:
        files = write_table(table1_rows(metrics), directory, "table1_dialogue_quality")
        files += write_table(table2_rows(metrics), directory, "table2_adaptation")
        files += write_table(table3_rows(metrics), directory, "table3_consistency")
        files += write_table(confidence_rows(metrics), directory, "figure4_confidence")
        if metrics["human_alignment"]:
            files += write_table(metrics["human_alignment"], directory, "table5_judge_alignment")
        for grouping in GROUPINGS:
            figure = figure5(metrics, grouping)
            if figure is not None:
                files.append(save_figure(figure, directory, f"figure5_{grouping}"))
        return files

    @classmethod
    def summary_rows(cls, metrics: dict[str, Any]) -> list[dict[str, Any]]:
        """Table 3's row with Figure 4's confidences; a sweep labels it with its model."""
        row = {k: v for k, v in table3_rows(metrics)[0].items() if k != "model"}
        confidence = {
            f"confidence_{r['format']}": r["confidence"] for r in confidence_rows(metrics)
        }
        return [{**row, **confidence}]


# ---------------------------------------------------------------------------------------------
# Helpers: inputs and prompts
# ---------------------------------------------------------------------------------------------


def _load_human_ratings(path: Path) -> list[list[Any]]:
    """Rows (user, dimension, rating) of a CSV with those columns; a row per rater."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            if not {"user", "dimension", "rating"} <= set(reader.fieldnames or ()):
                raise ScenarioError(
                    f"--human-ratings: {path}:1: needs columns user,dimension,rating"
                )
            return [_human_row(path, reader.line_num, row) for row in reader]
    except OSError as exc:
        raise ScenarioError(f"--human-ratings: {path}: {exc.strerror or exc}") from None


def _human_row(path: Path, line: int, row: dict[str, str]) -> list[Any]:
    if row["dimension"] not in DIMENSIONS:
        raise ScenarioError(
            f"--human-ratings: {path}:{line}: dimension must be one of {', '.join(DIMENSIONS)}"
        )
    try:
        rating = float(row["rating"])
    except (TypeError, ValueError):
        raise ScenarioError(f"--human-ratings: {path}:{line}: rating is not a number") from None
    if not 0 <= rating <= 5:
        raise ScenarioError(f"--human-ratings: {path}:{line}: rating must be from 0 to 5")
    return [row["user"].strip(), row["dimension"], rating]


def _item_record(item: SurveyItem) -> dict[str, Any]:
    return {"index": item.index, "profile": item.profile_text, "dialogue": item.dialogue_text}


def _speaker(role: str) -> str:
    return "User" if role == "user" else "Chatbot"


def _history(transcript: Sequence[tuple[str, str]]) -> tuple[Message, ...]:
    return tuple(Message(role=role, content=said) for role, said in transcript)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Metrics (from the event table alone)
# ---------------------------------------------------------------------------------------------


def _profiles(events: pd.DataFrame) -> dict[str, dict[str, Any]]:
    return {
        p["persona"]["id"]: p["persona"]["attributes"]
        for p in payloads(events, "agent.created")
        if p.get("type") == "UserSimulator"
    }


def _decisions(events: pd.DataFrame, task: str) -> pd.DataFrame:
    made = events[events["kind"] == "decision.made"]
    # astype(bool): on no rows, map() gives an object Series, which pandas would read as a
    # (empty) list of columns and return a frame without any (a run where nothing parsed)
    return made[made["payload"].map(lambda p: p["task"] == task).astype(bool)]


def _probe_table(events: pd.DataFrame) -> pd.DataFrame:
    """One row per usable probe: user, format, item, selected option, distribution, source.

    The distribution comes from the last `career.probe` call in the decision's unit (the
    answer that was parsed); without usable logprobs it is one-hot and `source` says so.
    """
    calls = events[events["kind"] == "llm.call"]
    calls = calls[calls["payload"].map(lambda p: p["task"] == "career.probe").astype(bool)]
    last_call = calls.groupby("scope")["payload"].last().to_dict()
    rows = []
    for scope, p in _decisions(events, "career.probe")[["scope", "payload"]].itertuples(
        index=False
    ):
        selected = int(p["value"])
        distribution = option_distribution(last_call[scope]["response"].get("logprobs"))
        rows.append(
            {
                "user": p["user"],
                "format": p["format"],
                "item": p["item"],
                "selected": selected,
                "distribution": distribution or one_hot(selected),
                "source": "logprobs" if distribution else "one_hot",
            }
        )
    columns = ["user", "format", "item", "selected", "distribution", "source"]
    return pd.DataFrame(rows, columns=columns)


def _probe_stats(probes: pd.DataFrame, fmt: str) -> dict[str, Any]:
    """Figure 4: mean probability of the selected option; one-hot fallbacks counted."""
    rows = probes[probes["format"] == fmt]
    confidence = [d[s - 1] for d, s in zip(rows["distribution"], rows["selected"], strict=True)]
    return {
        "n": len(rows),
        "one_hot_fallback": int((rows["source"] == "one_hot").sum()),
        "confidence": rounded(float(np.mean(confidence))) if confidence else None,
    }


def _adaptation(
    probes: pd.DataFrame, profiles: dict[str, dict[str, Any]], fmt: str
) -> dict[str, Any]:
    """Table 2 for BA_user or BA_dialogue: every grouping's distances, baseline and ratios."""
    rows = probes[probes["format"] == fmt]
    result = {}
    for grouping, label in GROUPINGS.items():
        responses: dict[str, dict[str, list[list[float]]]] = {}
        for user, item, dist in rows[["user", "item", "distribution"]].itertuples(index=False):
            group = label(profiles[user])
            responses.setdefault(group, {}).setdefault(str(item), []).append(dist)
        distances = group_distances(responses)
        result[grouping] = {
            "groups": dict(sorted(distances.groups.items())),
            "baseline": rounded(distances.baseline),
            "centroids_not_converged": distances.centroids_failed,
            "pairs": [
                {
                    "group_a": a,
                    "group_b": b,
                    "distance": rounded(value),
                    "ratio": rounded(distances.ratio((a, b))),
                }
                for (a, b), value in distances.pairs.items()
            ],
        }
    return result


def _consistency(probes: pd.DataFrame, seed: int, repeats: int) -> dict[str, Any]:
    """Table 3: mean EMD(S_u, S_d) over users with both formats, on the items answered in both,
    against seeded random user–dialogue pairings."""
    table = probes.pivot_table(
        index=["user", "item"], columns="format", values="selected", aggfunc="first"
    )
    if not set(FORMATS) <= set(table.columns):
        return {"n_users": 0, "distance": None, "baseline": None, "ratio": None}
    table = table.dropna(subset=list(FORMATS))
    users = sorted(table.index.get_level_values("user").unique())
    profile = [table.loc[u, "profile"].astype(int).tolist() for u in users]
    dialogue = [table.loc[u, "dialogue"].astype(int).tolist() for u in users]
    distance = (
        float(np.mean([emd_ordinal(a, b) for a, b in zip(profile, dialogue, strict=True)]))
        if users
        else None
    )
    baseline = random_pairing_emd(profile, dialogue, np.random.default_rng(seed), repeats)
    return {
        "n_users": len(users),
        "distance": rounded(distance),
        "baseline": rounded(baseline),
        "ratio": rounded(distance / baseline) if distance is not None and baseline else None,
    }


def _dialogue_stats(events: pd.DataFrame) -> dict[str, Any]:
    ended = [p["reason"] for p in payloads(events, "career.dialogue_ended")]
    questions = payloads(events, "career.question")
    flagged = sum(q["out_of_context"] for q in questions)
    exchanges = [p["exchanges"] for p in payloads(events, "career.dialogue_ended")]
    return {
        "n": len(ended),
        "ended": {
            reason: ended.count(reason) for reason in ("goals_covered", "max_turns", "failed")
        },
        "questions": len(questions),
        "out_of_context": flagged,
        "out_of_context_rate": rounded(flagged / len(questions)) if questions else None,
        "mean_exchanges": rounded(float(np.mean(exchanges))) if exchanges else None,
    }


def _judge_table(events: pd.DataFrame) -> pd.DataFrame:
    rows = [
        {"user": p["user"], "dimension": p["dimension"], "rating": float(p["value"])}
        for p in _decisions(events, "career.judge")["payload"]
    ]
    return pd.DataFrame(rows, columns=["user", "dimension", "rating"])


def _judge_means(judge: pd.DataFrame) -> dict[str, Any]:
    """Table 1's LLM-judge column: ratings averaged over samples, then over dialogues."""
    per_dialogue = judge.groupby(["dimension", "user"])["rating"].mean()
    return {
        "n_ratings": len(judge),
        "means": {
            d: rounded(per_dialogue[d].mean())
            if d in per_dialogue.index.get_level_values(0)
            else None
            for d in DIMENSIONS
        },
    }


def _alignment(judge: pd.DataFrame, rows: list[list[Any]]) -> list[dict[str, Any]]:
    """Table 5: per dimension, the judge's mean vs the raters' mean on shared dialogues."""
    human = pd.DataFrame(rows, columns=["user", "dimension", "rating"])
    human_mean = human.groupby(["dimension", "user"])["rating"].mean()
    judge_mean = judge.groupby(["dimension", "user"])["rating"].mean()
    result = []
    for dimension in DIMENSIONS:
        shared = sorted(
            set(_users_of(judge_mean, dimension)) & set(_users_of(human_mean, dimension))
        )
        x = [judge_mean[(dimension, u)] for u in shared]
        y = [human_mean[(dimension, u)] for u in shared]
        result.append(
            {
                "dimension": DIMENSION_LABELS[dimension],
                "n": len(shared),
                "llm_judge": rounded(float(np.mean(x))) if x else None,
                "human": rounded(float(np.mean(y))) if y else None,
                "icc3k": rounded(icc3k(list(zip(x, y, strict=True)))) if shared else None,
                "pearson": rounded(pearson(x, y)),
            }
        )
    return result


def _users_of(series: pd.Series, dimension: str) -> list[str]:
    return list(series[dimension].index) if dimension in series.index.get_level_values(0) else []


def _task_counts(events: pd.DataFrame, kind: str) -> dict[str, int]:
    tasks = [p["task"] for p in payloads(events, kind)]
    names = ("career.user", "career.ooc", "career.assistant", "career.probe", "career.judge")
    return {name.split(".")[1]: tasks.count(name) for name in names}


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items())


# ---------------------------------------------------------------------------------------------
# Tables and figures
# ---------------------------------------------------------------------------------------------


def table1_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 1's shape: dimension, LLM judge, human (when human ratings were given)."""
    human = {r["dimension"]: r["human"] for r in metrics["human_alignment"] or []}
    return [
        {
            "dimension": DIMENSION_LABELS[d],
            "llm_judge": metrics["judge"]["means"][d],
            "human": human.get(DIMENSION_LABELS[d]),
        }
        for d in DIMENSIONS
    ]


def table2_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 2's quantities per scenario and grouping: distance, baseline and their ratio."""
    return [
        {
            "scenario": "BA_user" if fmt == "profile" else "BA_dialogue",
            "grouping": grouping,
            **pair,
            "baseline": result["baseline"],
        }
        for fmt in FORMATS
        for grouping, result in metrics["adaptation"][fmt].items()
        for pair in result["pairs"]
    ]


def table3_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Table 3's shape: model, measured distance, baseline, distance / baseline."""
    c = metrics["consistency"]
    return [
        {
            "model": metrics["model"],
            "distance": c["distance"],
            "baseline": c["baseline"],
            "ratio": c["ratio"],
            "n_users": c["n_users"],
        }
    ]


def confidence_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """Figure 4: mean probability of the selected option per format."""
    return [
        {
            "model": metrics["model"],
            "format": "BA_user" if fmt == "profile" else "BA_dialogue",
            "confidence": metrics["probes"][fmt]["confidence"],
            "one_hot_fallback": metrics["probes"][fmt]["one_hot_fallback"],
        }
        for fmt in FORMATS
    ]


def _ratio_matrix(result: dict[str, Any]) -> tuple[list[str], np.ndarray]:
    groups = sorted(result["groups"], key=_group_order)
    matrix = np.full((len(groups), len(groups)), np.nan)
    for pair in result["pairs"]:
        if pair["ratio"] is not None:
            i, j = groups.index(pair["group_a"]), groups.index(pair["group_b"])
            matrix[i, j] = matrix[j, i] = pair["ratio"]
    np.fill_diagonal(matrix, 0.0)
    return groups, matrix


def _group_order(group: str) -> tuple[int, str]:
    order = ("<30", "30-40", "40-50", "50-60", ">60", "High School", "Bachelor's", "Master's")
    order += ("PhD", "high", "upper-middle", "lower-middle", "low")
    return (order.index(group) if group in order else len(order), group)


def figure5(metrics: dict[str, Any], grouping: str) -> Any:
    """Figure 5: pairwise group distance / baseline, BA_user and BA_dialogue side by side."""
    import matplotlib.pyplot as plt

    panels = [(fmt, metrics["adaptation"][fmt][grouping]) for fmt in FORMATS]
    if not any(result["pairs"] for _, result in panels):
        return None
    figure, axes = plt.subplots(1, 2, figsize=(11, 4.6))
    for axis, (fmt, result) in zip(axes, panels, strict=True):
        groups, matrix = _ratio_matrix(result)
        image = axis.imshow(matrix, cmap="viridis")
        axis.set_xticks(range(len(groups)), groups, rotation=45, ha="right")
        axis.set_yticks(range(len(groups)), groups)
        for (i, j), value in np.ndenumerate(matrix):
            if not np.isnan(value) and i != j:
                axis.text(j, i, f"{value:.2f}", ha="center", va="center", color="w", fontsize=8)
        label = "BA_user" if fmt == "profile" else "BA_dialogue"
        axis.set_title(f"{label} by {grouping} (distance / baseline)")
        figure.colorbar(image, ax=axis, shrink=0.8)
    figure.suptitle(f"{metrics['model']}: pairwise group distances (baseline = 1)")
    figure.tight_layout()
    return figure
