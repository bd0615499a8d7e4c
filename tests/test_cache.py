"""The response cache: it lives beside the runs, an edited scripted rule is never answered from
it, and `personasim cache info|clear` show and empty it."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from personasim.simulation import ChatRequest, Message, ScriptedBackend, list_scenarios
from personasim.simulation.cli.main import main
from personasim.simulation.llm import scripted

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "coin_guess.py"
RULE_LINE = '    lean = 0.5 if not history else (0.3 if history[-1] == "heads" else 0.7)\n'


@pytest.fixture(autouse=True)
def restore_rules() -> Iterator[None]:
    """Rules registered here (from files, or by hand) are gone for the tests after."""
    list_scenarios()  # the built-in scenarios' rules are registered before the snapshot
    with scripted.RULES.scoped():
        yield


def llm(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())["llm"]


def metrics(run_dir: Path) -> dict:
    return json.loads((run_dir / "metrics.json").read_text())["metrics"]


def run_coin(path: Path, out: Path, *more: str) -> int:
    return main(["run", str(path), "--n-personas", "5", "--out", str(out), "--no-progress", *more])


def test_an_edited_rule_is_not_answered_from_the_cache(tmp_path: Path) -> None:
    coin = tmp_path / "coin_guess.py"
    shutil.copy(EXAMPLE, coin)
    source = coin.read_text()
    assert RULE_LINE in source

    assert run_coin(coin, tmp_path / "first") == 0
    assert llm(tmp_path / "first")["calls"] == 15
    assert run_coin(coin, tmp_path / "again") == 0
    assert llm(tmp_path / "again") == {**llm(tmp_path / "again"), "calls": 0, "cache_hits": 15}

    coin.write_text(source.replace(RULE_LINE, RULE_LINE.replace("0.3", "0.05")))
    assert run_coin(coin, tmp_path / "edited") == 0
    assert llm(tmp_path / "edited")["calls"] > 0

    # A comment in the rule is a new rule to the cache, but not new randomness: the draws come
    # from the request alone, so the decisions are those of the first run.
    coin.write_text(source.replace(RULE_LINE, RULE_LINE + "    # a comment\n"))
    assert run_coin(coin, tmp_path / "commented") == 0
    assert llm(tmp_path / "commented")["calls"] == 15
    assert metrics(tmp_path / "commented") == metrics(tmp_path / "first")


def request(task: str) -> ChatRequest:
    return ChatRequest(messages=(Message(role="user", content="Guess."),), task=task)


def test_the_rule_hash_is_computed_once_per_rule(monkeypatch) -> None:
    reads = []
    getsource = scripted.inspect.getsource
    monkeypatch.setattr(scripted.inspect, "getsource", lambda f: reads.append(f) or getsource(f))

    @scripted.scripted_behaviour("test.once")
    def rule(request, rng):
        return "GUESS: heads"

    backend = ScriptedBackend()
    keys = {backend.cache_key(request("test.once")) for _ in range(200)}
    assert len(keys) == 1
    assert reads == [rule]

    @scripted.scripted_behaviour("test.once")
    def rule(request, rng):  # the same task, redefined
        return "GUESS: tails"

    assert backend.cache_key(request("test.once")) not in keys
    assert reads[-1] is rule and len(reads) == 2


def test_a_rule_without_source_is_hashed_by_its_code() -> None:
    def compiled(body: str):
        namespace: dict = {}
        exec(f"def rule(request, rng):\n    return {body!r}\n", namespace)
        return namespace["rule"]

    heads, heads_again, tails = compiled("heads"), compiled("heads"), compiled("tails")
    with pytest.raises(OSError):
        scripted.inspect.getsource(heads)
    assert scripted.rule_fingerprint(heads) == scripted.rule_fingerprint(heads_again)
    assert scripted.rule_fingerprint(heads) != scripted.rule_fingerprint(tails)


def test_an_unknown_task_still_has_a_key() -> None:
    backend = ScriptedBackend()
    assert backend.cache_key(request("no.such.task")) == backend.cache_key(request("no.such.task"))


def cache_entries(directory: Path) -> int:
    with sqlite3.connect(directory / "responses.sqlite") as db:
        return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def run_trust(out: Path, *more: str) -> int:
    args = ["run", "trust-population", "--n-personas", "4", "--out", str(out), "--no-progress"]
    return main([*args, *more])


def test_the_default_cache_is_beside_the_runs(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("PERSONASIM_CACHE_DIR")
    monkeypatch.chdir(tmp_path)
    assert run_trust(Path("runs/a")) == 0
    cache = tmp_path / ".personasim" / "cache"
    assert cache_entries(cache) == llm(tmp_path / "runs/a")["calls"] > 0
    assert run_trust(Path("runs/b")) == 0
    assert llm(tmp_path / "runs/b")["calls"] == 0

    capsys.readouterr()
    assert main(["cache", "info"]) == 0
    printed = capsys.readouterr().out
    assert f"cache: {cache}" in printed
    assert f"entries: {cache_entries(cache)}\n" in printed
    assert "size on disk: " in printed and "size on disk: 0 bytes" not in printed


def test_cache_dir_flag_and_environment_override_the_default(
    tmp_path: Path, monkeypatch, isolated_cache: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_trust(Path("runs/env")) == 0
    assert cache_entries(isolated_cache) > 0  # $PERSONASIM_CACHE_DIR, set by conftest
    flag = tmp_path / "flagged"
    assert run_trust(Path("runs/flag"), "--cache-dir", str(flag)) == 0
    assert llm(tmp_path / "runs/flag")["calls"] > 0  # a different cache: nothing to reuse
    assert cache_entries(flag) == cache_entries(isolated_cache)
    assert not (tmp_path / ".personasim").exists()


def test_cache_clear_removes_everything_and_says_what(
    tmp_path: Path, isolated_cache: Path, capsys
) -> None:
    assert run_trust(tmp_path / "a") == 0
    entries = cache_entries(isolated_cache)
    capsys.readouterr()
    assert main(["cache", "clear"]) == 0
    printed = capsys.readouterr().out
    assert f"removed {entries} cached responses (" in printed
    assert str(isolated_cache) in printed
    assert not isolated_cache.exists()

    assert main(["cache", "info", "--cache-dir", str(isolated_cache)]) == 0
    assert "entries: 0" in capsys.readouterr().out
    assert not isolated_cache.exists()  # info creates nothing
    assert run_trust(tmp_path / "b") == 0
    assert llm(tmp_path / "b")["calls"] == llm(tmp_path / "a")["calls"] > 0


def test_a_cache_dir_holding_something_else_is_a_clear_error(tmp_path: Path, capsys) -> None:
    (tmp_path / "responses.sqlite").write_text("not a database")
    for action in ("info", "clear"):
        assert main(["cache", action, "--cache-dir", str(tmp_path)]) == 2
        error = capsys.readouterr().err.replace("\n", "")
        assert "responses.sqlite: not a personasim response cache" in error
    assert (tmp_path / "responses.sqlite").read_text() == "not a database"
