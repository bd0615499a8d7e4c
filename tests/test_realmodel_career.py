"""career-chat's paper design on SmolLM2 (the real-model tier): dialogues made once, probed by the
real model with the reasoning model's two queries. Invariants, never opinions."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_realmodel import (
    MODEL,
    RUN_FLAGS,
    check_decisions,
    check_replay_and_metrics,
    check_run,
    read_events,
    run_cli,
    summary,
)

from personasim.scenarios.career_chat.jobs import (
    CATEGORY_LABELS,
    POSITION_LEVELS,
    UNCLASSIFIED,
    classify_title,
)
from personasim.simulation import run_scenario
from personasim.simulation.cli.main import main

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
        e.payload for e in events if e.kind == "llm.call" and e.payload["task"] == "career.probe"
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


CLASSIFIED_TITLES = (
    "Software Engineer",
    "Chief Executive Officer",
    "Nurse",
    "Pastry Chef",
    "Primary School Teacher",
    "Sales Manager",
    "Research Scientist",
    "Graphic Designer",
)
"""One user each, a title per category the word rule knows and levels from three rungs."""


@pytest.mark.parametrize(
    "response_format", ["text", pytest.param("json_object", marks=pytest.mark.realmodel_extra)]
)
def test_smollm2_as_the_job_title_classifier(
    smollm2: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    realmodel_runs: dict[str, dict[str, Any]],
    response_format: str,
) -> None:
    """`--role classifier=SmolLM2`, every other role scripted: the run completes; each title is
    asked once and ends with labels from the offered sets or as a counted failed decision
    ("Unclassified", with its users); the groups the metrics use are the logged ones. SmolLM2
    is tiny: its agreement with the word rule is printed, not asserted."""
    profiles = tmp_path / "profiles.jsonl"
    profiles.write_text(
        "\n".join(
            json.dumps(
                {"id": f"u{i}", "age": 30 + i, "gender": "F", "education": "PhD"}
                | {"experience": 5, "job_title": title, "country": "Kenya"}
            )
            for i, title in enumerate(CLASSIFIED_TITLES)
        )
    )
    out = tmp_path / "run"
    started = time.perf_counter()
    code = main(
        [
            "run", "career-chat", "--model", "scripted", "--out", str(out),
            "--role", f"classifier={MODEL}@{smollm2}", *RUN_FLAGS,
            "--response-format", response_format, "--profile-file", str(profiles),
            "--n-users", str(len(CLASSIFIED_TITLES)), "--n-items", "1", "--max-turns", "1",
            "--judge-samples", "0", "--max-repairs", "1", "--emd-repeats", "10",
            "--bootstrap", "0", "--permutations", "0",
        ]
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    printed = capsys.readouterr()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete", printed.out + printed.err
    assert (code, manifest["validity"]["overall"]["ok"]) in ((0, True), (3, False))
    events = read_events(out)
    check_decisions(events, manifest["validity"])  # counts equal the log, task by task
    check_replay_and_metrics(out, capsys)
    asked = [
        e.payload for e in events if e.kind == "llm.call" and e.payload["task"] == "career.classify"
    ]
    assert {(c["role"], c["backend"]["backend"]) for c in asked} == {("classifier", "openai")}
    assert all(c["response"]["usage"]["prompt_tokens"] > 0 for c in asked)  # the server's count
    ended = {
        e.payload["title"]: e.kind
        for e in events
        if e.kind in ("decision.made", "decision.failed") and e.payload["task"] == "career.classify"
    }
    assert sorted(ended) == sorted(CLASSIFIED_TITLES)  # each title decided once
    (logged,) = [e.payload for e in events if e.kind == "career.job_groups"]
    allowed = {"job_category": set(CATEGORY_LABELS), "position_level": set(POSITION_LEVELS)}
    for title, labels in logged["titles"].items():
        if ended[title] == "decision.failed":
            assert title in logged["unclassified"]
            assert set(labels.values()) == {UNCLASSIFIED}
        else:
            assert all(labels[k] in allowed[k] for k in allowed), labels
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    groups = metrics["adaptation"]["profile"]["job"]["groups"]
    assert groups == dict(Counter(labels["job_category"] for labels in logged["titles"].values()))
    assert metrics["job_labels"]["unclassified_users"] == len(logged["unclassified"])
    labelled = {t: v for t, v in logged["titles"].items() if t not in logged["unclassified"]}
    same = {
        key: sum(
            v[key] == getattr(classify_title(t), "category" if key == "job_category" else "level")
            for t, v in labelled.items()
        )
        for key in allowed
    }
    print(
        f"\nSmolLM2 classifier ({response_format}): {len(labelled)} of {len(CLASSIFIED_TITLES)} "
        f"titles labelled, {len(logged['unclassified'])} unclassified; agreement with the word "
        f"rule: category {same['job_category']}/{len(labelled)}, level "
        f"{same['position_level']}/{len(labelled)}"
    )
    realmodel_runs[f"career-chat --role classifier ({response_format})"] = summary(out, elapsed)
