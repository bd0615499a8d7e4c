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
import yaml
from test_realmodel import check_replay_and_metrics, read_events, summary

from personasim.simulation import RunSettings, run_scenario
from personasim.simulation.cli.main import main

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(600)]

SOURCE = {
    "n_questions": 2,
    "repetitions": 1,
    "strategies": "zero-shot",
    "races": "none",
    "max_repairs": 0,
}
"""Four judged pairs (2 questions × 2 orders): the scripted students answer, SmolLM2 judges. No
re-ask: an unusable judgement is one at temperature 0 in both runs, missing for both."""
JUDGE_MAX_TOKENS = 48
"""A one-sentence JSON answer."""
EXPLAIN = "Explain your judgement in a few sentences, then end with a line 'Score: N'"
SCORE_ONLY = 'Reply in JSON only, as {"explanation": "<one short sentence>", "score": N}'

"""SmolLM2 asked to explain first never reached `Score: N` (0 of 4, in text or JSON, within 128
tokens), nor wrote it when asked for that line alone; asked for a one-sentence JSON answer it
scores 3 of 4 pairs, so both runs use this edited pack (`--prompts`)."""


def score_only_pack(path: Path) -> Path:
    """The shipped classroom pack, both judge entries asking for the score line alone."""
    assert main(["prompts", "classroom", "--output", str(path)]) == 0
    pack = yaml.safe_load(path.read_text())
    for name in ("judge", "judge_swapped"):
        entry = pack["prompts"][name]
        assert EXPLAIN in entry["text"]
        entry["text"] = entry["text"].replace(EXPLAIN, SCORE_ONLY)
    path.write_text(yaml.safe_dump(pack, allow_unicode=True, sort_keys=False))
    return path


@pytest.fixture(autouse=True)
def _no_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def digests(run_dir: Path) -> dict[str, str]:
    return {
        str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(run_dir.rglob("*"))
        if p.is_file()
    }


def judge_replies(run_dir: Path) -> dict[str, list[str]]:
    replies: dict[str, list[str]] = {}
    for event in read_events(run_dir):
        if event.kind == "llm.call" and event.payload["role"] == "judge":
            replies.setdefault(event.scope, []).append(event.payload["response"]["text"])
    return replies


def test_smollm2_judge_rescored_by_itself_at_temperature_0_agrees(
    smollm2: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    realmodel_runs: dict[str, dict[str, Any]],
) -> None:
    judge = f"openai:smollm2-judge@{smollm2}"
    source = tmp_path / "RUN"
    pack = score_only_pack(tmp_path / "classroom.yaml")
    started = time.perf_counter()
    run_scenario(
        "classroom",
        SOURCE,
        out=source,
        progress=False,
        concurrency=1,
        roles={"judge": [judge]},
        settings=RunSettings(response_format="json_object", max_tokens=JUDGE_MAX_TOKENS),
        prompts=pack,
    )
    realmodel_runs["classroom, SmolLM2 judge (source)"] = summary(
        source, time.perf_counter() - started
    )
    before = digests(source)
    new = tmp_path / "NEW"
    started = time.perf_counter()
    args = ["rescore", str(source), "--role", f"judge={judge}", "--out", str(new)]
    args += ["--prompts", str(pack)]
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

    # Temperature 0, the same prompt: SmolLM2 says the same words in both runs, unit by unit.
    assert judge_replies(new) == judge_replies(source)

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
