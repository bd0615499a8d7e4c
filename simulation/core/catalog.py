"""Scenario cards: what `personasim list` shows of a scenario, without its run-time code.

Importing the built-in scenarios imports Mesa, LangGraph, pandas and scipy (3 s on a busy
2-core machine) only to print names, roles and parameters. Their cards are therefore made from
the registry's classes on first use and kept in the user's cache folder
(`$XDG_CACHE_HOME/personasim/`, else `~/.cache/personasim/`) under a SHA-256 of the sources
they were made from: only the first listing after an install or a change of the sources pays
for the imports, and nothing is committed that a new paper would have to refresh. Scenarios
from an entry point or a file are carded from their classes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from importlib.util import find_spec
from pathlib import Path, PurePath
from types import UnionType
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

from personasim.simulation.core.scenario import BUILTIN_MODULE

if TYPE_CHECKING:
    from personasim.simulation.core.scenario import Scenario

__all__ = [
    "ParamCard",
    "ScenarioCard",
    "builtin_cards",
    "cache_folder",
    "card_of",
    "scenario_cards",
    "sources_digest",
    "type_label",
]

SOURCE_PACKAGES = (BUILTIN_MODULE, "personasim.agents", "personasim.environments")
"""Packages whose sources a card can depend on (a default such as Table 3's traits comes from
a paper's package, a pattern from an agent's module); with the kernel's scenario contract."""
KERNEL_SOURCES = ("scenario.py", "catalog.py", "../llm/roles.py")


@dataclasses.dataclass(frozen=True)
class ParamCard:
    """One parameter as `list` prints it."""

    flag: str
    kind: str
    default: str
    description: str


@dataclasses.dataclass(frozen=True)
class ScenarioCard:
    """A scenario's name, summary, roles (name, description and seats, in words) and
    parameters."""

    name: str
    summary: str
    roles: tuple[tuple[str, str], ...]
    params: tuple[ParamCard, ...]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScenarioCard:
        roles = tuple((str(r[0]), str(r[1])) for r in data["roles"])
        return cls(
            data["name"], data["summary"], roles, tuple(ParamCard(**p) for p in data["params"])
        )


def card_of(scenario: type[Scenario]) -> ScenarioCard:
    """The card of a scenario class."""
    roles = []
    for name, role in scenario.roles.items():
        seats = "" if role.max_models == 1 else f" ({role.arity()})"
        seats += " (optional: only when --role names it)" if role.optional else ""
        roles.append((name, f"{role.description}{seats}"))
    params = tuple(
        ParamCard(
            flag="--" + field.replace("_", "-"),
            kind=type_label(info.annotation),
            default="required" if info.is_required() else _default(info.default),
            description=info.description or "",
        )
        for field, info in scenario.Params.model_fields.items()
    )
    return ScenarioCard(scenario.name, scenario.summary, tuple(roles), params)


def type_label(annotation: Any) -> str:
    """A parameter's type as a user types it: int, float, FILE, LIST, or the choices a|b|c."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:  # a constrained type (`Annotated[str, Field(...)]`): the type itself
        return type_label(args[0])
    if origin is Literal:
        return "|".join(map(str, args))
    if origin in (tuple, list):
        return f"{type_label(args[0])},..." if args else "LIST"
    if origin in (Union, UnionType):
        return "|".join(type_label(a) for a in args if a is not type(None))
    if isinstance(annotation, type) and issubclass(annotation, PurePath):
        return "FILE"
    return getattr(annotation, "__name__", str(annotation))


def _default(value: Any) -> str:
    if isinstance(value, tuple | list):
        return ",".join(map(str, value)) if len(value) < 3 else f"{value[0]},… ({len(value)})"
    return str(value)


def _package_dir(name: str) -> Path | None:
    """A package's folder, found without running its `__init__` (the built-in scenarios' one
    imports them all)."""
    spec = find_spec(name)
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else None


def sources_digest() -> str:
    """SHA-256 over the sources the cards are made from (about 100 files, a few ms)."""
    here = Path(__file__).resolve().parent
    files = [(name, (here / name).resolve()) for name in KERNEL_SOURCES]
    for package in SOURCE_PACKAGES:
        folder = _package_dir(package)
        found = sorted(folder.rglob("*.py")) if folder else []
        files += [(f"{package}/{p.relative_to(folder).as_posix()}", p) for p in found]
    digest = hashlib.sha256()
    for name, path in files:  # named by package, so a checkout and an install agree
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def builtin_cards() -> dict[str, ScenarioCard]:
    """The built-in scenarios' cards: from the cache kept for the current sources, else made
    from the registry's classes (importing them) and cached."""
    digest = sources_digest()
    cached = cache_folder() / f"cards-{digest[:16]}.json"
    cards = _read_cards(cached, digest)
    if cards is not None:
        return cards
    cards = _live_builtin_cards()
    try:  # best effort: a read-only home only makes the next listing slow again
        cached.parent.mkdir(parents=True, exist_ok=True)
        _write_cards(cards, digest, cached)
    except OSError:
        pass
    return cards


def cache_folder() -> Path:
    """Where the cards are kept (not the response cache, which lives with the runs)."""
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "personasim"


def _read_cards(path: Path, digest: str) -> dict[str, ScenarioCard] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("sources") != digest:
        return None
    try:
        return {c["name"]: ScenarioCard.from_json(c) for c in data["scenarios"]}
    except (KeyError, TypeError, IndexError):
        return None


def _live_builtin_cards() -> dict[str, ScenarioCard]:
    from personasim.simulation.core.scenario import list_scenarios

    prefix = BUILTIN_MODULE + "."
    return {
        name: card_of(cls)
        for name, cls in list_scenarios().items()
        if cls.__module__.startswith(prefix)
    }


def scenario_cards() -> dict[str, ScenarioCard]:
    """Every scenario's card, by name: the built-in ones, then those of the entry-point group
    (loaded, as a run would load them)."""
    from importlib.metadata import entry_points

    from personasim.simulation.core.scenario import ENTRY_POINT_GROUP, list_scenarios

    cards = builtin_cards()
    if list(entry_points(group=ENTRY_POINT_GROUP)):
        for name, cls in list_scenarios(builtin=False).items():
            cards.setdefault(name, card_of(cls))
    return dict(sorted(cards.items()))


def _write_cards(cards: dict[str, ScenarioCard], digest: str, path: Path) -> None:
    data = {
        "about": "personasim's scenario cards, made from these sources; a cache, safe to delete",
        "sources": digest,
        "scenarios": [dataclasses.asdict(card) for card in cards.values()],
    }
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    temporary.replace(path)  # whole or not at all: two listings may write at once
