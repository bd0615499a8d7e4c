"""Scenario cards: `personasim list` reads the built-in scenarios' names, roles and parameters
without importing their run-time code (simulation/core/catalog.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from personasim.simulation.core.catalog import (
    builtin_cards,
    card_of,
    catalog_path,
    sources_digest,
    write_catalog,
)
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


def test_the_shipped_cards_are_the_scenarios_own() -> None:
    """A built-in scenario's summary, roles or parameters changed: the shipped cards must say
    so too (regenerate: python -c "from personasim.simulation.core.catalog import
    write_catalog; write_catalog()")."""
    shipped = json.loads(catalog_path().read_text(encoding="utf-8"))
    live = live_cards()
    assert [c["name"] for c in shipped["scenarios"]] == list(live), "regenerate catalog.json"
    assert builtin_cards(catalog_path()) is not None
    for entry in shipped["scenarios"]:
        card = live[entry["name"]]
        assert entry["summary"] == card.summary
        assert [tuple(r) for r in entry["roles"]] == list(card.roles), "regenerate catalog.json"
        assert [tuple(p.values()) for p in entry["params"]] == [
            (p.flag, p.kind, p.default, p.description) for p in card.params
        ], f"{entry['name']}: regenerate catalog.json"


def test_cards_from_a_current_file_and_from_changed_sources(tmp_path: Path, monkeypatch) -> None:
    """A card file of the current sources is read as written; one of other sources is not
    trusted: the cards are made from the classes and cached under the sources' digest."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    current = write_catalog(tmp_path / "catalog.json")
    assert builtin_cards(current) == live_cards()
    stale = json.loads(current.read_text())
    stale["sources"] = "0" * 64
    stale["scenarios"][0]["summary"] = "an old summary"
    current.write_text(json.dumps(stale))
    cards = builtin_cards(current)
    assert cards == live_cards()  # the old summary is not shown
    cached = list((tmp_path / "cache" / "personasim").glob("cards-*.json"))
    assert len(cached) == 1 and json.loads(cached[0].read_text())["sources"] == sources_digest()


def run_list(env: dict[str, str]) -> list:
    """[exit code, heavy modules imported, characters printed] of `personasim list`."""
    done = subprocess.run(
        [sys.executable, "-c", LISTED], capture_output=True, text=True, check=True, env=env
    )
    return json.loads(done.stdout)


def test_list_imports_no_heavy_library(tmp_path: Path) -> None:
    """`personasim list` in a fresh process: with the shipped cards current it imports none of
    LangGraph, Mesa, pandas, matplotlib, Ray, openai or scipy; with changed sources, only the
    first listing does (to make the cards), the next reads them from the cache."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    current = json.loads(catalog_path().read_text())["sources"] == sources_digest()
    first = run_list(env)
    second = run_list(env)
    assert first[0] == second[0] == 0 and first[2] == second[2] > 1000
    assert second[1] == []
    if current:
        assert first[1] == []
    else:
        assert "pandas" in first[1]


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
