"""Running a scenario into a run directory, with progress, and resuming one that was cut short.

A run directory holds `manifest.json` (written first with status "interrupted", rewritten with
"complete" only at the very end), `events.sqlite` and `metrics.json` (only once complete).
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from personasim.simulation.core.model import Simulation
from personasim.simulation.core.scenario import Scenario, ScenarioParams, get_scenario
from personasim.simulation.llm.cache import ResponseCache, default_cache_dir
from personasim.simulation.llm.chat import (
    RESPONSE_FORMATS,
    Backend,
    PermanentLLMError,
    ResponseFormat,
)
from personasim.simulation.llm.client import LLMClient, ModelPool, RetryPolicy
from personasim.simulation.llm.limiter import EndpointLimiter
from personasim.simulation.llm.openai_backend import OpenAIBackend
from personasim.simulation.llm.prompts import PromptPack, PromptPackError
from personasim.simulation.llm.roles import RoleError, bind_roles
from personasim.simulation.llm.scripted import ScriptedBackend
from personasim.simulation.log.event_log import RETRIED_KIND, EventLog, ResumeState, latest_attempts
from personasim.simulation.log.events import SCHEMA_VERSION, EventStore, events_frame
from personasim.simulation.log.sqlite_store import EventStoreError, SQLiteEventStore
from personasim.simulation.runs.fingerprint import endpoint_change, fingerprint_diff
from personasim.simulation.runs.run_lock import LOCK_FILE, RunLock
from personasim.simulation.runs.run_signals import RunStopped, stop_on_signals
from personasim.simulation.runs.scenario_file import (
    check_same_scenario_file,
    resolve_scenario,
    scenario_file_record,
)
from personasim.simulation.runs.validity import (
    DECISION_KINDS,
    ValidityLimits,
    validity_from_events,
    validity_summary,
)

__all__ = [
    "EVENTS_FILE",
    "MANIFEST_FILE",
    "METRICS_FILE",
    "MODEL_SPEC_PATTERN",
    "ClientLimits",
    "RunError",
    "RunResult",
    "RunSettings",
    "arun_scenario",
    "compute_run_metrics",
    "make_backend",
    "read_manifest",
    "run_scenario",
    "scripted_options",
    "write_run_reports",
]

MANIFEST_FILE = "manifest.json"
EVENTS_FILE = "events.sqlite"
METRICS_FILE = "metrics.json"
REPORTS_DIR = "reports"
PACKAGES = ("personasim", "mesa", "langgraph", "langchain-core", "openai", "numpy", "scipy")


class RunError(RuntimeError):
    """A run could not start or did not finish; the message says what to do next."""


@dataclass
class RunResult:
    run_dir: Path
    manifest: dict[str, Any]
    metrics: dict[str, Any]
    report: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        """False when a decision task's failure rate is over the run's limit (exit code 3)."""
        return bool(self.manifest["validity"]["overall"]["ok"])


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


_DRIFT = r"drift=(?:0(?:\.\d*)?|1(?:\.0*)?|\.\d+)"
_SEED = r"seed=\d+"
MODEL_SPEC_PATTERN = (
    rf"^(scripted(?::(?:{_DRIFT}(?:,{_SEED})?|{_SEED}(?:,{_DRIFT})?))?|openai:[^@\s]+(@\S+)?)$"
)
"""A model on the command line: `scripted`, `scripted:drift=D,seed=S` (either option or both),
`openai:NAME`, or `openai:NAME@BASE_URL`."""

SCRIPTED_OPTIONS = {"drift": "a share of answers from 0 to 1", "seed": "a whole number"}
"""Options of a `scripted:` spec and what each takes."""


def make_backend(model: str, base_url: str | None = None, seed: int = 0) -> Backend:
    """`scripted[:OPTIONS]`, `openai:NAME` (at `base_url`), or `openai:NAME@URL` (its own URL).

    A scripted backend takes the run's `seed` unless its spec names one.
    """
    if model == "scripted" or model.startswith("scripted:"):
        return ScriptedBackend(**{"seed": seed, **scripted_options(model)})
    if re.match(MODEL_SPEC_PATTERN, model):
        name, _, own_url = model.removeprefix("openai:").partition("@")
        try:
            return OpenAIBackend(name, base_url=own_url or base_url)
        except PermanentLLMError as exc:  # no key, or a URL that cannot work: bad input
            raise RunError(str(exc)) from None
    raise RunError(
        f"unknown model {model!r}: use 'scripted' (or 'scripted:drift=0.15,seed=3'), "
        "'openai:MODEL_NAME' (with --base-url for a non-OpenAI endpoint) or "
        "'openai:MODEL_NAME@BASE_URL'; LangChain chat models can be passed from Python"
    )


def scripted_options(spec: str) -> dict[str, Any]:
    """The options of `scripted:drift=D,seed=S` as keyword arguments of `ScriptedBackend`."""
    options: dict[str, Any] = {}
    _, _, listed = spec.partition(":")
    for item in listed.split(",") if ":" in spec else []:
        name, sep, value = item.partition("=")
        if name not in SCRIPTED_OPTIONS or not sep:
            known = ", ".join(f"{k}=" for k in SCRIPTED_OPTIONS)
            raise RunError(f"model {spec!r}: unknown option {item!r}; scripted takes {known}")
        if name in options:
            raise RunError(f"model {spec!r}: {name} is given twice")
        options[name] = _option_value(spec, name, value)
    return options


def _option_value(spec: str, name: str, value: str) -> float | int:
    try:
        number = float(value) if name == "drift" else int(value)
    except ValueError:
        number = None
    if number is None or (name == "drift" and not 0.0 <= number <= 1.0) or number < 0:
        raise RunError(f"model {spec!r}: {name}={value} must be {SCRIPTED_OPTIONS[name]}")
    return number


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


def run_scenario(*args: Any, **kwargs: Any) -> RunResult:
    """Run (or resume) a scenario; see `arun_scenario` for the arguments.

    Inside a running event loop (a Jupyter notebook), `await arun_scenario(...)` instead.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(arun_scenario(*args, **kwargs))
    raise RunError(
        "run_scenario was called inside a running event loop (e.g. Jupyter); "
        "use `await arun_scenario(...)` there"
    )


async def arun_scenario(
    scenario: str | Path | type[Scenario],
    params: dict[str, Any] | ScenarioParams | None = None,
    *,
    seed: int = 0,
    model: str = "scripted",
    base_url: str | None = None,
    backend: Backend | None = None,
    out: str | Path | None = None,
    resume: bool = False,
    use_cache: bool = True,
    cache_dir: str | Path | None = None,
    concurrency: int = 16,
    requests_per_minute: float | None = None,
    retry: RetryPolicy | None = None,
    progress: bool = True,
    console: Console | None = None,
    settings: RunSettings | None = None,
    roles: Mapping[str, Sequence[str]] | None = None,
    prompts: str | Path | None = None,
    limiter_for: Callable[[Backend], EndpointLimiter | None] | None = None,
    retry_failed: bool = False,
    allow_endpoint_change: bool = False,
) -> RunResult:
    """Run (or resume) a scenario and return where it went and what it measured.

    `scenario`: a registered name, a scenario file's path (`.py`), or a `Scenario` class.
    `settings`: response format, a completion-token cap and validity limits (defaults: text,
    no cap, at most 20% failed decisions, groups of 5). `roles`: model specs for the scenario's
    roles by name (`{"judge": ["openai:gpt-4o"]}`); `model` (or `backend`) plays the others.
    `prompts`: an edited prompt pack (`personasim prompts SCENARIO` writes the shipped one).
    `limiter_for`: limits shared with other runs for a backend's endpoint (a sweep on Ray),
    or None to keep this run's own `concurrency` and `requests_per_minute`.
    `retry_failed` (with `resume`): ask again the units whose decisions were lost to a model call
    that ran out of attempts (docs/events.md, "Failed calls and --retry-failed").
    `allow_endpoint_change`: resume although the model's endpoint URL changed (same model name).
    Every input is checked before the run directory is created, so bad input leaves nothing.
    """
    settings = settings or RunSettings()
    scenario_cls = resolve_scenario(str(scenario)) if isinstance(scenario, str | Path) else scenario
    checked = (
        params if isinstance(params, ScenarioParams) else scenario_cls.parse_params(params or {})
    )
    main_spec = model if backend is None else backend.name
    bound = _bind_roles(scenario_cls, main_spec, roles or {})
    backend = backend or make_backend(model, base_url, seed)
    instance = scenario_cls(checked, _prompt_pack(scenario_cls, prompts))
    instance.prepare()
    limits = ClientLimits(concurrency, requests_per_minute, retry or RetryPolicy())
    if seed < 0:
        raise RunError(f"seed must be an integer of at least 0, got {seed}")
    if retry_failed and not resume:
        raise RunError("--retry-failed asks a run's failed units again: it needs --resume")
    if use_cache:
        _make_writable_dir(Path(cache_dir or default_cache_dir()), "--cache-dir")
    scenario_file = scenario_file_record(scenario_cls)
    run_dir = _prepare_run_dir(out, scenario_cls.name, resume)
    lock = _writer_lock(run_dir)
    cache = None
    try:
        manifest = _initial_manifest(scenario_cls, checked, seed, backend, limits, settings)
        manifest["roles"] = {name: list(specs) for name, specs in bound.items()}
        manifest["prompts"] = instance.prompts.describe() if instance.prompts else None
        if scenario_file is not None:
            manifest["scenario_file"] = scenario_file
        previous = _load_resumable(run_dir, manifest, allow_endpoint_change) if resume else None
        if previous is not None:
            check_same_scenario_file(previous.get("scenario_file"), scenario_file, run_dir)
        complete = previous is not None and _log_is_complete(run_dir, previous)
        retrying = retry_failed and complete and _has_lost_calls(run_dir)
        if previous is not None and complete and not retrying:
            return _already_complete(run_dir, previous, retry_failed)
        if previous is not None:
            manifest["created_at"] = previous["created_at"]
        rekey = _endpoint_rekey(manifest)
        _write_json(run_dir / MANIFEST_FILE, manifest)
        cache = ResponseCache(cache_dir) if use_cache else None
        with _open_log(run_dir, resume=previous is not None) as store:
            resume_state = ResumeState.from_store(store) if previous is not None else None
            retried = resume_state.retry_failed() if resume_state and retry_failed else []
            log = EventLog(store, resume_state)
            if cache is not None:
                cache.on_bad_row = _log_bad_cache_row(log)

            def client_for(backend: Backend) -> LLMClient:
                _keep_request_keys(backend, rekey)
                return LLMClient(
                    backend,
                    cache=cache,
                    retry=limits.retry,
                    concurrency=limits.concurrency,
                    requests_per_minute=limits.requests_per_minute,
                    emit=log.emit,
                    incident=log.incident,
                    replay=log.logged_response if resume_state else None,
                    limiter=limiter_for(backend) if limiter_for else None,
                )

            models = ModelPool(
                client_for(backend),
                lambda spec: client_for(make_backend(spec, base_url, seed)),
                main_spec=main_spec,
            )
            bar = _progress_bar(console or Console(stderr=True), progress, scenario_cls.name)
            try:
                with bar as on_progress:
                    sim = Simulation(
                        seed=seed,
                        models=models,
                        log=log,
                        on_progress=on_progress,
                        response_format=settings.response_format,
                        max_tokens=settings.max_tokens,
                        roles=bound,
                        max_active_units=active_units(limits.concurrency, main_spec, bound),
                    )
                    await stop_on_signals(_play(instance, sim, manifest))
            except BaseException as exc:
                _finish_interrupted(run_dir, manifest, store, settings, exc)
                raise
            metrics = compute_run_metrics(store, scenario_cls)
            _write_json(run_dir / METRICS_FILE, metrics)
            write_run_reports(run_dir, metrics, scenario_cls)
            _finish(run_dir, manifest, store, settings, "complete")
    finally:
        if cache is not None:
            cache.close()
        lock.release()
    summary = _summary(manifest, scenario_cls, metrics)
    if retry_failed:
        summary.insert(0, f"retried {len(retried)} unit(s) with a failed model call")
    return RunResult(run_dir, manifest, metrics, summary)


def _has_lost_calls(run_dir: Path) -> bool:
    """Whether the run's log has a unit whose decision was lost to a failed model call."""
    with SQLiteEventStore(run_dir / EVENTS_FILE) as store:
        return bool(ResumeState.from_store(store).lost_calls)


def active_units(
    concurrency: int, main_spec: str | None, roles: Mapping[str, tuple[str, ...]]
) -> int:
    """How many units of a round may be under way at once: twice the requests the run's models
    can have in flight, so each slot has a unit waiting with its prompt built while no more
    than that spend CPU before the first answers come back (benchmarks/bench_round.py)."""
    models = {main_spec, *(spec for specs in roles.values() for spec in specs)}
    return 2 * concurrency * len(models)


def _prompt_pack(scenario_cls: type[Scenario], path: str | Path | None) -> PromptPack | None:
    """The edited pack at `path`, checked against the scenario's shipped one."""
    if path is None:
        return None
    shipped = scenario_cls.shipped_prompts()
    if shipped is None:
        raise RunError(f"--prompts: {scenario_cls.name} has no prompt pack to replace")
    try:
        pack = PromptPack.load(path)
        pack.check_against(shipped)
    except PromptPackError as exc:
        raise RunError(f"--prompts {exc}") from None
    return pack


def _bind_roles(
    scenario_cls: type[Scenario], main_spec: str, named: Mapping[str, Sequence[str]]
) -> dict[str, tuple[str, ...]]:
    """Each role's model specs, checked before anything is written."""
    for name, specs in named.items():
        for spec in specs:
            if not re.match(MODEL_SPEC_PATTERN, spec):
                raise RunError(
                    f"--role {name}={spec}: unknown model; use 'scripted', 'openai:MODEL_NAME' "
                    "or 'openai:MODEL_NAME@BASE_URL'"
                )
    try:
        return bind_roles(scenario_cls.roles, main_spec, named, scenario=scenario_cls.name)
    except RoleError as exc:
        raise RunError(str(exc)) from None


def _summary(
    manifest: dict[str, Any], scenario_cls: type[Scenario], metrics: dict[str, Any]
) -> list[str]:
    """The end-of-run lines; a run that is not valid says so first."""
    verdict = validity_summary(manifest["validity"])
    return [*([verdict] if verdict else []), *scenario_cls.report(metrics["metrics"])]


async def _play(scenario: Scenario, sim: Simulation, manifest: dict[str, Any]) -> None:
    try:
        header = ("scenario", "params", "seed", "model", "roles", "prompts")
        header += tuple(RunSettings().to_json())
        sim.emit("run.started", {k: manifest[k] for k in header})
        scenario.setup(sim)
        with _long_lived_heap():
            for index in range(1, scenario.rounds() + 1):
                sim.begin_round(index)
                await scenario.play_round(sim, index)
                sim.end_round()
        sim.round = None
        sim.emit("run.completed")
    finally:
        await sim.models.aclose()


@contextmanager
def _long_lived_heap() -> Iterator[None]:
    """Keep the garbage collector off the agents and personas built in setup.

    With hundreds of decisions in flight, objects live long enough to reach the older
    generations, and every collection rescans the whole heap: measured at about half the CPU of
    a decision (benchmarks/). Freezing what setup built and collecting the youngest generation
    less often removes most of it; both are undone when the rounds end.
    """
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def compute_run_metrics(
    store: EventStore, scenario_cls: type[Scenario] | None = None
) -> dict[str, Any]:
    """The run's metrics from its log alone (what `personasim metrics` recomputes).

    The scenario is found by name in the registry unless given.
    """
    events = events_frame(latest_attempts(store.read()))
    started = events.loc[events["kind"] == "run.started", "payload"]
    if started.empty:
        raise RunError("the event log has no run.started event; it is not a personasim run")
    header = started.iloc[0]
    scenario_cls = scenario_cls or get_scenario(header["scenario"])
    return {
        "scenario": header["scenario"],
        "model": header["model"],
        "partial": not (events["kind"] == "run.completed").any(),
        "metrics": scenario_cls.compute_metrics(events),
    }


def write_run_reports(
    run_dir: Path, metrics: dict[str, Any], scenario_cls: type[Scenario] | None = None
) -> list[Path]:
    """The scenario's tables and figures, in `RUN_DIR/reports/`."""
    scenario_cls = scenario_cls or get_scenario(metrics["scenario"])
    directory = run_dir / REPORTS_DIR
    directory.mkdir(exist_ok=True)
    return scenario_cls.write_reports(metrics["metrics"], directory)


def llm_usage(store: EventStore) -> dict[str, int]:
    """Model calls and tokens counted from the log, so they survive interruption and resume."""
    usage = dict(calls=0, cache_hits=0, failures=0, prompt_tokens=0, completion_tokens=0)
    for event in store.read(kinds=("llm.call", "llm.error")):
        payload = event.payload
        usage["calls"] += payload["attempts"]
        if event.kind == "llm.error":
            usage["failures"] += 1
        elif payload["cached"]:
            usage["cache_hits"] += 1
        else:
            usage["prompt_tokens"] += payload["response"]["usage"]["prompt_tokens"]
            usage["completion_tokens"] += payload["response"]["usage"]["completion_tokens"]
    return usage


def _initial_manifest(
    scenario_cls: type[Scenario],
    params: ScenarioParams,
    seed: int,
    backend: Backend,
    limits: ClientLimits,
    settings: RunSettings,
) -> dict[str, Any]:
    return {
        **settings.to_json(),
        "schema_version": SCHEMA_VERSION,
        "scenario": scenario_cls.name,
        "scenario_version": scenario_cls.version,
        "params": params.model_dump(mode="json"),
        "seed": seed,
        "model": backend.describe(),
        "client": {
            "concurrency": limits.concurrency,
            "requests_per_minute": limits.requests_per_minute,
            "timeout_s": limits.retry.timeout,
            "max_attempts": limits.retry.max_attempts,
            "hedge": limits.retry.hedge.to_json(),
        },
        "packages": _package_versions(),
        "status": "interrupted",
        "created_at": _now(),
    }


def _prepare_run_dir(out: str | Path | None, scenario: str, resume: bool) -> Path:
    if out is None:
        if resume:
            raise RunError("--resume needs --out RUN_DIR: the run directory to resume")
        base = Path("runs") / f"{scenario}-{time.strftime('%Y%m%d-%H%M%S')}"
        run_dir, n = base, 1
        while run_dir.exists():
            n += 1
            run_dir = base.with_name(f"{base.name}-{n}")
    else:
        run_dir = Path(out)
        has_run = (run_dir / MANIFEST_FILE).exists()
        if resume and not has_run:
            raise RunError(f"{run_dir}: no run to resume here (no {MANIFEST_FILE})")
        if not resume and run_dir.is_dir() and any(p.name != LOCK_FILE for p in run_dir.iterdir()):
            raise RunError(
                f"{run_dir} already exists and is not empty; pass --resume to continue the run "
                "there, or choose another --out"
            )
    _make_writable_dir(run_dir, "--out")
    return run_dir


def _make_writable_dir(directory: Path, flag: str) -> None:
    """Create a directory, or say in one line why it cannot be (nothing is left behind)."""
    if directory.exists() and not directory.is_dir():
        raise RunError(f"{flag} {directory} is a file, not a directory; choose another {flag}")
    first_new = next((p for p in (*reversed(directory.parents), directory) if not p.exists()), None)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # Named per process: a sweep's workers probe the shared cache folder at the same time.
        probe = directory / f".personasim-write-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        if first_new is not None:
            shutil.rmtree(first_new, ignore_errors=True)
        reason = exc.strerror or str(exc)
        raise RunError(f"cannot write to {directory} ({reason}); choose another {flag}") from None


def read_manifest(run_dir: str | Path) -> dict[str, Any]:
    path = Path(run_dir) / MANIFEST_FILE
    try:
        manifest = json.loads(path.read_text())
    except (FileNotFoundError, NotADirectoryError):
        raise RunError(f"{run_dir}: not a run directory (no {MANIFEST_FILE})") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunError(f"{path}: unreadable manifest ({exc})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("status"), str):
        raise RunError(f"{path}: not a personasim manifest (no status)")
    return manifest


def _writer_lock(run_dir: Path) -> RunLock:
    """The run directory's writer lock, held until the run ends (see run_lock.py)."""
    lock = RunLock(run_dir)
    lock.acquire()
    return lock


def _already_complete(
    run_dir: Path, previous: dict[str, Any], retry_failed: bool = False
) -> RunResult:
    """A resume of a run whose log shows it complete: its metrics, nothing run."""
    if not (run_dir / METRICS_FILE).is_file():
        raise RunError(
            f"{run_dir} is complete but has no {METRICS_FILE}; "
            f"`personasim metrics {run_dir}` recomputes it from the log"
        )
    metrics = json.loads((run_dir / METRICS_FILE).read_text())
    nothing = "no failed call to retry" if retry_failed else "nothing to resume"
    return RunResult(run_dir, previous, metrics, [f"already complete; {nothing}"])


def _load_resumable(
    run_dir: Path, manifest: dict[str, Any], allow_endpoint_change: bool = False
) -> dict[str, Any]:
    """The run directory's manifest, when its fingerprint is this command's; else one error
    with a line per differing field. An endpoint change is recorded in `manifest`."""
    previous = read_manifest(run_dir)
    manifest["endpoint_changes"] = list(previous.get("endpoint_changes", []))
    differences = fingerprint_diff(previous, manifest)
    change = endpoint_change(previous, manifest)
    if change is not None and differences == [f"model.base_url: {change[0]} → {change[1]}"]:
        changes = manifest["endpoint_changes"]
        current = changes[-1]["to"] if changes else change[0]
        if change[1] != current and not allow_endpoint_change:
            raise RunError(
                f"cannot resume {run_dir}: its model's endpoint changed ({current} → "
                f"{change[1]}) for the same model name; pass --allow-endpoint-change if it "
                "serves the same model, or start a new run"
            )
        if change[1] != current:
            changes.append({"from": current, "to": change[1], "at": _now()})
        manifest["model"] = previous["model"]  # request keys stay those of the run's start
        differences = []
    if differences:
        raise RunError(
            f"cannot resume {run_dir}: this command differs from the run's start in "
            f"{len(differences)} field(s); repeat the original settings or start a new run\n  "
            + "\n  ".join(differences)
        )
    return previous


def _endpoint_rekey(manifest: dict[str, Any]) -> tuple[str, str] | None:
    """(URL the run's requests are keyed under, URL they now go to) after an endpoint change."""
    changes = manifest.get("endpoint_changes") or []
    return (manifest["model"]["base_url"], changes[-1]["to"]) if changes else None


def _keep_request_keys(backend: Backend, rekey: tuple[str, str] | None) -> None:
    """After an allowed endpoint change, a backend sending to the new URL keeps the run's
    request keys (and identity) of its first URL, so the log and the resumed run agree."""
    if rekey is not None and backend.identity().get("base_url") == rekey[1]:
        keyed_as = getattr(backend, "keyed_as", None)
        if keyed_as is not None:
            keyed_as(rekey[0])


def _log_is_complete(run_dir: Path, previous: dict[str, Any]) -> bool:
    """Whether the log (not the manifest) shows the run complete: one `run.completed` and the
    events the manifest recorded when it finished. False: resume re-executes the run."""
    path = run_dir / EVENTS_FILE
    if not path.is_file():
        raise RunError(f"{path}: the log is missing; start a new run or restore it")
    try:
        with SQLiteEventStore(path) as store:
            count, sha256 = store.digest()
            completed = sum(1 for _ in store.read(kinds=("run.completed",)))
    except EventStoreError as exc:
        raise RunError(
            f"{exc}; `personasim export {run_dir} --salvage` copies the events it can still "
            "read into a new run directory that can be resumed"
        ) from None
    if count == 0 and previous["status"] == "complete":
        raise RunError(f"{path}: the log is empty; start a new run or restore it")
    if completed > 1:
        raise RunError(
            f"{path}: the log holds {completed} run.completed events (two processes wrote it); "
            "it cannot be resumed: start a new run"
        )
    recorded = previous.get("log")
    if completed == 1 and recorded and recorded != {"events": count, "sha256": sha256}:
        raise RunError(
            f"{path}: the log does not match its manifest ({recorded['events']} events "
            f"recorded, {count} found); restore the run directory or start a new run"
        )
    # A run stopped between its last event and its manifest is re-derived whole and finished.
    return completed == 1 and previous["status"] == "complete"


@contextmanager
def _open_log(run_dir: Path, resume: bool) -> Iterator[SQLiteEventStore]:
    path = run_dir / EVENTS_FILE
    if resume and not path.is_file():  # opening would start an empty log
        raise RunError(f"{path}: the log is missing; start a new run or restore it")
    with SQLiteEventStore(path) as store:
        yield store


def _log_bad_cache_row(log: EventLog) -> Callable[[str, str], None]:
    """A cache row that cannot be read is a miss, and an incident in the log."""

    def record(key: str, error: str) -> None:
        log.incident("cache.bad_row", {"request_key": key, "error": error})

    return record


def _finish_interrupted(
    run_dir: Path,
    manifest: dict[str, Any],
    store: EventStore,
    settings: RunSettings,
    exc: BaseException,
) -> None:
    """Mark the run interrupted with the reason; when even that cannot be written (a full
    disk), the original error is what the user sees, and it says so."""
    exc.run_dir = run_dir  # type: ignore[attr-defined]  # for the CLI's message
    try:
        _finish(run_dir, manifest, store, settings, "interrupted", _describe(exc))
    except (OSError, EventStoreError) as again:
        exc.manifest_error = str(again)  # type: ignore[attr-defined]


def _finish(
    run_dir: Path,
    manifest: dict[str, Any],
    store: EventStore,
    settings: RunSettings,
    status: str,
    error: str | None = None,
) -> None:
    decisions = latest_attempts(store.read(kinds=(*DECISION_KINDS, RETRIED_KIND)))
    validity = validity_from_events(decisions, settings.validity)
    count, sha256 = store.digest() if isinstance(store, SQLiteEventStore) else (None, None)
    manifest.update(
        status=status,
        finished_at=_now(),
        log={"events": count, "sha256": sha256},
        llm=llm_usage(store),
        validity={**settings.validity.to_json(), **validity},
    )
    manifest.pop("error", None)
    if error:
        manifest["error"] = error
    _write_json(run_dir / MANIFEST_FILE, manifest)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    """Write atomically, so a crash never leaves a half-written file behind (nor, when the
    disk is full, an empty temporary one)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _describe(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted by the user"
    if isinstance(exc, RunStopped):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = "not installed"
    return versions


@contextmanager
def _progress_bar(
    console: Console, enabled: bool, label: str
) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar over units of work; a no-op when disabled."""
    if not enabled:
        yield lambda done, total: None
        return
    columns = (
        TextColumn(f"[bold]{label}[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("decisions"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console) as progress:
        task = progress.add_task("run", total=None)
        yield lambda done, total: progress.update(task, completed=done, total=total)
