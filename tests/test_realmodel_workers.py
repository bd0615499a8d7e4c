"""`--workers 2` on a real model: the coin-guess example's decisions run in two worker
processes against SmolLM2's server; every persona decides once per round (or fails, counted),
every answer is SmolLM2's, and the same run with one process is answered wholly from the cache
the first run wrote (the workers' requests are keyed exactly as one process keys them) with the
same metrics."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from test_realmodel import COIN_GUESS, MODEL, RUN_FLAGS

from personasim.simulation import SQLiteEventStore
from personasim.simulation.cli.main import main

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(600)]

N = 2
SHORT = ("--response-format", "json_object", "--max-tokens", "64")  # a short JSON answer


def test_two_workers_on_smollm2(smollm2: str, tmp_path: Path) -> None:
    run = ["run", str(COIN_GUESS), "--n-personas", str(N), "--rounds", "1", "--model", MODEL]
    run += [*RUN_FLAGS, *SHORT, "--base-url", smollm2]
    # 3: RUN NOT VALID when the tiny model fails too many parses; the workers are what count
    # one request in flight per worker (the server queues the second; the timeout is 300 s)
    wide = ["--workers", "2", "--concurrency", "2", "--out", str(tmp_path / "wide")]
    assert main([*run, *wide]) in (0, 3)
    manifest = json.loads((tmp_path / "wide" / "manifest.json").read_text())
    assert manifest["client"]["workers"] == 2
    with SQLiteEventStore(tmp_path / "wide" / "events.sqlite") as store:
        events = list(store.read())
    calls = [e.payload for e in events if e.kind == "llm.call"]
    assert calls and all(c["source"] == "model" for c in calls)
    decided = Counter(e.agent_id for e in events if e.kind in ("decision.made", "decision.failed"))
    assert len(decided) == N and set(decided.values()) == {1}

    assert main([*run, "--out", str(tmp_path / "one")]) in (0, 3)
    with SQLiteEventStore(tmp_path / "one" / "events.sqlite") as store:
        again = [e.payload for e in store.read(["llm.call"])]
    assert [c["source"] for c in again] == ["cache"] * len(calls)
    assert (tmp_path / "one" / "metrics.json").read_text() == (
        tmp_path / "wide" / "metrics.json"
    ).read_text()
