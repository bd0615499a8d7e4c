"""`trust-beliefs`: do the model's stated beliefs about a trait match its personas' behaviour?

Seed 001, §4.1–4.2 (Table 3) and Appendix D.1 (Table 9, the endowment ablation: run this
scenario with `--endowment 10`, `44`, `100`, or one `personasim sweep`). In one round, the model
is asked as a researcher, under each elicitation strategy (Table 2), how each trait's levels
relate to trust, and, concurrently, every persona plays the Trust Game as in `trust-population`.

- Belief ranking π_t^(S) and effect size η̂²_t^(S): NoCtx+Tr and Ctx+Tr state a ranking and an
  omnibus effect size (Appendix C.2.1; a word is mapped to a number, see
  `scenarios.trust.effect_sizes.effect_size_value`); Ctx+$ states each level's mean and SD
  of dollars sent, for 100 people per group (C.1.3), from which the ranking (by mean) and η̂²
  (one-way ANOVA from the group statistics) follow.
- Behaviour π*_t and η²_t: as in `trust-population`.
- Consistency: ρ_t = Spearman(π_t^(S), π*_t) and |Δη²_t| = |η̂²_t − η²_t|, with their medians over
  traits (Table 3) and the mean ρ (Table 9).

The levels offered for each trait are those present in the sampled population and in the run's
split (`--split test`, Table 5's te levels, by default; `--split all`), so beliefs and behaviour
rank the same levels, listed in the seeded random order of the run's `trust.levels` event; a
trait with fewer than two such levels is not asked about.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, Field, field_validator

from personasim.agents import (
    DecisionParseError,
    DecisionTask,
    LevelNameError,
    ResearcherAgent,
    format_instructions,
    match_level_names,
    parse_structured,
)
from personasim.analysis import Undefined, eta_squared_from_group_stats
from personasim.scenarios.trust.beliefs_metrics import (
    BELIEFS_SUMMARY_COUNTS,
    beliefs_metrics,
    beliefs_report,
    beliefs_summary_rows,
    write_beliefs_reports,
    write_beliefs_sweep_reports,
)
from personasim.scenarios.trust.effect_sizes import effect_size_value
from personasim.scenarios.trust.metric_blocks import TrustBeliefsMetrics
from personasim.scenarios.trust.metrics import with_human_reference
from personasim.scenarios.trust.population import TrustPopulation, TrustPopulationParams
from personasim.simulation import (
    ChatRequest,
    Message,
    ScenarioMetrics,
    Simulation,
    register_scenario,
)

__all__ = ["STRATEGIES", "TrustBeliefs", "TrustBeliefsParams"]

STRATEGIES = ("NoCtx+Tr", "Ctx+Tr", "Ctx+$")
"""Table 2: the elicitation target (trust or dollars) and whether the game is described."""


class RankingBelief(BaseModel):
    """The NoCtx+Tr / Ctx+Tr answer (fields as in the sample output of Appendix C.2.1)."""

    ranking_descending: list[str] = Field(
        description="all the values listed, from highest to lowest interpersonal trust"
    )
    omnibus_effect_size: str | float = Field(
        description="eta-squared of the trait on interpersonal trust: 'negligible', 'small', "
        "'medium' or 'large', or a number between 0 and 1"
    )
    ordering_explanation: str = ""
    omnibus_effect_size_explanation: str = ""

    @field_validator("ranking_descending", mode="before")
    @classmethod
    def _value_chain(cls, value: Any) -> Any:
        """The prompt also asks for "Value1 > Value2 > Value3": that string is a ranking too."""
        if isinstance(value, str) and ">" in value:
            return [level.strip() for level in value.split(">")]
        return value


class LevelStats(BaseModel):
    mean: float = Field(ge=0, description="mean dollars sent")
    sd: float = Field(ge=0, description="standard deviation of dollars sent")


class DollarBelief(BaseModel):
    """The Ctx+$ answer (Appendix C.2.2's `mean_sd_level_stats`)."""

    mean_sd_level_stats: dict[str, LevelStats] = Field(
        description="for every value listed, the mean and SD of the dollars sent"
    )
    explanation: str = ""


class TrustBeliefsParams(TrustPopulationParams):
    PERSONA_BYTES: ClassVar[int] = 17_000
    """Memory one persona takes (measured: 100 and 1,000 personas, scripted model)."""

    n_personas: int = Field(50, ge=1, description="personas (§4: N = 50 per strategy)")
    strategies: tuple[str, ...] = Field(STRATEGIES, description="elicitation strategies")

    @field_validator("strategies")
    @classmethod
    def _known_strategies(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [n for n in names if n not in STRATEGIES]
        if unknown:
            raise ValueError(f"unknown strategies {unknown}; choose from {', '.join(STRATEGIES)}")
        return names


def read_ranking_belief(belief: RankingBelief, levels: list[str]) -> dict[str, Any]:
    """The stated ranking and effect size, if it ranks exactly `levels` (names matched as a
    person would, `agents.level_names`) and the size is one."""
    try:
        ranking = match_level_names(belief.ranking_descending, levels)
    except LevelNameError as exc:
        raise DecisionParseError(
            f"ranking_descending must list each of {levels} exactly once: {exc}"
        ) from None
    try:
        size = effect_size_value(belief.omnibus_effect_size)
    except ValueError as exc:
        raise DecisionParseError(str(exc)) from None
    return {
        "ranking": ranking,
        **_renamed(belief.ranking_descending, ranking),
        "eta_squared": size,
        "stated": belief.model_dump(),
    }


def read_dollar_belief(belief: DollarBelief, levels: list[str], endowment: int) -> dict[str, Any]:
    """Ranking (by mean) and η̂² from the stated per-level statistics, if they are `levels`'
    and no mean is above the endowment."""
    try:
        names = match_level_names(list(belief.mean_sd_level_stats), levels)
    except LevelNameError as exc:
        raise DecisionParseError(
            f"mean_sd_level_stats must have exactly the levels {levels}: {exc}"
        ) from None
    stats = dict(zip(names, belief.mean_sd_level_stats.values(), strict=True))
    if any(s.mean > endowment for s in stats.values()):
        raise DecisionParseError(f"a mean above the ${endowment} a trustor has")
    ranking = sorted(levels, key=lambda level: (-stats[level].mean, level))
    eta = eta_squared_from_group_stats({k: (s.mean, s.sd) for k, s in stats.items()})
    stated = DollarBelief(mean_sd_level_stats=stats, explanation=belief.explanation)
    return {
        "ranking": ranking,
        "eta_squared": None if isinstance(eta, Undefined) else eta,  # the reason: belief_eta
        "stated": stated.model_dump(),
        **_renamed(belief.mean_sd_level_stats, names),
    }


def _renamed(said: Iterable[str], names: list[str]) -> dict[str, Any]:
    """The names the model wrote, where they differ from the offered ones (for the record)."""
    renamed = {s: n for s, n in zip(said, names, strict=True) if s != n}
    return {"stated_names": renamed} if renamed else {}


@register_scenario
class TrustBeliefs(TrustPopulation):
    name = "trust-beliefs"
    summary = "do personas' stated beliefs match how they play the Trust Game? per trait"
    smoke_params: ClassVar[dict[str, int]] = {"n_personas": 3}
    Params = TrustBeliefsParams
    params: TrustBeliefsParams

    def setup(self, sim: Simulation) -> None:
        super().setup(sim)
        self.researcher = ResearcherAgent(sim, "researcher", role="belief elicitation (§4.1)")
        self.levels = self._levels_present()

    def _levels_present(self) -> dict[str, list[str]]:
        """Each analysed trait's levels among the personas, in the split and in the recorded
        shown order (at least two, else left out: no ranking to ask about)."""
        return {a: levels for a, levels in self.level_order.items() if len(levels) >= 2}

    async def play_round(self, sim: Simulation, round_index: int) -> None:
        work = {t.agent_id: (lambda t=t: self._play(t)) for t in self.trustors}
        await sim.concurrently(work | self._belief_work(self.params.strategies))

    def _belief_work(self, strategies: Sequence[str]) -> dict[str, Callable[[], Awaitable[None]]]:
        """One unit of work per strategy and trait; answers land in `self.beliefs`."""
        self.beliefs: dict[tuple[str, str], dict[str, Any]] = {}
        return {
            f"belief/{strategy}/{attribute}": (
                lambda s=strategy, a=attribute, lv=levels: self._elicit(s, a, lv)
            )
            for strategy in strategies
            for attribute, levels in self.levels.items()
        }

    async def _elicit(self, strategy: str, attribute: str, levels: list[str]) -> None:
        decision = await self.researcher.decide(self._belief_task(strategy, attribute, levels))
        if decision.ok:  # a failure is logged as decision.failed and left out
            self.beliefs[(strategy, attribute)] = decision.value

    def _belief_task(self, strategy: str, attribute: str, levels: list[str]) -> DecisionTask:
        p = self.params
        key = attribute.lower().replace(" ", "_")
        context = ""
        if strategy.startswith("Ctx"):
            context = self.prompts.render("game_context", initial_amount=p.endowment)
        inline = ", ".join(levels)
        if strategy == "Ctx+$":
            prompt = self.prompts.render(
                "belief_dollars",
                attribute=key,
                context=context,
                inline_levels=inline,
                format_instructions=format_instructions(DollarBelief),
            )
            task, schema, read = (
                "trust.belief.dollars",
                DollarBelief,
                lambda b: read_dollar_belief(b, levels, p.endowment),
            )
        else:
            prompt = self.prompts.render(
                "belief_ranking",
                noun="attribute" if context else "trait",
                attribute=key,
                numbered_levels="\n".join(f"{i}. {lvl}" for i, lvl in enumerate(levels, 1)),
                context=context,
                format_instructions=format_instructions(RankingBelief),
            )
            task, schema, read = (
                "trust.belief.ranking",
                RankingBelief,
                lambda b: read_ranking_belief(b, levels),
            )
        return DecisionTask(
            name=task,
            request=ChatRequest(
                messages=(Message(role="user", content=prompt),),
                temperature=p.temperature,
                top_p=1.0,
                task=task,
                hints={"attribute": attribute, "levels": levels, "endowment": p.endowment},
            ),
            parse=lambda reply: read(parse_structured(reply, schema)),
            reminder=lambda error: self.prompts.render(
                "belief_reminder", error=error, inline_levels=inline
            ),
            max_repairs=p.max_repairs,
            details={"strategy": strategy, "attribute": attribute},
            schema=schema,
            read=read,
        )

    metrics = ScenarioMetrics(
        compute=with_human_reference(beliefs_metrics),
        block=TrustBeliefsMetrics,
        report=beliefs_report,
        write_reports=write_beliefs_reports,
        summary_rows=beliefs_summary_rows,
        write_sweep_reports=write_beliefs_sweep_reports,
        summary_counts=BELIEFS_SUMMARY_COUNTS,
    )
