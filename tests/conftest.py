"""Shared fixtures: every test gets its own response cache, so no test sees another's answers."""

from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the fake server module, for every test file

pytest_plugins = ("smollm2_server",)  # the real-model tier's server fixture (test_realmodel.py)

DATA = Path(__file__).resolve().parent / "data" / "public"
"""The public data sets the tests read, shipped with their licences (README there)."""


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("PERSONASIM_CACHE_DIR", str(cache))
    return cache


def trustor_reply(body: dict[str, Any]) -> str:
    """A fake model's trustor answer that depends on the prompt (so personas differ)."""
    prompt = body["messages"][0]["content"]
    amount = int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 11
    return f"BELIEF: b. DESIRE: d. INTENTION: i.\nFinally, I will give {amount} dollars"


@pytest.fixture
def clean_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Temporary files (tiktoken's default cache among them) go to an empty folder, so a
    leftover would show."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp
