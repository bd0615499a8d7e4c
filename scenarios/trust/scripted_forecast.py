"""Scripted answers for `trust-forecast` (seed 001, §5): the multi-round trustor and its forecasts.

Not a language model: two documented, seeded rules (docs/scripted.md) written so the offline run
shows the paper's qualitative finding (§5.3, Figure 1) for a known reason. The role-played
trustor adapts to what the trustee returns; the forecaster keeps its first impression of the
persona and adds a bias and a noise that both grow with the horizon, so the forecast drifts
from the behaviour as the game goes on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from personasim.scenarios.trust.answers import ForecastAnswer, ReactAnswer
from personasim.scenarios.trust.scripted import (
    FORMAT_SLIP_RATE,
    amount_answer,
    restated_amount,
    trustor_share,
)
from personasim.simulation import ChatRequest, scripted_behaviour

__all__ = [
    "ACTION_NOISE_SD",
    "ADAPTATION_RATE",
    "FORECAST_BIAS_PER_ROUND",
    "FORECAST_NOISE_SD_PER_ROUND",
    "PROFIT_MARGIN_SHARE",
    "expected_forecast",
    "initial_send",
    "intended_send",
    "worthwhile_send",
]

ADAPTATION_RATE = 0.6
"""Fraction of the gap to the worthwhile amount the trustor closes from one round to the next."""

PROFIT_MARGIN_SHARE = 0.1
"""Profit (as a share of the endowment) the trustor wants from a round: $1 of $10."""

ACTION_NOISE_SD = 0.05
"""Round-to-round spread of the send, as a share of the endowment, plus 0.1 x temperature."""

FORECAST_BIAS_PER_ROUND = 0.04
"""Optimism of the forecast per round of horizon, as a share of the endowment ($0.40 of $10)."""

FORECAST_NOISE_SD_PER_ROUND = 0.04
"""Forecast spread per round of horizon, as a share of the endowment, plus 0.1 x temperature."""

History = Sequence[Mapping[str, Any]]
"""The rounds played so far, oldest first: {"round", "sent", "returned"} each."""


def initial_send(traits: Mapping[str, str], endowment: int) -> float:
    """The persona's first-round disposition in dollars: the `trust.trustor` share, clipped."""
    return float(np.clip(trustor_share(dict(traits)), 0.0, 1.0)) * endowment


def worthwhile_send(returned: float, endowment: int) -> float:
    """The most worth sending given the last return: what came back less the wanted profit."""
    return float(np.clip(returned - PROFIT_MARGIN_SHARE * endowment, 0.0, endowment))


def intended_send(traits: Mapping[str, str], endowment: int, history: History) -> float:
    """Before noise: the initial disposition, then a partial move toward the worthwhile amount."""
    if not history:
        return initial_send(traits, endowment)
    last = history[-1]
    target = worthwhile_send(last["returned"], endowment)
    return last["sent"] + ADAPTATION_RATE * (target - last["sent"])


def expected_forecast(traits: Mapping[str, str], endowment: int, horizon: int) -> float:
    """Before noise: the first impression of the persona plus an optimism growing with `horizon`."""
    bias = FORECAST_BIAS_PER_ROUND * endowment * (horizon - 1)
    return initial_send(traits, endowment) + bias


def _whole_dollars(value: float, endowment: int) -> int:
    return round(float(np.clip(value, 0.0, endowment)))


def _slips(request: ChatRequest, rng: np.random.Generator) -> bool:
    """A first answer forgets the closing sentence (in JSON, the `amount`) at
    `FORMAT_SLIP_RATE` (the repair path)."""
    return len(request.messages) == 1 and rng.random() < FORMAT_SLIP_RATE


@scripted_behaviour("trust.react")
def react_decision(request: ChatRequest, rng: np.random.Generator) -> str:
    """Appendix B.2 (ReAct): THOUGHT, ACTION, OBSERVATION, then 'Finally, I will give N dollars'."""
    hints = request.hints
    endowment, history = hints["endowment"], hints["history"]
    spread = (ACTION_NOISE_SD + 0.1 * request.temperature) * endowment
    intended = intended_send(hints["traits"], endowment, history)
    amount = restated_amount(request, _whole_dollars(intended + rng.normal(0.0, spread), endowment))
    slips = _slips(request, rng)
    fields = {
        "thought": _react_thought(history, hints["round"]),
        "action": f"I transfer {amount} of my {endowment} dollars.",
        "observation": _react_observation(history),
    }
    lines = [f"{name.upper()}: {value}" for name, value in fields.items()]
    if slips:  # the first two lines only, and no closing sentence
        return amount_answer(request, "\n".join(lines[:2]), ReactAnswer, fields, None)
    text = "\n".join([*lines, f"Finally, I will give {amount} dollars"])
    return amount_answer(request, text, ReactAnswer, fields, amount)


def _react_thought(history: History, round_index: int) -> str:
    if not history:
        return (
            f"This is round {round_index} and I know nothing about the other player yet, "
            "so I act as I usually would with a stranger."
        )
    last = history[-1]
    sent, returned = last["sent"], last["returned"]
    if sent == 0:
        return "I sent nothing last time, so I have learned nothing about the other player."
    if returned < sent:
        return f"I sent ${sent} and got only ${returned} back, so I should send less."
    return f"I sent ${sent} and got ${returned} back; sending pays as long as it comes back."


def _react_observation(history: History) -> str:
    if not history:
        return "No round has been played yet."
    last = history[-1]
    return f"In round {last['round']} the other player returned ${last['returned']}."


@scripted_behaviour("trust.forecast")
def forecast_decision(request: ChatRequest, rng: np.random.Generator) -> str:
    """Appendix C.3.1: a short explanation, then 'Finally, I will send N dollars'."""
    hints = request.hints
    endowment, horizon, cap = hints["endowment"], hints["horizon"], hints["cap"]
    spread = (FORECAST_NOISE_SD_PER_ROUND * horizon + 0.1 * request.temperature) * endowment
    expected = expected_forecast(hints["traits"], endowment, horizon)
    amount = restated_amount(request, _whole_dollars(expected + rng.normal(0.0, spread), endowment))
    slips = _slips(request, rng)
    stance = (
        "I still want to show that I trust the other player"
        if amount > cap
        else "that is about what I can expect to get back"
    )
    reasoning = (
        f"The other player returns at most ${cap}, whatever I send. In round {horizon} I expect "
        f"to send {amount} of my {endowment} dollars: {stance}."
    )
    fields = {"reasoning": reasoning}
    if slips:
        return amount_answer(request, reasoning, ForecastAnswer, fields, None)
    text = f"{reasoning}\nFinally, I will send {amount} dollars"
    return amount_answer(request, text, ForecastAnswer, fields, amount)
