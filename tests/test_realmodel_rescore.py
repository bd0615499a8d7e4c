"""`personasim rescore` on SmolLM2 (the real-model tier): a classroom run whose DoC judge is the
real model, rescored by the same model at temperature 0 without the cache, agrees with itself;
no student is asked again and the source run is untouched. Invariants, never opinions."""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_realmodel import check_replay_and_metrics, read_events, summary

from personasim.simulation import RunSettings, run_scenario
from personasim.simulation.cli.main import main

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(600)]

SOURCE = {
    "n_questions": 2,
    "repetitions": 1,
    "strategies": "zero-shot",
    "races": "none",
    "max_repairs": 1,
}
"""Four judged pairs (2 questions × 2 orders): the scripted students answer, SmolLM2 judges."""
JUDGE_MAX_TOKENS = 96
"""A few sentences and the closing `Score: N`; a reply cut short is re-asked once."""


@pytest.fixture(autouse=True)
def _no_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def digests(run_dir: Path) -> dict[str, str]:
    return {
        str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(run_dir.rglob("*"))
        if p.is_file()
    }


def test_smollm2_judge_rescored_by_itself_at_temperature_0_agrees(
    smollm2: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    realmodel_runs: dict[str, dict[str, Any]],
) -> None:
    judge = f"openai:smollm2-judge@{smollm2}"
    source = tmp_path / "RUN"
    started = time.perf_counter()
    run_scenario(
        "classroom",
        SOURCE,
        out=source,
        progress=False,
        concurrency=1,
        roles={"judge": [judge]},
        settings=RunSettings(max_tokens=JUDGE_MAX_TOKENS),
    )
    realmodel_runs["classroom, SmolLM2 judge (source)"] = summary(
        source, time.perf_counter() - started
    )
    before = digests(source)
    new = tmp_path / "NEW"
    started = time.perf_counter()
    args = ["rescore", str(source), "--role", f"judge={judge}", "--out", str(new)]
    code = main([*args, "--no-cache", "--concurrency", "1", "--timeout", "300", "--no-progress"])
    assert code in (0, 3), capsys.readouterr().err  # 3: valid, but over the failure limit
    realmodel_runs["classroom rescore, same judge"] = summary(new, time.perf_counter() - started)
    assert digests(source) == before

    calls = Counter(
        (e.payload["role"], e.payload["source"]) for e in read_events(new) if e.kind == "llm.call"
    )
    asked = {role for (role, how) in calls if how != "source_run"}
    assert asked == {"judge"}, calls
    assert calls["judge", "model"] > 0  # really asked again: --no-cache
    assert calls["judge", "cache"] == 0

    block = json.loads((new / "metrics.json").read_text())["metrics"]["rescore"]
    judged = [
        e for e in read_events(source)
        if e.kind == "decision.made" and e.payload["task"] == "classroom.judge"
    ]  # fmt: skip
    assert block["n_paired"] == len(judged) > 0
    statistics = block["agreement"]["statistics"]
    assert statistics["exact_agreement"]["value"] == 1.0
    alpha = statistics["krippendorff_alpha"]
    # Identical scores agree perfectly; α is undefined only if every score was the same.
    assert alpha["value"] == 1.0 or "constant" in alpha["value_undefined"], alpha
    check_replay_and_metrics(new, capsys)
