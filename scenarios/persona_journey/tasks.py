"""The persona-journey's own decision tasks: choosing the next place and a survey answer.

The scenario says who decides what and when; this module builds each request from the packs (the
journey's own, and career-chat's `ba_user_*` entries for the survey, seed 003) as a persona
arriving fresh would get it. Memory of earlier places is put in afterwards
(`journey_memory.with_memory`). Agents cannot import environments, so a survey item comes in as
any object with `index`, `profile_text` and `options`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from personasim.agents.decision import DecisionTask
from personasim.agents.persona_agent import PersonaAgent
from personasim.agents.structured import format_instructions, json_task
from personasim.scenarios.career_chat import answers as career_answers
from personasim.scenarios.persona_journey.scripted import NextPlace, read_place
from personasim.simulation import ChatRequest, Message
from personasim.simulation.llm.prompts import PromptPack

__all__ = ["JourneyTasks", "SurveyQuestion", "survey_profile"]


class SurveyQuestion(Protocol):
    """What a survey task needs of an item (`environments.SurveyItem` has it)."""

    index: int
    profile_text: str
    options: Sequence[str]


@dataclass(frozen=True)
class JourneyTasks:
    """Builds the journey's choose and survey tasks. `prompts` is the journey's pack,
    `survey` career-chat's, `gym` persona-gym's (its `json_reminder` asks for JSON again)."""

    prompts: PromptPack
    survey: PromptPack
    gym: PromptPack
    max_repairs: int
    temperature: float
    survey_temperature: float

    def choose(self, agent: PersonaAgent, offered: Mapping[str, str], step: int) -> DecisionTask:
        """The persona picks its next place among `offered` (name → the place's description,
        its pack's `place.NAME`), with `--route persona`."""
        options = list(offered)
        listed = "\n".join(f"- {name}: {text}" for name, text in offered.items())
        prompt = self.prompts.render(
            "choose_place",
            persona=agent.persona.profile_text(),
            options=listed,
            format_instructions=format_instructions(NextPlace),
        )
        read = partial(read_place, options=options)
        return json_task(
            "journey.choose",
            ChatRequest(
                messages=(Message(role="user", content=prompt),),
                temperature=self.temperature,
                task="journey.choose",
                hints={"options": options, "traits": dict(agent.persona.traits)},
            ),
            NextPlace,
            read,
            lambda e: self.gym.render("json_reminder", error=e),
            max_repairs=self.max_repairs,
            details={"options": options, "step": step},
        )

    def survey_item(
        self, agent: PersonaAgent, item: SurveyQuestion, repeat: int, step: int
    ) -> DecisionTask:
        """One answer to a VSM item in profile phrasing (seed 003, BA_user), with logprobs."""
        prompt = self.survey.render(
            "ba_user_prompt",
            profile=agent.persona.profile_text(),
            question=item.profile_text,
            options="\n".join(item.options),
        )
        hints = {"profile": survey_profile(agent), "format": "profile", "item": item.index}
        return json_task(
            "career.probe",
            ChatRequest(
                messages=(
                    Message(role="system", content=self.survey.text("ba_user_system")),
                    Message(role="user", content=prompt),
                ),
                temperature=self.survey_temperature,
                task="career.probe",
                hints=hints,
                sample_index=repeat,
                logprobs=True,
                top_logprobs=5,
            ),
            career_answers.OptionAnswer,
            career_answers.read_option,
            lambda e: self.survey.render("json_reminder", error=e),
            max_repairs=self.max_repairs,
            details={"place": "survey", "step": step, "item": item.index, "repeat": repeat},
        )


def survey_profile(agent: PersonaAgent) -> dict[str, Any]:
    """Age and education as the scripted survey rule reads them (career-chat's profile keys)."""
    attributes = agent.persona.attributes
    found: dict[str, Any] = {}
    if isinstance(attributes.get("age"), int | float):
        found["age"] = int(attributes["age"])
    degree = str(attributes.get("highest_degree_received", "")).lower()
    for key, level in (
        ("graduate", "Master's"),
        ("bachelor", "Bachelor's"),
        ("high school", "High School"),
    ):
        if key in degree:
            found["education"] = level
            break
    return found
