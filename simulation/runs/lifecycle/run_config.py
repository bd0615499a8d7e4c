"""`RunConfig`: everything that configures one run, built once and passed whole.

The command line (`personasim run`, `sweep`, `counterfactual`, `rescore`, `retry`), the Python
API (`run_scenario`), a sweep's cells, the dry run and each decision worker read the same frozen
object, so an option is named, defaulted and checked in one place. What is not configuration
(a backend object, a console, a sweep's shared limiters, a rescore's source run) stays an
argument of `arun_scenario`. A config holds no secret: keys come from the environment.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from personasim.simulation.llm.apportion import apportion
from personasim.simulation.llm.backend_kind import ModelSpecError
from personasim.simulation.llm.chat import RESPONSE_FORMATS, Backend, ResponseFormat
from personasim.simulation.llm.client import RetryPolicy
from personasim.simulation.llm.endpoints_file import EndpointsError, EndpointsFile, load_endpoints
from personasim.simulation.llm.model_spec import (
    check_pools,
    check_run_options,
    make_backend,
    parse_model_spec,
    pool_name,
    unused_run_options,
)
from personasim.simulation.llm.roles import SCRIPTED
from personasim.simulation.runs.lifecycle.run_dir import RunError
from personasim.simulation.runs.lifecycle.validity import ValidityLimits

__all__ = ["LIMIT_OPTIONS", "ClientLimits", "RunConfig", "RunSettings", "read_endpoints"]

LIMIT_OPTIONS = ("concurrency", "requests_per_minute", "retry")
"""The flat options (`run_scenario(concurrency=4)`) that are fields of `RunConfig.limits`."""


@dataclass(frozen=True)
class RunSettings:
    """How decisions are asked and judged; they change answers or validity, so they are in the
    manifest and the log, and a resumed run must repeat them."""

    response_format: ResponseFormat = "text"
    max_tokens: int | None = None
    validity: ValidityLimits = field(default_factory=ValidityLimits)

    def __post_init__(self) -> None:
        if self.response_format not in RESPONSE_FORMATS:
            raise RunError(
                f"--response-format {self.response_format!r}: use one of "
                f"{', '.join(RESPONSE_FORMATS)}"
            )
        if self.max_tokens is not None and self.max_tokens < 1:
            raise RunError("--max-tokens must be at least 1")

    def to_json(self) -> dict[str, Any]:
        return {
            "response_format": self.response_format,
            "max_tokens": self.max_tokens,
            "validity": self.validity.to_json(),
        }


@dataclass(frozen=True)
class ClientLimits:
    """How the run talks to its model; recorded in the manifest, never part of a cache key."""

    concurrency: int = 16
    requests_per_minute: float | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def __post_init__(self) -> None:
        """Checked before the run directory exists, so a bad value leaves nothing behind."""
        rpm = self.requests_per_minute
        if self.concurrency < 1:
            raise RunError(f"concurrency must be at least 1, got {self.concurrency}")
        if rpm is not None and not (math.isfinite(rpm) and rpm > 0):
            raise RunError(f"requests_per_minute must be a number greater than 0, got {rpm}")

    def to_json(self) -> dict[str, Any]:
        """The manifest's `client` record."""
        return {
            "concurrency": self.concurrency,
            "requests_per_minute": self.requests_per_minute,
            "timeout_s": self.retry.timeout,
            "max_attempts": self.retry.max_attempts,
            "hedge": self.retry.hedge.to_json(),
        }

    def share(self, worker: tuple[int, int] | None) -> tuple[int, float | None]:
        """Requests in flight and per minute of worker `(index, count)`: its parts of the
        run's, which add up to them over all workers; the run's own outside a worker."""
        rpm = self.requests_per_minute
        if worker is None:
            return self.concurrency, rpm
        index, count = worker
        return apportion(self.concurrency, count)[index], rpm / count if rpm else rpm


@dataclass(frozen=True)
class RunConfig:
    """One run's options, checked when built (a bad value raises `RunError` before anything
    is written). `RunConfig.from_options` takes the flat keyword names `run_scenario` has
    always taken (`concurrency=`, `requests_per_minute=`, `retry=`, ...).

    `model`: the spec of every role not bound in `roles` (`{"judge": ("openai:gpt-4o",)}`).
    `base_url`: the endpoint of specs without their own URL (several: one pool of replicas).
    `endpoints`: the endpoints file (or its path, read once, here) whose pools specs name as
    `openai:NAME@pool:POOL`. `out`: the run directory (default runs/SCENARIO-TIME). `resume`,
    with `retry_failed` (ask again the units a failed call lost) and `allow_endpoint_change`
    (the same model at a new URL). `use_cache`, `cache_dir`: the response cache. `limits`:
    requests in flight, per minute, retries. `settings`: response format, token cap, validity
    limits. `prompts`: an edited prompt pack. `workers`: processes that run the fresh decisions
    (1: this one alone). `progress`: show a progress bar.
    """

    model: str = SCRIPTED
    base_url: str | Sequence[str] | None = None
    endpoints: EndpointsFile | None = None
    seed: int = 0
    out: str | Path | None = None
    resume: bool = False
    retry_failed: bool = False
    allow_endpoint_change: bool = False
    use_cache: bool = True
    cache_dir: str | Path | None = None
    limits: ClientLimits = field(default_factory=ClientLimits)
    settings: RunSettings = field(default_factory=RunSettings)
    roles: Mapping[str, Sequence[str]] = field(default_factory=dict)
    prompts: str | Path | None = None
    workers: int = 1
    progress: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.endpoints, str | Path):  # read once, here
            object.__setattr__(self, "endpoints", read_endpoints(self.endpoints))
        if self.seed < 0:
            raise RunError(f"seed must be an integer of at least 0, got {self.seed}")
        if self.retry_failed and not self.resume:
            raise RunError("--retry-failed asks a run's failed units again: it needs --resume")
        if self.workers < 1:
            raise RunError(f"--workers must be at least 1, got {self.workers}")

    @classmethod
    def from_options(cls, base: RunConfig | None = None, /, **options: Any) -> RunConfig:
        """`base` (else the defaults) with `options` in place of its values: fields by name,
        and the flat names of `limits` (`concurrency`, `requests_per_minute`, `retry`). None
        for `settings`, `roles`, `limits` or `retry` means the default."""
        config = base if base is not None else cls()
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - names - set(LIMIT_OPTIONS))
        if unknown:
            raise TypeError(f"unknown run option(s): {', '.join(unknown)}")
        limits = {name: options.pop(name) for name in LIMIT_OPTIONS if name in options}
        if "retry" in limits and limits["retry"] is None:
            limits["retry"] = RetryPolicy()
        if limits:
            options["limits"] = replace(options.get("limits") or config.limits, **limits)
        defaults = {"settings": RunSettings, "roles": dict, "limits": ClientLimits}
        for name, default in defaults.items():
            if name in options and options[name] is None:
                options[name] = default()
        return replace(config, **options)

    def specs(self) -> list[str]:
        """The model specs the run names: `model` and every role's."""
        return [self.model, *(spec for specs in self.roles.values() for spec in specs)]

    def endpoint_options(self) -> dict[str, Any]:
        """The run options only some backend kinds use, None where not given."""
        fmt = self.settings.response_format
        return {"base_url": self.base_url, "response_format": None if fmt == "text" else fmt}

    def check_models(self, specs: Sequence[str]) -> None:
        """`--base-url`, `--endpoints` or `--response-format` that none of `specs` would use,
        or a pool no endpoints file defines: bad input."""
        try:
            check_run_options(specs, self.endpoint_options())
            check_pools(specs, self.endpoints)
        except ModelSpecError as exc:
            raise RunError(str(exc)) from None

    def for_its_models(self) -> RunConfig:
        """This config without the endpoint options none of its models (`specs`) uses: a
        sweep's cell, where `--base-url` and `--endpoints` do not reach a scripted model, nor a
        response format a model that has none (the sweep checked that some cell uses each)."""
        specs = self.specs()
        unused = unused_run_options(specs, self.endpoint_options())
        changes: dict[str, Any] = {}
        if "base_url" in unused:
            changes["base_url"] = None
        if not any(pool_name(parse_model_spec(spec)) for spec in specs):
            changes["endpoints"] = None  # no model of these names a pool
        if "response_format" in unused:
            changes["settings"] = replace(self.settings, response_format="text")
        return replace(self, **changes)

    def backend(self, spec: str) -> Backend:
        """The backend `spec` names with this run's URL, seed and pools; a spec that cannot be
        used is bad input (`RunError`)."""
        try:
            return make_backend(spec, self.base_url, self.seed, self.endpoints)
        except ModelSpecError as exc:
            raise RunError(str(exc)) from None


def read_endpoints(endpoints: EndpointsFile | str | Path | None) -> EndpointsFile | None:
    """The endpoints file, read when given as a path (a bad file: `RunError`)."""
    if endpoints is None or isinstance(endpoints, EndpointsFile):
        return endpoints
    try:
        return load_endpoints(endpoints)
    except EndpointsError as exc:
        raise RunError(str(exc)) from None
