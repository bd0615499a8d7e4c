"""The persona's choice of its next place (persona-journey, `--route persona`): the answer's
schema and the scripted rule (the offline behaviour model, not a language model).

Scripted rule `journey.choose`: a persona with high Openness To Experience picks the first
option it is offered, anyone else a seeded uniform draw among the options; it answers JSON in
every format, as the prompt asks. Documented in docs/scripted.md and docs/persona-journey.md.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, Field

from personasim.agents.decision import DecisionParseError
from personasim.simulation import ChatRequest, scripted_behaviour

__all__ = ["NextPlace", "read_place"]


class NextPlace(BaseModel):
    """The persona's answer: where it goes next (one of the offered places)."""

    place: str = Field(description="one of the places offered")


def read_place(answer: NextPlace, options: Sequence[str]) -> str:
    """The offered place the answer names (case and spacing do not matter), else a re-ask."""
    named = answer.place.strip().lower()
    for option in options:
        if option.lower() == named:
            return option
    raise DecisionParseError(f"{answer.place!r} is not one of the places {', '.join(options)}")


@scripted_behaviour("journey.choose")
def _choose(request: ChatRequest, rng: np.random.Generator) -> str:
    options = list(request.hints["options"])
    if request.hints.get("traits", {}).get("Openness To Experience") == "High":
        choice = options[0]
    else:
        choice = options[int(rng.integers(len(options)))]
    return json.dumps({"place": choice})
