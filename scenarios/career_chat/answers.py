"""The answer schemas of the career-chat tasks (seed 003) and how each is read into a value.

The prompts ask for JSON (Figures 6, 7, 8–11, 12); the text path parses the reply into these
models with `json_parser`, and a structured response format sends them as the request's schema.
The scripted rules answer them too, so they live here rather than in the scenario. Each `read_*`
turns a validated answer into the decision's value and refuses what the rules of the task forbid.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

from personasim.agents.decision import DecisionParseError, parse_nonempty
from personasim.agents.level_names import LevelNameError, match_level_name
from personasim.scenarios.career_chat.jobs import CATEGORY_LABELS, LEVEL_LABELS
from personasim.scenarios.career_chat.options import N_OPTIONS

__all__ = [
    "AssistantReply",
    "FirstQuestion",
    "FollowUp",
    "JobLabelsAnswer",
    "OptionAnswer",
    "Rating",
    "Verdict",
    "read_first_question",
    "read_follow_up",
    "read_job_labels",
    "read_option",
    "read_rating",
    "read_reply",
    "read_verdict",
]


class FirstQuestion(BaseModel):
    proposed_question: str = Field(min_length=1)


class FollowUp(BaseModel):
    proposed_question: str = ""
    end_conversation: bool


class Verdict(BaseModel):
    has_out_of_context: bool
    updated_question: str = ""


def _not_a_truth_value(value: Any) -> Any:
    """A JSON true/false where a number is asked is no number (pydantic would read true as 1):
    re-asked, never read."""
    if isinstance(value, bool):
        raise ValueError(f"a number is asked, not {str(value).lower()}")
    return value


class OptionAnswer(BaseModel):
    option_id: int = Field(ge=1, le=N_OPTIONS)
    reason: str = ""

    _number = field_validator("option_id", mode="before")(_not_a_truth_value)


class Rating(BaseModel):
    rating: int = Field(ge=0, le=5)
    reason: str = ""

    _number = field_validator("rating", mode="before")(_not_a_truth_value)


class JobLabelsAnswer(BaseModel):
    """The classifier's choice for one job title: one offered label of each set."""

    job_category: str
    position_level: str


class AssistantReply(BaseModel):
    """The assistant's free-text answer, under a structured response format."""

    response: str


def read_first_question(answer: FirstQuestion) -> dict[str, Any]:
    return answer.model_dump()


def read_follow_up(answer: FollowUp) -> dict[str, Any]:
    if not answer.end_conversation and not answer.proposed_question.strip():
        raise DecisionParseError("propose a question or set end_conversation to true")
    return answer.model_dump()


def read_verdict(verdict: Verdict) -> dict[str, Any]:
    if verdict.has_out_of_context and not verdict.updated_question.strip():
        raise DecisionParseError("an out-of-context question needs its updated_question")
    return verdict.model_dump()


def read_option(answer: OptionAnswer) -> int:
    """The chosen option; its probabilities are read from the call's logprobs in the metrics
    (the option's token inside the JSON), in every response format."""
    if not 1 <= answer.option_id <= N_OPTIONS:
        raise DecisionParseError(f"option_id must be 1 to {N_OPTIONS}, got {answer.option_id}")
    return answer.option_id


def read_rating(answer: Rating) -> int:
    if not 0 <= answer.rating <= 5:
        raise DecisionParseError(f"the rating must be 0 to 5, got {answer.rating}")
    return answer.rating


def read_reply(answer: AssistantReply) -> str:
    return parse_nonempty(answer.response)


def read_job_labels(answer: JobLabelsAnswer) -> dict[str, str]:
    """Each choice as the offered label it names (case, spacing and punctuation aside, as
    `level_names` reads them; "Unknown" is offered too, so the classifier need not guess); a
    label that names none of the offered ones is re-asked."""
    try:
        return {
            "job_category": match_level_name(answer.job_category, CATEGORY_LABELS),
            "position_level": match_level_name(answer.position_level, LEVEL_LABELS),
        }
    except LevelNameError as exc:
        raise DecisionParseError(str(exc)) from None
