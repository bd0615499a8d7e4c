"""`personasim counterfactual` on a real model (realmodel tier): SmolLM2-135M on llama.cpp.

2 levels × 3 personas of trust-population in JSON: the run ends (valid or not: a 135M model
fails often), every twin asks exactly one decision, made or failed and counted, the paired table
counts exactly the personas with a usable decision at both levels, and the metrics recompute
from the log. Nothing here is about what the model thinks of Agreeableness.
Run with `python -m pytest -q -m realmodel tests/test_realmodel_counterfactual.py`.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from test_realmodel import MODEL, RUN_FLAGS, summary

from personasim.simulation import SQLiteEventStore
from personasim.simulation.cli.main import main
from personasim.simulation.cli.options import NOT_VALID

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(300)]

PERSONAS = 3
LEVELS = ("Low", "High")


@pytest.fixture(autouse=True)
def _no_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_counterfactual_on_smollm2_counts_every_decision(
    smollm2: str, tmp_path: Path, capsys, realmodel_runs: dict[str, dict[str, Any]]
) -> None:
    out = tmp_path / "run"
    args = ["counterfactual", "trust-population", "--attribute", "Agreeableness"]
    args += ["--levels", ",".join(LEVELS), "--n-personas", str(PERSONAS), "--max-repairs", "0"]
    args += ["--model", MODEL, "--base-url", smollm2, "--response-format", "json_object"]
    args += ["--out", str(out), *RUN_FLAGS]
    started = time.perf_counter()
    code = main(args)
    elapsed = time.perf_counter() - started
    assert code in (0, NOT_VALID), capsys.readouterr().err  # not valid: too many failures
    with SQLiteEventStore(out / "events.sqlite") as store:
        events = list(store.read())
    decisions = [e for e in events if e.kind in ("decision.made", "decision.failed")]
    assert len(decisions) == len(LEVELS) * PERSONAS
    assert all(e.payload["task"] == "trust.trustor" for e in decisions)
    levels_of = {
        e.agent_id: e.payload["persona"]["counterfactual"]
        for e in events
        if e.kind == "agent.created" and "persona" in e.payload
    }
    assert len(levels_of) == len(LEVELS) * PERSONAS
    usable: dict[str, set[str]] = defaultdict(set)
    failed: dict[str, int] = defaultdict(int)
    for e in decisions:
        twin = levels_of[e.agent_id]
        if e.kind == "decision.made":
            usable[twin["of"]].add(twin["level"])
        else:
            failed[twin["level"]] += 1
    block = json.loads((out / "metrics.json").read_text())["metrics"]["counterfactual"]
    assert block["decisions_made"] + sum(block["decisions_failed"].values()) == len(decisions)
    assert block["decisions_failed"] == dict(failed)
    (row,) = block["rows"]
    assert row["n"] == sum(levels == set(LEVELS) for levels in usable.values())
    assert row["n"] + row["n_missing"] == PERSONAS
    if row["n"] >= 2:
        assert row["ci_low"] <= row["mean_difference"] <= row["ci_high"]
    else:
        assert row["ci_low"] is None and row["note"]  # undefined, with the reason in words
    assert main(["metrics", str(out), "--check"]) == 0
    realmodel_runs["counterfactual trust-population (json_object)"] = summary(out, elapsed)
