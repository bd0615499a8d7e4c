"""Resuming a run from its manifest alone (`personasim retry RUN`).

`run --resume` takes the command that started the run again, and resume refuses any field of
its fingerprint that differs (fingerprint.py). Every one of those fields is in the manifest, so
this module reads them back into the run's `RunConfig`; the resume itself, and each of its
checks (fingerprint, scenario file, log, writer lock), stays in runner.py and resume.py. The
manifest holds no secret: keys come from the environment, as for `run`.

What the manifest does not hold is asked of the user: an endpoints file (only its pools' names
are recorded) and the `--base-url` of a role's model when the run's `--model` did not use it.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from personasim.simulation.core.scenario import Scenario, ScenarioError, get_scenario
from personasim.simulation.llm.backend_kind import ModelSpecError
from personasim.simulation.llm.client import RetryPolicy
from personasim.simulation.llm.endpoints_file import BASE_URL_POOL, EndpointsFile
from personasim.simulation.llm.hedging import HedgePolicy
from personasim.simulation.llm.model_spec import (
    check_base_urls,
    make_backend,
    parse_model_spec,
    pool_name,
    unused_run_options,
)
from personasim.simulation.runs.lifecycle.resume import has_lost_calls, log_is_complete
from personasim.simulation.runs.lifecycle.run_config import RunConfig, RunSettings, read_endpoints
from personasim.simulation.runs.lifecycle.run_dir import MANIFEST_FILE, RunError, read_manifest
from personasim.simulation.runs.lifecycle.scenario_file import scenario_for_run
from personasim.simulation.runs.lifecycle.validity import ValidityLimits

__all__ = ["RetryPlan", "nothing_to_retry", "plan_retry", "read_run_manifest"]

DEFAULT_OPENAI_URL = "https://api.openai.com/v1"
"""Recorded when a run named no URL: passed on as no `--base-url`, so a missing key is the
backend's own clear error rather than a placeholder key sent to OpenAI."""

_REQUIRED = ("scenario", "params", "seed", "model", "roles", "response_format")


@dataclass(frozen=True)
class RetryPlan:
    """What resuming `run_dir` takes, read from its manifest (`run_config`)."""

    run_dir: Path
    scenario: type[Scenario]
    params: dict[str, Any]
    model: str
    roles: dict[str, tuple[str, ...]]
    seed: int
    settings: RunSettings
    base_url: str | list[str] | None
    endpoints: EndpointsFile | None
    prompts: str | None
    client: dict[str, Any]
    """The client limits the run recorded (`ClientLimits.to_json()` and `workers`)."""

    def run_config(
        self,
        *,
        concurrency: int | None = None,
        requests_per_minute: float | None = None,
        timeout: float | None = None,
        max_attempts: int | None = None,
        workers: int | None = None,
        **options: Any,
    ) -> RunConfig:
        """The resume's `RunConfig`: the run's settings, with `resume` on; a limit given here
        replaces the recorded one (none is in the fingerprint); `options` are the rest
        (`retry_failed`, cache, progress, `allow_endpoint_change`)."""
        client = self.client
        retry = RetryPolicy(
            max_attempts=max_attempts or int(client.get("max_attempts", 5)),
            timeout=timeout or float(client.get("timeout_s", 60.0)),
            hedge=HedgePolicy.from_json(client.get("hedge") or {}),
        )
        return RunConfig.from_options(
            model=self.model,
            out=self.run_dir,
            resume=True,
            seed=self.seed,
            base_url=self.base_url,
            endpoints=self.endpoints,
            settings=self.settings,
            roles=self.roles,
            prompts=self.prompts,
            concurrency=concurrency or int(client.get("concurrency", 16)),
            requests_per_minute=requests_per_minute or client.get("requests_per_minute"),
            retry=retry,
            workers=workers or int(client.get("workers", 1)),
            **options,
        )


def read_run_manifest(run_dir: Path) -> dict[str, Any]:
    """The manifest of a run to retry; a RunError naming the file when there is none or it
    lacks what a retry reads (a damaged or foreign file)."""
    manifest = read_manifest(run_dir)
    path = run_dir / MANIFEST_FILE
    missing = [name for name in _REQUIRED if name not in manifest]
    if missing:
        raise RunError(f"{path}: damaged manifest (no {', '.join(missing)})")
    kinds = (
        ("params", dict),
        ("model", dict),
        ("roles", dict),
        ("seed", int),
        ("client", dict),
        ("validity", dict),
        ("scenario_file", dict),
        ("rescore_of", dict),
    )
    for name, kind in kinds:
        if name in manifest and not isinstance(manifest[name], kind):
            raise RunError(f"{path}: damaged manifest ({name!r} is not a {kind.__name__})")
    return manifest


def nothing_to_retry(run_dir: Path, manifest: Mapping[str, Any], retry_failed: bool) -> str | None:
    """Why a retry has nothing to do (the run is complete, by its log, and `retry_failed`
    finds no unit lost to a failed call), or None when it has."""
    if manifest["status"] != "complete" or not log_is_complete(run_dir, dict(manifest)):
        return None
    if retry_failed and has_lost_calls(run_dir):
        return None
    if retry_failed:
        return f"{run_dir} is complete; no unit lost to a failed model call, nothing to retry"
    overall = (manifest.get("validity") or {}).get("overall") or {}
    lost = (overall.get("failed_calls") or 0) + (overall.get("context_exceeded") or 0)
    hint = (
        f" ({lost} unit(s) lost to failed model calls: `personasim retry {run_dir} "
        "--retry-failed` asks them again)"
        if lost
        else ""
    )
    return f"{run_dir} is complete; nothing to retry{hint}"


def plan_retry(
    run_dir: Path,
    manifest: Mapping[str, Any],
    *,
    base_url: str | Sequence[str] | None = None,
    endpoints: str | Path | EndpointsFile | None = None,
    prompts: str | Path | None = None,
    scenario_file: str | Path | None = None,
) -> RetryPlan:
    """How to resume `run_dir` with the settings its manifest recorded. `base_url`,
    `endpoints` and `prompts` say where things are when the recorded place is not (or is not
    recorded); resume still checks that they serve the same model and the same texts.
    `scenario_file`: a scenario file's run needs its file named (checked against the run's
    record), since the path in a manifest is never followed."""
    check_base_urls(base_url)  # a key in a URL is refused before anything is read or said
    if "rescore_of" in manifest:
        raise RunError(
            f"{run_dir} is a rescore; resume it with `{_rescore_command(run_dir, manifest)}`"
        )
    if "import" in manifest:
        raise RunError(
            f"{run_dir} was imported from files and never completed; run `personasim import` "
            "again into a new directory"
        )
    scenario = _scenario(run_dir, manifest, scenario_file)
    roles = {name: tuple(specs) for name, specs in manifest["roles"].items() if specs}
    seed = int(manifest["seed"])
    endpoints = read_endpoints(endpoints)
    given_url = _url_argument(base_url)
    recorded_url = _recorded_url(manifest)
    model = _model_spec(run_dir, manifest, roles, given_url or recorded_url, endpoints)
    specs = [model, *(s for specs in roles.values() for s in specs)]
    _check_pools_known(specs, endpoints)
    url = given_url
    if url is None and recorded_url is not None and _uses_base_url(model):
        url = None if recorded_url == DEFAULT_OPENAI_URL else recorded_url
    if url is not None and unused_run_options(specs, {"base_url": url}):
        url = None  # no model of the run reads a --base-url (each has its own URL)
    validity = manifest.get("validity") or {}
    settings = RunSettings(
        manifest["response_format"],
        manifest.get("max_tokens"),
        ValidityLimits(validity.get("max_failure_rate", 0.2), validity.get("min_group_n", 5)),
    )
    return RetryPlan(
        run_dir=run_dir,
        scenario=scenario,
        params=dict(manifest["params"]),
        model=model,
        roles=roles,
        seed=seed,
        settings=settings,
        base_url=url,
        endpoints=endpoints,
        prompts=_prompt_pack(manifest, prompts),
        client=dict(manifest.get("client") or {}),
    )


def _rescore_command(run_dir: Path, manifest: Mapping[str, Any]) -> str:
    """The `personasim rescore … --resume` that continues a rescore (its source run is read
    there, so `rescore` resumes it)."""
    record = manifest["rescore_of"]
    params = manifest["params"]
    try:
        declared = get_scenario(manifest["scenario"]).roles
    except ScenarioError:
        declared = {}
    inputs = {name for name, role in declared.items() if role.scorer_input}
    rescored = record.get("roles") or {}
    words = ["personasim", "rescore", str(record.get("run", "RUN"))]
    kept = {name: specs for name, specs in rescored.items() if name not in inputs}
    words += [f"--role={name}={','.join(specs)}" for name, specs in kept.items()]
    if inputs & set(rescored):
        words.append("--regenerate-examples")
    if params.get("swap_order"):
        words.append("--swap-order")
    prompts = manifest.get("prompts")
    if isinstance(prompts, Mapping) and not prompts.get("shipped", True):
        words += ["--prompts", str(prompts.get("file", "FILE"))]
    return shlex.join([*words, "--out", str(run_dir), "--resume"])


def _scenario(
    run_dir: Path, manifest: Mapping[str, Any], scenario_file: str | Path | None
) -> type[Scenario]:
    """The run's scenario: an installed one by name, or a scenario file's only from the file
    the user names, when its content is the run's (a run directory never names code to run)."""
    try:
        return scenario_for_run(dict(manifest), scenario_file)
    except ScenarioError as exc:
        raise ScenarioError(f"cannot retry {run_dir}: {exc}") from None


def _url_argument(base_url: str | Sequence[str] | None) -> str | list[str] | None:
    if base_url is None or isinstance(base_url, str):
        return base_url
    urls = list(base_url)
    return None if not urls else urls[0] if len(urls) == 1 else urls


def _recorded_url(manifest: Mapping[str, Any]) -> str | list[str] | None:
    """The `--base-url` the run's model was served at last: its one URL (after an allowed
    endpoint change, the URL it moved to), or the URLs of the pool that `--base-url` given
    several times made (recorded with the pool's counts)."""
    described = manifest["model"]
    if "base_url" in described:
        changes = manifest.get("endpoint_changes") or []
        return str(changes[-1]["to"] if changes else described["base_url"])
    if described.get("pool") == BASE_URL_POOL:
        for pool in manifest.get("endpoints") or []:
            if pool.get("pool") == BASE_URL_POOL and pool.get("model") == described.get("model"):
                return [str(e["url"]) for e in pool.get("endpoints", [])]
    return None


def _model_spec(
    run_dir: Path,
    manifest: Mapping[str, Any],
    roles: Mapping[str, tuple[str, ...]],
    base_url: str | list[str] | None,
    endpoints: EndpointsFile | None,
) -> str:
    """The spec of the run's `--model`: the one of the specs it recorded (`model_spec`, its
    roles') or the spec its backend record reads as that builds the backend the manifest
    describes, its URL aside (an endpoint change is resume's to judge)."""
    described = manifest["model"]
    rebuilt = _spec_from_description(described, int(manifest["seed"]))
    given = manifest.get("model_spec")  # recorded by newer runs: tried first, checked the same
    role_specs = (s for specs in roles.values() for s in specs)
    candidates = list(dict.fromkeys([*([given] if isinstance(given, str) else []), *role_specs]))
    if rebuilt is not None and rebuilt not in candidates:
        candidates.append(rebuilt)
    for spec in candidates:
        if _builds(spec, described, base_url, int(manifest["seed"]), endpoints):
            return spec
    if rebuilt is not None:  # e.g. no key to build it here: the run says what is missing
        return rebuilt
    raise RunError(
        f"{run_dir / MANIFEST_FILE}: cannot tell which --model started the run (its model "
        f"is {described}); resume it with `personasim run {manifest['scenario']} --out "
        f"{run_dir} --resume` and the original options"
    )


def _spec_from_description(described: Mapping[str, Any], seed: int) -> str | None:
    """The spec a built-in backend's manifest record reads as (None for other kinds)."""
    backend = described.get("backend")
    if backend == "scripted":
        options = []
        if described.get("drift"):
            options.append(f"drift={described['drift']}")
        if described.get("seed", seed) != seed:
            options.append(f"seed={described['seed']}")
        return "scripted" + (":" + ",".join(options) if options else "")
    if backend == "langchain" and described.get("spec"):
        return str(described["spec"])
    if backend == "openai" and described.get("model"):
        pool = described.get("pool")
        own = f"@pool:{pool}" if pool and pool != BASE_URL_POOL else ""
        return f"openai:{described['model']}{own}"
    return None


def _builds(
    spec: str,
    described: Mapping[str, Any],
    base_url: str | list[str] | None,
    seed: int,
    endpoints: EndpointsFile | None,
) -> bool:
    """Whether `spec` builds a backend described as the run's model, URL aside."""
    try:
        backend = make_backend(spec, base_url, seed, endpoints)
        found = backend.describe()
    except Exception:  # any spec that cannot be built here is not the match
        return False

    def plain(record: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in record.items() if k != "base_url"}

    return plain(found) == plain(described)


def _uses_base_url(spec: str) -> bool:
    """Whether `--base-url` reaches this spec (an openai spec without its own URL)."""
    return not unused_run_options([spec], {"base_url": DEFAULT_OPENAI_URL})


def _check_pools_known(specs: Sequence[str], endpoints: EndpointsFile | None) -> None:
    """A pool of an endpoints file: the manifest names the pool, not the file."""
    if endpoints is not None:
        return
    for spec in specs:
        try:
            pool = pool_name(parse_model_spec(spec))
        except ModelSpecError:
            continue
        if pool is not None:
            raise RunError(
                f"model {spec!r} is served by pool {pool!r} of an endpoints file, which the "
                "manifest does not name: pass --endpoints FILE"
            )


def _prompt_pack(manifest: Mapping[str, Any], given: str | Path | None) -> str | None:
    """The edited prompt pack the run used (`given`, else the file it recorded), or None for
    the shipped one; resume checks its SHA-256 against the run's."""
    recorded = manifest.get("prompts")
    if not isinstance(recorded, Mapping) or recorded.get("shipped", True):
        if given is not None:
            raise RunError("--prompts: the run used the shipped prompt pack; leave --prompts out")
        return None
    if given is not None:
        return str(given)
    file = recorded.get("file")
    if not file or not Path(file).is_file():
        raise RunError(
            f"the run used an edited prompt pack ({file or 'its path is not recorded'}), which "
            "is not there from this directory: pass it with --prompts FILE"
        )
    return str(file)
