"""Scripted answers to belief elicitation (seed 001, §4.1; the offline behaviour model).

The scripted "researcher" knows the scripted trustor's effects (scenarios/trust/scripted.py)
but states them with noise, so its beliefs agree with its personas' behaviour imperfectly:
rank correlations are positive but not 1. Ranking strategies state a qualitative effect size;
the dollar strategy states per-level means and SDs whose SDs are narrower than the behaviour's
person-to-person spread, so its effect sizes come out too large (as the paper found for Ctx+$).
Both answer JSON in a text run too (the prompts ask for it); with a structured response format
the JSON is bare, as a constrained model writes it. Documented in docs/scripted.md.
"""

from __future__ import annotations

import json

import numpy as np

from personasim.scenarios.trust.scripted import TRUSTOR_BASE_SHARE, TRUSTOR_EFFECTS
from personasim.simulation import ChatRequest, answer_schema, scripted_behaviour

__all__ = ["BELIEF_NOISE_SD", "STATED_SD_SHARE", "stated_size"]

BELIEF_NOISE_SD = 0.05
"""Noise on each level's believed effect (share of the endowment)."""

STATED_SD_SHARE = 0.12
"""The SD of dollars sent the dollar strategy states for every level, as a share of E."""


def _believed_effects(request: ChatRequest, rng: np.random.Generator) -> dict[str, float]:
    effects = TRUSTOR_EFFECTS.get(request.hints["attribute"], {})
    return {
        level: effects.get(level, 0.0) + rng.normal(0.0, BELIEF_NOISE_SD)
        for level in request.hints["levels"]
    }


def stated_size(spread: float) -> str:
    """Words for the spread (max − min) of believed effects, in shares of the endowment."""
    if spread >= 0.25:
        return "large"
    if spread >= 0.12:
        return "medium"
    return "small" if spread >= 0.05 else "negligible"


@scripted_behaviour("trust.belief.ranking")
def ranking_belief(request: ChatRequest, rng: np.random.Generator) -> str:
    """NoCtx+Tr and Ctx+Tr (Appendix C.1.1–C.1.2): a ranking and a qualitative size."""
    believed = _believed_effects(request, rng)
    ranking = sorted(believed, key=lambda level: -believed[level])
    size = stated_size(max(believed.values()) - min(believed.values()))
    answer = {
        "ranking_descending": ranking,
        "omnibus_effect_size": size,
        "ordering_explanation": f"{ranking[0]} tends to be the most trusting group.",
        "omnibus_effect_size_explanation": f"The differences between groups look {size}.",
    }
    return json.dumps(answer, indent=None if answer_schema(request) is not None else 2)


@scripted_behaviour("trust.belief.dollars")
def dollar_belief(request: ChatRequest, rng: np.random.Generator) -> str:
    """Ctx+$ (Appendix C.1.3): per level, the mean and SD of dollars sent."""
    endowment = request.hints["endowment"]
    believed = _believed_effects(request, rng)
    stats = {
        level: {
            "mean": round(float(np.clip(TRUSTOR_BASE_SHARE + effect, 0, 1)) * endowment, 2),
            "sd": round(STATED_SD_SHARE * endowment, 2),
        }
        for level, effect in believed.items()
    }
    answer = {"mean_sd_level_stats": stats, "explanation": "Estimated for 100 people per group."}
    return json.dumps(answer, indent=None if answer_schema(request) is not None else 2)
