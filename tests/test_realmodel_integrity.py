"""Run integrity on a real model: a SmolLM2 run stopped by SIGTERM part-way resumes with every
logged request matched by key (the fingerprint and request-key checks pass on real answers),
and no unit is asked twice or lost."""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path

import pytest
from test_realmodel import MODEL, RUN_FLAGS
from test_run_integrity import COMMAND, count, decisions_per_agent, start, wait_for_decisions

from personasim.simulation import SQLiteEventStore
from personasim.simulation.cli.main import main

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(1200)]

N = 2
"""Two personas: the first decided, SIGTERM while the second is asked, the resume decides it."""


def test_sigterm_then_resume_on_smollm2(smollm2: str, tmp_path: Path) -> None:
    assert COMMAND
    out = tmp_path / "run"
    args = [
        "run",
        "trust-population",
        "--n-personas",
        str(N),
        "--model",
        MODEL,
        "--base-url",
        smollm2,
        "--out",
        str(out),
        *RUN_FLAGS,
        # One reply a decision: SmolLM2's free-text Trust Game answers do not parse (test_realmodel
        # FIRST_TRY_IN_TEXT), so re-asks would only add long replies; integrity is the point.
        *("--max-repairs", "0"),
    ]
    child = start(*args)
    wait_for_decisions(child, out, 1, within_s=500)
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=300)
    assert child.returncode == 143, stderr
    assert "Traceback" not in stderr
    logged = count(out, "llm.call")
    with SQLiteEventStore(out / "events.sqlite") as store:
        keys_before = [e.payload["request_key"] for e in store.read(["llm.call"])]
    # 3: RUN NOT VALID when the tiny model fails too many parses; integrity is what counts here
    assert main([*args, "--resume"]) in (0, 3)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    with SQLiteEventStore(out / "events.sqlite") as store:
        keys_after = [e.payload["request_key"] for e in store.read(["llm.call"])]
    assert keys_after[:logged] == keys_before  # the log was continued, not rewritten
    per_agent = decisions_per_agent(out) + Counter(dict.fromkeys(_failed_agents(out), 1))
    assert len(per_agent) == N and set(per_agent.values()) == {1}


def _failed_agents(run_dir: Path) -> list[str]:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return [e.agent_id for e in store.read(["decision.failed"])]
