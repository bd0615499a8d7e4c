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

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
from matplotlib.figure import Figure
from pydantic import Field, field_validator

from personasim.agents import (
    DecisionParseError,
    DecisionTask,
    ForecastAnswer,
    Persona,
    PersonaAgent,
    ReactAnswer,
    TrusteeAgent,
    archetype_cap,
)
from personasim.agents.trustee import ARCHETYPE_PATTERN
from personasim.analysis import (
    Undefined,
    agent_payloads,
    mae_by_horizon,
    mean_of,
    min_group_n,
    model_label,
    payloads,
    save_figure,
    shown_stat,
    small_note,
    stat_fields,
    write_table,
)
from personasim.environments import TrustGame, TrustOutcome
from personasim.simulation import (
    ChatRequest,
    Message,
    Scenario,
    Simulation,
    register_scenario,
)
from personasim.simulation.prompts import PromptPack

from .trust_population import (
    AMOUNT_MARKUP,
    PopulationParams,
    checked_transfer,
    draw_personas,
    load_bank,
    parse_transfer,
)

__all__ = [
    "TrustForecast",
    "TrustForecastParams",
    "archetype_description",
    "game_name",
    "parse_forecast",
]

# ---------------------------------------------------------------------------------------------
# Prompt pieces and parsers (the texts are in packs/trust-forecast.yaml)
# ---------------------------------------------------------------------------------------------

SMALL_SEND_EXAMPLES = {1: 0.25, 3: 0.75, 5: 1.50}
"""The below-the-cap example each paper archetype uses; any other M_k uses k/4 (as M1, M3 do)."""

_FORECAST_AMOUNT = re.compile(
    rf"finally,?\s+i\s+will\s+send\s+{AMOUNT_MARKUP}(-?\d+(?:\.\d+)?)", re.IGNORECASE
)


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


def parse_forecast(reply: str, game: TrustGame) -> int:
    """The amount in the forecast's closing sentence, checked against the game's rules."""
    matches = _FORECAST_AMOUNT.findall(reply)
    if not matches:
        raise DecisionParseError("it does not end with 'Finally, I will send N dollars'")
    return checked_transfer(float(matches[-1]), game)


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------

Archetype = Annotated[str, Field(pattern=ARCHETYPE_PATTERN)]


class TrustForecastParams(PopulationParams):
    n_personas: int = Field(1, ge=1, description="personas, each playing every archetype")
    archetypes: tuple[Archetype, ...] = Field(
        ("M1", "M3", "M5"), min_length=1, description="trustee archetypes M_k played (§5.1)"
    )
    rounds: int = Field(6, ge=1, le=20, description="rounds R per persona and archetype (§5.2)")
    endowment: int = Field(10, ge=1, description="dollars the trustor has in every round (E)")
    temperature: float = Field(0.05, ge=0.0, le=2.0, description="sampling temperature")
    max_repairs: int = Field(2, ge=0, le=5, description="re-asks after an unusable answer")

    @field_validator("archetypes")
    @classmethod
    def _distinct(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(value)) != len(value):
            raise ValueError(f"each archetype may appear once, got {','.join(value)}")
        return value


# ---------------------------------------------------------------------------------------------
# The scenario
# ---------------------------------------------------------------------------------------------


def game_name(archetype: str) -> str:
    """The Trust Game played against `archetype` (one per archetype)."""
    return f"trust_game_{archetype}"


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
    summary = "R rounds against trustee archetypes; forecast vs actual send, MAE by round (§5)"
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
        """Forecast the round, then play it; a failed forecast does not stop the round."""
        await pairing.trustor.decide(self._forecast_task(pairing, round_index))
        action = await pairing.trustor.decide(self._action_task(pairing, round_index))
        if not action.ok:
            return  # recorded as decision.failed; no transfer is made up
        received = pairing.game.transfer(pairing.trustor, pairing.trustee, action.value)
        outcome = pairing.game.repay(
            pairing.trustor, pairing.trustee, pairing.trustee.respond(received)
        )
        _remember(pairing.trustor, outcome)

    def _forecast_task(self, pairing: Pairing, round_index: int) -> DecisionTask:
        p = self.params
        trustor = pairing.trustor
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
            "horizon": round_index,
        }
        return DecisionTask(
            name="trust.forecast",
            request=self._request(pairing, prompt, "trust.forecast", hints),
            parse=lambda reply: parse_forecast(reply, pairing.game),
            reminder=lambda error: self.prompts.render(
                "forecast_reminder", error=error, initial_amount=p.endowment
            ),
            max_repairs=p.max_repairs,
            details={"kind": "forecast", "archetype": pairing.archetype, "horizon": round_index},
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

    @classmethod
    def compute_metrics(cls, events: pd.DataFrame) -> dict[str, Any]:
        header = payloads(events, "run.started")[0]
        params = header["params"]
        forecasts = _forecasts(events)
        sends = _sends(events)
        failed = payloads(events, "decision.failed")
        smallest = min_group_n(events)
        return {
            "model": header["model"],
            "model_label": model_label(header["model"]),
            "rounds": params["rounds"],
            "reasks": len(payloads(events, "decision.reask")),
            "min_group_n": smallest,
            "archetypes": {
                archetype: _archetype_metrics(
                    archetype, params["rounds"], forecasts, sends, failed, events, smallest
                )
                for archetype in params["archetypes"]
            },
        }

    @classmethod
    def report(cls, metrics: dict[str, Any]) -> list[str]:
        rounds = metrics["rounds"]
        lines = [
            f"{metrics['model_label']}: forecast vs actual send over {rounds} rounds "
            f"({metrics['reasks']} re-asks)"
        ]
        for archetype, result in metrics["archetypes"].items():
            first, last = result["by_horizon"][0], result["by_horizon"][-1]
            lines.append(
                f"  {archetype}: MAE {shown_stat(result, 'mae')} overall; round 1 "
                f"{shown_stat(first, 'mae')} → round {rounds} {shown_stat(last, 'mae')}; mean "
                f"sent {shown_stat(first, 'mean_actual')} → {shown_stat(last, 'mean_actual')} "
                f"({result['n_trustors']} personas, {result['forecast_failures']} forecast and "
                f"{result['action_failures']} action failures)"
            )
        return lines

    @classmethod
    def write_reports(cls, metrics: dict[str, Any], directory: Path) -> list[Path]:
        rows = mae_rows(metrics)
        figure = mae_figure(rows, metrics["rounds"], metrics["model"].get("note"))
        note = small_note(metrics["min_group_n"], "forecast–action pairs in the round")
        return [
            *write_table(rows, directory, "mae_by_horizon", flag="small", notes=[note]),
            save_figure(figure, directory, "mae_by_horizon"),
        ]

    @classmethod
    def summary_rows(cls, metrics: dict[str, Any]) -> list[dict[str, Any]]:
        """MAE per archetype and horizon; a sweep labels each row with its model."""
        return [{k: v for k, v in row.items() if k != "model"} for row in mae_rows(metrics)]

    @classmethod
    def write_sweep_reports(
        cls, rows: list[dict[str, Any]], varied: list[str], directory: Path
    ) -> list[Path]:
        """Figure 1 across the sweep's models: one line per model–archetype."""
        rounds = max(row["horizon"] for row in rows) if rows else 1
        return [save_figure(mae_figure(rows, rounds), directory, "mae_by_horizon")]


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


# ---------------------------------------------------------------------------------------------
# Metrics (from the event table alone), tables and figure
# ---------------------------------------------------------------------------------------------


def _forecasts(events: pd.DataFrame) -> dict[tuple[str, int], tuple[str, int]]:
    """(trustor, horizon) → (archetype, forecast) for every parsed forecast."""
    return {
        (row["agent_id"], row["payload"]["horizon"]): (
            row["payload"]["archetype"],
            row["payload"]["value"],
        )
        for row in agent_payloads(events, "decision.made")
        if row["payload"].get("kind") == "forecast"
    }


def _sends(events: pd.DataFrame) -> dict[tuple[str, int], int]:
    """(trustor, round) → the amount the game recorded as sent."""
    transfers = events.loc[events["kind"] == "trust.transfer", ["agent_id", "round", "payload"]]
    return {(row.agent_id, int(row.round)): row.payload["sent"] for row in transfers.itertuples()}


def _archetype_metrics(
    archetype: str,
    rounds: int,
    forecasts: dict[tuple[str, int], tuple[str, int]],
    sends: dict[tuple[str, int], int],
    failed: list[dict[str, Any]],
    events: pd.DataFrame,
    smallest: int,
) -> dict[str, Any]:
    """§5.2 for one archetype: MAE per horizon over the forecast–action pairs, and overall; a
    round with fewer than `smallest` pairs is flagged `small`."""
    pairs = [
        (horizon, forecast, sends[(agent, horizon)])
        for (agent, horizon), (faced, forecast) in forecasts.items()
        if faced == archetype and (agent, horizon) in sends
    ]
    by_horizon = mae_by_horizon(pairs)
    none = Undefined("no forecast–action pairs")
    empty = {"n": 0, "mae": none, "mean_forecast": none, "mean_actual": none}
    overall = [abs(forecast - actual) for _, forecast, actual in pairs]
    return {
        "n_trustors": _trustors_in(events, game_name(archetype)),
        "n_pairs": len(pairs),
        **stat_fields("mae", mean_of(overall, none.reason)),
        "forecast_failures": _failures(failed, "forecast", archetype),
        "action_failures": _failures(failed, "action", archetype),
        "by_horizon": [
            {"horizon": h, **_horizon_fields(by_horizon.get(h, empty), smallest)}
            for h in range(1, rounds + 1)
        ],
    }


def _trustors_in(events: pd.DataFrame, env: str) -> int:
    personas = {
        r["agent_id"] for r in agent_payloads(events, "agent.created") if "persona" in r["payload"]
    }
    entered = {
        r["agent_id"] for r in agent_payloads(events, "env.entered") if r["payload"]["env"] == env
    }
    return len(personas & entered)


def _failures(failed: list[dict[str, Any]], kind: str, archetype: str) -> int:
    return sum(1 for p in failed if p.get("kind") == kind and p.get("archetype") == archetype)


def _horizon_fields(summary: dict[str, Any], smallest: int) -> dict[str, Any]:
    fields: dict[str, Any] = {"n": summary["n"]}
    for key in ("mae", "mean_forecast", "mean_actual"):
        fields.update(stat_fields(key, summary[key]))
    return {**fields, "small": summary["n"] < smallest}


def mae_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """The `mae_by_horizon` table: one row per model, archetype and horizon."""
    return [
        {"model": metrics["model_label"], "archetype": archetype, **row}
        for archetype, result in metrics["archetypes"].items()
        for row in result["by_horizon"]
    ]


def mae_figure(rows: list[dict[str, Any]], rounds: int, note: str | None = None) -> Figure:
    """Figure 1 of §5.3: MAE against round, one line per model–archetype (`mae_rows` rows)."""
    figure = Figure(figsize=(6.4, 4.2))
    axes = figure.subplots()
    lines: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for row in rows:
        if row["mae"] is not None:
            lines.setdefault((row["model"], row["archetype"]), []).append(
                (row["horizon"], row["mae"])
            )
    for (model, archetype), points in lines.items():
        horizons, maes = zip(*sorted(points), strict=True)
        axes.plot(horizons, maes, marker="o", label=f"{model} – {archetype}")
    axes.set_xticks(range(1, rounds + 1))
    axes.set_xlabel("round (forecast horizon)")
    axes.set_ylabel("MAE ($)")
    axes.set_ylim(bottom=0)
    axes.set_title("trust-forecast: forecast vs actual send (seed 001, §5.3 Fig. 1)")
    axes.grid(alpha=0.3)
    if axes.lines:
        axes.legend()
    if note:
        figure.text(0.5, -0.01, note, ha="center", va="top", fontsize=8, style="italic")
    return figure
