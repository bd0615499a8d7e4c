"""The readers on SmolLM2's own text (the real-model tier): a classroom run whose students and
`reader` role are the real model, then `personasim audit --role reader=` on it. Invariants,
never opinions: every answer is read, unreadable or ambiguous with a reason; the reader role
is asked only where no rule read the answer and its values are marked; the audit's counts add
up and its calls are the reader's, at temperature 0."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_realmodel import read_events, summary

from personasim.simulation import RunSettings, run_scenario
from personasim.simulation.cli.main import main

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(600)]

PARAMS = {
    "n_questions": 2,
    "repetitions": 1,
    "strategies": "zero-shot",
    "races": "none",
    "orders": "before",
    "max_repairs": 0,
}


@pytest.fixture(autouse=True)
def _no_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_smollm2_answers_read_by_rules_or_the_reader_role_then_audited(
    smollm2: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    realmodel_runs: dict[str, dict[str, Any]],
) -> None:
    model = f"openai:smollm2@{smollm2}"
    run_dir = tmp_path / "RUN"
    started = time.perf_counter()
    result = run_scenario(
        "classroom",
        PARAMS,
        model=model,
        out=run_dir,
        progress=False,
        concurrency=1,
        roles={"judge": ["scripted"], "reader": [model]},
        settings=RunSettings(max_tokens=256),
    )
    realmodel_runs["classroom, SmolLM2 reader role"] = summary(
        run_dir, time.perf_counter() - started
    )
    events = read_events(run_dir)
    readings = [e.payload for e in events if e.kind == "reading.made"]
    graded = [e.payload for e in events if e.kind == "classroom.graded"]
    assert len(readings) == len(graded) > 0
    for reading in readings:
        assert reading["status"] in ("read", "unreadable", "ambiguous")
        assert (reading["status"] == "read") == (reading.get("reason") is None), reading
        assert reading["status"] != "read" or reading["value"] is not None
    by_role = [r for r in readings if r["by"] == "reader role"]
    reader_calls = [e for e in events if e.kind == "llm.call" and e.payload["role"] == "reader"]
    # the role is asked once per answer no rule could read (it read it, or it stays
    # unreadable), never for a read or an ambiguous one
    statuses = Counter(r["status"] for r in readings)
    assert len(reader_calls) == len(by_role) + statuses["unreadable"]
    assert all(r["status"] == "read" for r in by_role)
    counted = result.manifest["validity"]["readings"]["math_answer"]
    assert (counted["read"], counted["unreadable"], counted["ambiguous"]) == (
        statuses["read"],
        statuses["unreadable"],
        statuses["ambiguous"],
    )

    code = main(
        ["audit", str(run_dir), "--sample", "20", "--role", f"reader={model}",
         "--no-cache", "--concurrency", "1", "--timeout", "300"]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code in (0, 3), printed
    audit = json.loads((run_dir / "reports" / "readings_audit.json").read_text())
    result_math = audit["readers"]["math_answer"]
    assert result_math["audited"]
    sampled = result_math["sampled"]
    assert sampled == min(20, statuses["read"])
    assert result_math["agree"] + result_math["disagree"] + result_math["unconfirmed"] == sampled
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["validity"]["readings_audit"]["ok"] == audit["ok"] == (code == 0)
    assert "math_answer:" in printed
