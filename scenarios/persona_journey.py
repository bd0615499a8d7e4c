"""`persona-journey`: the same personas through several environments, in one run and one log.

Each persona walks a graph of places (`environments/journey.py`): the Trust Game as trustor
(seed 001), the VSM value survey in profile phrasing with logprobs (seed 003, BA_user), and a few
PersonaGym scenes scored by an evaluator ensemble (seed 002). One round is one step of every
persona's walk; the route is a fixed order along the graph's edges, or a seeded rule
(`shuffled`: a random unvisited neighbour at each step). With `--memory summary|full` a persona's
prompts carry what it did in the places it visited before (a summary line per place, or the
earlier exchanges themselves); several modes, comma-separated, are dealt to personas in turn so
one run can compare them.

The environments' texts are the shipped prompt packs of `trust-population`, `career-chat` and
`persona-gym`, by reference; this scenario's own pack holds the memory texts and the scenes.
The cross-environment metrics are in `analysis/journey.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
from pydantic import Field, field_validator, model_validator

from personasim.agents import (
    DecisionTask,
    PersonaAgent,
    ResearcherAgent,
    TrusteeAgent,
    TrustorAnswer,
    career_answers,
    format_instructions,
    json_parser,
    parse_nonempty,
)
from personasim.agents.persona_gym_answers import (
    Evaluation,
    PersonaAnswer,
    ScoreExamples,
    parse_score,
    read_answer,
    read_score,
)
from personasim.agents.persona_gym_tasks import EVALUATOR_TEMPERATURE, SELECTION_SAMPLING
from personasim.agents.scripted_journey import NextPlace, read_place
from personasim.agents.trustee import ARCHETYPE_PATTERN
from personasim.analysis import journey as journey_metrics
from personasim.environments import TrustGame
from personasim.environments.career_chat import SurveyItem, load_survey, shipped_career_file
from personasim.environments.journey import JourneyMap, check_walk, parse_edges
from personasim.environments.persona_gym import GymQuestion, PersonaGym
from personasim.simulation import (
    ChatRequest,
    Environment,
    Message,
    Role,
    Scenario,
    ScenarioError,
    Simulation,
    read_input,
    register_scenario,
)

from .career_chat import CareerChatScenario
from .persona_gym import PersonaGymScenario
from .trust_population import (
    PopulationParams,
    TrustPopulation,
    checked_transfer,
    draw_personas,
    load_bank,
    parse_transfer,
)

__all__ = ["PLACES", "SCENES", "PersonaJourney", "PersonaJourneyParams"]

PLACES = ("trust", "survey", "gym")
"""The built-in places, nodes of the journey graph."""

SCENES = (
    ("Expected Action", "a neighbourhood meeting"),
    ("Persona Consistency", "a job interview"),
    ("Linguistic Habits", "a family dinner"),
    ("Action Justification", "a charity fundraiser"),
)
"""PersonaGym task and setting of each scene; the questions are the pack's `scene.N` entries."""

MemoryMode = Literal["none", "summary", "full"]


class PersonaJourneyParams(PopulationParams):
    n_personas: int = Field(12, ge=1, description="personas sampled from the bank")
    order: tuple[str, ...] = Field(PLACES, description="the route of --route fixed")
    route: Literal["fixed", "shuffled", "persona"] = Field(
        "fixed",
        description="fixed: --order for all; shuffled: random start, then a random "
        "unvisited neighbour (per persona, seeded)",
    )
    edges: tuple[str, ...] = Field(
        ("trust-survey", "survey-gym", "gym-trust"), description="the places' graph, a-b,..."
    )
    memory: tuple[MemoryMode, ...] = Field(
        ("none",), description="memory of earlier places: none|summary|full (several: dealt)"
    )
    endowment: int = Field(10, ge=1, description="Trust Game endowment (E)")
    trustee: str = Field("M3", pattern=ARCHETYPE_PATTERN, description="trustee archetype M_k")
    trust_temperature: float = Field(0.05, ge=0.0, le=2.0, description="seed 001, §3.1")
    n_items: int | None = Field(None, ge=1, description="first N survey items (default: all)")
    survey_repeats: int = Field(2, ge=1, le=10, description="answers per survey item")
    survey_temperature: float = Field(0.7, ge=0.0, le=2.0, description="survey answers")
    scenes: int = Field(3, ge=1, le=len(SCENES), description="PersonaGym scenes per persona")
    temperature: float = Field(0.7, ge=0.0, le=2.0, description="scene answers")
    max_repairs: int = Field(2, ge=0, le=5, description="re-asks after an unusable answer")
    scripted_fidelity: float = Field(
        0.8, ge=0.0, le=1.0, description="scripted backend only: scene answers' fidelity"
    )

    @field_validator("memory")
    @classmethod
    def _distinct_modes(cls, modes: tuple[str, ...]) -> tuple[str, ...]:
        if not modes or len(set(modes)) != len(modes):
            raise ValueError("name each memory mode once: none, summary, full")
        return modes

    @model_validator(mode="after")
    def _route_on_graph(self) -> PersonaJourneyParams:
        graph = parse_edges(self.edges)
        unknown = [n for n in graph if n not in PLACES]
        if unknown:
            raise ValueError(f"--edges: unknown places {unknown}; places are {', '.join(PLACES)}")
        check_walk(graph, self.order)
        if len(set(self.order)) != len(self.order):
            raise ValueError("--order visits a place twice")
        return self


class ValueSurvey(Environment):
    """The place where the VSM items are asked (its rules: the items and their options)."""

    kind = "value_survey"

    def __init__(self, sim: Simulation, items: tuple[SurveyItem, ...]) -> None:
        self.items = items
        super().__init__(sim, "survey")

    def settings(self) -> dict[str, Any]:
        return {"items": [{"index": i.index, "profile": i.profile_text} for i in self.items]}


@dataclass
class Traveller:
    """What a persona carries between places: its memory mode and what it did where."""

    agent: PersonaAgent
    memory: MemoryMode
    summaries: list[str] = field(default_factory=list)
    exchanges: list[Message] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    """The route rule's draws: seeded from the run in setup, so the order of play is moot."""
    ended: bool = False


@register_scenario
class PersonaJourney(Scenario):
    name = "persona-journey"
    summary = "personas walk a graph: Trust Game, value survey, PersonaGym; agreement across them"
    Params = PersonaJourneyParams
    roles: ClassVar[dict[str, Role]] = {
        "persona": Role("the persona agents on their journey"),
        "reasoner": PersonaGymScenario.roles["reasoner"],
        "evaluator": PersonaGymScenario.roles["evaluator"],
    }
    params: PersonaJourneyParams

    def prepare(self) -> None:
        p = self.params
        self._bank = load_bank(p)
        items = read_input(
            "survey",
            lambda: load_survey(
                shipped_career_file("career_survey_profile.csv"),
                shipped_career_file("career_survey_dialogue.csv"),
            ),
        )
        if p.n_items is not None and p.n_items > len(items):
            raise ScenarioError(f"--n-items {p.n_items}: the survey has {len(items)} items")
        self._items = items[: p.n_items]
        self.packs = {
            "trust": TrustPopulation.shipped_prompts(),
            "survey": CareerChatScenario.shipped_prompts(),
            "gym": PersonaGymScenario.shipped_prompts(),
        }

    def rounds(self) -> int:
        return (
            len(self.params.order)
            if self.params.route == "fixed"
            else len(parse_edges(self.params.edges))
        )

    # --- setup -------------------------------------------------------------------------------

    def setup(self, sim: Simulation) -> None:
        p = self.params
        self.game = TrustGame(sim, endowment=p.endowment, name="trust")
        self.trustee = TrusteeAgent(sim, p.trustee)
        self.trustee.move_to(self.game)
        self.survey = ValueSurvey(sim, self._items)
        scenes = SCENES[: p.scenes]
        self.gym = PersonaGym(sim, [s for _, s in scenes], sorted({t for t, _ in scenes}), "gym")
        graph = parse_edges(p.edges)
        places = {"trust": self.game, "survey": self.survey, "gym": self.gym}
        self.map = JourneyMap(sim, graph, {n: places[n] for n in graph})
        personas = draw_personas(self._bank, p, sim.rng)
        self.travellers = {}
        for i, persona in enumerate(personas):
            agent = PersonaAgent(sim, persona)
            mode = p.memory[i % len(p.memory)]
            rng = np.random.default_rng(int(sim.rng.integers(2**32)))
            self.travellers[agent.agent_id] = Traveller(agent, mode, rng=rng)
            sim.emit(
                "journey.assigned", {"memory": mode, "route": p.route}, agent_id=agent.agent_id
            )
        self.example_writer = ResearcherAgent(sim, "example-writer", role="score examples")
        self.evaluators = [
            ResearcherAgent(sim, f"evaluator-{i}", role=f"evaluator {spec}")
            for i, spec in enumerate(sim.roles["evaluator"], 1)
        ]

    # --- rounds ------------------------------------------------------------------------------

    async def play_round(self, sim: Simulation, round_index: int) -> None:
        plan = {t.agent.agent_id: (t, self._options(t)) for t in self.travellers.values()}
        await sim.concurrently(
            {
                agent_id: (lambda t=t, options=options: self._step(t, options))
                for agent_id, (t, options) in plan.items()
                if options  # a walk ends when no unvisited place is one edge away
            }
        )

    def _options(self, traveller: Traveller) -> list[str]:
        """Where the traveller may go next (fixed: its one next place of --order)."""
        p, step = self.params, len(traveller.visited)
        if traveller.ended:
            return []
        if p.route == "fixed":
            return [p.order[step]] if step < len(p.order) else []
        if step == 0:
            return [p.order[0]] if p.route == "persona" else [str(n) for n in self.map.graph]
        here = traveller.visited[-1]
        return [str(n) for n in self.map.neighbours(here) if n not in traveller.visited]

    async def _step(self, traveller: Traveller, options: list[str]) -> None:
        place = await self._choose(traveller, options)
        if place is None:
            traveller.ended = True  # the persona's choice failed: recorded, its walk ends
            return
        if traveller.visited:
            self.map.move(traveller.agent, place)
        else:
            self.map.place(traveller.agent, place)
        traveller.visited.append(place)
        await {"trust": self._trust, "survey": self._survey, "gym": self._gym}[place](traveller)

    async def _choose(self, t: Traveller, options: list[str]) -> str | None:
        """The next place: the only option, the rule's seeded draw, or the persona's decision."""
        if len(options) == 1:
            return options[0]
        if self.params.route == "shuffled":
            return options[int(t.rng.integers(len(options)))]
        offered = "\n".join(f"- {o}: {self.prompts.text(f'place.{o}')}" for o in options)
        prompt = self.prompts.render(
            "choose_place",
            persona=t.agent.persona.profile_text(),
            options=offered,
            format_instructions=format_instructions(NextPlace),
        )
        hints = {"options": options, "traits": dict(t.agent.persona.traits)}
        read = partial(read_place, options=options)
        task = DecisionTask(
            name="journey.choose",
            request=self._request(
                t,
                (Message(role="user", content=prompt),),
                self.params.temperature,
                "journey.choose",
                hints,
            ),
            parse=json_parser(NextPlace, read),
            reminder=lambda e: self.packs["gym"].render("json_reminder", error=e),
            max_repairs=self.params.max_repairs,
            details={"options": options, "step": len(t.visited) + 1},
            schema=NextPlace,
            read=read,
        )
        decision = await t.agent.decide(task)
        return decision.value if decision.ok else None

    # --- the three places --------------------------------------------------------------------

    async def _trust(self, t: Traveller) -> None:
        p, pack = self.params, self.packs["trust"]
        prompt = pack.render(
            "trustor",
            initial_amount=p.endowment,
            persona_details=t.agent.persona.profile_text(),
            theoretical_props="",
        )
        hints = {"traits": dict(t.agent.persona.traits), "endowment": p.endowment}
        task = DecisionTask(
            name="trust.trustor",
            request=self._request(
                t,
                (Message(role="user", content=prompt),),
                p.trust_temperature,
                "trust.trustor",
                hints,
            ),
            parse=lambda reply: parse_transfer(reply, self.game),
            reminder=lambda e: pack.render("format_reminder", error=e, initial_amount=p.endowment),
            max_repairs=p.max_repairs,
            details={"place": "trust", "step": len(t.visited)},
            schema=TrustorAnswer,
            read=lambda answer: checked_transfer(answer.amount, self.game),
        )
        decision = await t.agent.decide(task)
        if not decision.ok:
            return
        received = self.game.transfer(t.agent, self.trustee, decision.value)
        outcome = self.game.repay(t.agent, self.trustee, self.trustee.respond(received))
        self._remember(
            t,
            task,
            decision.reply,
            "memory.trust",
            endowment=p.endowment,
            sent=outcome.sent,
            returned=outcome.returned,
        )

    async def _survey(self, t: Traveller) -> None:
        p, pack = self.params, self.packs["survey"]
        chosen: list[int] = []
        last: DecisionTask | None = None
        for item in self._items:
            for repeat in range(p.survey_repeats):
                prompt = pack.render(
                    "ba_user_prompt",
                    profile=t.agent.persona.profile_text(),
                    question=item.profile_text,
                    options="\n".join(item.options),
                )
                messages = (
                    Message(role="system", content=pack.text("ba_user_system")),
                    Message(role="user", content=prompt),
                )
                hints = {
                    "profile": _survey_profile(t.agent),
                    "format": "profile",
                    "item": item.index,
                }
                request = self._request(
                    t,
                    messages,
                    p.survey_temperature,
                    "career.probe",
                    hints,
                    sample_index=repeat,
                    logprobs=True,
                )
                schema, read = career_answers.OptionAnswer, career_answers.read_option
                last = DecisionTask(
                    name="career.probe",
                    request=request,
                    parse=json_parser(schema, read),
                    reminder=lambda e: pack.render("json_reminder", error=e),
                    max_repairs=p.max_repairs,
                    details={
                        "place": "survey",
                        "step": len(t.visited),
                        "item": item.index,
                        "repeat": repeat,
                    },
                    schema=schema,
                    read=read,
                )
                decision = await t.agent.decide(last)
                if decision.ok:
                    chosen.append(int(decision.value))
                    if repeat == 0:
                        self._keep_exchange(t, last, decision.reply)
        if chosen:
            t.summaries.append(
                self.prompts.render(
                    "memory.survey", n=len(self._items), mean=f"{np.mean(chosen):.1f}"
                )
            )

    async def _gym(self, t: Traveller) -> None:
        scenes = SCENES[: self.params.scenes]
        self.gym.place(t.agent, [setting for _, setting in scenes])
        answered = 0
        for index, (task, setting) in enumerate(scenes, 1):
            question = GymQuestion(task, index, setting, self.prompts.text(f"scene.{index}"))
            self.gym.pose(t.agent, task, [question], source="journey")
            answered += await self._scene(t, question)
        if answered:
            settings = ", ".join(s for _, s in scenes)
            t.summaries.append(self.prompts.render("memory.gym", n=answered, settings=settings))

    async def _scene(self, t: Traveller, question: GymQuestion) -> int:
        """The persona answers; examples are written; every evaluator scores (seed 002, §3.2)."""
        p, pack, persona = self.params, self.packs["gym"], t.agent.persona.profile_text()
        system = pack.render("persona_system", persona=persona)
        messages = (
            Message(role="system", content=system),
            Message(role="user", content=question.text),
        )
        hints = {"persona": persona, "task": question.task, "fidelity": p.scripted_fidelity}
        details = {**question.scene(t.agent.agent_id), "place": "gym", "step": len(t.visited)}
        task = DecisionTask(
            name="persona_gym.answer",
            request=self._request(
                t, messages, p.temperature, "persona_gym.answer", hints, sample_index=question.index
            ),
            parse=parse_nonempty,
            reminder=lambda e: pack.render("answer_reminder"),
            max_repairs=p.max_repairs,
            details=details,
            schema=PersonaAnswer,
            read=read_answer,
        )
        answer = await t.agent.decide(task)
        if not answer.ok:
            return 0
        self._keep_exchange(t, task, answer.reply)
        outline = _outline(pack, question.task)
        examples = await self.example_writer.decide(
            self._examples_task(persona, question, outline, details)
        )
        if not examples.ok:
            return 1
        for i, evaluator in enumerate(self.evaluators, 1):
            prompt = pack.render(
                f"evaluation.{_key(question.task)}",
                rubric_outline=outline,
                examples="\n".join(
                    pack.render("score_example", score=k, example=examples.value[f"score_{k}"])
                    for k in range(1, 6)
                ),
                persona=persona,
                question=question.text,
                response=answer.value,
            )
            await evaluator.decide(
                DecisionTask(
                    name="persona_gym.evaluate",
                    request=ChatRequest(
                        messages=(Message(role="user", content=prompt),),
                        temperature=EVALUATOR_TEMPERATURE,
                        task="persona_gym.evaluate",
                        hints={
                            "persona": persona,
                            "task": question.task,
                            "response": answer.value,
                            "evaluator": i,
                        },
                    ),
                    parse=parse_score,
                    reminder=lambda e: pack.render("score_reminder", error=e),
                    max_repairs=p.max_repairs,
                    schema=Evaluation,
                    read=read_score,
                    details={**details, "evaluator": evaluator.agent_id},
                    role="evaluator",
                    member=i - 1,
                )
            )
        return 1

    def _examples_task(
        self, persona: str, question: GymQuestion, outline: str, details: dict[str, Any]
    ) -> DecisionTask:
        pack = self.packs["gym"]
        prompt = pack.render(
            "examples",
            rubric_outline=outline,
            persona=persona,
            question=question.text,
            format_instructions=format_instructions(ScoreExamples),
        )
        return DecisionTask(
            name="persona_gym.examples",
            request=ChatRequest(
                messages=(Message(role="user", content=prompt),),
                **SELECTION_SAMPLING,
                task="persona_gym.examples",
                hints={"persona": persona, "task": question.task},
            ),
            parse=json_parser(ScoreExamples, ScoreExamples.model_dump),
            reminder=lambda e: pack.render("json_reminder", error=e),
            max_repairs=self.params.max_repairs,
            details=details,
            role="reasoner",
            schema=ScoreExamples,
            read=ScoreExamples.model_dump,
        )

    # --- memory ------------------------------------------------------------------------------

    def _request(
        self,
        t: Traveller,
        messages: tuple[Message, ...],
        temperature: float,
        name: str,
        hints: dict[str, Any],
        **extra: Any,
    ) -> ChatRequest:
        """The place's messages with the persona's memory of earlier places put in: `summary`
        prefixes the last user turn; `full` inserts the earlier exchanges before it."""
        *head, last = messages
        if t.memory == "summary" and t.summaries:
            recalled = self.prompts.render("memory_summary", lines="\n".join(t.summaries))
            last = Message(role="user", content=f"{recalled}\n\n{last.content}")
        elif t.memory == "full" and t.exchanges:
            head = [*head, *t.exchanges]
        if name == "career.probe" and extra.get("logprobs"):
            extra["top_logprobs"] = 5
        return ChatRequest(
            messages=(*head, last), temperature=temperature, task=name, hints=hints, **extra
        )

    def _keep_exchange(self, t: Traveller, task: DecisionTask, reply: str | None) -> None:
        """The place's own last user turn and the persona's accepted reply, for `full`."""
        if reply is None:
            return
        if t.memory != "full":
            return
        asked = task.request.messages[-1].content  # in `full` mode, the place's own text
        t.exchanges.extend(
            [Message(role="user", content=asked), Message(role="assistant", content=reply)]
        )

    def _remember(
        self, t: Traveller, task: DecisionTask, reply: str | None, entry: str, **values: Any
    ) -> None:
        self._keep_exchange(t, task, reply)
        t.summaries.append(self.prompts.render(entry, **values))

    # --- metrics -----------------------------------------------------------------------------

    @classmethod
    def compute_metrics(cls, events: pd.DataFrame) -> dict[str, Any]:
        return journey_metrics.journey_metrics(events)

    @classmethod
    def report(cls, metrics: dict[str, Any]) -> list[str]:
        return journey_metrics.report_lines(metrics)

    @classmethod
    def write_reports(cls, metrics: dict[str, Any], directory: Path) -> list[Path]:
        return journey_metrics.write_reports(metrics, directory)


def _survey_profile(agent: PersonaAgent) -> dict[str, Any]:
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


def _key(task: str) -> str:
    return task.lower().replace(" ", "_")


def _outline(pack: Any, task: str) -> str:
    description = pack.render(f"description.{_key(task)}")
    return pack.render(f"outline.{_key(task)}", description=description)
