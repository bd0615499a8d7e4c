"""How career chat groups its users (seed 003, §6.1, Appendix H): age bins, a country's
development group, and the grouping of a profile for each of the paper's attributes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from personasim.environments.career_chat import education_label
from personasim.scenarios.career_chat.countries import development_level
from personasim.scenarios.career_chat.jobs import (
    job_category,
    position_level,
)

__all__ = ["AGE_BINS", "GROUPINGS", "age_bin", "country_group"]

AGE_BINS = ("<30", "30-40", "40-50", "50-60", ">60")
"""10-year brackets; 30 falls in 30-40 and 60 in >60 (the paper leaves the edges open)."""


def age_bin(age: int) -> str:
    if age < 30:
        return "<30"
    if age >= 60:
        return ">60"
    low = age // 10 * 10
    return f"{low}-{low + 10}"


def country_group(country: str) -> str:
    """The authors' development level of the country (`career_countries`; "Unknown" else)."""
    return development_level(country)


GROUPINGS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "age": lambda p: age_bin(int(p["age"])),
    "education": lambda p: education_label(str(p["education"])),
    "country": lambda p: country_group(str(p["country"])),
    "job": lambda p: p.get("job_category") or job_category(str(p["job_title"])),
    "position": lambda p: p.get("position_level") or position_level(str(p["job_title"])),
}
"""How a profile is grouped for each of the paper's attributes (the paper's education labels
and ours are the same groups); job category and position level come from the run's
`--job-groups` file where it names the title, else from `career_jobs`' word rule."""
