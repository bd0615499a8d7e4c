"""`Registry`: the one registry of named extensions, for scenarios, backend kinds, scripted
rules, journey places and import formats alike.

One extension style (docs/architecture.md): a decorator registers a value under a name, and an
outside package adds its own by naming the module that registers it under a Python entry-point
group. Every registry behaves the same way:

- a name is registered once: a second value under it is refused with an error naming where both
  come from; the same value again, or the same definition loaded again (a module reloaded, a
  scenario file edited and loaded anew), replaces the first;
- the entry-point group is read from package metadata only when a name is missing: first the
  entry point of that name, then (where the group's entry points name packages rather than
  single values) the rest of the group; each entry point is loaded once per process, and one
  that fails is kept with its error, to be named when the name stays missing;
- `names()` and `items()`, the full list, load every entry point of the group, and there a
  failing one is an error naming the entry point and its distribution;
- `snapshot()` and `restore()` (or `scoped()`) put a registry back as it was, for tests.

It imports nothing of personasim, so every layer may use it.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Generic, TypeVar

__all__ = [
    "SCENARIO_FILE_MODULE_PREFIX",
    "Origin",
    "Registry",
    "RegistryError",
    "RegistryState",
    "origin_of",
]

T = TypeVar("T")

SCENARIO_FILE_MODULE_PREFIX = "personasim_scenario_file_"
"""The module names scenario files load under (`runs/lifecycle/scenario_file.py`). A scenario file
is the user's own code, loaded because a run names it: its definition replaces one of the same name
from an earlier file (copies of one scaffold) or from a script imported by hand, but never a
built-in one (`personasim.*`)."""


class RegistryError(ValueError):
    """A name registered twice, or an entry point that failed; the message names both sides."""


@dataclass(frozen=True)
class Origin:
    """Where a registered value is defined: its module and qualified name, and its source
    file where there is one (a scenario file is loaded under a new module name each time it
    changes, so the file is what says it is the same definition)."""

    module: str
    qualname: str
    file: str | None = None

    def __str__(self) -> str:
        return f"{self.module}.{self.qualname}"

    def same_definition(self, other: Origin) -> bool:
        """The same definition loaded again: same name, from the same module or file."""
        if self.qualname != other.qualname:
            return False
        return self.module == other.module or (self.file is not None and self.file == other.file)


def _replaced_by_a_scenario_file(before: Origin, new: Origin) -> bool:
    return new.module.startswith(SCENARIO_FILE_MODULE_PREFIX) and not before.module.startswith(
        "personasim."
    )


def origin_of(value: object) -> Origin:
    """The origin of a class or function, or of an instance's class."""
    target = value if inspect.isclass(value) or inspect.isroutine(value) else type(value)
    module = str(getattr(target, "__module__", None) or "?")
    qualname = str(getattr(target, "__qualname__", None) or repr(target))
    try:
        source = inspect.getsourcefile(target)  # type: ignore[arg-type]
    except TypeError:  # built in, or defined in the interpreter
        source = None
    return Origin(module, qualname, str(Path(source).resolve()) if source else None)


@dataclass(frozen=True)
class RegistryState(Generic[T]):
    """What `snapshot()` keeps: the values, their origins, and the entry points loaded."""

    values: dict[str, T]
    origins: dict[str, Origin]
    loaded: frozenset[str]
    failures: dict[str, str] = field(default_factory=dict)


class Registry(Generic[T]):
    """Named values of one kind.

    `kind` names a value in messages ("scenario", "backend kind"); `group` is the entry-point
    group packages register under, personasim's own built-in values included (None: none);
    `builtin_prefix` is the module prefix of those built-in entry points (`personasim.`), which
    `items(builtin=False)` leaves unloaded (`personasim list` cards them without importing
    them); `whole_group`
    says whether a name missing after its own entry point is looked for in the rest of the
    group (true where an entry point names a package of several values, as a scripted-rule
    package does); `error` is the exception raised (a subclass of ValueError the caller's
    command line reports).
    """

    def __init__(
        self,
        kind: str,
        group: str | None = None,
        *,
        builtin_prefix: str | None = None,
        whole_group: bool = True,
        error: type[Exception] = RegistryError,
    ) -> None:
        self.kind = kind
        self.group = group
        self.whole_group = whole_group
        self.error = error
        self.builtin_prefix = builtin_prefix
        self._values: dict[str, T] = {}
        self._origins: dict[str, Origin] = {}
        self._loaded: set[str] = set()
        self._failures: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, group={self.group!r}, {len(self._values)} registered)"

    def __contains__(self, name: object) -> bool:
        """Registered now (nothing is loaded to answer)."""
        return name in self._values

    def register(self, name: str, value: T, origin: Origin | None = None) -> T:
        """Register `value` as `name`; `origin` (default: the value's own) is where it is
        defined. A different definition under a registered name is refused."""
        origin = origin or origin_of(value)
        existing = self._values.get(name)
        if existing is not None and existing is not value:
            before = self._origins[name]
            if not (before.same_definition(origin) or _replaced_by_a_scenario_file(before, origin)):
                raise self.error(
                    f"two {self.kind}s are named {name!r}: {before} and {origin}; rename one"
                )
        self._values[name] = value
        self._origins[name] = origin
        return value

    def unregister(self, name: str) -> None:
        """Remove `name` (nothing happens when it is not registered)."""
        self._values.pop(name, None)
        self._origins.pop(name, None)

    def origin(self, name: str) -> Origin | None:
        return self._origins.get(name)

    def registered(self) -> dict[str, T]:
        """What is registered now, in the order registered; nothing is loaded."""
        return dict(self._values)

    def get(self, name: str) -> T | None:
        """The value registered as `name`; when it is missing, its entry point (then the rest
        of the group, where `whole_group`) is loaded first. None when it is still missing:
        `failures()` says which entry points failed meanwhile."""
        if name in self._values:
            return self._values[name]
        if self.group:
            for entry in metadata.entry_points(group=self.group, name=name):
                self._load(entry, strict=False)
                if name not in self._values and self._key(entry) not in self._failures:
                    self._failures[self._key(entry)] = f"registered no {self.kind} {name!r}"
        if name not in self._values and self.whole_group:
            self._load_group(strict=False)
        return self._values.get(name)

    def items(self, builtin: bool = True, strict: bool = True) -> dict[str, T]:
        """Every value, sorted by name: every entry point of the group (but the built-in ones,
        where `builtin` is false) is loaded first. One that fails is an error, or with `strict`
        false left out (`failures()` names it: for a message about a missing name)."""
        self._load_group(strict, builtin)
        return dict(sorted(self._values.items()))

    def names(self, builtin: bool = True, strict: bool = True) -> list[str]:
        """Every name, loading as `items()` does."""
        return list(self.items(builtin, strict))

    def entry_points(self) -> dict[str, str]:
        """The group's entry points, name → the module it names, read from package metadata
        without importing any of them."""
        if not self.group:
            return {}
        return {e.name: e.value for e in metadata.entry_points(group=self.group)}

    def failures(self, name: str | None = None) -> dict[str, str]:
        """Entry points (those named `name`, or all) that failed to load or registered
        nothing under their own name, `NAME = VALUE` → what happened (`failed (distribution
        ...): ...`)."""
        return {
            key: why
            for key, why in self._failures.items()
            if name is None or key.startswith(f"{name} = ")
        }

    def failure_note(self) -> str:
        """`; entry point b = broken failed (distribution broken 0.1): ImportError: ...` for
        each failure, to append to a message about a missing name; empty when none failed."""
        return "".join(f"; entry point {key} {why}" for key, why in self._failures.items())

    def snapshot(self) -> RegistryState[T]:
        return RegistryState(
            dict(self._values), dict(self._origins), frozenset(self._loaded), dict(self._failures)
        )

    def restore(self, state: RegistryState[T]) -> None:
        self._values = dict(state.values)
        self._origins = dict(state.origins)
        self._loaded = set(state.loaded)
        self._failures = dict(state.failures)

    @contextmanager
    def scoped(self) -> Iterator[Registry[T]]:
        """Whatever is registered or loaded inside the block is gone after it (for tests)."""
        state = self.snapshot()
        try:
            yield self
        finally:
            self.restore(state)

    def _load_group(self, strict: bool, builtin: bool = True) -> None:
        if self.group:
            for entry in metadata.entry_points(group=self.group):
                if builtin or not self._is_builtin(entry):
                    self._load(entry, strict)

    def _is_builtin(self, entry: metadata.EntryPoint) -> bool:
        return self.builtin_prefix is not None and entry.value.startswith(self.builtin_prefix)

    def _load(self, entry: metadata.EntryPoint, strict: bool) -> None:
        """Import an entry point once; a failure is kept (and raised when `strict`)."""
        key = self._key(entry)
        if key in self._loaded:
            if strict and key in self._failures:
                raise self.error(self._failed(key, self._failures[key]))
            return
        self._loaded.add(key)
        try:
            entry.load()
        except Exception as exc:  # an installed package that is broken: say which
            why = f"failed ({_distribution(entry)}): {type(exc).__name__}: {exc}"
            self._failures[key] = why
            if strict:
                raise self.error(self._failed(key, self._failures[key])) from exc

    def _failed(self, key: str, why: str) -> str:
        return f"{self.kind} entry point {key} under {self.group!r} {why}"

    @staticmethod
    def _key(entry: metadata.EntryPoint) -> str:
        return f"{entry.name} = {entry.value}"


def _distribution(entry: Any) -> str:
    """`distribution NAME VERSION` of an entry point, where its metadata says."""
    dist = getattr(entry, "dist", None)
    if dist is None:
        return "distribution unknown"
    return f"distribution {dist.metadata['Name']} {dist.version}"
