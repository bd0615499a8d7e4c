"""career-chat's paper design on SmolLM2 (the real-model tier): dialogues made once, probed by the
real model with the reasoning model's two queries. Invariants, never opinions."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from test_realmodel import check_replay_and_metrics, check_run, read_events, run_cli, summary

from personasim.simulation import run_scenario

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(600)]

PROBE_MAX_TOKENS = 96
"""A survey answer and a short thinking fit; longer ones end at the limit and count as what
they are. It overrides the tier's --max-tokens (the last flag wins)."""


@pytest.fixture(autouse=True)
def _no_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_smollm2_probes_dialogues_made_elsewhere_in_two_passes(
    smollm2: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    realmodel_runs: dict[str, dict[str, Any]],
) -> None:
    """Dialogues from the scripted behaviour model, probed by SmolLM2 with `--reasoning-pass`:
    the run makes no user, detector or assistant call; every probe that was asked followed a
    usable thinking pass whose text it carries; counts equal the log; metrics recompute."""
    params = {"n_users": 2, "n_items": 1, "max_turns": 1, "judge_samples": 0}
    source = run_scenario("career-chat", params, out=tmp_path / "dialogues", progress=False)
    out = tmp_path / "run"
    started = time.perf_counter()
    code = run_cli(
        "career-chat",
        smollm2,
        out,
        "json_object",
        *("--dialogues-from", str(source.run_dir), "--n-items", "1", "--judge-samples", "0"),
        *("--reasoning-pass", "true", "--max-repairs", "1"),
        *("--emd-repeats", "10", "--bootstrap", "0", "--permutations", "0"),
        *("--max-tokens", str(PROBE_MAX_TOKENS)),
    )
    elapsed = time.perf_counter() - started
    printed = capsys.readouterr()
    check_run(out, code, printed.out + printed.err, "json_object")
    check_replay_and_metrics(out, capsys)
    events = read_events(out)
    tasks = {e.payload["task"] for e in events if e.kind == "llm.call"}
    assert tasks <= {"career.reasoning", "career.probe"} and "career.reasoning" in tasks
    thoughts = {
        (e.payload["user"], e.payload["format"]): e.payload["value"]
        for e in events
        if e.kind == "decision.made" and e.payload["task"] == "career.reasoning"
    }
    probes = [
        e.payload
        for e in events
        if e.kind == "llm.call" and e.payload["task"] == "career.probe"
    ]
    for probe in probes:  # asked only after a usable thinking, which it carries
        thought = probe["messages"][-1]
        assert thought["role"] == "assistant" and thought["content"].startswith("<think>\n")
        assert thought["content"].removeprefix("<think>\n").removesuffix("\n</think>\n") in (
            thoughts.values()
        )
    realmodel_runs["career-chat --dialogues-from --reasoning-pass (json_object)"] = summary(
        out, elapsed
    )
