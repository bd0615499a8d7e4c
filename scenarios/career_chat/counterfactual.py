"""Career chat's counterfactual users: each profile once per level of one of its attributes
(docs/counterfactual.md). The user's whole dialogue is generated again at each level, so what
differs between twins is everything the attribute changes downstream, not one answer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from personasim.agents import twin_suffixes, unknown_attribute, unknown_level
from personasim.environments.career_chat.profiles import (
    COUNTRIES,
    EDUCATION_LEVELS,
    GENDERS,
    JOB_TITLES,
    Profile,
)
from personasim.simulation import ScenarioError

__all__ = ["PROFILE_ATTRIBUTES", "check_profile_design", "profile_twins"]

PROFILE_ATTRIBUTES: dict[str, tuple[str, ...] | None] = {
    "age": None,
    "gender": GENDERS,
    "education": EDUCATION_LEVELS,
    "experience": None,
    "job_title": JOB_TITLES,
    "country": COUNTRIES,
}
"""The attributes a profile's twin may change, and their documented levels (None: any whole
number in range, checked against every profile)."""

SYNTHETIC_YOUNGEST = 20
"""The youngest age `synthetic_profiles` draws."""


def check_profile_design(
    attribute: str, levels: Sequence[str], by: str | None, profiles: Sequence[Profile]
) -> None:
    """A `ScenarioError` naming an unknown attribute or level, with the known ones."""
    if problem := unknown_attribute(attribute, by, list(PROFILE_ATTRIBUTES), "profile"):
        raise ScenarioError(problem)
    vocabulary = PROFILE_ATTRIBUTES[attribute]
    if vocabulary is None:
        _check_numbers(attribute, levels, profiles)
        return
    known = sorted({*vocabulary, *(str(getattr(p, attribute)) for p in profiles)})
    if problem := unknown_level(attribute, levels, known):
        raise ScenarioError(problem)


def _check_numbers(attribute: str, levels: Sequence[str], profiles: Sequence[Profile]) -> None:
    """Ages 16–100; years of experience from 0 to every twin's age."""
    for level in levels:
        low, high = (
            (16, 100) if attribute == "age" else (0, min((p.age for p in profiles), default=100))
        )
        if not level.isdigit() or not low <= int(level) <= high:
            raise ScenarioError(
                f"--levels: {level!r} is not a level of {attribute!r}; its known levels: "
                f"whole numbers from {low} to {high}"
            )


def profile_twins(
    profiles: Sequence[Profile], attribute: str, levels: Sequence[str]
) -> list[tuple[Profile, dict[str, str]]]:
    """Each profile once per level (profile order, then level order), with its record
    `{of, attribute, level}`; a twin's id is the profile's with `@level` appended."""
    numeric = PROFILE_ATTRIBUTES[attribute] is None
    twins = []
    for profile in profiles:
        for level, suffix in zip(levels, twin_suffixes(levels), strict=True):
            value: int | str = int(level) if numeric else level
            twin = replace(profile, id=f"{profile.id}@{suffix}", **{attribute: value})
            twins.append((twin, {"of": profile.id, "attribute": attribute, "level": level}))
    return twins
