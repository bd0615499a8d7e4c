"""The persona traits' vocabulary, read from `agents/data/trait_vocabulary.json`.

The level names of the Trust Game paper's Appendix A, Table 5, the GSS long forms that map onto
them and the other names a model may write for a level are data, checked against the paper in
one file (whose `source` block says which parts are the paper's and which the project's); the
rules that use them stay in `persona_traits` and `level_names`. The shipped file is validated
once, on first use: a damaged one fails with the file and the field to fix.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

__all__ = [
    "VOCABULARY_FILE",
    "TraitVocabulary",
    "VocabularyFileError",
    "load_vocabulary",
    "trait_vocabulary",
]

VOCABULARY_FILE = "trait_vocabulary.json"
"""The vocabulary's file name in the `personasim.agents` package's `data/` folder."""

FOLD_WORK_STATUS = "Other"
"""The work-status level every unlisted GSS value folds into (Table 5 does the same)."""


class VocabularyFileError(ValueError):
    """A vocabulary file that cannot be used, with the file and the field to fix."""


def _distinct(names: tuple[str, ...]) -> tuple[str, ...]:
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"names a level more than once: {twice}")
    return names


Name = Annotated[str, Field(min_length=1, pattern=r"^\S(.*\S)?$")]
"""A trait, level or field name: not empty, no leading or trailing whitespace."""
Levels = Annotated[tuple[Name, ...], Field(min_length=2), AfterValidator(_distinct)]
"""A trait's levels, in order: at least two, each once."""


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class VocabularySource(_Frozen):
    """Where the vocabulary comes from: each field is listed under the paper or the project."""

    paper: Name
    table: Name
    from_paper: dict[Name, Name]
    from_project: dict[Name, Name]


class GssLongForms(_Frozen):
    """GSS bank values (as in `gss_agents.jsonl`) → Table 5 levels, per trait that needs it."""

    work_status: dict[Name, Name]
    family_structure_at_16: dict[Name, Name]
    total_wealth: dict[Name, Name]


class TraitVocabulary(_Frozen):
    """The whole vocabulary; the cross-field rules are the ones the trait code relies on."""

    source: VocabularySource
    big_five_levels: Annotated[dict[Name, Levels], Field(min_length=5, max_length=5)]
    age_levels: Annotated[  # persona_traits bins ages into four
        tuple[Name, ...], Field(min_length=4, max_length=4), AfterValidator(_distinct)
    ]
    total_wealth_levels: Levels
    work_status_levels: Levels
    trait_fields: dict[Name, Name]
    gss_long_forms: GssLongForms
    synonyms: dict[Name, Annotated[tuple[Name, ...], Field(min_length=1)]]

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        _check_provenance(self)
        _check_targets(
            "gss_long_forms.work_status", self.gss_long_forms.work_status, self.work_status_levels
        )
        _check_targets(
            "gss_long_forms.total_wealth",
            self.gss_long_forms.total_wealth,
            self.total_wealth_levels,
        )
        if FOLD_WORK_STATUS not in self.work_status_levels:
            raise ValueError(
                f"work_status_levels must include {FOLD_WORK_STATUS!r}, "
                "the level unlisted work statuses fold into"
            )
        if clash := sorted(set(self.trait_fields) & set(self.big_five_levels)):
            raise ValueError(f"trait_fields names Big-Five traits, which are drawn: {clash}")
        return self


def _check_provenance(vocabulary: TraitVocabulary) -> None:
    """Every vocabulary field is credited once, to the paper or to the project."""
    fields = [name for name in TraitVocabulary.model_fields if name != "source"]
    credited = [*vocabulary.source.from_paper, *vocabulary.source.from_project]
    if sorted(credited) != sorted(fields):
        missing = sorted(set(fields) - set(credited))
        other = sorted(
            {name for name in credited if name not in fields or credited.count(name) > 1}
        )
        raise ValueError(
            "source.from_paper and source.from_project must name each field once "
            f"(missing {missing}, unknown or twice {other})"
        )


def _check_targets(where: str, mapping: Mapping[str, str], levels: tuple[str, ...]) -> None:
    if strays := sorted(set(mapping.values()) - set(levels)):
        raise ValueError(f"{where} maps onto names that are not levels: {strays}")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's members, refusing a key given twice (json keeps the last silently)."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise VocabularyFileError(f"the key {key!r} appears twice in one object")
        found[key] = value
    return found


def load_vocabulary(path: str | Path) -> TraitVocabulary:
    """Read and validate a vocabulary file; VocabularyFileError names the file and field."""
    where = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"), object_pairs_hook=_unique_keys)
    except OSError as exc:
        raise VocabularyFileError(f"{where}: cannot read the vocabulary ({exc.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VocabularyFileError(f"{where}: not valid JSON ({exc})") from None
    except VocabularyFileError as exc:
        raise VocabularyFileError(f"{where}: {exc}") from None
    try:
        return TraitVocabulary.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        message = first["msg"].removeprefix("Value error, ")
        field = ".".join(str(part) for part in first["loc"])  # empty for a cross-field rule
        raise VocabularyFileError(f"{where}: {field + ': ' if field else ''}{message}") from None


@cache
def trait_vocabulary() -> TraitVocabulary:
    """The vocabulary shipped in the package, read and validated once."""
    resource = resources.files("personasim.agents").joinpath("data", VOCABULARY_FILE)
    with resources.as_file(resource) as path:
        return load_vocabulary(path)
