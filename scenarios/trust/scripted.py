"""Scripted answers for the agents' tasks (the offline behaviour model, not a language model).

Each behaviour reads the persona's traits from the request hints and writes an answer in the
format the real prompt asks for. The rules are deliberately simple and documented in
docs/scripted.md, so a metric computed on them can be checked against them.
"""

from __future__ import annotations

import json
import re

import numpy as np
from pydantic import BaseModel

from personasim.scenarios.trust.answers import TrustorAnswer
from personasim.simulation import ChatRequest, answer_schema, scripted_behaviour

__all__ = [
    "TRUSTOR_BASE_SHARE",
    "TRUSTOR_EFFECTS",
    "amount_answer",
    "restated_amount",
    "trustor_share",
]

TRUSTOR_BASE_SHARE = 0.45
"""Share of the endowment a persona with no listed trait level sends on average."""

TRUSTOR_EFFECTS: dict[str, dict[str, float]] = {
    "Agreeableness": {"High": 0.15, "Low": -0.15},
    "Neuroticism": {"High": -0.12, "Low": 0.06},
    "Openness To Experience": {"High": 0.08, "Low": -0.08},
    "Extraversion": {"Extraverted": 0.06, "Introverted": -0.06},
    "Conscientiousness": {"High": -0.04, "Low": 0.04},
    "Age": {"18-29": -0.06, "45-64": 0.03, "65+": 0.07},
    "Highest Degree Received": {
        "Less than high school": -0.06,
        "Associate/junior college": 0.02,
        "Bachelor's": 0.05,
        "Graduate": 0.08,
    },
    "Political Views": {
        "Extremely liberal": 0.04,
        "Liberal": 0.03,
        "Slightly liberal": 0.02,
        "Slightly conservative": -0.02,
        "Conservative": -0.03,
        "Extremely conservative": -0.05,
    },
    "Total Wealth": {"Less than $20,000": -0.04, "$250,000–$1 million": 0.03},
    "Us Citizenship Status": {"Not a U.S. citizen": -0.03},
}
"""Additive shifts of the share sent, by trait level (levels not listed shift nothing)."""

TRUSTOR_NOISE_SD = 0.10
"""Person-to-person spread of the share, plus 0.1 x temperature."""

FORMAT_SLIP_RATE = 0.03
"""Chance that a first answer forgets the requested closing sentence, or in JSON the `amount`
(the repair path)."""


PRIOR_WEIGHT = 0.08
"""How far an imposed ranking (§4.3) moves the share: top level +0.08, bottom level −0.08."""


def trustor_share(traits: dict[str, str], prior: dict[str, list[str]] | None = None) -> float:
    """The expected share of the endowment sent, before noise."""
    shift = sum(TRUSTOR_EFFECTS.get(trait, {}).get(level, 0.0) for trait, level in traits.items())
    return TRUSTOR_BASE_SHARE + shift + _prior_shift(traits, prior or {})


def _prior_shift(traits: dict[str, str], prior: dict[str, list[str]]) -> float:
    """Follow a stated ranking: linear in the persona's level's position, centred on zero."""
    shift = 0.0
    for trait, ranking in prior.items():
        level = traits.get(trait)
        if level in ranking and len(ranking) > 1:
            shift += PRIOR_WEIGHT * (1 - 2 * ranking.index(level) / (len(ranking) - 1))
    return shift


_STATED_AMOUNT = re.compile(r"(\d+) of my \d+ dollars")


def restated_amount(request: ChatRequest, drawn: int) -> int:
    """The amount to answer: `drawn` in a first answer; in a re-ask, the amount the previous
    answer already named ("N of my E dollars"), since a slip is a format error, not another
    decision. A text and a JSON run thus re-ask to the same value."""
    if len(request.messages) == 1:
        return drawn
    stated = _STATED_AMOUNT.search(request.messages[-2].content)
    return int(stated.group(1)) if stated else drawn


def amount_answer(
    request: ChatRequest,
    text: str,
    schema: type[BaseModel],
    fields: dict[str, str],
    amount: int | None,
) -> str:
    """The answer in the request's format: `text` as written, or the schema's JSON (`fields`
    and `amount`). `amount` None is a slip: the JSON lacks its `amount` (the text its closing
    sentence), as a model not held to the schema may answer."""
    if answer_schema(request) is None:
        return text
    if amount is None:
        return json.dumps(fields)
    return schema(**fields, amount=amount).model_dump_json()


@scripted_behaviour("trust.trustor")
def trustor_decision(request: ChatRequest, rng: np.random.Generator) -> str:
    """Seed 001, Appendix B.1: belief, desire, intention, then the closing sentence."""
    traits = request.hints["traits"]
    endowment = request.hints["endowment"]
    spread = TRUSTOR_NOISE_SD + 0.1 * request.temperature
    expected = trustor_share(traits, request.hints.get("prior"))
    share = float(np.clip(expected + rng.normal(0.0, spread), 0.0, 1.0))
    amount = restated_amount(request, round(share * endowment))
    slips = len(request.messages) == 1 and rng.random() < FORMAT_SLIP_RATE
    mood = "trusting" if amount >= endowment / 2 else "cautious"
    fields = {
        "belief": f"Given who I am, I am fairly {mood} with strangers.",
        "desire": "I want a fair outcome without risking more than I am comfortable with.",
        "intention": f"I will send {amount} of my {endowment} dollars.",
    }
    lines = [f"{name.upper()}: {value}" for name, value in fields.items()]
    if slips:
        return amount_answer(request, "\n".join(lines), TrustorAnswer, fields, None)
    text = "\n".join([*lines, f"Finally, I will give {amount} dollars"])
    return amount_answer(request, text, TrustorAnswer, fields, amount)
