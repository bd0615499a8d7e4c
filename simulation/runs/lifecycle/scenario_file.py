"""Scenarios run from a Python file, with no package: `personasim run path/to/scenario.py`.

The file is loaded as a module under a name of its own, and its one concrete `Scenario`
subclass is the scenario. A run of it records the file's absolute path and SHA-256 in the
manifest (`scenario_file_record`), so `--resume` can refuse code that changed since the run
began (`check_same_scenario_file`), and `metrics`, `view` and `retry` load the scenario again in
a later process only from a file the user names (`--scenario-file FILE`) whose SHA-256 is the
recorded one (`scenario_for_run`): the path in a manifest is never followed, since a run
directory may come from anyone.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import inspect
import re
import sys
import traceback
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from personasim.simulation.base.registry import SCENARIO_FILE_MODULE_PREFIX
from personasim.simulation.core.scenario import (
    BUILTIN_MODULE,
    ENTRY_POINT_GROUP,
    Scenario,
    ScenarioError,
    get_scenario,
)

__all__ = [
    "check_same_scenario_file",
    "is_scenario_path",
    "load_scenario_file",
    "resolve_scenario",
    "scenario_file_record",
    "scenario_for_run",
]

MODULE_PREFIX = SCENARIO_FILE_MODULE_PREFIX
"""Modules loaded from scenario files are named this plus a hash of the path and content."""

_LOADED: dict[Path, tuple[str, Any]] = {}
"""Resolved path → (sha256, module) of its latest load. A file unchanged since is not executed
again; any other content is, so what it registers (scripted rules) is always that content's."""


def is_scenario_path(name: str) -> bool:
    """A scenario argument names a file when it ends in `.py` or is an existing file."""
    return name.endswith(".py") or Path(name).is_file()


def resolve_scenario(name_or_path: str) -> type[Scenario]:
    """The scenario a command-line argument names: a registered name, or a file's scenario."""
    if is_scenario_path(name_or_path):
        return load_scenario_file(name_or_path)
    return get_scenario(name_or_path)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_scenario_file(path: str | Path, class_name: str | None = None) -> type[Scenario]:
    """Load `path` as a module and return the one concrete `Scenario` subclass defined in it
    (or, given `class_name`, that class: a run started from Python records which one).

    An unchanged file is loaded once per process; an edited one is loaded again as a new
    module (a class it registers by name replaces the earlier definition from the same file).
    """
    resolved = Path(path).expanduser().resolve()
    if not resolved.is_file():
        raise ScenarioError(f"{path}: no such scenario file")
    digest = file_sha256(resolved)
    latest_digest, module = _LOADED.get(resolved, ("", None))
    if module is None or latest_digest != digest:
        module = _exec_module(resolved, digest, shown=str(path))
        _LOADED[resolved] = (digest, module)
    if class_name is None:
        return _the_scenario(module, shown=str(path))
    cls = getattr(module, class_name, None)
    if not (inspect.isclass(cls) and issubclass(cls, Scenario)):
        raise ScenarioError(f"{path} no longer defines the scenario class {class_name}")
    return cls


def _exec_module(resolved: Path, digest: str, shown: str) -> Any:
    tag = hashlib.sha256(f"{resolved}\0{digest}".encode()).hexdigest()[:16]
    name = MODULE_PREFIX + tag
    loader = importlib.machinery.SourceFileLoader(name, str(resolved))
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None  # a SourceFileLoader always gives a spec
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pydantic look their module up by name
    try:
        loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[name]
        raise ScenarioError(f"{shown}:{exc.lineno}: syntax error: {exc.msg}") from None
    except ScenarioError as exc:
        del sys.modules[name]
        raise ScenarioError(f"{shown}: {exc}") from None
    except Exception as exc:
        del sys.modules[name]
        raise ScenarioError(
            f"{shown}{_line_in(exc, resolved)}: loading it failed: {type(exc).__name__}: {exc}"
        ) from None
    return module


def _line_in(exc: BaseException, path: Path) -> str:
    """`:LINE` of the deepest frame of the traceback inside the scenario file, if any."""
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    return f":{lines[-1]}" if lines else ""


def _the_scenario(module: Any, shown: str) -> type[Scenario]:
    defined = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, Scenario) and obj.__module__ == module.__name__
    ]
    concrete = [cls for cls in defined if not inspect.isabstract(cls)]
    if len(concrete) == 1:
        return concrete[0]
    if concrete:
        names = ", ".join(cls.__name__ for cls in concrete)
        raise ScenarioError(
            f"{shown} defines {len(concrete)} Scenario subclasses ({names}); a scenario file "
            "must define exactly one (import shared bases from another module)"
        )
    abstract = ", ".join(
        f"{cls.__name__} (missing {', '.join(sorted(cls.__abstractmethods__))})" for cls in defined
    )
    found = f"; abstract, so not runnable: {abstract}" if abstract else ""
    raise ScenarioError(f"{shown} defines no Scenario subclass{found}")


def _packaged(cls: type[Scenario]) -> bool:
    """True when a fresh process finds `cls` by name: a built-in or entry-point scenario."""
    modules = {BUILTIN_MODULE, *(e.module for e in entry_points(group=ENTRY_POINT_GROUP))}
    return any(cls.__module__ == m or cls.__module__.startswith(m + ".") for m in modules)


def scenario_file_record(cls: type[Scenario]) -> dict[str, str] | None:
    """`{"path", "sha256", "class"}` of the file a scenario that no package provides was
    defined in (None for built-in and entry-point scenarios, or when it has no file)."""
    if _packaged(cls) or "<locals>" in cls.__qualname__:  # a function's class: no file gives it
        return None
    try:
        source = inspect.getsourcefile(cls)
    except TypeError:  # defined in the interpreter, not in a file
        return None
    if source is None or not Path(source).is_file():
        return None
    path = Path(source).resolve()
    return {"path": str(path), "sha256": file_sha256(path), "class": cls.__qualname__}


def check_same_scenario_file(
    previous: dict[str, str] | None, current: dict[str, str] | None, run_dir: Path
) -> None:
    """Refuse to resume a run whose scenario file changed since the run started (re-executing
    other code would not reproduce the logged run)."""
    if previous is None or current is None or previous["sha256"] == current["sha256"]:
        return
    raise ScenarioError(
        f"cannot resume {run_dir}: the scenario file changed since the run started "
        f"({current['path']}: sha256 {current['sha256'][:12]}…, the run has "
        f"{previous['sha256'][:12]}…); restore the file as it was, or start a new run "
        "with another --out"
    )


def scenario_for_run(
    manifest: dict[str, Any], scenario_file: str | Path | None = None
) -> type[Scenario]:
    """The scenario of a run, never loaded from code the run directory names.

    A run directory is data: someone may send one, and opening it (`view`, `metrics`, `retry`)
    must not run code it points at. So a run of an installed scenario (built in, or an entry
    point of an installed package) is found by name; a run of a scenario file needs the file
    named by the user (`scenario_file`, from `--scenario-file FILE`), and only a file whose
    SHA-256 is the one the run recorded is loaded. Anything else is a `ScenarioError`.
    """
    name = manifest.get("scenario")
    record = manifest.get("scenario_file")
    if record is None:
        if scenario_file is not None:
            raise ScenarioError(
                f"--scenario-file {scenario_file}: the run's scenario {name!r} is an installed "
                "one, not a scenario file's; leave --scenario-file out"
            )
        if not isinstance(name, str):
            raise ScenarioError("the run's manifest names no scenario")
        return get_scenario(name)
    path, digest, class_name = _recorded_file(record)
    if scenario_file is None:
        raise ScenarioError(
            f"the run's scenario {name!r} came from the scenario file {path!r}, and a run "
            "directory never names code to run: pass --scenario-file FILE, that file as it was "
            f"when the run started (sha256 {digest[:12]}…)"
        )
    given = Path(scenario_file)
    if not given.is_file():
        raise ScenarioError(f"--scenario-file {given}: no such file")
    if (found := file_sha256(given)) != digest:
        raise ScenarioError(
            f"--scenario-file {given}: sha256 {found[:12]}… is not the file the run used (it "
            f"recorded {digest[:12]}… for {path!r}); name that file as it was when the run started"
        )
    scenario = load_scenario_file(given, class_name)
    if scenario.name != name:
        raise ScenarioError(
            f"{given} defines scenario {scenario.name!r}, but the run is of {name!r}"
        )
    return scenario


def _recorded_file(record: Any) -> tuple[str, str, str | None]:
    """A manifest's `scenario_file` record as (path, sha256, class), checked for shape."""
    if isinstance(record, dict):
        path, digest, class_name = record.get("path"), record.get("sha256"), record.get("class")
        if (
            isinstance(path, str)
            and isinstance(digest, str)
            and re.fullmatch(r"[0-9a-f]{64}", digest)
            and (class_name is None or isinstance(class_name, str))
        ):
            return path, digest, class_name
    raise ScenarioError(
        "the run's manifest has a malformed scenario_file record (path, sha256 and class)"
    )
