"""`--environments authors`: the PersonaGym authors' 150 settings, shipped with the package
under their MIT licence, as the pool the selector chooses from."""

from __future__ import annotations

from pathlib import Path

from conftest import DATA

from personasim.environments.persona_gym.place import SETTINGS_POOLS, load_settings, shipped_file
from personasim.simulation import SQLiteEventStore
from personasim.simulation.cli.main import main

RELEASED = DATA / "personagym" / "environments.txt"


def test_the_authors_pool_is_shipped_with_its_licence() -> None:
    pool = load_settings(shipped_file(SETTINGS_POOLS["authors"]))
    assert len(pool) == 150 and pool[:3] == ("Wedding", "Business Dinner", "Classroom")
    licence = shipped_file("persona_gym_LICENSE_authors.txt").read_text("utf-8")
    assert licence.startswith("MIT License") and "Copyright (c) 2025 Vinay Samuel" in licence
    assert "persona_gym_settings_authors.txt" in shipped_file("persona_gym_README.md").read_text()


def test_the_shipped_pool_is_the_released_list() -> None:
    released = tuple(line for line in RELEASED.read_text("utf-8").splitlines() if line)
    assert load_settings(shipped_file(SETTINGS_POOLS["authors"])) == released


def test_the_authors_settings_are_chosen_by_name(tmp_path: Path) -> None:
    out = tmp_path / "run"
    small = ["--n-personas", "2", "--n-environments", "3", "--questions-per-task", "1"]
    args = ["run", "persona-gym", *small, "--tasks", "Expected Action"]
    assert main([*args, "--environments", "authors", "--out", str(out), "--no-progress"]) == 0
    pool = load_settings(shipped_file(SETTINGS_POOLS["authors"]))
    with SQLiteEventStore(out / "events.sqlite") as store:
        events = list(store.read(["llm.call", "gym.placed", "environment.created"]))
    prompts = [
        e.payload["messages"][0]["content"]
        for e in events
        if e.kind == "llm.call" and e.payload["task"] == "persona_gym.select"
    ]
    assert len(prompts) == 2 and all(all(f"- {s}\n" in p for s in pool) for p in prompts)
    placed = [s for e in events if e.kind == "gym.placed" for s in e.payload["settings"]]
    assert len(placed) == 6 and set(placed) <= set(pool)
    assert not set(placed) <= set(load_settings(shipped_file(SETTINGS_POOLS["shipped"])))
