"""`persona-journey`: the same personas through several environments, in one run and one log.

Each persona walks a graph of places (`environments/journey/place.py`; the places themselves, one
registered class each, are `places.py`): the Trust Game as trustor
(seed 001), the VSM value survey in profile phrasing with logprobs (seed 003, BA_user), and a few
PersonaGym scenes scored by an evaluator ensemble (seed 002). One round is one step of every
persona's walk; the route is a fixed order along the graph's edges, or a seeded rule
(`shuffled`: a random unvisited neighbour at each step). With `--memory summary|full` a persona's
prompts carry what it did in the places it visited before (a summary line per place, or the
earlier exchanges themselves); several modes, comma-separated, are dealt to personas in turn so
one run can compare them.

The environments' texts are the shipped prompt packs of `trust-population`, `career-chat` and
`persona-gym`, by reference; this scenario's own pack holds the memory texts and the scenes.
The cross-environment metrics are in `scenarios/persona_journey/metrics.py`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from personasim.agents import Decision, DecisionTask, PersonaAgent, ResearcherAgent
from personasim.environments import ARCHETYPE_PATTERN, MAX_ENDOWMENT
from personasim.environments.career_chat import load_survey, shipped_career_file
from personasim.environments.journey.place import JourneyMap, check_walk, parse_edges
from personasim.scenarios.career_chat.scenario import CareerChatScenario
from personasim.scenarios.persona_gym.scenario import PersonaGymScenario
from personasim.scenarios.persona_gym.tasks import GymTasks
from personasim.scenarios.persona_journey.memory import (
    MemoryMode,
    Traveller,
    with_memory,
)
from personasim.scenarios.persona_journey.metrics import (
    SUMMARY_COUNTS,
    PersonaJourneyMetrics,
    journey_metrics,
    report_lines,
    summary_rows,
    write_reports,
)
from personasim.scenarios.persona_journey.places import (
    PLACES,
    SCENES,
    JourneyPlace,
    get_journey_place,
    journey_places,
    unknown_places,
)
from personasim.scenarios.persona_journey.tasks import JourneyTasks
from personasim.scenarios.trust.population import (
    PopulationParams,
    TrustPopulation,
    draw_personas,
    load_bank,
)
from personasim.simulation import (
    Role,
    Scenario,
    ScenarioError,
    ScenarioMetrics,
    Simulation,
    read_input,
    register_scenario,
)

__all__ = ["PLACES", "SCENES", "PersonaJourney", "PersonaJourneyParams"]  # places: places.py


class PersonaJourneyParams(PopulationParams):
    PERSONA_BYTES: ClassVar[int] = 124_000
    """Memory one traveller takes (measured: 50 and 400 personas, the default places, scripted
    model)."""

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
    endowment: int = Field(10, ge=1, le=MAX_ENDOWMENT, description="Trust Game endowment (E)")
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
        unknown = unknown_places(graph)
        if unknown:
            known = ", ".join(journey_places())
            raise ValueError(f"--edges: unknown places {unknown}; places are {known}")
        check_walk(graph, self.order)
        if len(set(self.order)) != len(self.order):
            raise ValueError("--order visits a place twice")
        return self


@register_scenario
class PersonaJourney(Scenario):
    name = "persona-journey"
    summary = "personas walk a graph: Trust Game, value survey, PersonaGym; agreement across them"
    smoke_params: ClassVar[dict[str, int]] = {"n_personas": 2, "scenes": 1, "n_items": 1}
    Params = PersonaJourneyParams
    roles: ClassVar[dict[str, Role]] = {
        "persona": Role("the persona agents on their journey", reply_tokens=150),  # a paragraph
        "examples": PersonaGymScenario.roles["examples"],
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
        self.items = items[: p.n_items]
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
        graph = parse_edges(p.edges)
        # The built-in places are set up in every run (as ever: their events are in every log),
        # another place when the graph has it.
        self.places: dict[str, JourneyPlace] = {
            name: place(self, sim)
            for name in dict.fromkeys((*PLACES, *map(str, graph)))
            if (place := get_journey_place(name)) is not None
        }
        self.map = JourneyMap(sim, graph, {n: self.places[n].environment for n in graph})
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
        self.tasks = JourneyTasks(
            self.prompts,
            self.packs["survey"],
            self.packs["gym"],
            p.max_repairs,
            p.temperature,
            p.survey_temperature,
        )
        gym_pack = self.packs["gym"]
        self.gym_tasks = GymTasks(gym_pack, p.max_repairs, p.temperature, p.scripted_fidelity)
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
        await self.places[place].visit(traveller)

    async def _choose(self, t: Traveller, options: list[str]) -> str | None:
        """The next place: the only option, the rule's seeded draw, or the persona's decision."""
        if len(options) == 1:
            return options[0]
        if self.params.route == "shuffled":
            return options[int(t.rng.integers(len(options)))]
        offered = {o: self.places[o].description() for o in options}
        decision, _ = await self.decide(t, self.tasks.choose(t.agent, offered, len(t.visited) + 1))
        return decision.value if decision.ok else None

    async def decide(self, t: Traveller, task: DecisionTask) -> tuple[Decision, DecisionTask]:
        """The persona decides `task` with its memory of earlier places put in (every place's
        persona decisions go through here)."""
        task = replace(task, request=with_memory(t, task.request, self.prompts))
        return await t.agent.decide(task), task

    # --- metrics -----------------------------------------------------------------------------

    metrics = ScenarioMetrics(
        compute=journey_metrics,
        block=PersonaJourneyMetrics,
        report=report_lines,
        write_reports=write_reports,
        summary_rows=summary_rows,
        summary_counts=SUMMARY_COUNTS,
    )
