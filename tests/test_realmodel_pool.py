"""An endpoint pool on a real model: SmolLM2's server reached as two replicas (its loopback
address spelled two ways), playing the coin-guess example. Requests are spread over both, every
persona decides once (or fails, counted), the manifest counts each endpoint, and the same run
with the replicas listed the other way round is answered wholly from the cache (the request
keys name the pool, not a replica)."""

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


def test_a_pool_of_two_replicas_on_smollm2(smollm2: str, tmp_path: Path) -> None:
    replicas = [smollm2, smollm2.replace("127.0.0.1", "localhost")]
    run = ["run", str(COIN_GUESS), "--n-personas", str(N), "--rounds", "1", "--model", MODEL]
    run += [*RUN_FLAGS, *SHORT]
    urls = [flag for url in replicas for flag in ("--base-url", url)]
    # 3: RUN NOT VALID when the tiny model fails too many parses; the pool is what counts here
    assert main([*run, *urls, "--out", str(tmp_path / "first")]) in (0, 3)
    manifest = json.loads((tmp_path / "first" / "manifest.json").read_text())
    assert manifest["model"] == {"backend": "openai", "pool": "base-url", "model": "smollm2"}
    endpoints = manifest["endpoints"][0]["endpoints"]
    with SQLiteEventStore(tmp_path / "first" / "events.sqlite") as store:
        events = list(store.read())
    calls = sum(e.kind == "llm.call" for e in events)
    assert [e["answered"] > 0 for e in endpoints] == [True, True]  # both replicas answered
    assert sum(e["answered"] for e in endpoints) == calls
    decided = Counter(e.agent_id for e in events if e.kind in ("decision.made", "decision.failed"))
    assert len(decided) == N and set(decided.values()) == {1}

    backwards = [flag for url in reversed(replicas) for flag in ("--base-url", url)]
    assert main([*run, *backwards, "--out", str(tmp_path / "again")]) in (0, 3)
    again = json.loads((tmp_path / "again" / "manifest.json").read_text())
    assert sum(e["requests"] for e in again["endpoints"][0]["endpoints"]) == 0  # all cached
    assert (tmp_path / "again" / "metrics.json").read_text() == (
        tmp_path / "first" / "metrics.json"
    ).read_text()
