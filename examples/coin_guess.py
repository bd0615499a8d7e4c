"""A complete custom scenario in one file: personas guess coin flips over several rounds.

Shows every piece a scenario needs: typed parameters, an environment with rules that emit
events, a decision task (prompt, parser, re-ask reminder, and the answer's schema for
structured runs), a scripted behaviour so it runs offline, and metrics computed from the event
table alone. Run it:

    personasim run examples/coin_guess.py              # the file as it is, no packaging
    python examples/coin_guess.py                      # offline, scripted behaviour model
    python examples/coin_guess.py --model openai:gpt-4o-mini
    python examples/coin_guess.py --response-format json_schema   # answers as JSON

then `personasim replay RUN_DIR --agent ID` shows one persona's guesses round by round.
"""

from __future__ import annotations

import argparse
import json
import re
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from personasim.agents import (
    DecisionParseError,
    DecisionTask,
    PersonaAgent,
    augment_big_five,
    synthetic_population,
)
from personasim.analysis import mean_of, shown_stat, stat_fields
from personasim.simulation import (
    ChatRequest,
    Environment,
    Message,
    RunSettings,
    Scenario,
    ScenarioParams,
    Simulation,
    answer_schema,
    run_scenario,
    scripted_behaviour,
)

PROMPT = """You are this person:
{profile}

A fair coin will be flipped. Round {round} of {rounds}. Earlier flips: {history}.
Guess the next flip. End your answer with 'GUESS: heads' or 'GUESS: tails'."""


class CoinGuessAnswer(BaseModel):
    """The answer's schema when the run asks for JSON (`--response-format`)."""

    reasoning: str
    guess: Literal["heads", "tails"]


class CoinTable(Environment):
    """Flips a coin each round and grades guesses; the flip uses the simulation's RNG."""

    kind = "coin_table"

    def flip(self) -> str:
        side = "heads" if self.sim.random.random() < 0.5 else "tails"
        self.emit("coin.flipped", {"side": side})
        return side

    def grade(self, agent: PersonaAgent, guess: str, side: str) -> bool:
        self.emit("coin.graded", {"guess": guess, "correct": guess == side}, agent.agent_id)
        return guess == side


class CoinGuessParams(ScenarioParams):
    n_personas: int = Field(20, ge=1, description="synthetic personas")
    rounds: int = Field(3, ge=1, le=20, description="flips per persona")


class CoinGuess(Scenario):
    name = "coin-guess"
    summary = "personas guess coin flips (example scenario)"
    Params = CoinGuessParams
    params: CoinGuessParams

    def setup(self, sim: Simulation) -> None:
        self.table = CoinTable(sim)
        personas = augment_big_five(synthetic_population(self.params.n_personas, sim.rng), sim.rng)
        self.players = [PersonaAgent(sim, p) for p in personas]
        for player in self.players:
            player.move_to(self.table)
        self.flips: list[str] = []

    async def play_round(self, sim: Simulation, round_index: int) -> None:
        # Guess first, flip after: the flip is drawn in sequential code, never inside
        # concurrent work, so the run does not depend on which answer arrives first.
        decisions = await sim.concurrently(
            {p.agent_id: (lambda p=p: p.decide(self._task(p, round_index))) for p in self.players}
        )
        side = self.table.flip()
        self.flips.append(side)
        for player in self.players:
            decision = decisions[player.agent_id]
            if decision.ok:
                self.table.grade(player, decision.value, side)

    def _task(self, player: PersonaAgent, round_index: int) -> DecisionTask:
        prompt = PROMPT.format(
            profile=player.persona.profile_text(),
            round=round_index,
            rounds=self.params.rounds,
            history=", ".join(self.flips) or "none",
        )
        return DecisionTask(
            name="coin.guess",
            request=ChatRequest(
                messages=(Message(role="user", content=prompt),),
                task="coin.guess",
                hints={"traits": dict(player.persona.traits), "history": self.flips},
            ),
            parse=parse_guess,
            reminder=lambda error: f"{error}. End with 'GUESS: heads' or 'GUESS: tails'.",
            schema=CoinGuessAnswer,
            read=lambda answer: answer.guess,  # the schema already allows only the two sides
        )

    @classmethod
    def compute_metrics(cls, events: pd.DataFrame) -> dict[str, Any]:
        graded = pd.DataFrame(events.loc[events["kind"] == "coin.graded", "payload"].tolist())
        made = events[events["kind"] == "decision.made"]
        correct = graded["correct"] if len(graded) else []
        heads = graded["guess"] == "heads" if len(graded) else []
        # an undefined statistic is null with its reason beside it, never a made-up number
        return {
            "guesses": len(made),
            **stat_fields("accuracy", mean_of(correct, "no graded guesses")),
            **stat_fields("share_heads", mean_of(heads, "no graded guesses")),
            "parse_failures": int((events["kind"] == "decision.failed").sum()),
        }

    @classmethod
    def report(cls, metrics: dict[str, Any]) -> list[str]:
        return [f"{metrics['guesses']} guesses, accuracy {shown_stat(metrics, 'accuracy')}"]


def parse_guess(reply: str) -> str:
    match = re.search(r"GUESS:\s*(heads|tails)", reply, re.IGNORECASE)
    if match is None:
        raise DecisionParseError("no 'GUESS: heads' or 'GUESS: tails' found")
    return match.group(1).lower()


@scripted_behaviour("coin.guess")
def scripted_guess(request: ChatRequest, rng: np.random.Generator) -> str:
    """Offline rule: a gambler's fallacy — after a run of one side, lean to the other."""
    history = request.hints["history"]
    lean = 0.5 if not history else (0.3 if history[-1] == "heads" else 0.7)
    guess = "heads" if rng.random() < lean else "tails"
    reasoning = f"It feels like {guess} is due."
    if answer_schema(request) is not None:
        return json.dumps({"reasoning": reasoning, "guess": guess})
    return f"{reasoning}\nGUESS: {guess}"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="scripted")
    parser.add_argument("--base-url")
    parser.add_argument("--out")
    parser.add_argument("--n-personas", type=int, default=20)
    parser.add_argument(
        "--response-format", choices=("text", "json_schema", "json_object"), default="text"
    )
    args = parser.parse_args()
    result = run_scenario(
        CoinGuess,
        {"n_personas": args.n_personas},
        model=args.model,
        base_url=args.base_url,
        out=args.out,
        settings=RunSettings(response_format=args.response_format),
    )
    print("\n".join(result.report))
    print(f"run directory: {result.run_dir}")
