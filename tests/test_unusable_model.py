"""A model that never answers in the requested format: every scenario still finishes, says the
run is not valid (exit 3), records every failure with the model's reply, and computes its
metrics from what it has (the real-model tier found a scenario whose metrics crashed here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer

from personasim.simulation import SQLiteEventStore
from personasim.simulation.cli.main import main

JUNK = "I am not sure what you mean."

SMALL: dict[str, tuple[str, ...]] = {
    "trust-population": ("--n-personas", "3"),
    "trust-beliefs": ("--n-personas", "3", "--attributes", "Conscientiousness"),
    "trust-conditioning": ("--n-personas", "2", "--attributes", "Conscientiousness"),
    "trust-forecast": ("--archetypes", "M3", "--rounds", "2"),
    "classroom": (
        "--n-questions", "1", "--repetitions", "1", "--strategies", "zero-shot,two-stage",
        "--races", "AA", "--orders", "before", "--role", "judge=openai:fake-model",
    ),
    "persona-gym": (
        "--n-personas", "1", "--n-environments", "1", "--questions-per-task", "1",
        "--role", "evaluator=openai:fake-a,openai:fake-b", "--role", "examples=openai:fake-model",
    ),
    "persona-gym-static": (
        "--pipeline", "static", "--n-personas", "1", "--questions-per-task", "1",
        "--role", "evaluator=openai:fake-a,openai:fake-b", "--role", "examples=openai:fake-model",
    ),
    "career-chat": ("--n-users", "2", "--n-items", "1", "--judge-samples", "1"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(SMALL))
def test_nothing_parses(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "r"
    scenario = case.removesuffix("-static")
    with FakeOpenAIServer(responder=lambda body: JUNK) as server:
        args = ["run", scenario, "--model", "openai:fake-model", "--base-url", server.base_url]
        code = main([*args, "--out", str(out), "--no-progress", "--max-repairs", "0", *SMALL[case]])
    printed = capsys.readouterr()
    assert code == 3, printed.err
    assert "RUN NOT VALID" in printed.out
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    overall = manifest["validity"]["overall"]
    assert overall["failed"] > 0  # free-text answers (a student's, a persona's) still parse
    with SQLiteEventStore(out / "events.sqlite") as store:
        failed = [e.payload for e in store.read(["decision.failed"])]
    assert len(failed) == overall["failed"]
    assert all(p["last_reply"] == JUNK and p["error"] for p in failed)
    assert main(["metrics", str(out), "--check"]) == 0
