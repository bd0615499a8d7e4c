"""Scenario cards: `personasim list` reads the built-in scenarios' names, roles and parameters
without importing their run-time code (simulation/core/catalog.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from personasim.simulation.core.catalog import builtin_cards, card_of, sources_digest
from personasim.simulation.core.scenario import list_scenarios

HEAVY = ("langgraph", "mesa", "pandas", "matplotlib", "ray", "openai", "scipy", "aiohttp")
LISTED = (
    "import sys, contextlib, io, json\nfrom personasim.simulation.cli.main import main\n"
    "with contextlib.redirect_stdout(io.StringIO()) as text:\n"
    "    code = main(['list'])\n"
    f"print(json.dumps([code, sorted(m for m in {HEAVY!r} if m in sys.modules), "
    "len(text.getvalue())]))"
)


def live_cards() -> dict:
    return {
        name: card_of(cls)
        for name, cls in list_scenarios().items()
        if cls.__module__.startswith("personasim.scenarios.")
    }


def cached_files(folder: Path) -> list[Path]:
    return sorted((folder / "personasim").glob("cards-*.json"))


def test_cards_are_made_from_the_registry_once_and_cached(tmp_path: Path, monkeypatch) -> None:
    """No card file is shipped: the first use makes the cards from the registry's classes and
    keeps them under the sources' digest; the next use reads them back as made."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cached_files(tmp_path) == []
    assert builtin_cards() == live_cards()
    [cached] = cached_files(tmp_path)
    assert json.loads(cached.read_text())["sources"] == sources_digest()
    data = json.loads(cached.read_text())
    data["scenarios"][0]["summary"] = "a summary kept in the cache"
    cached.write_text(json.dumps(data))
    assert next(iter(builtin_cards().values())).summary == "a summary kept in the cache"


def test_a_card_of_other_sources_is_never_shown(tmp_path: Path, monkeypatch) -> None:
    """A cached file whose digest is not the current sources' (an edited checkout), or that is
    damaged, is not trusted: the cards are made from the classes again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    builtin_cards()
    [cached] = cached_files(tmp_path)
    stale = json.loads(cached.read_text())
    stale["sources"] = "0" * 64
    stale["scenarios"][0]["summary"] = "an old summary"
    cached.write_text(json.dumps(stale))
    assert builtin_cards() == live_cards()
    cached.write_text("{not json")
    assert builtin_cards() == live_cards()
    assert json.loads(cached.read_text())["sources"] == sources_digest()  # rewritten whole


def run_list(env: dict[str, str]) -> list:
    """[exit code, heavy modules imported, characters printed] of `personasim list`."""
    done = subprocess.run(
        [sys.executable, "-c", LISTED], capture_output=True, text=True, check=True, env=env
    )
    return json.loads(done.stdout)


def test_list_imports_no_heavy_library(tmp_path: Path) -> None:
    """`personasim list` in a fresh process: the first listing with an empty cache imports the
    scenarios to make their cards; the next imports none of LangGraph, Mesa, pandas,
    matplotlib, Ray, openai or scipy."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    first = run_list(env)
    second = run_list(env)
    assert first[0] == second[0] == 0 and first[2] == second[2] > 1000
    assert "pandas" in first[1]
    assert second[1] == []


@pytest.mark.parametrize("name", ["trust-population", "classroom"])
def test_list_one_builtin_reads_its_card(name: str, capsys) -> None:
    from personasim.simulation.cli.main import main

    assert main(["list", name]) == 0
    printed = capsys.readouterr().out
    card = live_cards()[name]
    assert printed.startswith(f"{name} — {card.summary}")
    assert all(p.flag in printed for p in card.params)


def test_list_shows_types_as_typed_and_columns_in_line(capsys) -> None:
    """`Annotated[...]` shows as its type, and in each scenario's table every parameter's type
    starts in one column, long flags (`--counterfactual-attribute`) included."""
    from personasim.simulation.cli.main import main

    for name, card in live_cards().items():
        assert main(["list", name]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert not any("Annotated" in line for line in lines)
        starts = set()
        for p in card.params:
            line = next(line for line in lines if line.startswith(f"  {p.flag} "))
            starts.add(line.index(p.kind[:10], len(p.flag) + 2))  # a long kind folds
        assert len(starts) == 1, (name, starts)
