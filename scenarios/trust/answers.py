"""The answer schemas of the Trust Game's role-play and forecast tasks (`--response-format`).

With a structured response format the scenarios send these as the request's schema, and the
scripted rules answer them; both import them from here because agents cannot import scenarios.
Each schema's fields mirror what its prompt asks for, ending with the amount the closing
sentence would name. The amount's upper bound (the endowment) is a run parameter, so the
schema only says `ge=0`; the scenario's `read` checks it against the game's rules.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["ForecastAnswer", "ReactAnswer", "TrustorAnswer"]

AMOUNT_DESCRIPTION = "the whole dollars sent, from 0 to the endowment"


class TrustorAnswer(BaseModel):
    """Appendix B.1: BELIEF, DESIRE, INTENTION, then 'Finally, I will give ___ dollars'."""

    belief: str
    desire: str
    intention: str
    amount: int = Field(ge=0, description=AMOUNT_DESCRIPTION)


class ReactAnswer(BaseModel):
    """Appendix B.2 (ReAct): THOUGHT, ACTION, OBSERVATION, then the amount given."""

    thought: str
    action: str
    observation: str
    amount: int = Field(ge=0, description=AMOUNT_DESCRIPTION)


class ForecastAnswer(BaseModel):
    """Appendix C.3.1: a brief explanation of the reasoning and the amount forecast."""

    reasoning: str
    amount: int = Field(ge=0, description=AMOUNT_DESCRIPTION)
