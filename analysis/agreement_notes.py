"""When Krippendorff's α and the ICC or κ of the same two raters disagree, say so and say why,
from the data: on many items of an interval scale the three estimate nearly the same thing
(Fleiss & Cohen 1973 for κ and the ICC), but they part ways on a judge that barely varies, on
scores piled on one value (the "prevalence paradox"), and with α's ordinal metric, which
measures a distance by how many scores lie between two values rather than by their difference.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from personasim.analysis.reliability import krippendorff_alpha
from personasim.analysis.undefined import Undefined

__all__ = ["GAP", "NEAR_CONSTANT", "SKEWED", "agreement_notes"]

GAP = 0.2
"""A difference between α and an ICC or κ above this gets a note."""

NEAR_CONSTANT = 0.9
"""A rater who gives at least this share of the items one score barely varies."""

SKEWED = 0.8
"""Scores (of both raters together) piled this much on one value are skewed."""


def agreement_notes(
    table: np.ndarray,
    statistics: Mapping[str, Mapping[str, Any]],
    raters: tuple[str, str],
    level: str,
) -> list[str]:
    """One note when α differs by more than `GAP` from a single-rater ICC or κ of the same
    items (`table`: items × 2), naming the gaps and the causes the data show; [] otherwise.

    The ICC forms of the mean of k raters (·,k) are not compared: they are meant to be higher.
    """
    alpha = statistics.get("krippendorff_alpha", {}).get("value")
    if alpha is None:
        return []
    others = {
        key.replace("_", " "): record["value"]
        for key, record in statistics.items()
        if (key == "quadratic_kappa" or key.endswith(",1)")) and record.get("value") is not None
    }
    gaps = {label: value for label, value in others.items() if abs(value - alpha) > GAP}
    if not gaps:
        return []
    said = ", ".join(f"{label} {value:.3f}" for label, value in gaps.items())
    causes = _causes(table, raters, level, gaps) or [
        f"no usual cause shows in the data (no near-constant judge, no skewed scores"
        f"{', and the interval metric keeps the gap' if level == 'ordinal' else ''}); with "
        f"{len(table)} items, read the intervals and the items in most_different"
    ]
    return [
        f"Krippendorff's alpha ({level}) {alpha:.3f} and {said} differ by more than {GAP}: "
        + "; ".join(causes)
        + "."
    ]


def _causes(
    table: np.ndarray, raters: tuple[str, str], level: str, gaps: Mapping[str, float]
) -> list[str]:
    """The usual causes of a gap that the items show, in words."""
    causes = []
    n = len(table)
    for name, side in zip(raters, table.T, strict=True):
        value, count = _mode(side)
        if count >= NEAR_CONSTANT * n:
            causes.append(
                f"{name} gives {count} of {n} items the same score ({value:g}); with one judge "
                "barely varying, kappa and the ICC stay near 0 (their chance term keeps each "
                "judge's own scores), while alpha, whose chance term pools both judges' scores, "
                "also counts the judges' different use of the scale as disagreement"
            )
    value, count = _mode(table.ravel())
    if count >= SKEWED * table.size:
        causes.append(
            f"{count / table.size:.0%} of all scores are {value:g}; with scores piled on one "
            "value chance agreement is high, and coefficients that correct for chance in "
            "different ways react differently to the few other scores (the prevalence paradox)"
        )
    if level == "ordinal":
        interval = krippendorff_alpha(table, "interval")
        if not isinstance(interval, Undefined) and all(
            abs(interval - value) <= GAP for value in gaps.values()
        ):
            causes.append(
                f"with the interval metric alpha is {interval:.3f}: the ordinal metric makes "
                "the gap, measuring a distance by how many scores lie between two values "
                "rather than by their difference"
            )
    return causes


def _mode(values: np.ndarray) -> tuple[float, int]:
    """The most frequent value and how often it occurs."""
    unique, counts = np.unique(values, return_counts=True)
    return float(unique[np.argmax(counts)]), int(counts.max())
