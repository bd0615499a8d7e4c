"""Atomic writes: a run directory's files are either the old version or the new one, whole.

Every file a run directory holds that is rewritten (`manifest.json`, `metrics.json`, the
tables and figures of `reports/`) is written to a temporary file in the same folder, flushed to
disk (`fsync`) and renamed over its name (`os.replace`, atomic on POSIX). A crash, a full disk
or a SIGTERM half-way leaves the previous file, never half of a new one, and no temporary file.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "atomic_path",
    "json_text",
    "write_bytes_atomic",
    "write_json_atomic",
    "write_text_atomic",
]


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside `path` to write to; on success it is flushed to disk and
    renamed over `path`, on any failure (a signal included) removed.

    The temporary name keeps `path`'s suffix, so a writer that picks its format by the name
    (pandas, matplotlib) writes the same format; it starts with a dot, so a listing of a
    reports folder does not show it while it exists.
    """
    tmp = path.with_name(f".{path.stem}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp{path.suffix}")
    try:
        yield tmp
        _fsync(tmp)
        os.replace(tmp, path)
    except OSError as exc:  # named as the file it was to be (a full disk: `No space left`)
        tmp.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def json_text(data: Any) -> str:
    """The text every JSON file of a run holds: sorted, indented (NaN refused: it is not
    JSON). `metrics --check` compares through it, so the check follows the writer."""
    return json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n"


def write_json_atomic(path: Path, data: Any) -> None:
    """`data` as `json_text`, written atomically."""
    write_text_atomic(path, json_text(data))


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(directory: Path) -> None:
    """Make the rename itself durable; a file system that cannot sync a folder is let be."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
