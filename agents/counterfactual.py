"""Counterfactual twins: each sampled persona copied once per level of one attribute, all else
held fixed (docs/counterfactual.md).

A twin differs from its persona in one raw field (the attribute's, or the raw field a trait is
derived from: `Sex` → `sex`), so its prompt differs in that one `Label: value` line; its traits
are derived again from its fields, and it records which persona it is a twin of and at which
level (`Persona.counterfactual`, logged with the agent). Its requests name a common stream of
draws (`COMMON_DRAWS_HINT`) keyed by the persona and the request with that line blanked, so the
scripted model's noise is the same for every twin and only its rules tell the levels apart.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from personasim.agents.decision import DecisionTask
from personasim.agents.persona import PROFILE_EXCLUDED_FIELDS, Persona, attribute_label
from personasim.agents.persona_sampling import SYNTHETIC_MARGINALS
from personasim.agents.persona_traits import (
    AGE_LEVELS,
    BIG_FIVE_LEVELS,
    TOTAL_WEALTH_LEVELS,
    TRAIT_FIELDS,
    derive_traits,
)
from personasim.simulation import COMMON_DRAWS_HINT, did_you_mean

__all__ = [
    "attribute_levels",
    "check_counterfactual",
    "common_draws",
    "counterfactual_twins",
    "known_attributes",
    "twin_suffixes",
    "unknown_attribute",
    "unknown_level",
]

_VOCABULARY: dict[str, tuple[str, ...]] = {
    **BIG_FIVE_LEVELS,
    "Age": AGE_LEVELS,
    "Total Wealth": TOTAL_WEALTH_LEVELS,
}
"""Trait levels that exist whatever the bank holds (documented vocabularies)."""


def _field(name: str) -> str:
    """The raw field an attribute name sets: a trait's source field, else the name itself."""
    return TRAIT_FIELDS.get(name, name)


def known_attributes(personas: Iterable[Persona]) -> list[str]:
    """Names a counterfactual may change: the traits, then the raw fields the personas carry
    that prompts show (not identifiers, names or the street address)."""
    fields = {f for p in personas for f in p.attributes if f not in PROFILE_EXCLUDED_FIELDS}
    raw = sorted(f for f in fields - set(TRAIT_FIELDS.values()) if not f.endswith("_id"))
    return [*TRAIT_FIELDS, *raw]


def attribute_levels(name: str, personas: Iterable[Persona]) -> list[str]:
    """The levels `name` is known to take: its documented vocabulary (Table 5's Big-Five, age
    and wealth levels; the synthetic population's values) and every level among `personas`."""
    levels = set(_VOCABULARY.get(name, ()))
    field = _field(name)
    for value, _ in SYNTHETIC_MARGINALS.get(field, ()):
        levels.add(derive_traits({field: value}).get(name, value))
    for persona in personas:
        if name in TRAIT_FIELDS and name in persona.traits:
            levels.add(persona.traits[name])
        elif name not in TRAIT_FIELDS and name in persona.attributes:
            levels.add(str(persona.attributes[name]))
    return sorted(levels)


def check_counterfactual(
    attribute: str, levels: Sequence[str], by: str | None, personas: Sequence[Persona]
) -> None:
    """A `ValueError` naming what is unknown (the attribute, a level, the --by attribute), with
    the known names or levels and a close match; nothing when the design can be run."""
    problem = unknown_attribute(attribute, by, known_attributes(personas), "persona")
    problem = problem or unknown_level(attribute, levels, attribute_levels(attribute, personas))
    if problem:
        raise ValueError(problem)


def unknown_attribute(
    attribute: str, by: str | None, names: Sequence[str], noun: str
) -> str | None:
    """Why `--attribute` or `--by` names no `noun` attribute among `names` (with a close match
    and the known ones); None when both are known."""
    for flag, name in (("--attribute", attribute), ("--by", by)):
        if name is not None and name not in names:
            return (
                f"{flag} {name!r}: no such {noun} attribute{did_you_mean(name, names, '')}; "
                f"known attributes: {', '.join(names)}"
            )
    return None


def unknown_level(attribute: str, levels: Sequence[str], known: Sequence[str]) -> str | None:
    """Why a level of `--levels` is not among the attribute's `known` ones; None when all are."""
    for level in levels:
        if level not in known:
            return (
                f"--levels: {level!r} is not a level of {attribute!r}"
                f"{did_you_mean(level, known, '')}; its known levels: {', '.join(known)}"
            )
    return None


def counterfactual_twins(
    personas: Sequence[Persona], attribute: str, levels: Sequence[str]
) -> list[Persona]:
    """Each persona once per level, in persona order then level order; a twin's id is the
    persona's with `@level` (made safe for file names and URLs) appended."""
    field = _field(attribute)
    suffixes = twin_suffixes(levels)
    twins = []
    for persona in personas:
        for level, suffix in zip(levels, suffixes, strict=True):
            fields = dict(persona.attributes)
            fields[field] = level
            traits = {**persona.traits, **derive_traits(fields)}
            twins.append(
                Persona(
                    id=f"{persona.id}@{suffix}",
                    attributes=fields,
                    traits=traits,
                    counterfactual={"of": persona.id, "attribute": attribute, "level": level},
                )
            )
    return twins


def twin_suffixes(levels: Sequence[str]) -> list[str]:
    """`Slightly liberal` → `Slightly-liberal`; the level's position where two would clash."""
    slugs = [re.sub(r"[^A-Za-z0-9+]+", "-", level).strip("-") for level in levels]
    if len(set(slugs)) == len(slugs) and all(slugs):
        return slugs
    return [f"level{i + 1}" for i in range(len(levels))]


def common_draws(task: DecisionTask, persona: Persona) -> DecisionTask:
    """`task` with the twin's stream of draws named in its request: the persona it copies, the
    task, its details and its messages with the twin's attribute line blanked, so every twin of
    one persona shares the stream. Unchanged for a persona that is not a twin, and for a prompt
    that does not show the attribute as the persona's profile line (career chat's profile block,
    the classroom's race instructions), whose draws stay the request's own."""
    twin = persona.counterfactual
    if twin is None:
        return task
    field = _field(twin["attribute"])
    line = f"{attribute_label(field)}: {persona.attributes.get(field, twin['level'])}"
    blank = f"{attribute_label(field)}: ?"
    messages = [m.content.replace(line, blank) for m in task.request.messages]
    if all(m.content == shown for m, shown in zip(task.request.messages, messages, strict=True)):
        return task  # the attribute is not shown as a profile line: its own draws, as before
    key = json.dumps([twin["of"], task.name, task.details, messages], sort_keys=True, default=str)
    stream = hashlib.sha256(key.encode()).hexdigest()[:32]
    hints = {**task.request.hints, COMMON_DRAWS_HINT: stream}
    return replace(task, request=task.request.model_copy(update={"hints": hints}))
