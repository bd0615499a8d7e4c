"""OpenAI's tokenizers without a network: a tiktoken encoding built from a `.tiktoken` file.

`tiktoken.get_encoding("o200k_base")` downloads the encoding's BPE ranks from OpenAI's storage
the first time it is asked, which a dry run must never do. The user downloads the file once
(`o200k_base.tiktoken`, `cl100k_base.tiktoken`: the URL is in the error that asks for it) and
passes it with `--tokenizer`; this module builds the encoding with tiktoken's own machinery:
the encoding's constructor in `tiktoken_ext.openai_public` (its pattern, special tokens and
the sha256 it expects of the file) runs while the loader it calls reads the user's file instead
of the URL, `tiktoken.load.load_tiktoken_bpe` parses the file and `tiktoken.Encoding` is the
encoder. Nothing is downloaded and nothing is cached: a loader that is asked for a URL reads
the given file, or stops.

Two paths:

- `load_encoding(path, name)`: the file must be the one tiktoken expects for `name` (its sha256,
  checked with `tiktoken.load.check_hash`); `file_encodings(path)` says which encodings a file
  is, so a wrong file is named (`cl100k_base`, where gpt-4o-mini needs `o200k_base`).
- `load_encoding(path, name, verify=False)`: any ranks file in tiktoken's format (a base64
  token, a space and its rank a line), with `name`'s pattern and special tokens; for a
  vocabulary of one's own and for the tests, whose small file cannot be OpenAI's.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import tiktoken
import tiktoken.load
import tiktoken.model
from tiktoken_ext import openai_public

from personasim.simulation.runs.lifecycle.run_dir import RunError

__all__ = [
    "TIKTOKEN_SUFFIX",
    "EncodingFile",
    "expected_files",
    "file_encodings",
    "load_encoding",
    "model_encoding",
]

TIKTOKEN_SUFFIX = ".tiktoken"
_SWAP = threading.RLock()
Loader = Callable[..., dict[bytes, int]]


@dataclass(frozen=True)
class EncodingFile:
    """Where tiktoken downloads an encoding's ranks from, and the sha256 it expects of them."""

    url: str
    sha256: str

    @property
    def file_name(self) -> str:
        return self.url.rsplit("/", 1)[-1]


class _Asked(Exception):
    """Raised by the probing loader: the constructor asked for `file` (nothing was read)."""

    def __init__(self, file: EncodingFile) -> None:
        super().__init__(file.url)
        self.file = file


def model_encoding(model: str) -> str | None:
    """The encoding an OpenAI model counts with (tiktoken's own table, no download), else None."""
    try:
        return tiktoken.model.encoding_name_for_model(model)
    except KeyError:
        return None


@cache
def expected_files() -> dict[str, EncodingFile]:
    """Each encoding that tiktoken loads from one `.tiktoken` file, and that file: learnt by
    running its constructor with a loader that stops at the first file it asks for. (gpt2's
    ranks come in two other files, so it is not listed.)"""

    def stop(blobpath: str, expected_hash: str | None = None, *_: Any, **__: Any) -> Any:
        raise _Asked(EncodingFile(blobpath, expected_hash or ""))

    def refuse(*_: Any, **__: Any) -> Any:
        raise LookupError("not a .tiktoken encoding")

    found = {}
    for name, constructor in openai_public.ENCODING_CONSTRUCTORS.items():
        with _loaders(stop, refuse):
            try:
                constructor()
            except _Asked as asked:
                if asked.file.sha256:
                    found[name] = asked.file
            except LookupError:
                continue
    return found


def file_encodings(path: str | Path) -> list[str]:
    """The encodings whose file `path` is (by its sha256; o200k_base's file also makes
    o200k_harmony), none for a file that is not one of OpenAI's."""
    digest = hashlib.sha256(_read(path)).hexdigest()
    return [name for name, file in expected_files().items() if file.sha256 == digest]


def load_encoding(path: str | Path, name: str, *, verify: bool = True) -> tiktoken.Encoding:
    """The encoding `name` with its ranks read from `path`, offline. `verify`: the file must be
    the one tiktoken expects (else `RunError` naming both); `verify=False` takes any ranks file
    in tiktoken's format with `name`'s pattern and special tokens (and no vocabulary size check,
    which only the real file passes)."""
    constructor = openai_public.ENCODING_CONSTRUCTORS.get(name)
    expected = expected_files().get(name)
    if constructor is None or expected is None:
        known = ", ".join(expected_files())
        raise RunError(f"--tokenizer {path}: no tiktoken encoding {name!r} ({known} are)")

    def read(blobpath: str, expected_hash: str | None = None, *_: Any, **__: Any) -> Any:
        if verify and not tiktoken.load.check_hash(_read(path), expected.sha256):
            raise RunError(_wrong_file(path, name, expected))
        with _no_cache():
            return tiktoken.load.load_tiktoken_bpe(str(path))

    def refuse(*_: Any, **__: Any) -> Any:
        raise RunError(f"--tokenizer {path}: {name} does not load from one .tiktoken file")

    try:
        with _loaders(read, refuse):
            params = constructor()
        if not verify:
            params.pop("explicit_n_vocab", None)
        return tiktoken.Encoding(**params)
    except ValueError as exc:  # a line that is not "base64 rank", or ranks tiktoken refuses
        raise RunError(f"--tokenizer {path}: not a .tiktoken file tiktoken reads ({exc})") from None


def _wrong_file(path: str | Path, name: str, expected: EncodingFile) -> str:
    """Which file `path` is, and which one `name` needs (its URL, to download once)."""
    found = file_encodings(path)
    said = f"is {found[0]}'s file" if found else "is not one of tiktoken's encoding files"
    return (
        f"--tokenizer {path} {said}; the model counts with {name}: give {expected.file_name} "
        f"(download it once from {expected.url})"
    )


def _read(path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise RunError(f"--tokenizer {path}: cannot read it ({exc.strerror})") from None


@contextmanager
def _loaders(tiktoken_bpe: Loader, data_gym: Loader) -> Iterator[None]:
    """Run `openai_public`'s constructors with these in place of the two loaders they call
    (both download); restored afterwards. The lock keeps two swaps from interleaving."""
    with _SWAP:
        saved = openai_public.load_tiktoken_bpe, openai_public.data_gym_to_mergeable_bpe_ranks
        openai_public.load_tiktoken_bpe = tiktoken_bpe
        openai_public.data_gym_to_mergeable_bpe_ranks = data_gym
        try:
            yield
        finally:
            openai_public.load_tiktoken_bpe, openai_public.data_gym_to_mergeable_bpe_ranks = saved


@contextmanager
def _no_cache() -> Iterator[None]:
    """tiktoken's reader keeps a copy of what it reads in its cache folder; a dry run writes
    nothing, so the cache is off (`TIKTOKEN_CACHE_DIR=""`) while the user's file is read."""
    saved = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = ""
    try:
        yield
    finally:
        if saved is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = saved
