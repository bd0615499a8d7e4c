"""persona-journey end to end on SmolLM2 (the real-model tier): invariants, never opinions."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from test_realmodel import (
    EVALUATORS,
    check_replay_and_metrics,
    check_run,
    read_events,
    run_cli,
    summary,
)

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(600)]

JOURNEY_MAX_TOKENS = 96
"""The longest replies the journey asks for (a transfer with its reason, a survey option, a
scene's answer, an evaluator's score) mostly fit; longer ones end at the limit and count as
what they are. It overrides the tier's --max-tokens (the last flag wins)."""


@pytest.fixture(autouse=True)
def _no_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_persona_journey_on_smollm2(
    smollm2: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    realmodel_runs: dict[str, dict[str, Any]],
) -> None:
    """One persona with `full` memory walks all three places on real output: the run is
    complete (exit 0, or 3 when not valid), counts equal the log, metrics recompute, the moves
    follow the route, and the later prompts hold its own reply. Kept to the tier's time (about
    a minute on 2 idle cores): one persona, one survey item asked once, one scene, no re-asks
    (a failed step is recorded and counted) and replies of at most JOURNEY_MAX_TOKENS."""
    out = tmp_path / "run"
    started = time.perf_counter()
    params = (
        "--n-personas", "1", "--memory", "full", "--scenes", "1", "--n-items", "1",
        "--survey-repeats", "1", "--max-repairs", "0", "--max-tokens", str(JOURNEY_MAX_TOKENS),
        *EVALUATORS,
    )  # fmt: skip
    code = run_cli("persona-journey", smollm2, out, "json_object", *params)
    elapsed = time.perf_counter() - started
    printed = capsys.readouterr()
    check_run(out, code, printed.out + printed.err, "json_object")
    check_replay_and_metrics(out, capsys)
    events = read_events(out)
    moves = [e for e in events if e.kind == "agent.moved"]
    assert [(e.payload["from"], e.payload["to"]) for e in moves] == [
        (None, "trust"),
        ("trust", "survey"),
        ("survey", "gym"),
    ]
    full = next(
        e.agent_id for e in events if e.kind == "journey.assigned" and e.payload["memory"] == "full"
    )
    replies = [
        e.payload["response"]["text"] for e in events if e.kind == "llm.call" and e.agent_id == full
    ]
    later = [
        e.payload["messages"]
        for e in events
        if e.kind == "llm.call" and e.agent_id == full and e.payload["task"] == "persona_gym.answer"
    ]
    made = {e.payload["task"] for e in events if e.kind == "decision.made" and e.agent_id == full}
    if later and made & {"trust.trustor", "career.probe"}:  # something to remember was accepted
        remembered = [m["content"] for m in later[0] if m["role"] == "assistant"]
        assert remembered and set(remembered) <= set(replies)
    realmodel_runs["persona-journey (json_object)"] = summary(out, elapsed)
