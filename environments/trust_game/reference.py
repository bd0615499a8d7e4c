"""Published human benchmarks for what trustors send (data/trust_human_reference.json).

A simulated population's mean transfer means little without what people send: Berg, Dickhaut
& McCabe (1995) found $5.16 of $10; Johnson & Mislin's meta-analysis (2011, 162 replications)
about half the endowment. The figures and their citations are data shipped with the package,
not code, and reports show them beside the amounts sent as shares of the endowment.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["HumanReference", "human_reference"]


class HumanReference(BaseModel):
    """One published benchmark: its citation and the share of the endowment sent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    label: str
    citation: str
    what: str
    share_sent: float = Field(ge=0, le=1)
    n: int = Field(ge=1)
    n_of: str
    endowment: int | None = None
    mean_sent: float | None = None


def human_reference() -> list[dict[str, Any]]:
    """The shipped benchmarks as plain records (for the metrics), in the file's order."""
    text = (files(__package__) / "data" / "trust_human_reference.json").read_text(encoding="utf-8")
    records = [HumanReference.model_validate(r) for r in json.loads(text)["references"]]
    return [r.model_dump(exclude_none=True) for r in records]
