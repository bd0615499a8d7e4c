"""The classroom's zero-shot and self-refine cells on SmolLM2 at its 4,096-token context (the
real-model tier): a run reaches a verdict (valid, or not valid with the reason) even when the
tiny model rambles, because a re-ask shows it only the end of its reply and a conversation that
still outgrows the context is that unit's failed decision (`context_exceeded`), not the run's
stop. Before, a 2-question run stopped with exit 1 after 2–3 of 4 decisions."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from test_realmodel import check_replay_and_metrics, read_events, run_cli, summary

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(1200)]


def test_zero_shot_and_self_refine_reach_a_verdict_on_smollm2(
    smollm2: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    realmodel_runs: dict[str, dict[str, Any]],
) -> None:
    out = tmp_path / "run"
    started = time.perf_counter()
    code = run_cli(
        "classroom", smollm2, out, "text",
        "--n-questions", "1", "--repetitions", "1", "--strategies", "zero-shot,self-refine",
        "--races", "none", "--orders", "before", "--role", "judge=openai:smollm2-judge",
        "--max-repairs", "2",
    )  # fmt: skip
    printed = capsys.readouterr()
    assert code in (0, 3), printed.err  # a verdict: valid, or not valid with the reason
    assert "Traceback" not in printed.err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    overall = manifest["validity"]["overall"]
    events = read_events(out)
    failed = [e.payload for e in events if e.kind == "decision.failed"]
    overflowed = [f for f in failed if f["reason"] == "context_exceeded"]
    assert overall["context_exceeded"] == len(overflowed)
    assert overall["failed"] == len(failed)
    if code == 3:
        assert "RUN NOT VALID" in printed.out
    check_replay_and_metrics(out, capsys)
    realmodel_runs["classroom zero-shot, self-refine (context)"] = {
        **summary(out, time.perf_counter() - started),
        "context_exceeded": overall["context_exceeded"],
    }
