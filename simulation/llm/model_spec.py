"""Model specs: the one reader of `--model`, `--role`, `run_scenario(model=...)` and sweeps' models.

A spec is `KIND[:REST]`. The kind names a backend kind; the kind reads the rest. Built in:

- `scripted[:drift=D,seed=S]` — the scripted behaviour model (not a language model);
- `openai:NAME[@BASE_URL]` — an OpenAI-compatible endpoint (key from `OPENAI_API_KEY`);
  `openai:NAME@pool:POOL` — the replicas of a pool of the run's `--endpoints` file, and
  `openai:NAME` with `--base-url` given more than once — those URLs as one pool
  (simulation/llm/endpoint_pool.py);
- `langchain:MODULE:CLASS[?NAME=VALUE&...]` — any LangChain chat model class, built with those
  keyword options (each value percent-decoded, then read as JSON when it parses, else as text).

Backend kinds are an extension point in the project's one style: `@backend_kind("name")` on a
`BackendKind` subclass registers it, and an outside package adds one without editing ours by
naming the module that registers it under the entry-point group `personasim.backends` (entry
point name = the kind). Entry points are listed from package metadata and loaded only when a spec
asks for that kind, so nothing heavy is imported to read a command line. The kind's base class,
its decorator and the registry of kinds live in `backend_kind.py`; the built-in kinds in
`backend_kinds.py`, imported here.

A kind declares which run options it uses (`accepts`: `base_url`, `response_format`), and
`check_run_options` refuses a run whose option no bound model would use (`--base-url` with the
scripted model), instead of ignoring it silently.

A spec is recorded in manifests and events, so it never holds a secret: a URL's user info, an
option or query parameter named like one (`api_key`, `token`, ...) and key-like values are
refused, shown masked (simulation/llm/masking.py); keys come from environment variables.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import personasim.simulation.llm.backend_kinds  # noqa: F401 - registers the built-in kinds
from personasim.simulation.llm.backend_kind import (
    ENTRY_POINT_GROUP,
    KINDS,
    RUN_OPTIONS,
    BackendKind,
    ModelSpec,
    ModelSpecError,
    check_no_secret,
    is_kind_name,
    shown_spec,
)
from personasim.simulation.llm.masking import mask_secrets

if TYPE_CHECKING:
    from personasim.simulation.llm.chat import Backend
    from personasim.simulation.llm.endpoints_file import EndpointsFile, PoolConfig


__all__ = [
    "backend_kinds",
    "check_base_urls",
    "check_pools",
    "check_run_options",
    "make_backend",
    "model_name",
    "parse_model_spec",
    "pool_name",
    "unused_run_options",
]


def backend_kinds() -> dict[str, str]:
    """Every kind a spec may name, built in or installed, and how its specs read; installed
    kinds are listed from package metadata, not imported."""
    listed = {name: kind.usage for name, kind in KINDS.registered().items()}
    for name, module in KINDS.entry_points().items():
        listed.setdefault(name, f"{name}:... (from {module})")
    return listed


def model_name(spec: str) -> str:
    """The model's name in a spec, without kind or endpoint (`openai:gpt-4o@URL` → `gpt-4o`); a
    spec that names none, or cannot be read, as written."""
    try:
        parsed = parse_model_spec(spec)
    except ModelSpecError:
        return mask_secrets(spec)
    return parsed.name or spec


def parse_model_spec(text: str | ModelSpec) -> ModelSpec:
    """The spec `text` read by its kind; `ModelSpecError` names the spec and what to write."""
    if isinstance(text, ModelSpec):
        return text
    text = str(text).strip()
    check_no_secret(text, f"model {shown_spec(text)}")
    kind, colon, rest = text.partition(":")
    found = _kind(kind) if is_kind_name(kind) else None
    if found is None:
        known = "; ".join(f"{usage}" for usage in backend_kinds().values())
        raise ModelSpecError(
            f"unknown model {shown_spec(text)}: a model is KIND:..., one of: {known} (more kinds "
            f"come from packages under the entry-point group {ENTRY_POINT_GROUP!r})"
        )
    return found.parse(text, rest if colon else None)


def check_base_urls(base_url: str | Sequence[str] | None) -> None:
    """Refuse a `--base-url` (or `OPENAI_BASE_URL`) that holds a key."""
    for url in [base_url] if isinstance(base_url, str) else list(base_url or []):
        check_no_secret(url, f"--base-url {mask_secrets(url)}")


def make_backend(
    spec: str | ModelSpec,
    base_url: str | Sequence[str] | None = None,
    seed: int = 0,
    endpoints: EndpointsFile | None = None,
) -> Backend:
    """The backend a spec names. `base_url` serves specs without their own URL (several URLs:
    one pool of replicas); `endpoints` holds the pools `NAME@pool:POOL` specs name; `seed` is
    the run's (a scripted backend takes it unless its spec names one)."""
    parsed = parse_model_spec(spec)
    check_base_urls(base_url)
    kind = _kind(parsed.kind)
    if kind is None:
        raise ModelSpecError(f"model {shown_spec(parsed.text)}: no backend kind {parsed.kind!r}")
    if (pool := _pool(kind, parsed, base_url, endpoints)) is not None:
        return _pooled(kind, parsed, *pool, seed)
    if base_url is not None and not isinstance(base_url, str):
        base_url = base_url[0] if base_url else None  # one URL: no pool
    return kind.build(parsed, base_url=base_url, seed=seed)


def check_pools(specs: Iterable[str | ModelSpec], endpoints: EndpointsFile | None) -> None:
    """`ModelSpecError` for a spec naming a pool that `endpoints` lacks, and for an endpoints
    file that no spec uses (it would be ignored silently)."""
    from personasim.simulation.llm.endpoints_file import POOL_PREFIX, EndpointsError

    named = [(parse_model_spec(s), pool_name(parse_model_spec(s))) for s in specs]
    for spec, pool in named:
        if pool is None:
            continue
        if endpoints is None:
            raise ModelSpecError(
                f"model {shown_spec(spec.text)} names pool {pool!r}: pass --endpoints FILE "
                "that defines it"
            )
        try:
            endpoints.pool(pool)
        except EndpointsError as exc:
            raise ModelSpecError(f"model {shown_spec(spec.text)}: {exc}") from None
    if endpoints is not None and all(pool is None for _, pool in named):
        source = endpoints.source or "the endpoints file"
        raise ModelSpecError(
            f"--endpoints {source}: no model of the run uses one of its pools (name one as "
            f"openai:MODEL@{POOL_PREFIX}{sorted(endpoints.pools)[0]})"
        )


def pool_name(spec: ModelSpec) -> str | None:
    """The pool a spec names (`openai:NAME@pool:POOL` → POOL), else None."""
    from personasim.simulation.llm.endpoints_file import POOL_PREFIX

    if spec.url is not None and spec.url.startswith(POOL_PREFIX):
        return spec.url.removeprefix(POOL_PREFIX)
    return None


def _pool(
    kind: BackendKind,
    spec: ModelSpec,
    base_url: str | Sequence[str] | None,
    endpoints: EndpointsFile | None,
) -> tuple[str, PoolConfig] | None:
    """(pool name, its endpoints) when the spec is served by a pool, else None."""
    from personasim.simulation.llm.endpoints_file import (
        BASE_URL_POOL,
        EndpointsError,
        base_url_pool,
    )

    try:
        if (name := pool_name(spec)) is not None:
            if endpoints is None:
                check_pools([spec], None)
            return name, endpoints.pool(name)  # type: ignore[union-attr]
        urls = [] if base_url is None or isinstance(base_url, str) else list(base_url)
        if len(urls) > 1 and kind.uses("base_url", spec):
            return BASE_URL_POOL, base_url_pool(urls)
    except EndpointsError as exc:
        raise ModelSpecError(f"model {shown_spec(spec.text)}: {exc}") from None
    return None


def _pooled(
    kind: BackendKind, spec: ModelSpec, name: str, config: PoolConfig, seed: int
) -> Backend:
    """The pool's backend: one replica backend per endpoint, each with its own key variable."""
    from personasim.simulation.llm.endpoint_pool import EndpointPool
    from personasim.simulation.llm.openai_backend import public_url

    for endpoint in config.endpoints:
        if endpoint.names_key and not os.environ.get(endpoint.key_env):
            raise ModelSpecError(
                f"model {shown_spec(spec.text)}: endpoint {public_url(endpoint.url)} of pool "
                f"{name!r} takes its key from {endpoint.key_env}, which is not set"
            )
    members = [kind.build_endpoint(spec, e.url, e.key_env, seed) for e in config.endpoints]
    urls = [public_url(e.url) for e in config.endpoints]
    return EndpointPool(name, spec.name, config, members, kind=spec.kind, urls=urls)


def unused_run_options(specs: Iterable[str | ModelSpec], options: Mapping[str, Any]) -> list[str]:
    """The run options given (not None) that no one of `specs` uses."""
    parsed = [parse_model_spec(spec) for spec in specs]
    return [
        name
        for name, value in options.items()
        if value is not None
        and not any((kind := _kind(p.kind)) is not None and kind.uses(name, p) for p in parsed)
    ]


def check_run_options(specs: Iterable[str | ModelSpec], options: Mapping[str, Any]) -> None:
    """`ModelSpecError` naming the option and the models when a given run option (`base_url`,
    `response_format`; None = not given) would reach none of the run's models."""
    specs = list(dict.fromkeys(str(spec) for spec in specs))
    unused = unused_run_options(specs, options)
    if not unused:
        return
    name = unused[0]
    users = [kind for kind, found in _users(name).items() if found]
    models = ", ".join(shown_spec(spec) for spec in specs)
    what = "model" if len(specs) == 1 else "models"
    hint = " without their own @URL" if name == "base_url" else ""
    raise ModelSpecError(
        f"{RUN_OPTIONS[name]} {mask_secrets(str(options[name]))} is used only by "
        f"{' or '.join(users)} models"
        f"{hint}; the run's {what} {models} would ignore it (pass a model that uses it, e.g. "
        f"--model openai:NAME, or leave {RUN_OPTIONS[name]} out)"
    )


def _users(option: str) -> dict[str, bool]:
    """Each registered kind (as `kind:`) and whether it accepts `option`."""
    return {f"{name}:": option in kind.accepts for name, kind in KINDS.registered().items()}


def _kind(name: str) -> BackendKind | None:
    """The registered kind, importing an entry point's module on first use; one that fails
    to load, or registers no such kind, is an error naming it."""
    found = KINDS.get(name)
    for entry, why in KINDS.failures(name).items() if found is None else ():
        raise ModelSpecError(
            f"backend kind {name!r}: entry point {entry} under {ENTRY_POINT_GROUP!r} {why} "
            f"(its module registers the kind with @backend_kind({name!r}))"
        )
    return found
