"""The files a run reads, by content: part of its fingerprint.

A run records the SHA-256 of every input file in its manifest (`inputs`): each scenario
parameter typed as a path (`Path`, `Path | None`, a tuple of paths: a persona, question,
profile or survey file, a run directory to read), the edited prompt pack (`--prompts`) and the
endpoints file (`--endpoints`). `--resume` hashes them again and refuses a file whose content
changed since the run started, one line naming it, before anything is sent: the units not yet
logged would otherwise be asked with other personas (or questions) than the ones the log
recorded. A scenario's file parameters are found by their type, so a new scenario's are covered
without a list to keep; one typed `str` is not a file to personasim.

A folder given as an input (a run directory to read dialogues from) is identified by the log
digest its manifest recorded when it is a finished run, else by the SHA-256 of its files.
"""

from __future__ import annotations

import hashlib
import json
import types
import typing
from collections.abc import Iterator
from pathlib import Path, PurePath
from typing import Any

from pydantic import BaseModel

from personasim.simulation.runs.lifecycle.run_dir import MANIFEST_FILE

__all__ = ["ENDPOINTS_INPUT", "PROMPTS_INPUT", "content_sha256", "input_files"]

PROMPTS_INPUT = "--prompts"
ENDPOINTS_INPUT = "--endpoints"

_SKIPPED_SUFFIXES = ("-wal", "-shm", ".tmp", ".partial")
"""Files of a folder input left out of its hash: SQLite's side files, half-written files."""


def input_files(
    params: BaseModel,
    prompts: str | Path | None = None,
    endpoints: str | Path | None = None,
) -> dict[str, dict[str, Any]]:
    """`{flag: {"path": as given, "sha256": ...}}` for each input file of a run; an input that
    does not exist is recorded with `sha256` null (and a later file there is a change)."""
    named: list[tuple[str, Path]] = list(_param_paths(params))
    if prompts is not None:
        named.append((PROMPTS_INPUT, Path(prompts)))
    if endpoints:
        named.append((ENDPOINTS_INPUT, Path(endpoints)))
    return {flag: {"path": str(path), "sha256": content_sha256(flag, path)} for flag, path in named}


def content_sha256(flag: str, path: Path) -> str | None:
    """The SHA-256 of a file, or of a folder's identity; None when nothing is there.

    A file that exists but cannot be read raises `OSError` naming it."""
    try:
        if path.is_dir():
            return _folder_sha256(path)
        if not path.exists():
            return None
        with path.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError as exc:
        raise OSError(exc.errno, f"{flag}: cannot read it ({exc.strerror})", str(path)) from None


def _folder_sha256(folder: Path) -> str:
    """A finished run directory: the log digest its manifest recorded (its bytes change when
    SQLite opens it, its content does not). Another folder: its files' names and contents."""
    try:
        log = json.loads((folder / MANIFEST_FILE).read_text()).get("log") or {}
    except (OSError, ValueError, AttributeError):
        log = {}
    if isinstance(log, dict) and isinstance(log.get("sha256"), str):
        return hashlib.sha256(f"run log {log.get('events')} {log['sha256']}".encode()).hexdigest()
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.rglob("*") if p.is_file() and _kept(p)):
        with file.open("rb") as handle:
            inner = hashlib.file_digest(handle, "sha256").hexdigest()
        digest.update(f"{file.relative_to(folder).as_posix()}\0{inner}\n".encode())
    return digest.hexdigest()


def _kept(path: Path) -> bool:
    return not path.name.startswith(".") and not path.name.endswith(_SKIPPED_SUFFIXES)


def _param_paths(params: BaseModel) -> Iterator[tuple[str, Path]]:
    """(`--flag`, path) for each parameter typed as a path and given a value."""
    for name, info in type(params).model_fields.items():
        if not _mentions_path(info.annotation):
            continue
        flag = "--" + name.replace("_", "-")
        value = getattr(params, name)
        values = value if isinstance(value, tuple | list) else (value,)
        paths = [v for v in values if isinstance(v, PurePath)]
        for index, path in enumerate(paths):
            yield (flag if len(paths) == 1 else f"{flag}[{index}]"), Path(path)


def _mentions_path(annotation: Any) -> bool:
    """`Path`, `Path | None`, `tuple[Path, ...]`, `Annotated[Path, ...]`…"""
    if isinstance(annotation, type):
        return issubclass(annotation, PurePath)
    origin = typing.get_origin(annotation)
    if origin is None and not isinstance(annotation, types.UnionType):
        return False
    return any(_mentions_path(arg) for arg in typing.get_args(annotation))
