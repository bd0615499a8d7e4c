"""The persona data type shared by agents, scenarios and analysis.

A persona carries two views of the same person:

* ``attributes`` - the raw fields as loaded from a persona bank (GSS field names such as
  ``"age"`` or ``"political_views"``), plus the Big-Five fields once augmented. These are
  what the role-playing prompt shows the model (``profile_text``).
* ``traits`` - the categorical analysis levels keyed by the paper's trait names
  (``"Age"`` -> ``"30-44"``), which the belief-behaviour analysis groups by.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any

__all__ = [
    "PROFILE_EXCLUDED_FIELDS",
    "AttributeValue",
    "Persona",
    "attribute_label",
]

AttributeValue = str | int | float | bool

#: Raw fields never shown in prompts: identifiers, the street address (city/state are kept),
#: and first/last names, which invite name-based bias (cf. Wei et al., 2024).
PROFILE_EXCLUDED_FIELDS: frozenset[str] = frozenset(
    {"id", "uuid", "first_name", "last_name", "name", "full_name", "street_address"}
)

# Labels that plain capitalisation would get wrong.
_LABEL_OVERRIDES: dict[str, str] = {
    "us_citizenship_status": "US citizenship status",
    "born_in_us": "Born in US",
    "fathers_highest_degree": "Father's highest degree",
    "mothers_highest_degree": "Mother's highest degree",
    "mothers_work_history": "Mother's work history",
}


@cache
def attribute_label(field: str) -> str:
    """Human-readable prompt label for a raw field: ``political_views`` -> ``Political views``."""
    if field in _LABEL_OVERRIDES:
        return _LABEL_OVERRIDES[field]
    words = field.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def _is_excluded(field: str) -> bool:
    return field in PROFILE_EXCLUDED_FIELDS or field.endswith("_id")


def _format_value(value: AttributeValue) -> str:
    if isinstance(value, bool):
        return "Yes" if value else "No"
    return str(value)


def _frozen_attributes(attributes: Mapping[str, Any]) -> Mapping[str, AttributeValue]:
    """Copy and check attributes so later mutation of the caller's dict cannot leak in."""
    frozen: dict[str, AttributeValue] = {}
    for key, value in attributes.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"attribute names must be non-empty strings, got {key!r}")
        if not isinstance(value, str | int | float | bool):
            raise ValueError(
                f"attribute {key!r} must be a str, int, float or bool, "
                f"got {type(value).__name__}: {value!r}"
            )
        frozen[key] = value
    return MappingProxyType(frozen)


def _frozen_traits(traits: Mapping[str, Any]) -> Mapping[str, str]:
    frozen: dict[str, str] = {}
    for key, value in traits.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ValueError(f"traits must map str to str, got {key!r}: {value!r}")
        frozen[key] = value
    return MappingProxyType(frozen)


@dataclass(frozen=True)
class Persona:
    """One simulated participant; immutable so it can be shared across runs and threads."""

    id: str
    attributes: Mapping[str, AttributeValue]
    traits: Mapping[str, str]
    counterfactual: Mapping[str, str] | None = None
    """For a counterfactual twin (`agents/counterfactual.py`): `of` (the sampled persona's id),
    `attribute` and `level` (the value it was set to); None for a sampled persona."""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"persona id must be a non-empty string, got {self.id!r}")
        object.__setattr__(self, "attributes", _frozen_attributes(self.attributes))
        object.__setattr__(self, "traits", _frozen_traits(self.traits))
        if self.counterfactual is not None:
            object.__setattr__(self, "counterfactual", _frozen_traits(self.counterfactual))

    def __hash__(self) -> int:
        twin = tuple(self.counterfactual.items()) if self.counterfactual else ()
        return hash((self.id, tuple(self.attributes.items()), tuple(self.traits.items()), twin))

    def profile_text(self) -> str:
        """The ``$persona_details`` prompt block: one ``Label: value`` line per shown attribute.

        Identifiers, the street address and first/last names are left out; the order is
        the order of ``attributes`` so prompts are byte-identical across runs.
        """
        return "\n".join(
            f"{attribute_label(field)}: {_format_value(value)}"
            for field, value in self.attributes.items()
            if not _is_excluded(field)
        )

    def to_record(self) -> dict[str, Any]:
        """JSON-ready plain-dict form, the inverse of :meth:`from_record`."""
        record = {"id": self.id, "attributes": dict(self.attributes), "traits": dict(self.traits)}
        if self.counterfactual is not None:
            record["counterfactual"] = dict(self.counterfactual)
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Persona:
        """Rebuild a persona from :meth:`to_record` output (``traits`` may be omitted)."""
        missing = [key for key in ("id", "attributes") if key not in record]
        if missing:
            raise ValueError(f"persona record is missing {', '.join(missing)}: {record!r}")
        attributes = record["attributes"]
        traits = record.get("traits", {})
        if not isinstance(attributes, Mapping) or not isinstance(traits, Mapping):
            raise ValueError("persona record 'attributes' and 'traits' must be objects")
        twin = record.get("counterfactual")
        return cls(id=record["id"], attributes=attributes, traits=traits, counterfactual=twin)
