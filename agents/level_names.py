"""Matching the level names a model writes to the levels it was offered, as a person would.

A belief answer (seed 001, Appendix C.1) must name each offered level of a trait. Models
change the case ("extremely liberal"), add punctuation ("Extremely Liberal."), drop it ("A US
citizen", "Bachelors") or space it differently ("Associate / junior college", "18 – 29"); a
person reads all of these as the level offered. The rule (docs/trust-beliefs.md):

- Two names match when they are equal after case folding and removing everything but letters,
  digits and "+" (so "65+" stays distinct from "65"); every dash counts the same.
- `SYNONYMS` lists the other names accepted for a level, matched the same way (e.g. "65 and
  older" for "65+", "non-citizen" for "Not a U.S. citizen"); the list is data, kept in
  `data/trait_vocabulary.json`. A synonym is used only when its level was offered and it does
  not also match another offered level.
- Anything else, or a name that matches two offered levels, is not matched: the answer is
  re-asked with the offered names, never mapped to the closest one.

`matched_by` says which of the two rules matched a name ("exact" or "synonym"), for the `by`
of what is recorded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from personasim.agents.trait_vocabulary import trait_vocabulary

__all__ = [
    "SYNONYMS",
    "LevelNameError",
    "level_key",
    "match_level_name",
    "match_level_names",
    "matched_by",
]

SYNONYMS: dict[str, tuple[str, ...]] = dict(trait_vocabulary().synonyms)
"""Other names accepted for a level (Table 5's spelling → names a model may use instead), from
`data/trait_vocabulary.json` (the project's list, not the paper's)."""


class LevelNameError(ValueError):
    """Level names that cannot be matched one-to-one to the offered levels; says which."""


def level_key(name: str) -> str:
    """What two names of one level share: case-folded letters, digits and '+'."""
    return re.sub(r"[^\w+]|_", "", name.casefold())


def match_level_name(name: object, levels: Sequence[str]) -> str:
    """The offered level one chosen `name` means (a single choice among `levels`, by the same
    rule); LevelNameError if it means none of them or more than one."""
    found = _lookup(levels).get(level_key(name)) if isinstance(name, str) else None
    if found is None:
        raise LevelNameError(f"{name!r} is not one of {list(levels)}")
    return found


def match_level_names(said: Iterable[str], levels: Sequence[str]) -> list[str]:
    """The offered level each name in `said` means, in order; LevelNameError if a name means
    none of them or more than one, or the names do not cover each level exactly once."""
    lookup = _lookup(levels)
    matched: list[str] = []
    for name in said:
        found = lookup.get(level_key(name)) if isinstance(name, str) else None
        if found is None:
            raise LevelNameError(f"{name!r} is not one of the levels {list(levels)}")
        matched.append(found)
    if sorted(matched) != sorted(levels):
        missing = [level for level in levels if level not in matched]
        twice = sorted({level for level in matched if matched.count(level) > 1})
        said_how = "; ".join(
            part
            for part in (
                f"missing {missing}" if missing else "",
                f"named more than once {twice}" if twice else "",
            )
            if part
        )
        raise LevelNameError(f"each of {list(levels)} must appear exactly once ({said_how})")
    return matched


def matched_by(name: str, level: str) -> str:
    """Which rule matched `name` to the offered `level`, for what a reading records (`by`):
    "exact" (the same name after normalisation) or "synonym" (a `SYNONYMS` entry)."""
    return "exact" if level_key(name) == level_key(level) else "synonym"


def _lookup(levels: Sequence[str]) -> dict[str, str]:
    """Key → offered level, for the levels' own names and their synonyms; a key shared by two
    offered levels is left out (ambiguous)."""
    candidates: dict[str, set[str]] = {}
    for level in levels:
        candidates.setdefault(level_key(level), set()).add(level)
    own = set(candidates)
    for level in levels:
        for synonym in SYNONYMS.get(level, ()):
            key = level_key(synonym)
            if key not in own:
                candidates.setdefault(key, set()).add(level)
    return {key: next(iter(found)) for key, found in candidates.items() if len(found) == 1}
