"""`trust-population`: every persona plays one Trust Game round as trustor (seed 001, §3–4).

Reproduces the behavioural half of the paper's population-level analysis: a population of
GenAgents-style personas, augmented with independently sampled Big-Five levels (§3.2), each
decides how much of the endowment to send with the Appendix B.1 prompt at T = 0.05 (§3.1). The
trustee is a fixed archetype M_k (§5.1) that answers after its trustor. Metrics (§4.1): per
persona attribute, the behavioural ranking π*_t of its levels by mean transfer, the effect size
η²_t from a one-way ANOVA, and n per level; the overall mean and SD; parse failures.

Parsing follows Appendix E (a regular expression for the amount, validated against the
endowment), with one deliberate difference: an unusable answer is re-asked with a format
reminder up to `max_repairs` times before it is recorded as a failure and left out.
"""

from __future__ import annotations

import difflib
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal, Self

import numpy as np
from pydantic import Field, field_validator, model_validator

from personasim.agents import (
    BIG_FIVE_LEVELS,
    TRAIT_FIELDS,
    Decision,
    DecisionParseError,
    DecisionTask,
    Persona,
    PersonaAgent,
    augment_big_five,
    check_counterfactual,
    counterfactual_twins,
    load_personas,
    sample_personas,
    select_personas,
    synthetic_population,
)
from personasim.environments import ARCHETYPE_PATTERN, MAX_ENDOWMENT, TrusteeAgent, TrustGame
from personasim.environments.trust_game.transfer import CLOSING_SENTENCE, read_transfer
from personasim.scenarios.trust.answers import TrustorAnswer
from personasim.scenarios.trust.metric_blocks import TrustPopulationMetrics
from personasim.scenarios.trust.metrics import (
    population_metrics,
    population_report,
    with_human_reference,
    write_population_reports,
)
from personasim.scenarios.trust.traits import TABLE3_TRAITS, TEST_SPLIT_LEVELS
from personasim.simulation import (
    ChatRequest,
    CounterfactualParams,
    InvalidActionError,
    Message,
    Scenario,
    ScenarioError,
    ScenarioMetrics,
    Simulation,
    SummaryCount,
    check_run_size,
    read_input,
    register_scenario,
)

__all__ = [
    "PopulationParams",
    "Prior",
    "TrustPopulation",
    "TrustPopulationParams",
    "checked_transfer",
    "draw_personas",
    "load_bank",
    "parse_transfer",
    "record_transfer_reading",
]


class PopulationParams(CounterfactualParams):
    """Where personas come from; shared by every scenario that samples a population. Its
    personas carry attributes, so it takes a counterfactual design (docs/counterfactual.md)."""

    n_personas: int = Field(100, ge=1, description="personas sampled from the bank")
    persona_file: Path | None = Field(
        None, description="JSONL/CSV persona bank (default: the shipped GSS sample)"
    )
    population: Literal["sample", "synthetic"] = Field(
        "sample", description="without --persona-file: shipped sample or synthetic generator"
    )
    big_five: bool = Field(True, description="add independently sampled Big-Five levels (§3.2)")

    PERSONA_BYTES: ClassVar[int] = 6_700
    """Memory one persona takes in a run: trust-population's peak resident memory grows from
    354 MB at 10,000 personas to 957 MB at 100,000 (benchmarks/bench_memory.py, in
    docs/performance.md); a scenario that keeps more per persona states its own."""

    def persona_bytes(self) -> int:
        """The memory estimate of one sampled persona, its counterfactual twins included."""
        copies = len(self.counterfactual_levels) if self.counterfactual_attribute else 1
        return self.PERSONA_BYTES * copies

    @model_validator(mode="after")
    def _fits_in_memory(self) -> Self:
        """An `--n-personas` a machine cannot hold is refused with what it would need."""
        check_run_size("--n-personas", self.n_personas, self.persona_bytes())
        return self


def load_bank(p: PopulationParams) -> list[Persona] | None:
    """The persona bank to sample from (None: generate synthetic personas in setup).

    Called before the run directory exists, so a bad file or count fails with nothing written.
    """
    bank: list[Persona] | None = None
    if p.persona_file is not None:
        bank = read_input("--persona-file", lambda: load_personas(p.persona_file))
        _check_traits(bank, p)
    elif p.population == "sample":
        bank = sample_personas()
    if bank is not None and p.n_personas > len(bank):
        raise ScenarioError(
            f"--n-personas {p.n_personas} is more than the {len(bank)} personas in the "
            "bank; lower it, pass a larger --persona-file, or use --population synthetic"
        )
    _check_design(bank, p)
    return bank


def _check_design(bank: list[Persona] | None, p: PopulationParams) -> None:
    """A counterfactual attribute or level the personas cannot take fails here, before anything
    is written (a synthetic population is checked against its generator's fields)."""
    if p.counterfactual_attribute is None:
        return
    personas = bank if bank is not None else synthetic_population(1, np.random.default_rng(0))
    try:
        check_counterfactual(
            p.counterfactual_attribute, p.counterfactual_levels, p.counterfactual_by, personas
        )
    except ValueError as exc:
        raise ScenarioError(str(exc)) from None


def _check_traits(bank: list[Persona], p: PopulationParams) -> None:
    """A file whose personas carry none of the analysed traits would give a table of nulls;
    say which fields it lacks instead (Big-Five levels are drawn, not read, with --big-five)."""
    drawn = set(BIG_FIVE_LEVELS) if p.big_five else set()
    wanted = [t for t in getattr(p, "attributes", ()) if t not in drawn]
    if not wanted or any(t in persona.traits for persona in bank for t in wanted):
        return
    fields = sorted({name for persona in bank for name in persona.attributes})
    raise ScenarioError(
        f"--persona-file: {p.persona_file}: none of its {len(bank)} personas has a field for "
        f"the traits analysed ({', '.join(wanted)}); those fields are "
        f"{', '.join(TRAIT_FIELDS[t] for t in wanted)}, the file has {', '.join(fields)}"
    )


def draw_personas(
    bank: list[Persona] | None, p: PopulationParams, rng: np.random.Generator
) -> list[Persona]:
    """`n_personas` drawn from the bank (or generated), with Big-Five levels if asked (§3.2);
    in a counterfactual run, each of them once per level (all draws come first, so the sampled
    personas are those of the plain run with the same seed)."""
    chosen = select_personas(bank or synthetic_population(p.n_personas, rng), p.n_personas, rng)
    drawn = augment_big_five(chosen, rng) if p.big_five else chosen
    if p.counterfactual_attribute is None:
        return drawn
    return counterfactual_twins(drawn, p.counterfactual_attribute, p.counterfactual_levels)


class TrustPopulationParams(PopulationParams):
    endowment: int = Field(
        10, ge=1, le=MAX_ENDOWMENT, description="dollars the trustor starts with (E)"
    )
    trustee: str = Field("M3", pattern=ARCHETYPE_PATTERN, description="archetype M_k")
    temperature: float = Field(0.05, ge=0.0, le=2.0, description="sampling temperature")
    max_repairs: int = Field(2, ge=0, le=5, description="re-asks after an unusable answer")
    attributes: tuple[str, ...] = Field(
        TABLE3_TRAITS,
        description="persona traits analysed (default: Table 3's nine, Table 5's test traits)",
    )
    split: Literal["test", "all"] = Field(
        "test", description="levels analysed: Table 5's test (te) levels, or every level present"
    )

    @field_validator("attributes")
    @classmethod
    def _known_traits(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        """A misspelt trait would otherwise be analysed as an empty column of nulls."""
        for name in names:
            if name not in TRAIT_FIELDS:
                close = difflib.get_close_matches(name, TRAIT_FIELDS, n=1, cutoff=0.6)
                guess = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(
                    f"unknown trait {name!r}{guess}; known traits: {', '.join(TRAIT_FIELDS)}"
                )
        if not names or len(set(names)) != len(names):
            raise ValueError("name each trait once, comma-separated, e.g. Age,Religion")
        return names


def parse_transfer(reply: str, game: TrustGame, closing: str = CLOSING_SENTENCE) -> int:
    """The amount of the closing sentence as a careful reader takes it
    (`environments.trust_game.transfer`), checked against the game's rules; otherwise a
    `DecisionParseError` whose reason the re-ask tells the model."""
    try:
        return game.read_transfer(reply, closing)
    except InvalidActionError as exc:
        raise DecisionParseError(str(exc)) from None


def record_transfer_reading(
    agent_id: str, decision: Decision, game: TrustGame, closing: str = CLOSING_SENTENCE
) -> None:
    """Log how an accepted text decision's amount was read (`reading.made`, reader
    "transfer", with the endowment its independent reader needs). Called by the scenario after
    `decide` returns, never from the parser, so a run with `--workers` logs the same events; a
    JSON answer (`--response-format`) is no text reading and is not logged."""
    sim = game.sim
    if not decision.ok or decision.reply is None or sim.response_format != "text":
        return
    reading = read_transfer(decision.reply, game.endowment, closing)
    sim.record_reading(
        agent_id, reader="transfer", text=decision.reply, reading=reading, endowment=game.endowment
    )


def checked_transfer(amount: float, game: TrustGame) -> int:
    """`amount` as whole dollars if the game's rules allow it, else a `DecisionParseError`
    saying which rule it breaks (the same check for a text and a structured answer)."""
    try:
        return game.check_transfer(amount)
    except InvalidActionError as exc:
        raise DecisionParseError(str(exc)) from None


POPULATION_KINDS = (
    "agent.created",
    "trust.levels",
    "trust.transfer",
    "decision.failed",
    "decision.reask",
)
"""What `population_metrics` reads (besides `run.started`): not the model calls' texts."""


@register_scenario
class TrustPopulation(Scenario):
    name = "trust-population"
    summary = "one Trust Game round per persona: amounts sent, and which traits explain them (η²)"
    smoke_params: ClassVar[dict[str, int]] = {"n_personas": 4}
    Params = TrustPopulationParams
    params: TrustPopulationParams

    def prepare(self) -> None:
        self._bank = load_bank(self.params)

    def setup(self, sim: Simulation) -> None:
        self.game = TrustGame(sim, endowment=self.params.endowment)  # the prompt says "tripled"
        self.trustee = TrusteeAgent(sim, self.params.trustee)
        self.trustee.move_to(self.game)
        personas = draw_personas(self._bank, self.params, sim.rng)
        self.trustors = [PersonaAgent(sim, persona) for persona in personas]
        for trustor in self.trustors:
            trustor.move_to(self.game)
        self.level_order = self._record_levels(sim)

    def _record_levels(self, sim: Simulation) -> dict[str, list[str]]:
        """Each trait's analysed levels (present among the personas, in the split), in a
        seeded random order that every prompt listing them uses: an order the model might
        echo then cannot agree with alphabetical ties by accident. Logged as `trust.levels`."""
        rng = np.random.default_rng((sim.seed, zlib.crc32(b"trust.levels")))
        order: dict[str, list[str]] = {}
        outside: dict[str, dict[str, int]] = {}
        for attribute in self.params.attributes:
            present = Counter(
                t.persona.traits[attribute] for t in self.trustors if attribute in t.persona.traits
            )
            kept = sorted(lvl for lvl in present if self._in_split(attribute, lvl))
            outside[attribute] = {lvl: n for lvl, n in sorted(present.items()) if lvl not in kept}
            order[attribute] = [kept[i] for i in rng.permutation(len(kept))]
        sim.emit(
            "trust.levels",
            {
                "split": self.params.split,
                "levels": {a: sorted(v) for a, v in order.items()},
                "shown_order": order,
                "outside_split": outside,
            },
        )
        return order

    def _in_split(self, attribute: str, level: str) -> bool:
        if self.params.split == "all" or attribute not in TEST_SPLIT_LEVELS:
            return True
        return level in TEST_SPLIT_LEVELS[attribute]

    async def play_round(self, sim: Simulation, round_index: int) -> None:
        await sim.concurrently({t.agent_id: (lambda t=t: self._play(t)) for t in self.trustors})

    async def _play(self, trustor: PersonaAgent, prior: Prior | None = None) -> None:
        """One trustor's round; `prior` fills the prompt's `$theoretical_props` slot."""
        decision = await trustor.decide(self._trustor_task(trustor, prior))
        record_transfer_reading(trustor.agent_id, decision, self.game)
        if not decision.ok:
            return  # recorded as decision.failed; no amount is made up
        received = self.game.transfer(trustor, self.trustee, decision.value)
        outcome = self.game.repay(trustor, self.trustee, self.trustee.respond(received))
        trustor.remember(sent=outcome.sent, returned=outcome.returned)

    def _trustor_task(self, trustor: PersonaAgent, prior: Prior | None = None) -> DecisionTask:
        p = self.params
        prompt = self.prompts.render(
            "trustor",
            initial_amount=p.endowment,
            persona_details=trustor.persona.profile_text(),
            theoretical_props=prior.text if prior else "",
        )
        hints = {"traits": dict(trustor.persona.traits), "endowment": p.endowment}
        if prior:
            hints["prior"] = prior.rankings
        return DecisionTask(
            name="trust.trustor",
            request=ChatRequest(
                messages=(Message(role="user", content=prompt),),
                temperature=p.temperature,
                top_p=1.0,  # Appendix E: ancestral decoding, top_p = 1.0
                task="trust.trustor",
                hints=hints,
            ),
            parse=lambda reply: parse_transfer(reply, self.game),
            reminder=lambda error: self.prompts.render(
                "format_reminder", error=error, initial_amount=p.endowment
            ),
            max_repairs=p.max_repairs,
            schema=TrustorAnswer,
            read=lambda answer: checked_transfer(answer.amount, self.game),
        )

    metrics = ScenarioMetrics(
        compute=with_human_reference(population_metrics),
        block=TrustPopulationMetrics,
        report=population_report,
        write_reports=write_population_reports,
        summary_counts={
            stat: SummaryCount("n_decisions", "decided") for stat in ("mean_sent", "sd_sent")
        },
        kinds=POPULATION_KINDS,
    )


@dataclass(frozen=True)
class Prior:
    """A belief put into the role-play prompt (§4.3): its text and the rankings it states."""

    text: str
    rankings: dict[str, list[str]]
