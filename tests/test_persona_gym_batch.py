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
from personasim.scenarios.persona_gym.answers import (
    PersonaAnswer,
    QuestionSet,
    ScoreExamples,
    SettingSelection,
)
from personasim.scenarios.persona_gym.batch import (
    batch_format,
    batch_schema,
    parse_batch,
    read_batch,
    unusable,
)
from personasim.scenarios.persona_gym.metrics import _score_table
from personasim.simulation import RunResult, SQLiteEventStore, events_frame, run_scenario
from personasim.simulation.cli.main import main

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


def test_parse_batch_keeps_the_usable_evaluations_of_a_reply() -> None:
    """A missing or unscored evaluation is marked unusable, with its reason; the rest is kept."""
    ok = "Therefore, the final score is 4"
    assert parse_batch(f"(1) Evaluation: ok. {ok}", 2) == [
        {"score": 4, "justification": "ok."},
        {"score": None, "unusable": "evaluation (2) is missing"},
    ]
    found = parse_batch(f"(1) Evaluation: a. {ok}\n(2) Evaluation: I like it.", 2)
    assert found[0]["score"] == 4 and found[1]["score"] is None
    assert found[1]["unusable"].startswith("evaluation (2): it does not end with")
    seven = "(1) Evaluation: a. Therefore, the final score is 7"
    found = parse_batch(f"{seven}\n(2) Evaluation: b. {ok}", 2)
    assert found[0] == {
        "score": None,
        "unusable": "evaluation (1): the score must be a whole number from 1 to 5, got 7",
    }
    assert unusable(found) == [0]


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (
            "(1) Evaluation: a. Therefore, the final score is 4\n"
            "(3) Evaluation: b. Therefore, the final score is 4",
            r"found \(1\), \(3\)",
        ),
        (
            "(2) Evaluation: a. Therefore, the final score is 4\n"
            "(1) Evaluation: b. Therefore, the final score is 4",
            r"found \(2\), \(1\)",
        ),
        ("Both fine. Therefore, the final score is 4", "found none"),
        (
            "(1) Evaluation: I like it.\n(2) Evaluation: Fine.",
            r"evaluation \(1\): it does not end with.*; evaluation \(2\): it does not end",
        ),
    ],
)
def test_parse_batch_refuses_a_reply_it_cannot_split_or_use_at_all(
    reply: str, message: str
) -> None:
    with pytest.raises(DecisionParseError, match=message):
        parse_batch(reply, 2)


def test_the_batch_schema_holds_one_to_n_evaluations() -> None:
    one = {"justification": "ok", "score": 3}
    assert len(batch_schema(2).model_validate({"evaluations": [one, one]}).evaluations) == 2
    short = batch_schema(2).model_validate({"evaluations": [one]})
    assert read_batch(short, 2) == [
        {"score": 3, "justification": "ok"},
        {"score": None, "unusable": "evaluation (2) is missing"},
    ]
    for wrong in ([], [one, one, one]):
        with pytest.raises(ValueError, match="evaluations"):
            batch_schema(2).model_validate({"evaluations": wrong})
    with pytest.raises(ValueError, match="less than or equal to 5"):
        batch_schema(1).model_validate({"evaluations": [{"justification": "x", "score": 9}]})


# --- runs ----------------------------------------------------------------------------------------

SMALL = {"n_personas": 2, "n_environments": 2, "tasks": ["Expected Action", "Toxicity Control"]}


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
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


GARBLED = "I like this one."
"""An evaluation without its closing sentence: unusable."""


def sections(body: dict[str, Any]) -> int:
    """How many evaluations the wrapper's numbered format block asks for."""
    return len(re.findall(r"^\(\d+\) Evaluation:$", body["messages"][1]["content"], re.M))


def evaluations(scores: list[int | None]) -> str:
    return "\n\n".join(
        f"({i}) Evaluation: Fine.\nTherefore, the final score is {s}" if s else
        f"({i}) Evaluation: {GARBLED}"
        for i, s in enumerate(scores, 1)
    )  # fmt: skip


def test_one_bad_evaluation_in_a_batch_is_asked_again_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over HTTP: evaluator 1 garbles evaluation (2) of each first batch reply: its scores of
    answers 1 and 3 are kept and only answer 2 is asked again, alone, and scored. Evaluator 2
    always garbles the second answer, also when asked about it alone: after the re-asks that
    answer is a counted failure, and its other two scores are kept."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def once(body: dict[str, Any]) -> str:
        n = sections(body)
        return evaluations([4, None, 4] if n == 3 else [5] * n)

    def always(body: dict[str, Any]) -> str:
        n = sections(body)
        return evaluations([3, None, 3] if n == 3 else [None] * n)

    params = {**SMALL, "questions_per_task": 3, "grading_batch": 3, "max_repairs": 2}
    with FakeOpenAIServer(responder=once) as e1, FakeOpenAIServer(responder=always) as e2:
        evaluators = [f"openai:e1@{e1.base_url}", f"openai:e2@{e2.base_url}"]
        result = run(tmp_path / "run", params, roles={"evaluator": evaluators})
        requests1, requests2 = list(e1.requests), list(e2.requests)
    batches = 2 * 2  # personas × tasks, one batch of 3 each
    assert len(requests1) == batches * 2  # the batch, then answer 2 alone
    assert len(requests2) == batches * (1 + 3)  # the batch, then answer 2 alone, re-asked twice

    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        posed = [e.payload for e in store.read(["gym.questions"])]
    texts = {q["index"]: set() for q in posed[0]["questions"]}
    for p in posed:
        for q in p["questions"]:
            texts[q["index"]].add(q["text"])
    again = [r["messages"][1]["content"] for r in requests1 if sections(r) == 1]
    assert len(again) == batches
    for prompt in again:  # one rubric: answer 2's, none of the kept ones
        assert sum(text in prompt for text in texts[2]) == 1
        assert not any(text in prompt for i in (1, 3) for text in texts[i])

    made = [p for p in payloads(result, "decision.made") if p["task"] == BATCH]
    first = [p for p in made if "partial_reask" not in p]
    assert len(first) == 2 * batches and all(p["questions"] == [1, 2, 3] for p in first)
    assert all(p["value"][1]["score"] is None for p in first)
    assert all(p["value"][1]["unusable"].startswith("evaluation (2): ") for p in first)
    alone = [p for p in made if p.get("partial_reask") == 1]
    assert len(alone) == batches and all(p["questions"] == [2] for p in alone)
    failed = [p for p in payloads(result, "decision.failed") if p["task"] == BATCH]
    assert len(failed) == batches and all(p["questions"] == [2] for p in failed)

    table = scores(result)
    one = {row[2]: row[4] for row in table if row[3] == "evaluator-1"}
    assert one == {1: 4.0, 2: 5.0, 3: 4.0}
    two = [row for row in table if row[3] == "evaluator-2"]
    assert len(table) == 2 * 2 * 2 * 3  # every answer once per evaluator, its last evaluation
    assert [r[4] for r in two if r[2] != 2] == [3.0] * 8
    assert all(math.isnan(r[4]) for r in two if r[2] == 2)
    metrics = result.metrics["metrics"]
    assert metrics["failures"]["evaluate"] == batches  # answer 2 of each batch, evaluator 2
    assert metrics["batch_reasks"] == {"answers": 2 * batches, "requests": 2 * batches}
    assert metrics["reasks"]["evaluate"] == 2 * batches  # evaluator 2's whole-reply re-asks
    assert metrics["n_scored_questions"] == 12
    assert main(["metrics", str(result.run_dir), "--check"]) == 0


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
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
        slipped += [p for p in found.events("decision.made") if p.get("partial_reask")]
        assert slipped, fmt  # this seed leaves an evaluation out of a first batch reply
    text = runs["text"].result.metrics["metrics"]
    assert text["failures"]["evaluate"] == 0 and text["n_scored_questions"] == 24


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
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
