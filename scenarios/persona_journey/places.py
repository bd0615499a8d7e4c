"""The places of a journey, kept in a registry: a new place is one class, in one place.

A place is a node of the journey graph. `@journey_place("name")` registers a `JourneyPlace`:
`build` makes its environment when the run is set up, `visit` plays one persona's visit (its
decisions, with its memory put in by `PersonaJourney.decide`, and the line it remembers), and
`description` is how the persona is offered it (`--route persona`). The built-in places are the
three below; an outside package adds its own under the entry-point group
`personasim.journey_places` (each entry names a module whose import registers its places). The
group is read from package metadata only when a run names a place that is not registered, so a
run on the built-in places imports nothing more (docs/persona-journey.md, "Adding a place").
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, ClassVar, TypeVar

import numpy as np

from personasim.agents import DecisionTask
from personasim.environments import TrusteeAgent, TrustGame
from personasim.environments.journey.survey import ValueSurvey
from personasim.environments.persona_gym.place import GymQuestion, PersonaGym
from personasim.scenarios.persona_journey.memory import Traveller, keep_exchange
from personasim.scenarios.trust.answers import TrustorAnswer
from personasim.scenarios.trust.population import (
    checked_transfer,
    parse_transfer,
    record_transfer_reading,
)
from personasim.simulation import (
    ChatRequest,
    Environment,
    Message,
    ScenarioError,
    Simulation,
)
from personasim.simulation.base.registry import Registry

if TYPE_CHECKING:
    from personasim.scenarios.persona_journey.scenario import PersonaJourney

__all__ = [
    "PLACES",
    "PLACES_ENTRY_POINT_GROUP",
    "PLACE_REGISTRY",
    "SCENES",
    "JourneyPlace",
    "get_journey_place",
    "journey_place",
    "journey_places",
    "unknown_places",
]

PLACES = ("trust", "survey", "gym")
"""The built-in places, nodes of the journey graph (and the default `--order`)."""

PLACES_ENTRY_POINT_GROUP = "personasim.journey_places"
"""Entry-point group of outside packages' places."""

SCENES = (
    ("Expected Action", "a neighbourhood meeting"),
    ("Persona Consistency", "a job interview"),
    ("Linguistic Habits", "a family dinner"),
    ("Action Justification", "a charity fundraiser"),
)
"""PersonaGym task and setting of each scene; the questions are the pack's `scene.N` entries."""


class JourneyPlace(ABC):
    """One place of a journey run: its environment, and how a persona's visit is played."""

    name: ClassVar[str] = ""

    def __init__(self, journey: PersonaJourney, sim: Simulation) -> None:
        self.journey = journey
        self.environment = self.build(sim)

    @abstractmethod
    def build(self, sim: Simulation) -> Environment:
        """The place's environment, made once when the run is set up."""

    @abstractmethod
    async def visit(self, traveller: Traveller) -> None:
        """Play one persona's visit; add to `traveller.summaries` what it remembers."""

    def description(self) -> str:
        """The place as an option of `journey.choose`: the journey pack's `place.NAME`."""
        return self.journey.prompts.text(f"place.{self.name}")


PLACE_REGISTRY: Registry[type[JourneyPlace]] = Registry(
    "journey place", PLACES_ENTRY_POINT_GROUP, error=ScenarioError
)
"""Every place by name; an entry point names a package of places, so a missing place loads the
whole group (each entry point once)."""
P = TypeVar("P", bound=type[JourneyPlace])


def journey_place(name: str) -> Callable[[P], P]:
    """Class decorator: register a `JourneyPlace` under `name`, a node of the journey graph.
    Another class under a taken name is refused (the same class reloaded replaces it)."""

    def register(cls: P) -> P:
        PLACE_REGISTRY.register(name, cls)
        cls.name = name
        return cls

    return register


def get_journey_place(name: str) -> type[JourneyPlace] | None:
    """The place registered as `name`; the entry-point group is read only when it is not."""
    return PLACE_REGISTRY.get(name)


def journey_places() -> dict[str, type[JourneyPlace]]:
    """Every place, the installed packages' included (for listings and error messages)."""
    return PLACE_REGISTRY.items()


def unknown_places(names: Iterable[str]) -> list[str]:
    """The names that are no registered place, in order."""
    return [str(name) for name in names if get_journey_place(str(name)) is None]


# --- the built-in places ------------------------------------------------------------------


@journey_place("trust")
class TrustPlace(JourneyPlace):
    """The Trust Game as trustor against a fixed archetype trustee (seed 001)."""

    def build(self, sim: Simulation) -> Environment:
        p = self.journey.params
        self.game = TrustGame(sim, endowment=p.endowment, name="trust")
        self.trustee = TrusteeAgent(sim, p.trustee)
        self.trustee.move_to(self.game)
        return self.game

    async def visit(self, t: Traveller) -> None:
        journey = self.journey
        p, pack = journey.params, journey.packs["trust"]
        prompt = pack.render(
            "trustor",
            initial_amount=p.endowment,
            persona_details=t.agent.persona.profile_text(),
            theoretical_props="",
        )
        task = DecisionTask(
            name="trust.trustor",
            request=ChatRequest(
                messages=(Message(role="user", content=prompt),),
                temperature=p.trust_temperature,
                task="trust.trustor",
                hints={"traits": dict(t.agent.persona.traits), "endowment": p.endowment},
            ),
            parse=lambda reply: parse_transfer(reply, self.game),
            reminder=lambda e: pack.render("format_reminder", error=e, initial_amount=p.endowment),
            max_repairs=p.max_repairs,
            details={"place": "trust", "step": len(t.visited)},
            schema=TrustorAnswer,
            read=lambda answer: checked_transfer(answer.amount, self.game),
        )
        decision, task = await journey.decide(t, task)
        record_transfer_reading(t.agent.agent_id, decision, self.game)
        if not decision.ok:
            return
        received = self.game.transfer(t.agent, self.trustee, decision.value)
        outcome = self.game.repay(t.agent, self.trustee, self.trustee.respond(received))
        keep_exchange(t, task, decision.reply)
        t.summaries.append(
            journey.prompts.render(
                "memory.trust", endowment=p.endowment, sent=outcome.sent, returned=outcome.returned
            )
        )


@journey_place("survey")
class SurveyPlace(JourneyPlace):
    """The VSM value items in profile phrasing, with logprobs (seed 003, BA_user)."""

    def build(self, sim: Simulation) -> Environment:
        return ValueSurvey(sim, self.journey.items)

    async def visit(self, t: Traveller) -> None:
        journey, chosen = self.journey, []
        for item in journey.items:
            for repeat in range(journey.params.survey_repeats):
                task = journey.tasks.survey_item(t.agent, item, repeat, len(t.visited))
                decision, task = await journey.decide(t, task)
                if decision.ok:
                    chosen.append(int(decision.value))
                    if repeat == 0:
                        keep_exchange(t, task, decision.reply)
        if chosen:
            mean = f"{np.mean(chosen):.1f}"
            t.summaries.append(
                journey.prompts.render("memory.survey", n=len(journey.items), mean=mean)
            )


@journey_place("gym")
class GymPlace(JourneyPlace):
    """A few PersonaGym scenes scored by an evaluator ensemble (seed 002)."""

    def build(self, sim: Simulation) -> Environment:
        scenes = SCENES[: self.journey.params.scenes]
        self.gym = PersonaGym(sim, [s for _, s in scenes], sorted({t for t, _ in scenes}), "gym")
        return self.gym

    async def visit(self, t: Traveller) -> None:
        scenes = SCENES[: self.journey.params.scenes]
        self.gym.place(t.agent, [setting for _, setting in scenes])
        answered = 0
        for index, (task, setting) in enumerate(scenes, 1):
            text = self.journey.prompts.text(f"scene.{index}")
            question = GymQuestion(task, index, setting, text)
            self.gym.pose(t.agent, task, [question], source="journey")
            answered += await self._scene(t, question)
        if answered:
            settings = ", ".join(s for _, s in scenes)
            t.summaries.append(
                self.journey.prompts.render("memory.gym", n=answered, settings=settings)
            )

    async def _scene(self, t: Traveller, q: GymQuestion) -> int:
        """The persona answers; examples are written; every evaluator scores (seed 002, §3.2)."""
        journey, gym_tasks = self.journey, self.journey.gym_tasks
        persona = t.agent.persona.profile_text()
        scene = {**q.scene(t.agent.agent_id), "place": "gym", "step": len(t.visited)}
        answer, task = await journey.decide(
            t, gym_tasks.answer(persona, q.task, q.text, q.index, scene)
        )
        if not answer.ok:
            return 0
        keep_exchange(t, task, answer.reply)
        examples = await journey.example_writer.decide(
            gym_tasks.examples(persona, q.task, q.text, scene)
        )
        if not examples.ok:
            return 1
        for member, evaluator in enumerate(journey.evaluators):
            details = {**scene, "evaluator": evaluator.agent_id}
            evaluation = gym_tasks.evaluation(
                persona, q.task, q.text, answer.value, examples.value, member, details
            )
            await evaluator.decide(evaluation)
        return 1
