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
from typing import ClassVar, Literal

from pydantic import Field

from personasim.analysis import perturb_ranking
from personasim.scenarios.trust.beliefs import TrustBeliefs
from personasim.scenarios.trust.conditioning_metrics import (
    CONDITIONING_SUMMARY_COUNTS,
    conditioning_metrics,
    conditioning_report,
    conditioning_summary_rows,
    write_conditioning_reports,
)
from personasim.scenarios.trust.metric_blocks import TrustConditioningMetrics
from personasim.scenarios.trust.metrics import with_human_reference
from personasim.scenarios.trust.population import Prior, TrustPopulationParams
from personasim.simulation import ScenarioMetrics, Simulation, register_scenario
from personasim.simulation.llm.prompts import PromptPack

__all__ = ["CONDITIONS", "TrustConditioning", "TrustConditioningParams", "conditioning_text"]

CONDITIONS = ("unconditioned", "self", "weak", "strong")


class TrustConditioningParams(TrustPopulationParams):
    PERSONA_BYTES: ClassVar[int] = 41_000
    """Memory one persona takes (measured: 100 and 1,000 personas, scripted model)."""

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
    summary = "the Trust Game with the persona's own or an imposed prior belief in the prompt"
    smoke_params: ClassVar[dict[str, int]] = {"n_personas": 3}
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

    metrics = ScenarioMetrics(
        compute=with_human_reference(conditioning_metrics),
        block=TrustConditioningMetrics,
        report=conditioning_report,
        write_reports=write_conditioning_reports,
        summary_rows=conditioning_summary_rows,
        summary_counts=CONDITIONING_SUMMARY_COUNTS,
    )
    """No paper table spans conditioning runs: the sweep's combined table is the report
    (trust-beliefs' Table 9 needs its `mean_rho` column, which conditioning rows lack)."""
