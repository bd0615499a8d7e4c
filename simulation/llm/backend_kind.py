"""Backend kinds: a model spec's kind (`scripted`, `openai`, `langchain`, or an installed one),
how its specs read and how its backend is built, and the registry of kinds by name.

`@backend_kind("name")` on a `BackendKind` subclass registers it; an outside package names the
module that registers it under the entry-point group `personasim.backends` (entry point name =
the kind), imported only when a spec names that kind. The built-in kinds (backend_kinds.py)
import this module, and `model_spec`, the reader of specs, imports both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from personasim.simulation.base.registry import Registry
from personasim.simulation.llm.masking import KEY_HINT, find_secrets, is_secret_name, mask_secrets

if TYPE_CHECKING:
    from personasim.simulation.llm.chat import Backend

__all__ = [
    "ENTRY_POINT_GROUP",
    "KINDS",
    "RUN_OPTIONS",
    "BackendKind",
    "ModelSpec",
    "ModelSpecError",
    "backend_kind",
    "check_no_secret",
    "is_kind_name",
    "shown_spec",
]

ENTRY_POINT_GROUP = "personasim.backends"
_KIND = re.compile(r"[a-z][a-z0-9_-]*")
RUN_OPTIONS = {"base_url": "--base-url", "response_format": "--response-format"}
"""Run options only some backend kinds use (option → its flag); `BackendKind.accepts` says
which."""


class ModelSpecError(ValueError):
    """A model spec that cannot be read or built; the message names the spec."""


@dataclass(frozen=True)
class ModelSpec:
    """A parsed spec. `text` is the spec as given (what manifests record); `options` are the
    kind's keyword options, in the order given."""

    text: str
    kind: str
    name: str = ""
    url: str | None = None
    options: tuple[tuple[str, Any], ...] = field(default=())

    def __str__(self) -> str:
        return self.text

    @property
    def option_dict(self) -> dict[str, Any]:
        return dict(self.options)


class BackendKind:
    """A kind of backend: how its specs read (`parse`) and how one is built (`build`).

    The default `parse` reads `KIND:NAME[@URL][?NAME=VALUE&...]`; override it for another form.
    """

    kind: str = ""
    usage: str = ""
    """How a spec of this kind reads, shown in errors (e.g. `openai:MODEL_NAME[@BASE_URL]`)."""
    takes_options: bool = True
    """Whether `?NAME=VALUE&...` is read as options (else it is part of the name or URL)."""
    accepts: frozenset[str] = frozenset(RUN_OPTIONS)
    """The `RUN_OPTIONS` this kind uses. An installed kind receives `base_url` in `build` and the
    response format in each request, so it is taken to use both unless it narrows this."""

    def uses(self, option: str, spec: ModelSpec) -> bool:
        """Whether a run option reaches this spec's backend (override for per-spec cases)."""
        return option in self.accepts

    def parse(self, text: str, rest: str | None) -> ModelSpec:
        if not rest:
            raise ModelSpecError(
                f"model {shown_spec(text)}: {self.kind} needs a name; use {self.usage}"
            )
        before, _, query = rest.partition("?") if self.takes_options else (rest, "", "")
        name, at, url = before.partition("@")
        if not name or re.search(r"\s", before) or (at and not url):
            raise ModelSpecError(f"model {shown_spec(text)}: cannot read it; use {self.usage}")
        return ModelSpec(text, self.kind, name, url or None, _query_options(text, query))

    def build(self, spec: ModelSpec, *, base_url: str | None, seed: int) -> Backend:
        raise NotImplementedError

    def build_endpoint(self, spec: ModelSpec, url: str, key_env: str, seed: int) -> Backend:
        """The backend of one replica of a pool (`NAME@pool:POOL`, or `--base-url` repeated):
        at `url`, its key from the variable `key_env`. Kinds that cannot be pooled refuse."""
        raise ModelSpecError(
            f"model {shown_spec(spec.text)}: {self.kind} models cannot use an endpoint pool"
        )


KINDS: Registry[BackendKind] = Registry(
    "backend kind", ENTRY_POINT_GROUP, whole_group=False, error=ModelSpecError
)
"""Every backend kind by name (one instance each); an entry point is named after its kind, so
a missing kind loads that entry point only."""
K = TypeVar("K", bound=type[BackendKind])


def backend_kind(name: str) -> Callable[[K], K]:
    """Class decorator that makes `name:...` specs build this kind of backend."""
    if not _KIND.fullmatch(name):
        raise ValueError(f"backend kind {name!r}: use lower-case letters, digits, - and _")

    def register(cls: K) -> K:
        instance = cls()
        instance.kind = name
        KINDS.register(name, instance)
        return cls

    return register


def is_kind_name(text: str) -> bool:
    """Whether `text` could name a kind (lower-case letters, digits, - and _)."""
    return _KIND.fullmatch(text) is not None


def shown_spec(text: str) -> str:
    """A spec or URL as messages show it: quoted, any secret masked."""
    return repr(mask_secrets(text))


def check_no_secret(text: str, what: str) -> None:
    """`ModelSpecError` when `text` (a spec, a URL) holds a key: it would be recorded and
    shown. `what` names it in the message (masked by the caller)."""
    if found := find_secrets(text):
        raise ModelSpecError(
            f"{what} holds a key ({', '.join(found)}): specs and URLs are recorded in the run's "
            f"manifest and events, so remove it and {KEY_HINT}"
        )


def _query_options(text: str, query: str) -> tuple[tuple[str, Any], ...]:
    """`model=x&temperature=0` → (("model", "x"), ("temperature", 0)); JSON values when they
    parse (numbers, true, lists), else text."""
    options: dict[str, Any] = {}
    for item in query.split("&") if query else []:
        name, eq, value = item.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ModelSpecError(
                f"model {shown_spec(text)}: option {shown_spec(item)}: use NAME=VALUE"
            )
        if is_secret_name(name):
            raise ModelSpecError(
                f"model {shown_spec(text)}: option {name!r} looks like a secret; a spec is "
                "recorded in the run's manifest, so keys come from environment variables the "
                "class reads (e.g. OPENAI_API_KEY), never from the spec"
            )
        if name in options:
            raise ModelSpecError(f"model {shown_spec(text)}: {name} is given twice")
        options[name] = _value(value)
    return tuple(options.items())


def _value(text: str) -> Any:
    """A percent-decoded value (`%26` for `&`, `%2C` for a comma in a list of specs), read as
    JSON when it parses."""
    text = unquote(text)
    try:
        return json.loads(text)
    except ValueError:
        return text
