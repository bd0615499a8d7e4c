"""`trust-forecast`: individual-level belief–behaviour consistency (seed 001, §5).

One persona plays R rounds of the Trust Game (default 6; every round starts again from the full
endowment) against a fixed trustee archetype M_k (§5.1), once per archetype. Before each round
the model forecasts, in a separate conversation, what the persona will send in that round
(Appendix C.3.1, with the archetype described as in C.3.2–C.3.4 and a summary of the game so
far); then the persona role-plays the round with the ReAct prompt of Appendix B.2 (THOUGHT /
ACTION / OBSERVATION, with the round history) and the trustee answers. Forecasts and actual sends
are events; the metric is §5.2's MAE between forecast and actual send, per horizon (round
r = 1..R), per archetype and model, drawn as Figure 1 (§5.3).

A forecast that cannot be parsed is recorded as `decision.failed` and that round simply has no
forecast–action pair; an action that cannot be parsed means no transfer that round. Nothing is
ever defaulted. Choices where the paper is silent are listed in docs/trust-forecast.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, field_validator

from personasim.agents import DecisionTask, Persona, PersonaAgent
from personasim.environments import (
    ARCHETYPE_PATTERN,
    MAX_ENDOWMENT,
    TrusteeAgent,
    TrustGame,
    TrustOutcome,
    archetype_cap,
)
from personasim.scenarios.trust.answers import ForecastAnswer, ReactAnswer
from personasim.scenarios.trust.forecast_metrics import (
    FORECAST_SUMMARY_COUNTS,
    forecast_metrics,
    forecast_report,
    forecast_summary_rows,
    game_name,
    write_forecast_reports,
    write_forecast_sweep_reports,
)
from personasim.scenarios.trust.metric_blocks import TrustForecastMetrics
from personasim.scenarios.trust.metrics import with_human_reference
from personasim.scenarios.trust.population import (
    PopulationParams,
    checked_transfer,
    draw_personas,
    load_bank,
    parse_transfer,
    record_transfer_reading,
)
from personasim.simulation import (
    ChatRequest,
    Message,
    Scenario,
    ScenarioMetrics,
    Simulation,
    register_scenario,
)
from personasim.simulation.llm.prompts import PromptPack

__all__ = [
    "TrustForecast",
    "TrustForecastParams",
    "archetype_description",
]

# ---------------------------------------------------------------------------------------------
# Prompt pieces and parsers (the texts are in scenarios/trust/trust-forecast.yaml)
# ---------------------------------------------------------------------------------------------

SMALL_SEND_EXAMPLES = {1: 0.25, 3: 0.75, 5: 1.50}
"""The below-the-cap example each paper archetype uses; any other M_k uses k/4 (as M1, M3 do)."""

FORECAST_CLOSING = "Finally, I will send N dollars"
"""The forecast's closing sentence (C.3.1 prints none; the pack's format line asks for it)."""


def archetype_description(archetype: str, prompts: PromptPack) -> str:
    """What the forecaster is told about trustee `archetype` (C.3.2–C.3.4 for M1, M3, M5)."""
    cap = archetype_cap(archetype)
    small = SMALL_SEND_EXAMPLES.get(cap, cap / 4)
    return prompts.render(
        "archetype",
        cap=cap,
        return_for_1=min(cap, 3),
        return_for_5=min(cap, 15),
        small_sent=f"{small:.2f}",
        small_received=f"{3 * small:.2f}",
    )


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------

Archetype = Annotated[str, Field(pattern=ARCHETYPE_PATTERN)]


class TrustForecastParams(PopulationParams):
    PERSONA_BYTES: ClassVar[int] = 15_000
    """Memory of one persona's game with one archetype for one round (measured: 100 and 1,000
    personas, 3 archetypes, 6 rounds, scripted model)."""

    def persona_bytes(self) -> int:
        return super().persona_bytes() * len(self.archetypes) * self.rounds

    n_personas: int = Field(1, ge=1, description="personas, each playing every archetype")
    archetypes: tuple[Archetype, ...] = Field(
        ("M1", "M3", "M5"), min_length=1, description="trustee archetypes M_k played (§5.1)"
    )
    rounds: int = Field(6, ge=1, le=20, description="rounds R per persona and archetype (§5.2)")
    endowment: int = Field(
        10, ge=1, le=MAX_ENDOWMENT, description="dollars the trustor has in every round (E)"
    )
    temperature: float = Field(0.05, ge=0.0, le=2.0, description="sampling temperature")
    max_repairs: int = Field(2, ge=0, le=5, description="re-asks after an unusable answer")
    design: Literal["per-round", "horizons"] = Field(
        "per-round",
        description="per-round: forecast each round just before it (one step ahead); horizons: "
        "before each round r, forecast every round r..R from the state so far (§5.2, h = t-r+1)",
    )

    @field_validator("archetypes")
    @classmethod
    def _distinct(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(value)) != len(value):
            raise ValueError(f"each archetype may appear once, got {','.join(value)}")
        return value


# ---------------------------------------------------------------------------------------------
# The scenario
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pairing:
    """One persona copy, the archetype it faces, and the game they play."""

    trustor: PersonaAgent
    trustee: TrusteeAgent
    game: TrustGame

    @property
    def archetype(self) -> str:
        return self.trustee.archetype


@register_scenario
class TrustForecast(Scenario):
    name = "trust-forecast"
    summary = "Trust Game rounds against fixed trustees: forecast vs actual amount sent"
    smoke_params: ClassVar[dict[str, int]] = {"n_personas": 1, "rounds": 2}
    Params = TrustForecastParams
    params: TrustForecastParams

    def prepare(self) -> None:
        self._bank = load_bank(self.params)

    def setup(self, sim: Simulation) -> None:
        p = self.params
        personas = draw_personas(self._bank, p, sim.rng)
        self.pairings: list[Pairing] = []
        for archetype in p.archetypes:
            game = TrustGame(sim, p.endowment, rounds=p.rounds, name=game_name(archetype))
            trustee = TrusteeAgent(sim, archetype)
            trustee.move_to(game)
            for persona in personas:
                trustor = PersonaAgent(sim, _copy_for(persona, archetype))
                trustor.move_to(game)
                self.pairings.append(Pairing(trustor, trustee, game))

    async def play_round(self, sim: Simulation, round_index: int) -> None:
        await sim.concurrently(
            {
                pairing.trustor.agent_id: (lambda pairing=pairing: self._play(pairing, round_index))
                for pairing in self.pairings
            }
        )

    async def _play(self, pairing: Pairing, round_index: int) -> None:
        """Forecast the round (or, by design `horizons`, every round left from this state), then
        play it; a failed forecast does not stop the round."""
        last = self.params.rounds if self.params.design == "horizons" else round_index
        trustor_id = pairing.trustor.agent_id
        for target in range(round_index, last + 1):
            forecast = await pairing.trustor.decide(
                self._forecast_task(pairing, target, round_index)
            )
            record_transfer_reading(trustor_id, forecast, pairing.game, FORECAST_CLOSING)
        action = await pairing.trustor.decide(self._action_task(pairing, round_index))
        record_transfer_reading(trustor_id, action, pairing.game)
        if not action.ok:
            return  # recorded as decision.failed; no transfer is made up
        received = pairing.game.transfer(pairing.trustor, pairing.trustee, action.value)
        outcome = pairing.game.repay(
            pairing.trustor, pairing.trustee, pairing.trustee.respond(received)
        )
        _remember(pairing.trustor, outcome)

    def _forecast_task(
        self, pairing: Pairing, round_index: int, origin: int | None = None
    ) -> DecisionTask:
        """The C.3.1 forecast of round `round_index` from the state before round `origin`
        (default: the same round, one step ahead); its horizon is round_index − origin + 1."""
        p = self.params
        trustor = pairing.trustor
        steps = round_index - (origin or round_index) + 1
        prompt = self.prompts.render(
            "forecast",
            persona=trustor.persona.profile_text(),
            simulation_context=self._simulation_context(trustor.memory),
            opponent_archetype=archetype_description(pairing.archetype, self.prompts),
            total_rounds=p.rounds,
            initial_amount=p.endowment,
            timestep=round_index,
            format_instructions=self.prompts.text("forecast_format_instructions"),
        )
        hints = {
            "traits": dict(trustor.persona.traits),
            "endowment": p.endowment,
            "cap": pairing.trustee.cap,
            "horizon": round_index if p.design == "per-round" else steps,
        }
        return DecisionTask(
            name="trust.forecast",
            request=self._request(pairing, prompt, "trust.forecast", hints),
            parse=lambda reply: parse_transfer(reply, pairing.game, FORECAST_CLOSING),
            reminder=lambda error: self.prompts.render(
                "forecast_reminder", error=error, initial_amount=p.endowment
            ),
            max_repairs=p.max_repairs,
            details={
                "kind": "forecast",
                "archetype": pairing.archetype,
                "horizon": round_index,
                **(
                    {"design": "horizons", "origin": origin, "steps_ahead": steps}
                    if p.design == "horizons"
                    else {}
                ),
            },
            schema=ForecastAnswer,
            read=lambda answer: checked_transfer(answer.amount, pairing.game),
        )

    def _action_task(self, pairing: Pairing, round_index: int) -> DecisionTask:
        p = self.params
        trustor = pairing.trustor
        prompt = self.prompts.render(
            "react",
            persona=trustor.persona.profile_text(),
            round_number=round_index,
            total_rounds=p.rounds,
            remaining_amount=p.endowment,
            round_history=self._round_history(trustor.memory),
            theoretical_props="",
            format_instructions=self.prompts.text("react_format_instructions"),
        )
        hints = {
            "traits": dict(trustor.persona.traits),
            "endowment": p.endowment,
            "round": round_index,
            "history": [{k: m[k] for k in ("round", "sent", "returned")} for m in trustor.memory],
        }
        return DecisionTask(
            name="trust.react",
            request=self._request(pairing, prompt, "trust.react", hints),
            parse=lambda reply: parse_transfer(reply, pairing.game),
            reminder=lambda error: self.prompts.render(
                "format_reminder", error=error, initial_amount=p.endowment
            ),
            max_repairs=p.max_repairs,
            details={"kind": "action", "archetype": pairing.archetype, "round": round_index},
            schema=ReactAnswer,
            read=lambda answer: checked_transfer(answer.amount, pairing.game),
        )

    def _round_lines(self, memory: list[dict[str, Any]]) -> list[str]:
        return [
            self.prompts.render(
                "round_line",
                round=m["round"],
                sent=_dollars(m["sent"]),
                received=_dollars(m["received"]),
                returned=_dollars(m["returned"]),
                payoff=_dollars(m["payoff"]),
            )
            for m in memory
        ]

    def _round_history(self, memory: list[dict[str, Any]]) -> str:
        """B.2's `$round_history`: the rounds played, or that there are none yet."""
        return "\n".join(self._round_lines(memory)) or self.prompts.text("no_history")

    def _simulation_context(self, memory: list[dict[str, Any]]) -> str:
        """C.3.1's `${simulation_context}`: how many rounds were played, and each one."""
        if not memory:
            return self.prompts.text("no_context")
        header = self.prompts.render("context_header", played=len(memory), total=self.params.rounds)
        return "\n".join([header, *self._round_lines(memory)])

    def _request(
        self, pairing: Pairing, prompt: str, task: str, hints: dict[str, Any]
    ) -> ChatRequest:
        """One user turn at the paper's sampling settings, in the archetype's own sample.

        Round 1's role-play prompt is the same against every archetype (B.2 does not name the
        trustee) and later ones can coincide too; `sample_index = k` keeps the games independent
        samples of the model, with their own log and cache entries, so resume stays exact.
        """
        return ChatRequest(
            messages=(Message(role="user", content=prompt),),
            temperature=self.params.temperature,
            top_p=1.0,  # Appendix E: ancestral decoding, top_p = 1.0
            sample_index=pairing.trustee.cap,
            task=task,
            hints=hints,
        )

    metrics = ScenarioMetrics(
        compute=with_human_reference(forecast_metrics),
        block=TrustForecastMetrics,
        report=forecast_report,
        write_reports=write_forecast_reports,
        summary_rows=forecast_summary_rows,
        write_sweep_reports=write_forecast_sweep_reports,
        summary_counts=FORECAST_SUMMARY_COUNTS,
    )


# ---------------------------------------------------------------------------------------------
# Helpers: personas, memory, prompt pieces
# ---------------------------------------------------------------------------------------------


def _copy_for(persona: Persona, archetype: str) -> Persona:
    """The persona under an id of its own per archetype (agent ids must be unique)."""
    return Persona(
        id=f"{persona.id}@{archetype}", attributes=persona.attributes, traits=persona.traits
    )


def _remember(trustor: PersonaAgent, outcome: TrustOutcome) -> None:
    trustor.remember(
        sent=outcome.sent,
        received=outcome.received,
        returned=outcome.returned,
        payoff=outcome.trustor_payoff,
    )


def _dollars(amount: float) -> str:
    return f"{amount:g}" if float(amount).is_integer() else f"{amount:.2f}"
