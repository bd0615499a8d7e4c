"""`--grading-batch N`: several answers per evaluator request, as the PersonaGym authors' code
grades (five per call). One request per N answers per evaluator; the same scores as one answer per
request on the scripted double; a batch that cannot be read whole is re-asked, then each of its
answers is a recorded failure; structured formats and drift work too."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAIServer
from structured_runs import assert_formats_sent, assert_same_as_text, run_in_every_format
from test_drift import check_drift_run, drift_run

from personasim.agents import DecisionParseError
from personasim.agents.persona_gym_answers import (
    PersonaAnswer,
    QuestionSet,
    ScoreExamples,
    SettingSelection,
)
from personasim.agents.persona_gym_batch import batch_format, batch_schema, parse_batch
from personasim.analysis.persona_gym import _score_table
from personasim.simulation import RunResult, SQLiteEventStore, events_frame, run_scenario
from personasim.simulation.cli import main

BATCH = "persona_gym.evaluate_batch"


def run(out: Path, params: dict[str, Any], **kwargs: Any) -> RunResult:
    return run_scenario("persona-gym", params, out=out, progress=False, use_cache=False, **kwargs)


def payloads(result: RunResult, kind: str) -> list[dict[str, Any]]:
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        return [e.payload for e in store.read([kind])]


def scores(result: RunResult) -> list[tuple]:
    """Every evaluator's score of every answer, from the log, order-free."""
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        table = _score_table(events_frame(store.read()))
    return sorted(table.itertuples(index=False, name=None))


# --- the reply's format --------------------------------------------------------------------------


def test_parse_batch_reads_every_numbered_evaluation() -> None:
    reply = (
        "(1) Evaluation: Fits.\nTherefore, the final score is 5\n\n"
        "**(2) Evaluation:** Off. Therefore, the final score is **2**\n"
        "(3) evaluation : Mixed; a 4 at first, then Therefore, the final score is 3."
    )
    assert parse_batch(reply, 3) == [
        {"score": 5, "justification": "Fits."},
        {"score": 2, "justification": "** Off."},
        {"score": 3, "justification": "Mixed; a 4 at first, then"},
    ]
    assert batch_format(3) == "(1) Evaluation:\n(2) Evaluation:\n(3) Evaluation:"


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("(1) Evaluation: ok. Therefore, the final score is 4", r"found \(1\)$"),
        (
            "(1) Evaluation: a. Therefore, the final score is 4\n"
            "(3) Evaluation: b. Therefore, the final score is 4",
            r"found \(1\), \(3\)",
        ),
        ("Both fine. Therefore, the final score is 4", "found none"),
        (
            "(1) Evaluation: a. Therefore, the final score is 4\n(2) Evaluation: I like it.",
            r"evaluation \(2\): it does not end with",
        ),
        (
            "(1) Evaluation: a. Therefore, the final score is 7\n"
            "(2) Evaluation: b. Therefore, the final score is 4",
            r"evaluation \(1\): the score must be a whole number from 1 to 5, got 7",
        ),
    ],
)
def test_parse_batch_refuses_an_incomplete_batch(reply: str, message: str) -> None:
    with pytest.raises(DecisionParseError, match=message):
        parse_batch(reply, 2)


def test_the_batch_schema_holds_exactly_n_evaluations() -> None:
    one = {"justification": "ok", "score": 3}
    assert len(batch_schema(2).model_validate({"evaluations": [one, one]}).evaluations) == 2
    for wrong in ([one], [one, one, one]):
        with pytest.raises(ValueError, match="evaluations"):
            batch_schema(2).model_validate({"evaluations": wrong})
    with pytest.raises(ValueError, match="less than or equal to 5"):
        batch_schema(1).model_validate({"evaluations": [{"justification": "x", "score": 9}]})


# --- runs ----------------------------------------------------------------------------------------

SMALL = {"n_personas": 2, "n_environments": 2, "tasks": ["Expected Action", "Toxicity Control"]}


def test_a_batch_of_five_is_one_request_per_five_answers_per_evaluator(tmp_path: Path) -> None:
    """7 questions per task → batches of 5 and 2; 2 personas × 2 tasks × 2 batches × 2
    evaluators = 16 first requests, each a system message and the wrapper; one answer per
    request (the default) sends 2 × 2 × 7 × 2 = 56, and both give the same scores."""
    params = {**SMALL, "questions_per_task": 7}
    batched = run(tmp_path / "batched", {**params, "grading_batch": 5}, seed=3)
    single = run(tmp_path / "single", params, seed=3)

    calls = [c for c in payloads(batched, "llm.call") if c["task"] == BATCH]
    first = [c for c in calls if len(c["messages"]) == 2]
    reasks = [p for p in payloads(batched, "decision.reask") if p["task"] == BATCH]
    assert len(first) == 16 and len(calls) == 16 + len(reasks)
    assert Counter(c["role"] for c in calls) == {"evaluator": len(calls)}
    assert not [c for c in payloads(batched, "llm.call") if c["task"] == "persona_gym.evaluate"]
    made = [p for p in payloads(batched, "decision.made") if p["task"] == BATCH]
    assert Counter(len(p["questions"]) for p in made) == {5: 8, 2: 8}
    prompt = first[0]["messages"][1]["content"]
    assert prompt.startswith("Below are several rubrics")
    assert "(1) Evaluation:\n(2) Evaluation:" in prompt and "\n(1) You are an expert" in prompt
    single_calls = [c for c in payloads(single, "llm.call") if c["task"] == "persona_gym.evaluate"]
    assert len([c for c in single_calls if len(c["messages"]) == 1]) == 56

    # the scripted evaluators grade an answer alike, alone or in a batch (docs/scripted.md)
    assert scores(batched) == scores(single) and len(scores(single)) == 56
    mb, ms = batched.metrics["metrics"], single.metrics["metrics"]
    for key in ("scores", "by_evaluator", "agreement", "n_scored_questions", "failures"):
        assert mb[key] == ms[key], key
    assert mb["n_scored_questions"] == 28
    assert main(["metrics", str(batched.run_dir), "--check"]) == 0


BAD_BATCH = "(1) Evaluation: Fine.\nTherefore, the final score is 4"
"""Always one evaluation, whatever the batch's size: never a whole batch of two or more."""


def test_a_malformed_batch_is_reasked_then_each_answer_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def good(body: dict[str, Any]) -> str:
        """Every evaluation the wrapper's numbered format block asks for, each a 4."""
        n = len(re.findall(r"^\(\d+\) Evaluation:$", body["messages"][1]["content"], re.M))
        return "\n".join(
            f"({i}) Evaluation: Fine.\nTherefore, the final score is 4" for i in range(1, n + 1)
        )

    params = {**SMALL, "questions_per_task": 3, "grading_batch": 3, "max_repairs": 2}
    with (
        FakeOpenAIServer(responder=good) as e1,
        FakeOpenAIServer(responder=lambda body: BAD_BATCH) as e2,
    ):
        evaluators = [f"openai:e1@{e1.base_url}", f"openai:e2@{e2.base_url}"]
        result = run(tmp_path / "run", params, roles={"evaluator": evaluators})
    batches = 2 * 2  # personas × tasks, one batch of 3 each
    assert e1.request_count == batches
    assert e2.request_count == batches * 3  # asked, then re-asked twice
    reask = next(r["messages"] for r in e2.requests if len(r["messages"]) == 4)
    assert reask[0]["role"] == "system" and reask[2] == {"role": "assistant", "content": BAD_BATCH}
    assert "expected evaluations (1) to (3) in order" in reask[3]["content"]
    assert "numbered (1) to (3)" in reask[3]["content"]

    failed = [p for p in payloads(result, "decision.failed") if p["task"] == BATCH]
    assert len(failed) == batches and all(p["questions"] == [1, 2, 3] for p in failed)
    assert all(p["last_reply"] == BAD_BATCH for p in failed)
    metrics = result.metrics["metrics"]
    assert metrics["failures"]["evaluate"] == 12  # each answer of each failed batch
    assert metrics["reasks"]["evaluate"] == 8  # requests, not answers
    assert metrics["n_scored_questions"] == 12 and metrics["scores"]["Expected Action"] == 4.0
    assert metrics["by_evaluator"]["evaluator-2"]["Expected Action"] is None
    nan = [row for row in scores(result) if math.isnan(row[-1])]
    assert len(nan) == 12 and {row[3] for row in nan} == {"evaluator-2"}
    assert result.manifest["validity"]["tasks"][BATCH]["failed"] == batches


def test_structured_batches_measure_what_the_text_batch_measures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """json_object and json_schema: the batch schema is sent and read to the same scores."""
    params = {**SMALL, "n_personas": 3, "questions_per_task": 4, "grading_batch": 3}
    runs = run_in_every_format("persona-gym", params, tmp_path, monkeypatch, seed=5)
    assert_same_as_text(runs)
    assert_formats_sent(
        runs,
        {
            "persona_gym.select": SettingSelection,
            "persona_gym.questions": QuestionSet,
            "persona_gym.answer": PersonaAnswer,
            "persona_gym.examples": ScoreExamples,
            BATCH: lambda request: batch_schema(len(request.hints["answers"])),
        },
    )
    for fmt, found in runs.items():
        sizes = Counter(len(r.hints["answers"]) for r, _ in found.calls if r.task == BATCH)
        assert set(sizes) == {3, 1}, fmt  # 4 questions: a batch of 3 and one of 1
        slipped = [p for p in found.events("decision.reask") if p["task"] == BATCH]
        assert slipped, fmt  # this seed leaves an evaluation out of a first batch reply
    text = runs["text"].result.metrics["metrics"]
    assert text["failures"]["evaluate"] == 0 and text["n_scored_questions"] == 24


def test_batches_under_drift(tmp_path: Path) -> None:
    params = {"n_personas": 3, "n_environments": 2, "questions_per_task": 4, "grading_batch": 4}
    result = drift_run(tmp_path, "persona-gym", params)
    events = check_drift_run(result, [])
    decided = events[events["kind"].isin(["decision.made", "decision.failed"])]
    batches = [p for p in decided["payload"] if p["task"] == BATCH]
    assert batches and all("questions" in p for p in batches)
    failed = list(events.loc[events["kind"] == "decision.failed", "payload"])
    metrics = result.metrics["metrics"]
    lost = sum(len(p["questions"]) for p in failed if p["task"] == BATCH)
    assert metrics["failures"]["evaluate"] == lost
    scored = [p for p in batches if "value" in p]
    assert scored and all(len(p["value"]) == len(p["questions"]) for p in scored)
    assert json.loads((result.run_dir / "metrics.json").read_text())["metrics"] == metrics
