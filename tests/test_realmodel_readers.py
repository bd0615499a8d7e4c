"""The readers on SmolLM2's own text (the real-model tier): a classroom run whose students and
`reader` role are the real model, then `personasim audit --role reader=` on it. Invariants,
never opinions: every answer is read, unreadable or ambiguous with a reason; the reader role
is asked only where no rule read the answer (with `reader_confirms`, wherever a second reader
may) and its values are marked; the audit's counts add up and its calls are the reader's, at
temperature 0."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_realmodel import read_events, summary

from personasim.environments.classroom.numeric_answers import read_answer
from personasim.simulation import RunSettings, run_scenario, same_value
from personasim.simulation.cli.main import main
from personasim.simulation.runs.tools.reader_role import ROLE_REASKS

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


def classroom_on_smollm2(
    model: str, run_dir: Path, params: dict[str, Any], runs: dict[str, dict[str, Any]], name: str
) -> Any:
    """A classroom run whose students and reader role are SmolLM2, listed in the tier's table."""
    started = time.perf_counter()
    result = run_scenario(
        "classroom",
        params,
        model=model,
        out=run_dir,
        progress=False,
        concurrency=1,
        roles={"judge": ["scripted"], "reader": [model]},
        settings=RunSettings(max_tokens=256),
    )
    runs[name] = summary(run_dir, time.perf_counter() - started)
    return result


def test_smollm2_answers_read_by_rules_or_the_reader_role_then_audited(
    smollm2: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    realmodel_runs: dict[str, dict[str, Any]],
) -> None:
    model = f"openai:smollm2@{smollm2}"
    run_dir = tmp_path / "RUN"
    result = classroom_on_smollm2(
        model, run_dir, PARAMS, realmodel_runs, "classroom, SmolLM2 reader role"
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
    # the role is asked about each answer no rule could read (it read it, or it stays
    # unreadable), never about a read or an ambiguous one; a reply that broke the format is
    # asked again, at most ROLE_REASKS times
    statuses = Counter(r["status"] for r in readings)
    asked = len(by_role) + statuses["unreadable"]
    assert asked <= len(reader_calls) <= asked * (1 + ROLE_REASKS)
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


@pytest.mark.realmodel_extra  # its role calls go the way the case above sends them
def test_smollm2_as_the_reader_role_confirming_every_reading(
    smollm2: str, tmp_path: Path, realmodel_runs: dict[str, dict[str, Any]]
) -> None:
    """`reader_confirms`: the role is asked for every answer but an ambiguous one without
    candidates, and a value the rules read stands only where the role read the same."""
    model = f"openai:smollm2@{smollm2}"
    run_dir = tmp_path / "CONFIRM"
    name = "classroom, SmolLM2 reader role confirming"
    classroom_on_smollm2(model, run_dir, {**PARAMS, "reader_confirms": True}, realmodel_runs, name)
    events = read_events(run_dir)
    readings = [e.payload for e in events if e.kind == "reading.made"]
    reader_calls = [e for e in events if e.kind == "llm.call" and e.payload["role"] == "reader"]
    asked = 0
    for reading in readings:
        rules = read_answer(reading["text"], reading["problem"])  # what the rules read alone
        asked += rules.status == "unreadable" or rules.ok or bool(rules.candidates)
        if rules.ok and reading["status"] == "read":
            assert same_value(reading["value"], rules.value) and "reader role" in reading["by"]
        elif rules.ok:  # the role read another value, or none
            assert reading["status"] == "ambiguous" and "reader role" in reading["reason"]
        elif rules.status == "ambiguous" and reading["status"] == "read":
            assert any(same_value(reading["value"], c) for c in rules.candidates)
    assert readings and asked <= len(reader_calls) <= asked * (1 + ROLE_REASKS)
