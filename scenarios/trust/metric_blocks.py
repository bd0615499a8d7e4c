"""The Trust Game scenarios' metrics blocks, declared (`ScenarioMetrics.block`): what each
scenario's metrics function returns (`…Statistics`) and, as its block, that with the published
human reference beside it (`with_human_reference`). The trustors' behaviour (`Behaviour`) is
one shape in all of them."""

from __future__ import annotations

from typing import Any, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

__all__ = [
    "Behaviour",
    "BeliefsStatistics",
    "ConditioningStatistics",
    "ForecastStatistics",
    "HumanReference",
    "PopulationStatistics",
    "TrustBeliefsMetrics",
    "TrustConditioningMetrics",
    "TrustForecastMetrics",
    "TrustPopulationMetrics",
]


@with_config(ConfigDict(extra="forbid"))
class Behaviour(TypedDict):
    """The trustors' §4.1 behaviour (`behaviour_metrics`): amounts sent, and per trait its
    levels' ranking, η² and n."""

    endowment: int
    n_personas: int
    n_decisions: int
    parse_failures: int
    reasks: int
    mean_sent: float | None
    mean_sent_undefined: NotRequired[str]
    sd_sent: float | None
    sd_sent_undefined: NotRequired[str]
    sent_counts: dict[str, int]
    min_group_n: int
    attributes: dict[str, dict[str, Any]]


class HumanReference(TypedDict):
    """The published human benchmarks (`with_human_reference`), not the run's events."""

    human_reference: list[dict[str, Any]]


class PopulationStatistics(Behaviour):
    """`population_metrics`: the behaviour and the model that showed it."""

    model: str


@with_config(ConfigDict(extra="forbid"))
class TrustPopulationMetrics(PopulationStatistics, HumanReference):
    """trust-population's metrics block (Table 5): the behaviour per trait, the human one."""


class BeliefsStatistics(TypedDict):
    """`beliefs_metrics`: the behaviour, the beliefs per strategy and trait with their
    consistency with it (Table 3), and the medians per strategy."""

    model: str
    behaviour: Behaviour
    beliefs: dict[str, dict[str, dict[str, Any]]]
    summary: dict[str, dict[str, Any]]
    elicitation_failures: int


@with_config(ConfigDict(extra="forbid"))
class TrustBeliefsMetrics(BeliefsStatistics, HumanReference):
    """trust-beliefs' metrics block (Table 3), with the human behaviour beside it."""


class ConditioningStatistics(TypedDict):
    """`conditioning_metrics`: the elicited beliefs, the target ρ of the perturbations and
    Table 4's cell per condition."""

    model: str
    strategy: str
    targets: dict[str, float | None]
    elicited: dict[str, dict[str, Any]]
    min_group_n: int
    conditions: dict[str, dict[str, Any]]


@with_config(ConfigDict(extra="forbid"))
class TrustConditioningMetrics(ConditioningStatistics, HumanReference):
    """trust-conditioning's metrics block (Table 4), with the human behaviour beside it."""


class ForecastStatistics(TypedDict):
    """`forecast_metrics`: the forecast error per archetype and horizon (§5.2) and the first
    persona's explanations (Tables 6–8); `model` is the run's model description."""

    model: dict[str, Any]
    model_label: str
    rounds: int
    design: str
    reasks: int
    min_group_n: int
    archetypes: dict[str, dict[str, Any]]
    explanations: dict[str, list[dict[str, Any]]]


@with_config(ConfigDict(extra="forbid"))
class TrustForecastMetrics(ForecastStatistics, HumanReference):
    """trust-forecast's metrics block (§5.2), with the human behaviour beside it."""
