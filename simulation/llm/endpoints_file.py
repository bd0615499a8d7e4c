"""Endpoint pools: the `--endpoints FILE` a run reads, and the pool of repeated `--base-url`s.

A pool is one model served by several replicas (vLLM or llama.cpp servers, a hosted API and a
local fallback). The file (TOML or YAML) names pools; each endpoint has its URL, the NAME of the
environment variable that holds its key (never the key: the file is recorded in manifests), and
optionally its own concurrency, requests per minute and routing weight:

    [pools.gpus]
    [[pools.gpus.endpoints]]
    url = "http://gpu1:8000/v1"
    concurrency = 32

A model spec uses a pool as `openai:NAME@pool:gpus` (simulation/llm/endpoint_pool.py routes its
requests). The file is validated with pydantic; an error names the file, the line and the field,
and never echoes a value (a key pasted by mistake stays out of the terminal and the logs).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from personasim.simulation.llm.masking import find_secrets, is_secret_name, mask_secrets
from personasim.simulation.llm.request_bounds import (
    MAX_CONCURRENCY,
    MAX_COOLDOWN_S,
    MAX_ENDPOINT_FAILURES,
    MAX_ENDPOINT_WEIGHT,
    MAX_RPM,
)

__all__ = [
    "BASE_URL_POOL",
    "DEFAULT_KEY_ENV",
    "POOL_PREFIX",
    "EndpointConfig",
    "EndpointsError",
    "EndpointsFile",
    "PoolConfig",
    "base_url_pool",
    "load_endpoints",
]

POOL_PREFIX = "pool:"
"""`openai:NAME@pool:POOL`: the spec's endpoint is a pool of the endpoints file."""
BASE_URL_POOL = "base-url"
"""The name of the pool that `--base-url` given more than once makes (part of request keys)."""
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_POOL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class EndpointsError(ValueError):
    """An endpoints file (or a set of `--base-url`s) that cannot be used; the message names the
    file, line and field."""


class EndpointConfig(BaseModel):
    """One replica: where it is, where its key comes from, and its own limits (finite numbers,
    at most the run's own maxima: simulation/llm/request_bounds.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    url: str
    key_env: str = DEFAULT_KEY_ENV
    """The environment variable that holds the key; a local server needs none."""
    concurrency: int | None = Field(default=None, ge=1, le=MAX_CONCURRENCY)
    """Requests in flight at most; unset: an equal share of the run's `--concurrency`."""
    rpm: float | None = Field(default=None, gt=0, le=MAX_RPM)
    """Requests per minute at most, evenly paced; unset: no limit of its own."""
    weight: float = Field(default=1.0, gt=0, le=MAX_ENDPOINT_WEIGHT)
    """Preference while it is not full: weight 2 gets about twice the requests of weight 1."""

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http:// or https:// URL (e.g. http://gpu1:8000/v1)")
        if found := find_secrets(url):
            raise ValueError(
                f"{mask_secrets(url)} holds a key ({', '.join(found)}); the file is recorded in "
                "manifests, so put the key in an environment variable and name it with key_env"
            )
        return url

    @field_validator("key_env")
    @classmethod
    def _env_name(cls, name: str) -> str:
        if not _ENV_NAME.fullmatch(name):
            raise ValueError(
                "must be the NAME of an environment variable (letters, digits and _) that "
                "holds the key, never the key itself"
            )
        return name

    @property
    def names_key(self) -> bool:
        """Whether the file named the key variable (then it must be set)."""
        return "key_env" in self.model_fields_set


class PoolConfig(BaseModel):
    """One model's replicas, and when a failing replica is set aside."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    endpoints: tuple[EndpointConfig, ...] = Field(min_length=1)
    max_failures: int = Field(default=3, ge=1, le=MAX_ENDPOINT_FAILURES)
    """Failures in a row (5xx, timeouts, dropped connections) that put an endpoint on cooldown;
    a refused connection does at once."""
    cooldown_s: float = Field(default=10.0, gt=0, le=MAX_COOLDOWN_S)
    """Seconds an endpoint is left alone before one request probes it again."""

    @model_validator(mode="after")
    def _distinct_urls(self) -> PoolConfig:
        urls = [endpoint.url.rstrip("/") for endpoint in self.endpoints]
        if len(set(urls)) != len(urls):
            raise ValueError("an endpoint's url appears twice")
        return self


class EndpointsFile(BaseModel):
    """The pools of an endpoints file; `source` is where it was read from (for messages)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pools: dict[str, PoolConfig] = Field(min_length=1)
    source: str = Field(default="", exclude=True)

    def pool(self, name: str) -> PoolConfig:
        if name not in self.pools:
            where = f" in {self.source}" if self.source else ""
            raise EndpointsError(
                f"no pool {name!r}{where}; its pools are {', '.join(sorted(self.pools))}"
            )
        return self.pools[name]


def base_url_pool(urls: Sequence[str]) -> PoolConfig:
    """The pool of `--base-url` given more than once: its URLs, each with the run's key."""
    seen: set[str] = set()
    for url in urls:
        if url.rstrip("/") in seen:
            raise EndpointsError(f"--base-url {mask_secrets(url)} is given twice")
        seen.add(url.rstrip("/"))
    try:
        return PoolConfig(endpoints=tuple(EndpointConfig(url=url) for url in urls))
    except ValidationError as exc:
        error = exc.errors()[0]
        index = error["loc"][1] if len(error["loc"]) > 1 else 0
        shown = mask_secrets(urls[int(index)])
        raise EndpointsError(f"--base-url {shown}: {_message(error)}") from None


def load_endpoints(path: str | Path) -> EndpointsFile:
    """Read and check an endpoints file (`.toml`, `.yaml` or `.yml`)."""
    path = Path(path)
    if path.suffix.lower() not in (".toml", ".yaml", ".yml"):
        raise EndpointsError(f"--endpoints {path}: use a .toml, .yaml or .yml file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise EndpointsError(f"--endpoints {path}: cannot read it ({reason})") from None
    data, lines = _parse(path, text)
    if not isinstance(data, Mapping):
        raise EndpointsError(f"{path}: expected a table with [pools.NAME] entries")
    try:
        loaded = EndpointsFile.model_validate({**data, "source": str(path)})
    except ValidationError as exc:
        raise EndpointsError(_describe(path, exc, lines)) from None
    for name in loaded.pools:
        if not _POOL_NAME.fullmatch(name):
            line = _line_of(lines, ("pools", name))
            raise EndpointsError(
                f"{path}{line}: pools.{name}: a pool's name is letters, digits, '.', '_' and "
                "'-', starting with a letter or digit"
            )
    return loaded


def _parse(path: Path, text: str) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """The file's data and the line of each key (1-based), by its path of keys and indexes."""
    if path.suffix.lower() == ".toml":
        try:
            return tomllib.loads(text), _toml_lines(text)
        except tomllib.TOMLDecodeError as exc:
            raise EndpointsError(f"{path}: not valid TOML ({exc})") from None
        except RecursionError:  # [[[[...]]]]
            raise EndpointsError(f"{path}: not valid TOML (nested too deeply)") from None
    try:
        return yaml.safe_load(text), _yaml_lines(yaml.compose(text, Loader=yaml.SafeLoader))
    except RecursionError:
        raise EndpointsError(f"{path}: not valid YAML (nested too deeply)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "cannot be read"
        raise EndpointsError(f"{path}{where}: not valid YAML ({problem})") from None


def _describe(path: Path, exc: ValidationError, lines: dict[tuple[Any, ...], int]) -> str:
    """One line per problem: `FILE:LINE: pools.gpus.endpoints[1].rpm: what is wrong`."""
    problems = []
    errors = exc.errors()
    for error in errors:
        loc = tuple(error["loc"])
        if error["type"] == "too_short" and any(
            len(other["loc"]) > len(loc) and tuple(other["loc"][: len(loc)]) == loc
            for other in errors
        ):
            continue  # a list made short only by an item that failed: that item says why
        where = f"{path}{_line_of(lines, loc)}: {_field(loc) or '(top level)'}"
        problems.append(f"{where}: {_message(error)}")
    return "\n  ".join(problems)


def _message(error: Mapping[str, Any]) -> str:
    """pydantic's message without the input (a value may be a secret), secrets explained."""
    field = str(error["loc"][-1]) if error["loc"] else ""
    if error["type"] == "extra_forbidden" and is_secret_name(field):
        return (
            "keys are never written in the endpoints file (it is recorded in manifests): put "
            "the key in an environment variable and name it with key_env"
        )
    if error["type"] == "extra_forbidden":
        return "unknown field (an endpoint takes url, key_env, concurrency, rpm, weight)"
    return str(error["msg"]).removeprefix("Value error, ")


def _field(loc: Sequence[Any]) -> str:
    """("pools", "gpus", "endpoints", 1, "rpm") → pools.gpus.endpoints[1].rpm"""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def _line_of(lines: Mapping[tuple[Any, ...], int], loc: Sequence[Any]) -> str:
    """`:LINE` of the field, else of the nearest enclosing table that has one."""
    for end in range(len(loc), 0, -1):
        if (line := lines.get(tuple(loc[:end]))) is not None:
            return f":{line}"
    return ""


def _yaml_lines(node: Any, path: tuple[Any, ...] = ()) -> dict[tuple[Any, ...], int]:
    found: dict[tuple[Any, ...], int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            inner = (*path, key.value)
            found[inner] = key.start_mark.line + 1
            found.update(_yaml_lines(value, inner))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            found[(*path, index)] = item.start_mark.line + 1
            found.update(_yaml_lines(item, (*path, index)))
    return found


_TOML_HEADER = re.compile(r"^\s*(\[\[?)\s*(.+?)\s*\]\]?\s*(#.*)?$")
_TOML_KEY = re.compile(r"^\s*([A-Za-z0-9_\-\"'.\s]+?)\s*=")
_TOML_PART = re.compile(r"\"([^\"]*)\"|'([^']*)'|([^.\s\"']+)")


def _toml_keys(text: str) -> tuple[str, ...]:
    return tuple(a or b or c for a, b, c in _TOML_PART.findall(text))


def _toml_lines(text: str) -> dict[tuple[Any, ...], int]:
    """Lines of `[table]` and `[[array]]` headers and `key =` lines (tomllib gives none)."""
    found: dict[tuple[Any, ...], int] = {}
    counts: dict[tuple[str, ...], int] = {}
    table: tuple[Any, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        if header := _TOML_HEADER.match(line):
            keys = _toml_keys(header.group(2))
            if header.group(1) == "[[":
                counts[keys] = counts.get(keys, -1) + 1
                table = (*keys, counts[keys])
            else:
                table = keys
            for end in range(1, len(table) + 1):  # and every table it is inside
                found.setdefault(table[:end], number)
        elif key := _TOML_KEY.match(line):
            found.setdefault((*table, *_toml_keys(key.group(1))), number)
    return found
