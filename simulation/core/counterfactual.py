"""Counterfactual personas: the parameters that ask a scenario to run each sampled persona once
per level of one attribute, everything else held fixed (docs/counterfactual.md).

A scenario whose personas carry attributes takes these parameters by deriving its `Params` from
`CounterfactualParams`; `personasim counterfactual` refuses a scenario that does not (its
personas are free text, or it has no personas). The parameters are ordinary scenario
parameters, so they are in the manifest and the fingerprint, and a counterfactual run resumes,
replays and recomputes its metrics like any run. The paired statistics are in
`analysis/paired.py`; the twins are made in `agents/counterfactual.py`.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from personasim.simulation.core.scenario import ScenarioParams

__all__ = ["COUNTERFACTUAL_FIELDS", "CounterfactualParams", "counterfactual_design"]

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
