"""Counterfactual personas: the parameters that ask a scenario to run each sampled persona once
per level of one attribute, everything else held fixed (docs/counterfactual.md).

A scenario whose personas carry attributes takes these parameters by deriving its `Params` from
`CounterfactualParams`; `personasim counterfactual` refuses a scenario that does not (its
personas are free text, or it has no personas). Deriving from it is the whole opt-in: the
paired statistics are added to the scenario's metrics by the `counterfactual` metrics extension
(`core/metric_extensions.py`), never by the scenario itself; a scenario that makes twins of its
own (the classroom's races) or compares more than decisions declares `Scenario.twins`.
The parameters are ordinary scenario parameters, so they are in the manifest and the
fingerprint, and a counterfactual run resumes, replays and recomputes its metrics like any run.
The paired statistics are in `analysis/paired.py`; the twins are made in `agents/counterfactual.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import Field, model_validator

from personasim.simulation.core.scenario import ScenarioParams

if TYPE_CHECKING:
    from personasim.simulation.core.scenario import Scenario

__all__ = [
    "COUNTERFACTUAL_FIELDS",
    "CounterfactualParams",
    "Outcome",
    "Twins",
    "counterfactual_design",
    "twins_of",
]

COUNTERFACTUAL_FIELDS = ("counterfactual_attribute", "counterfactual_levels", "counterfactual_by")
"""The parameters `personasim counterfactual` fills from --attribute, --levels and --by."""


class CounterfactualParams(ScenarioParams):
    """Parameters of a scenario whose personas carry attributes that can be set one at a time."""

    counterfactual_attribute: str | None = Field(
        None, description="counterfactual: the attribute set to each level (see `counterfactual`)"
    )
    counterfactual_levels: tuple[str, ...] = Field(
        (), description="counterfactual: the levels each persona is run at (two or more)"
    )
    counterfactual_by: str | None = Field(
        None, description="counterfactual: another attribute whose levels split the statistics"
    )

    @model_validator(mode="after")
    def _whole_design(self) -> CounterfactualParams:
        """An attribute without two distinct levels (or levels without an attribute) is no
        design; say which part is missing rather than run a plain run."""
        name, levels = self.counterfactual_attribute, self.counterfactual_levels
        if name is None:
            if levels or self.counterfactual_by:
                raise ValueError("--levels and --by need --attribute NAME")
            return self
        if len(levels) < 2 or len(set(levels)) != len(levels) or not all(levels):
            raise ValueError(
                f"--levels for {name!r}: name two or more distinct levels, comma-separated "
                f"(got {','.join(levels) or 'none'})"
            )
        if self.counterfactual_by == name:
            raise ValueError(f"--by {name!r} is the attribute being changed; name another one")
        return self


def counterfactual_design(params: ScenarioParams) -> dict[str, Any] | None:
    """`{attribute, levels, by}` of a counterfactual run's parameters; None for a plain run."""
    name = getattr(params, "counterfactual_attribute", None)
    if name is None:
        return None
    return {
        "attribute": name,
        "levels": list(params.counterfactual_levels),  # type: ignore[attr-defined]
        "by": params.counterfactual_by,  # type: ignore[attr-defined]
    }


@dataclass(frozen=True)
class Outcome:
    """An event whose field is compared between twins besides their decisions: `kind`'s
    `field` (e.g. `classroom.graded`'s `correct`), one row per value of the `label` fields,
    paired by the persona and the `unit` fields (e.g. the question and the repetition)."""

    kind: str
    field: str
    label: tuple[str, ...] = ()
    unit: tuple[str, ...] = ()


@dataclass(frozen=True)
class Twins:
    """What a counterfactual run compares between twins: their decisions (unless `decisions`
    is False, where the decisions are text and only the `outcomes` are numbers) and each of
    the `outcomes`."""

    outcomes: tuple[Outcome, ...] = ()
    decisions: bool = True


def twins_of(scenario: type[Scenario]) -> Twins | None:
    """What `scenario`'s counterfactual runs compare: its declared `twins`, else its decisions
    where its parameters opt in (derive from `CounterfactualParams`); None: it has no twins."""
    if scenario.twins is not None:
        return scenario.twins
    return Twins() if issubclass(scenario.Params, CounterfactualParams) else None
