"""The Trust Game (Berg et al. 1995; seed 001 §3.1) as an environment.

A trustor sends part of an endowment, the amount is multiplied, the trustee returns part of it.
The environment checks both moves against the rules, computes payoffs, keeps each pair's history
and logs every move; who decides, and how, is not its business.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from personasim.environments.trust_game.transfer import CLOSING_SENTENCE, read_transfer
from personasim.simulation import Environment, InvalidActionError, SimAgent, Simulation

__all__ = ["MAX_ENDOWMENT", "TrustGame", "TrustOutcome"]

MAX_ENDOWMENT = 1_000_000
"""The largest endowment, in whole dollars: the amount reader knows number words up to
"million", and amounts and shares of it stay exact in floating point; the papers use $10."""


@dataclass(frozen=True)
class TrustOutcome:
    round: int | None
    sent: int
    received: int
    returned: float
    trustor_payoff: float
    trustee_payoff: float


class TrustGame(Environment):
    """Endowment E, multiplier m: 0 ≤ sent ≤ E (whole dollars), 0 ≤ returned ≤ m·sent."""

    kind = "trust_game"

    def __init__(
        self,
        sim: Simulation,
        endowment: int = 10,
        multiplier: int = 3,
        rounds: int = 1,
        name: str | None = None,
    ) -> None:
        if endowment < 1 or multiplier < 1 or rounds < 1:
            raise ValueError("endowment, multiplier and rounds must all be at least 1")
        if endowment > MAX_ENDOWMENT:
            raise ValueError(f"the endowment is at most {MAX_ENDOWMENT:,} dollars")
        self.endowment = endowment
        self.multiplier = multiplier
        self.rounds = rounds
        self.history: dict[tuple[str, str], list[TrustOutcome]] = {}
        self._pending: dict[tuple[str, str], int] = {}
        super().__init__(sim, name)

    def settings(self) -> dict[str, Any]:
        return {"endowment": self.endowment, "multiplier": self.multiplier, "rounds": self.rounds}

    def check_transfer(self, sent: float) -> int:
        """The transfer as whole dollars, or InvalidActionError saying what rule it breaks."""
        if not math.isfinite(sent):
            raise InvalidActionError(f"the transfer must be a number of dollars, got {sent}")
        if sent != int(sent):
            raise InvalidActionError(f"the transfer must be whole dollars, got {sent:g}")
        if not 0 <= sent <= self.endowment:
            raise InvalidActionError(
                f"the transfer must be between 0 and {self.endowment} dollars, got {sent}"
            )
        return int(sent)

    def read_transfer(self, reply: str, closing: str = CLOSING_SENTENCE) -> int:
        """The amount a text answer gives (`transfer.read_transfer`), checked against the
        rules; InvalidActionError with the reading's reason (or the rule it breaks) otherwise,
        for the re-ask."""
        reading = read_transfer(reply, self.endowment, closing)
        if not reading.ok:
            raise InvalidActionError(reading.reason or "no amount")
        return self.check_transfer(reading.value)

    def transfer(self, trustor: SimAgent, trustee: SimAgent, sent: float) -> int:
        """The trustor's move; returns what the trustee receives."""
        pair = (trustor.agent_id, trustee.agent_id)
        settled = self.history.get(pair, [])
        if pair in self._pending or (settled and settled[-1].round == self.sim.round):
            raise InvalidActionError(f"{pair[0]} already sent to {pair[1]} this round")
        amount = self.check_transfer(sent)
        received = amount * self.multiplier
        self._pending[pair] = amount
        self.emit(
            "trust.transfer",
            {"trustee": trustee.agent_id, "sent": amount, "received": received},
            agent_id=trustor.agent_id,
        )
        return received

    def repay(self, trustor: SimAgent, trustee: SimAgent, returned: float) -> TrustOutcome:
        """The trustee's move; settles the round for this pair."""
        pair = (trustor.agent_id, trustee.agent_id)
        if pair not in self._pending:
            raise InvalidActionError(f"{pair[1]} cannot return money {pair[0]} never sent")
        sent = self._pending[pair]
        received = sent * self.multiplier
        if not 0 <= returned <= received:
            raise InvalidActionError(f"the return must be between 0 and {received}, got {returned}")
        del self._pending[pair]
        outcome = TrustOutcome(
            self.sim.round,
            sent,
            received,
            returned,
            trustor_payoff=self.endowment - sent + returned,
            trustee_payoff=received - returned,
        )
        self.history.setdefault(pair, []).append(outcome)
        moves = {k: v for k, v in vars(outcome).items() if k != "round"}  # flat: no asdict copy
        self.emit("trust.return", {"trustor": trustor.agent_id, **moves}, agent_id=trustee.agent_id)
        return outcome
