"""The static benchmark keeps its finished work: each scene is committed as it ends, so a run
killed part-way has every finished scene in its log and `--resume` asks only for the rest."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer

from personasim.environments.persona_gym.place import TASKS
from personasim.simulation import SQLiteEventStore
from personasim.simulation.cli.main import main

SCENES = 100  # 2 personas x 5 tasks x 10 questions
CONCURRENCY = 4


def write_benchmark(path: Path) -> Path:
    """A question file in the benchmark's format, with the paper's 10 questions per task."""
    lines = [
        {
            "persona": f"A {age}-year-old {job} who lives by the sea",
            "questions": {t: [f"Question {i} on {t}, {job}?" for i in range(10)] for t in TASKS},
        }
        for age, job in ((34, "baker"), (61, "harbour pilot"))
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def cli_args(server: FakeOpenAIServer, out: Path) -> list[str]:
    evaluators = f"evaluator=openai:e1@{server.base_url},openai:e2@{server.base_url}"
    questions = write_benchmark(out.parent / "questions.jsonl")
    return [
        "run", "persona-gym", "--question-file", str(questions), "--role", evaluators,
        "--concurrency", str(CONCURRENCY), "--no-cache", "--no-progress", "--out", str(out),
    ]  # fmt: skip


def evaluations(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            query = (
                "SELECT COUNT(*) FROM events WHERE kind='decision.made' "
                "AND json_extract(payload, '$.task')='persona_gym.evaluate'"
            )
            return conn.execute(query).fetchone()[0]
    except sqlite3.OperationalError:
        return 0  # not created yet


def scene_steps(db: Path) -> Counter:
    """Per scene (its scope), how many decisions the log holds."""
    with SQLiteEventStore(db) as store:
        return Counter(e.scope for e in store.read(["decision.made"]) if e.scope.count("/") == 3)


@pytest.mark.slow
def test_a_killed_static_run_keeps_its_finished_scenes(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out, db = tmp_path / "run", tmp_path / "run" / "events.sqlite"
    with FakeOpenAIServer(
        responder=lambda body: "In character.\nTherefore, the final score is 4", latency=0.05
    ) as server:
        child = subprocess.Popen(
            [sys.executable, "-m", "personasim.simulation.cli.main", *cli_args(server, out)],
            env={**os.environ},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 90
        try:
            while evaluations(db) < 40:  # 20 scenes' two evaluations
                assert child.poll() is None, "the run ended before it could be killed"
                assert time.monotonic() < deadline, "no progress within 90 s"
                time.sleep(0.01)
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
        asked_before = server.request_count
        kept = scene_steps(db)
        # every scene in the log is whole: answer, examples and both evaluations
        assert 20 <= len(kept) < SCENES and set(kept.values()) == {4}
        with SQLiteEventStore(db) as store:
            before = [(e.seq, e.kind, e.scope, e.payload) for e in store.read()]

        assert main([*cli_args(server, out), "--resume"]) == 0
        asked_after = server.request_count - asked_before

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    assert metrics["n_scored_questions"] == SCENES
    # the finished scenes were not asked again: only the rest (and the scenes cut mid-way)
    assert 2 * (SCENES - len(kept)) <= asked_after <= 2 * (SCENES - len(kept) + CONCURRENCY)
    with SQLiteEventStore(db) as store:
        after = [(e.seq, e.kind, e.scope, e.payload) for e in store.read()]
    assert after[: len(before)] == before
    assert set(scene_steps(db).values()) == {4} and len(scene_steps(db)) == SCENES
    assert main(["metrics", str(out), "--check"]) == 0


@pytest.fixture(autouse=True)
def _quiet(capsys: pytest.CaptureFixture[str]) -> None:
    """The resumed run prints its summary; nothing here reads it."""
