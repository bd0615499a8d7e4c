"""`personasim rescore RUN --role judge=SPEC --out NEW`: only the scorer roles are asked, every
other answer comes from RUN's log; RUN is untouched; NEW is an ordinary run (checked, replayed,
resumed) whose metrics pair the two judges' scores item by item."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAIServer

from personasim.simulation import SQLiteEventStore, run_scenario
from personasim.simulation.cli.main import main
from personasim.simulation.core.scoring import ScoreItems, detail_scores

CLASSROOM = {
    "n_questions": 4,
    "repetitions": 2,
    "strategies": "none,zero-shot,self-refine",
    "races": "none,AA",
}
"""64 judged pairs: 2 strategies × 2 races × 2 orders × 4 questions × 2 repetitions."""


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rescore") / "RUN"
    run_scenario("classroom", CLASSROOM, out=out, progress=False, roles={"judge": ["scripted"]})
    return out


def digests(run_dir: Path) -> dict[str, str]:
    """Every file under the run directory and its SHA-256."""
    return {
        str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(run_dir.rglob("*"))
        if p.is_file()
    }


def metrics(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "metrics.json").read_text())["metrics"]


def calls(run_dir: Path) -> Counter[tuple[str, str]]:
    """(role, source) of every `llm.call` in the log."""
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return Counter((e.payload["role"], e.payload["source"]) for e in store.read(["llm.call"]))


def judged(run_dir: Path) -> int:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        made = store.read(["decision.made"])
        return sum(1 for e in made if e.payload["task"] == "classroom.judge")


def rescore(run: Path, out: Path, *args: str) -> int:
    return main(["rescore", str(run), "--out", str(out), "--no-progress", *args])


def stat(block: dict[str, Any], name: str) -> float | None:
    return block["agreement"]["statistics"][name]["value"]


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_the_same_judge_agrees_and_only_the_judge_is_asked(source: Path, tmp_path: Path) -> None:
    before = digests(source)
    new = tmp_path / "NEW"
    assert rescore(source, new, "--role", "judge=scripted") == 0
    assert digests(source) == before  # RUN's bytes untouched

    roles = calls(new)
    assert {role for (role, how) in roles if how != "source_run"} == {"judge"}
    assert {how for (role, how) in roles if role != "judge"} == {"source_run"}
    assert sum(n for (role, how), n in roles.items() if role == "student") == sum(
        n for (role, _), n in calls(source).items() if role == "student"
    )
    manifest = json.loads((new / "manifest.json").read_text())
    recorded = json.loads((source / "manifest.json").read_text())["log"]
    assert manifest["rescore_of"]["run"] == str(source.resolve())
    assert manifest["rescore_of"]["log_sha256"] == recorded["sha256"]
    assert manifest["llm"]["source_run_answers"] == roles["student", "source_run"]

    block = metrics(new)["rescore"]
    assert block["n_paired"] == judged(source) == 64
    assert stat(block, "krippendorff_alpha") == 1.0
    assert stat(block, "exact_agreement") == 1.0
    assert block["agreement"]["most_different"] == []
    # Everything but the block is the source run's metrics: the same answers, the same judge.
    rest = {k: v for k, v in metrics(new).items() if k != "rescore"}
    assert rest == metrics(source)

    assert main(["metrics", str(new), "--check"]) == 0
    assert main(["replay", str(new), "--agent", "judge"]) == 0


def test_a_drifting_judge_disagrees_measurably(source: Path, tmp_path: Path) -> None:
    new = tmp_path / "NEW"
    assert rescore(source, new, "--role", "judge=scripted:drift=0.3") == 0
    block = metrics(new)["rescore"]
    assert block["judges"] == [["judge", ["scripted"], ["scripted:drift=0.3"]]]
    alpha = stat(block, "krippendorff_alpha")
    assert alpha is not None and alpha < 0.98
    assert stat(block, "exact_agreement") < 1.0
    assert block["agreement"]["most_different"]
    assert block["n_paired"] >= 0.8 * judged(source)
    # The students' answers are RUN's: their accuracy cannot move.
    accuracy = [(c["strategy"], c["race"], c["order"], c["low"]) for c in metrics(new)["cells"]]
    assert accuracy == [
        (c["strategy"], c["race"], c["order"], c["low"]) for c in metrics(source)["cells"]
    ]
    assert {role for (role, how) in calls(new) if how != "source_run"} == {"judge"}


def test_swap_order_reports_position_bias(source: Path, tmp_path: Path) -> None:
    """The scripted judge scores from the pair's features, not the slots: no position bias."""
    new = tmp_path / "NEW"
    assert rescore(source, new, "--role", "judge=scripted", "--swap-order") == 0
    bias = metrics(new)["position_bias"]
    assert bias["n_paired"] == 64
    assert bias["mean_abs_change"] == 0.0
    assert stat(bias, "exact_agreement") == 1.0
    with SQLiteEventStore(new / "events.sqlite") as store:
        prompts = [
            e.payload["messages"][0]["content"]
            for e in store.read(["llm.call"])
            if e.payload["task"] == "classroom.judge_swapped"
        ]
    assert prompts and all(
        p.index("Low-performance answer:") < p.index("High-performance answer:") for p in prompts
    )
    assert metrics(new)["answer_failures"] == metrics(source)["answer_failures"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--role", "student=scripted"], "can rescore only its scorer roles 'judge'"),
        ([], "pass --role NAME=MODEL for a scorer of classroom: 'judge'"),
        (["--role", "judge=scripted", "--regenerate-examples"], "no score examples"),
        (["--role", "nobody=scripted"], "can rescore only its scorer roles"),
    ],
)
def test_what_cannot_be_rescored_is_a_clear_error(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    new = tmp_path / "NEW"
    assert rescore(source, new, *args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and said in err
    assert not new.exists()


def test_a_scenario_without_a_scorer_names_those_with_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "RUN"
    run_scenario("trust-population", {"n_personas": 4}, out=run, progress=False)
    assert rescore(run, tmp_path / "NEW", "--role", "persona=scripted") == 2
    err = capsys.readouterr().err
    assert "trust-population has no scorer role" in err
    assert "classroom: judge" in err and "persona-gym: evaluator" in err
    assert "career-chat: judge" in err
    assert not (tmp_path / "NEW").exists()


def test_a_source_whose_log_changed_is_refused(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "RUN"
    copy.mkdir()
    for name in ("manifest.json", "events.sqlite"):
        (copy / name).write_bytes((source / name).read_bytes())
    with sqlite3.connect(copy / "events.sqlite") as db:
        db.execute("DELETE FROM events WHERE seq = (SELECT MAX(seq) FROM events)")
    assert rescore(copy, tmp_path / "NEW", "--role", "judge=scripted") == 2
    assert "does not match its manifest" in capsys.readouterr().err
    assert rescore(source, source, "--role", "judge=scripted") == 2
    assert "--out is the run being rescored" in capsys.readouterr().err


def judge_reply(body: dict[str, Any]) -> str:
    return "The low answer hesitates.\nScore: 2"


@pytest.mark.slow
def test_a_killed_rescore_resumes_to_the_uninterrupted_result(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rescore killed (SIGKILL) part-way and resumed writes what one run straight through
    writes; the judge is a real HTTP server."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(responder=judge_reply, latency=0.05) as server:
        judge = f"judge=openai:fake-judge@{server.base_url}"
        killed, straight = tmp_path / "killed", tmp_path / "straight"
        args = ["rescore", str(source), "--role", judge, "--concurrency", "1", "--no-progress"]
        child = subprocess.Popen(
            [sys.executable, "-m", "personasim.simulation.cli.main", *args, "--out", str(killed)],
            env={**os.environ},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        try:
            while judged_so_far(killed) < 8:
                assert child.poll() is None, "the rescore ended before it could be killed"
                assert time.monotonic() < deadline, "no progress within 60 s"
                time.sleep(0.01)
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
        assert 8 <= judged_so_far(killed) < 64
        assert json.loads((killed / "manifest.json").read_text())["status"] == "interrupted"
        assert main([*args, "--out", str(killed), "--resume"]) == 0
        monkeypatch.setenv("PERSONASIM_CACHE_DIR", str(tmp_path / "fresh-cache"))
        assert main([*args, "--out", str(straight)]) == 0
    assert metrics(killed) == metrics(straight)
    assert metrics(killed)["rescore"]["n_paired"] == 64
    assert stat(metrics(killed)["rescore"], "exact_agreement") < 1.0  # always 2: not the rule
    assert main(["metrics", str(killed), "--check"]) == 0


def judged_so_far(run_dir: Path) -> int:
    try:
        with sqlite3.connect(f"file:{run_dir / 'events.sqlite'}?mode=ro", uri=True) as db:
            query = "SELECT COUNT(*) FROM events WHERE kind='decision.made' AND payload LIKE ?"
            return db.execute(query, ('%"classroom.judge"%',)).fetchone()[0]
    except sqlite3.OperationalError:
        return 0


GYM = {"n_personas": 2, "questions_per_task": 2, "tasks": "Expected Action,Linguistic Habits"}
GYM_ROLES = {"evaluator": ["scripted", "scripted"], "examples": ["scripted"]}


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_persona_gym_reuses_the_score_examples_unless_regenerated(tmp_path: Path) -> None:
    run = tmp_path / "RUN"
    run_scenario("persona-gym", GYM, out=run, progress=False, roles=GYM_ROLES)
    reused, regenerated = tmp_path / "reused", tmp_path / "regenerated"
    assert rescore(run, reused, "--role", "evaluator=scripted,scripted:drift=0.3") == 0
    assert {how for (role, how) in calls(reused) if role == "examples"} == {"source_run"}
    assert {role for (role, how) in calls(reused) if how != "source_run"} == {"evaluator"}
    block = metrics(reused)["rescore"]
    assert block["n_paired"] == 2 * 2 * 2 * 2  # personas × tasks × questions × seats
    assert block["agreement"]["level"] == "ordinal"
    # The scripted evaluator scores from the answer's features; drift only garbles the format,
    # and the re-ask recovers the score, so each seat agrees with itself.
    assert stat(block, "krippendorff_alpha") == 1.0

    args = ["--role", "evaluator=scripted,scripted", "--regenerate-examples"]
    assert rescore(run, regenerated, *args) == 0
    assert {how for (role, how) in calls(regenerated) if role == "examples"} <= {"model", "cache"}
    assert stat(metrics(regenerated)["rescore"], "krippendorff_alpha") == 1.0


@pytest.mark.slow  # an integration run; the fast tier stays under 5 minutes
def test_career_chat_rescores_its_dialogue_judge(tmp_path: Path) -> None:
    run = tmp_path / "RUN"
    params = {"n_users": 4, "n_items": 1, "judge_samples": 2, "max_turns": 1}
    params |= {"bootstrap": 0, "permutations": 0, "emd_repeats": 1}  # not what is tested here
    run_scenario("career-chat", params, out=run, progress=False)
    new = tmp_path / "NEW"
    assert rescore(run, new, "--role", "judge=scripted") == 0
    assert {role for (role, how) in calls(new) if how != "source_run"} == {"judge"}
    block = metrics(new)["rescore"]
    assert block["n_paired"] == 4 * 4  # users × dimensions, samples averaged
    named = block["agreement"]["statistics"]
    assert "ICC(3,k)" in named and "ICC(2,1)" not in named  # the form the paper names
    assert block["agreement"]["level"] == "interval"
    assert stat(block, "exact_agreement") == 1.0


def test_score_items_average_repeated_scores_per_item() -> None:
    scores = ScoreItems(("judge",), detail_scores("user", "dimension"), level="interval")
    decisions = [
        ("judge", {"task": "judge", "user": "u1", "dimension": "a", "value": 2}),
        ("judge", {"task": "judge", "user": "u1", "dimension": "a", "value": 5}),
        ("judge", {"task": "judge", "user": "u2", "dimension": "a", "value": None}),
        ("x", {"task": "other", "user": "u1", "dimension": "a", "value": 1}),
    ]
    assert scores.items(decisions) == {"u1/a": 3.5}


def test_the_viewer_shows_the_two_judges_side_by_side(source: Path, tmp_path: Path) -> None:
    """`personasim view NEW`: each item's score under RUN's judge and NEW's, largest change
    first; a run that is not a rescore has no such table (rendered: test_viewer_browser.py)."""
    from personasim.simulation.runs.viewer.viewer import collect_run

    new = tmp_path / "NEW"
    assert rescore(source, new, "--role", "judge=scripted:drift=0.3") == 0
    with SQLiteEventStore(new / "events.sqlite") as store:
        collected = collect_run(new, store)
    judges = collected["judges"]
    block = metrics(new)["rescore"]
    assert len(judges["rows"]) == block["n_items_first"] == 64
    assert "scripted:drift=0.3" in judges["second"] and "scripted" in judges["first"]
    differing = [r for r in judges["rows"] if r[3] not in (None, 0)]
    assert min(len(differing), 10) == len(block["agreement"]["most_different"]) > 0
    assert judges["rows"][: len(differing)] == differing  # largest change first
    for _item, first, second, difference in differing:
        assert second - first == difference
    with SQLiteEventStore(source / "events.sqlite") as store:
        assert collect_run(source, store)["judges"] is None
