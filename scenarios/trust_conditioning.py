"""`trust-conditioning`: do beliefs written into the prompt steer behaviour? (seed 001, §4.3)

Round 1 elicits the model's beliefs (one strategy, Ctx+Tr by default) about every analysed
trait. Each later round plays the whole population once under one condition (Table 4):

- unconditioned — the plain Appendix B.1 prompt;
- self — the model's own elicited rankings written into the prompt (Appendix C.2.3);
- weak / strong — imposed priors: the elicited rankings perturbed so that their Spearman ρ with
  the elicited ones is as close as attainable to 0.8 / 0.2 (a seeded search; the achieved ρ is
  logged as a `belief.imposed` event).

Metric (Table 4): per condition, Spearman ρ between the prior in force (the elicited ranking
for unconditioned and self) and the behavioural ranking under that condition, median over
traits; and the mean |η̂² − η²| between the elicited and the behavioural effect sizes. Each
condition is its own round with a fresh single-round prompt, so no condition sees another's
history.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import Field

from personasim.analysis import (
    Undefined,
    first_undefined,
    mean_of,
    median_of_defined,
    min_group_n,
    model_label,
    payloads,
    perturb_ranking,
    ranking_spearman,
    read_stat,
    shown_stat,
    small_note,
    stat_fields,
    write_table,
)
from personasim.simulation import Simulation, register_scenario
from personasim.simulation.prompts import PromptPack

from .trust_beliefs import (
    TrustBeliefs,
    behaviour_scores,
    belief_eta,
    belief_scores,
)
from .trust_population import Prior, TrustPopulationParams, behaviour_metrics

__all__ = ["CONDITIONS", "TrustConditioning", "TrustConditioningParams", "conditioning_text"]

CONDITIONS = ("unconditioned", "self", "weak", "strong")


class TrustConditioningParams(TrustPopulationParams):
    n_personas: int = Field(50, ge=1, description="personas, each playing every condition")
    strategy: Literal["NoCtx+Tr", "Ctx+Tr", "Ctx+$"] = Field(
        "Ctx+Tr", description="elicitation strategy whose beliefs are conditioned on"
    )
    weak_rho: float = Field(0.8, ge=-1, le=1, description="target ρ of the weak perturbation")
    strong_rho: float = Field(0.2, ge=-1, le=1, description="target ρ of the strong one")
    conditions: tuple[Literal["unconditioned", "self", "weak", "strong"], ...] = Field(
        CONDITIONS, description="conditions, one round each after the elicitation"
    )


def conditioning_text(rankings: dict[str, list[str]], prompts: PromptPack) -> str:
    """The C.2.3 paragraph for the given rankings (highest trust first), in `prompts`' words."""
    lines = [prompts.text("conditioning_header")]
    for attribute, ranking in rankings.items():
        pairs = ", and ".join(
            prompts.render("conditioning_pair", higher=a, lower=b)
            for a, b in itertools.pairwise(ranking)
        )
        lines.append(prompts.render("conditioning_line", attribute=attribute, pairs=pairs))
    return "\n".join(lines)


@register_scenario
class TrustConditioning(TrustBeliefs):
    name = "trust-conditioning"
    summary = "self-conditioning and imposed priors in the role-play prompt (seed 001, Table 4)"
    Params = TrustConditioningParams  # type: ignore[assignment]
    params: TrustConditioningParams  # type: ignore[assignment]

    def rounds(self) -> int:
        return 1 + len(self.params.conditions)

    async def play_round(self, sim: Simulation, round_index: int) -> None:
        if round_index == 1:
            await sim.concurrently(self._belief_work([self.params.strategy]))
            return
        prior = self._prior(sim, self.params.conditions[round_index - 2])
        await sim.concurrently(
            {t.agent_id: (lambda t=t: self._play(t, prior)) for t in self.trustors}
        )

    def _prior(self, sim: Simulation, condition: str) -> Prior | None:
        """The belief written into this round's prompts; perturbations drawn here, in order."""
        if condition == "unconditioned":
            return None
        elicited = {a: b["ranking"] for (_, a), b in self.beliefs.items()}
        targets = {"weak": self.params.weak_rho, "strong": self.params.strong_rho}
        rankings: dict[str, list[str]] = {}
        for attribute, ranking in elicited.items():
            if condition in targets:
                ranking, achieved = perturb_ranking(ranking, targets[condition], sim.rng)
            else:
                achieved = 1.0
            rankings[attribute] = ranking
            sim.emit(
                "belief.imposed",
                {
                    "condition": condition,
                    "attribute": attribute,
                    "ranking": ranking,
                    "rho_with_elicited": achieved,
                },
            )
        return Prior(conditioning_text(rankings, self.prompts), rankings)

    @classmethod
    def compute_metrics(cls, events: pd.DataFrame) -> dict[str, Any]:
        header = payloads(events, "run.started")[0]
        params = header["params"]
        elicited = {
            p["attribute"]: p["value"]
            for p in payloads(events, "decision.made")
            if p["task"].startswith("trust.belief.")
        }
        imposed = {(p["condition"], p["attribute"]): p for p in payloads(events, "belief.imposed")}
        conditions = {}
        for index, condition in enumerate(params["conditions"], start=2):
            behaviour = behaviour_metrics(events, params["attributes"], round_index=index)
            conditions[condition] = _condition_metrics(condition, behaviour, elicited, imposed)
        return {
            "model": model_label(header["model"]),
            "strategy": params["strategy"],
            "elicited": elicited,
            "min_group_n": min_group_n(events),
            "conditions": conditions,
        }

    @classmethod
    def report(cls, metrics: dict[str, Any]) -> list[str]:
        return [
            f"  {condition}: median ρ(prior, behaviour) = {shown_stat(m, 'median_rho', 3)}, "
            f"mean |Δη²| = {shown_stat(m, 'mae_eta_squared', 3)}"
            for condition, m in metrics["conditions"].items()
        ]

    @classmethod
    def write_reports(cls, metrics: dict[str, Any], directory: Path) -> list[Path]:
        rows = [{"model": metrics["model"], **row} for row in cls.summary_rows(metrics)]
        note = small_note(
            metrics["min_group_n"], "deciders in a level of a trait, in this condition"
        )
        return write_table(rows, directory, "table4_conditioning", flag="small_group", notes=[note])

    @classmethod
    def summary_rows(cls, metrics: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {
                "condition": condition,
                "median_rho": m["median_rho"],
                "mae_eta_squared": m["mae_eta_squared"],
                "small_group": bool(m["small_levels"]),
            }
            for condition, m in metrics["conditions"].items()
        ]


def _condition_metrics(
    condition: str,
    behaviour: dict[str, Any],
    elicited: dict[str, dict[str, Any]],
    imposed: dict[tuple[str, str], dict[str, Any]],
) -> dict[str, Any]:
    """Table 4's cell for one condition. The prior in force is the imposed ranking, or for
    unconditioned and self the elicited belief (Ctx+$: its stated means, ties kept); behaviour
    enters ρ by its level means, so tied levels share an average rank."""
    per_trait: dict[str, dict[str, Any]] = {}
    for attribute, belief in elicited.items():
        shown = behaviour["attributes"][attribute]
        prior = imposed.get((condition, attribute), {}).get("ranking", belief["ranking"])
        scores = prior if (condition, attribute) in imposed else belief_scores(belief)
        eta, shown_eta = belief_eta(belief), read_stat(shown, "eta_squared")
        per_trait[attribute] = {
            "prior_ranking": prior,
            "behaviour_ranking": shown["ranking"],
            "rho": ranking_spearman(scores, behaviour_scores(shown)),
            "abs_delta_eta_squared": first_undefined(belief=eta, behaviour=shown_eta)
            or abs(eta - shown_eta),
            "small_levels": sorted(lvl for lvl, s in shown["levels"].items() if s["small"]),
        }
    deltas = [
        v["abs_delta_eta_squared"]
        for v in per_trait.values()
        if not isinstance(v["abs_delta_eta_squared"], Undefined)
    ]
    return {
        "n_decisions": behaviour["n_decisions"],
        "parse_failures": behaviour["parse_failures"],
        **stat_fields("median_rho", median_of_defined(v["rho"] for v in per_trait.values())),
        **stat_fields("mae_eta_squared", mean_of(deltas, "no defined values")),
        "small_levels": {a: v["small_levels"] for a, v in per_trait.items() if v["small_levels"]},
        "attributes": {
            a: {
                **v,
                **stat_fields("rho", v["rho"]),
                **stat_fields("abs_delta_eta_squared", v["abs_delta_eta_squared"]),
            }
            for a, v in per_trait.items()
        },
    }
