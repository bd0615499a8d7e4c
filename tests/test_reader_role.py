"""The `reader` role in a run: a bound model reads a classroom answer no rule can read, its
value is marked as the role's, its calls are logged under the role; unbound, the answer stays
unreadable and counts against validity. Real HTTP to a local fake server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAIServer

from personasim.environments.classroom.gsm8k import shipped_problems
from personasim.environments.classroom.numeric_answers import read_answer
from personasim.simulation import LLMClient, Reading, SQLiteEventStore, run_scenario
from personasim.simulation.llm.model_spec import make_backend
from personasim.simulation.runs.tools.reader_role import (
    ROLE_REASKS,
    RoleReader,
    confirmed_by_role,
    read_value_line,
    reader_request,
)

GOLDS = {p.question: p.gold for p in shipped_problems()}
PARAMS = {
    "n_questions": 3,
    "repetitions": 1,
    "strategies": ["zero-shot"],
    "races": ["none"],
    "orders": ["before"],
}


def written(gold: float) -> str:
    return f"{gold:g}"


def responder(body: dict[str, Any]) -> str:
    """Students give the right number with no statement a rule reads; the judge scores; the
    reader reads the number back."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    if "Score: N" in body["messages"][0]["content"]:
        return "The low answer struggles visibly.\nScore: 2"
    if prompt.startswith("You read another model's reply"):
        text = prompt.split("----------\n", 1)[1]
        gold = next(g for q, g in GOLDS.items() if written(g) in text)
        return f"Value: {written(gold)}"
    gold = next(g for q, g in GOLDS.items() if q in prompt)
    return f"I think {written(gold)} could be it, more or less, though I'm not sure.\nBye!"


def classroom_run(tmp_path: Path, server: FakeOpenAIServer, reader: bool) -> Any:
    spec = f"openai:fake@{server.base_url}"
    roles = {"judge": [spec], **({"reader": [spec]} if reader else {})}
    return run_scenario(
        "classroom",
        PARAMS,
        model=spec,
        roles=roles,
        out=tmp_path / ("with" if reader else "without"),
        use_cache=False,
        progress=False,
    )


def readings(run_dir: Path) -> list[dict[str, Any]]:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return [e.payload for e in store.read(["reading.made"])]


def test_a_bound_reader_reads_what_no_rule_can(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=responder) as server:
        result = classroom_run(tmp_path, server, reader=True)
    read = readings(result.run_dir)
    assert read and all(r["status"] == "read" and r["by"] == "reader role" for r in read)
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        graded = [e.payload for e in store.read(["classroom.graded"])]
        roles = [e.payload.get("role") for e in store.read(["llm.call"])]
    assert all(g["correct"] and g["by"] == "reader role" for g in graded)
    assert roles.count("reader") == len(read)
    assert result.metrics["metrics"]["reader_role"]["read"] == len(read)  # counted in the metrics
    assert any(line.startswith(f"  reader role: read {len(read)},") for line in result.report)
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["roles"]["reader"] == [f"openai:fake@{server.base_url}"]
    assert manifest["validity"]["readings"]["math_answer"]["by"] == {"reader role": len(read)}
    assert result.valid


def test_unbound_the_answers_stay_unreadable_and_the_run_is_not_valid(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=responder) as server:
        result = classroom_run(tmp_path, server, reader=False)
    read = readings(result.run_dir)
    assert read and all(r["status"] == "unreadable" for r in read)
    assert "reader_role" not in result.metrics["metrics"]  # no role, no line
    entry = result.manifest["validity"]["readings"]["math_answer"]
    assert entry["unread_rate"] == 1.0 and not entry["ok"]
    assert not result.valid
    assert result.report[0].startswith("RUN NOT VALID: more texts than the limit")


def test_the_reader_model_reads_with_the_question_where_it_was_logged() -> None:
    asked = reader_request("math_answer", "So 12.", {"problem": "How many eggs are left?"})
    assert asked is not None
    prompt = asked.messages[0].content
    assert "How many eggs are left?" in prompt and "a step on the way" in prompt
    older = reader_request("math_answer", "So 12.", {"question_id": "q1"})  # logged without it
    assert older is not None and "math question" in older.messages[0].content
    assert "a step on the way" not in older.messages[0].content


@pytest.mark.parametrize(
    ("role", "status", "value"),
    [
        (Reading.of(12.0, "reader role"), "read", 12.0),
        (Reading.of(30.0, "reader role"), "ambiguous", None),
        (read_value_line("Value: unreadable", "math_answer"), "ambiguous", None),
        (read_value_line("It is 12.", "math_answer"), "read", 12.0),  # judged nothing
    ],
)
def test_a_value_the_role_re_reads_stands_only_where_both_agree(
    role: Reading, status: str, value: float | None
) -> None:
    rules = Reading.of(12.0, "grammar:closing")
    both = confirmed_by_role(rules, role)
    assert both.status == status and both.value == value
    assert both.reason is None if both.ok else "reader role" in both.reason
    if status == "read":
        assert "reader role" in both.by  # which readers stand behind the value


@pytest.mark.parametrize(
    ("role", "status", "value"),
    [
        (Reading.of(6.0, "reader role"), "read", 6.0),  # one of the rules' candidates
        (Reading.of(32.0, "reader role"), "ambiguous", None),  # neither
        (read_value_line("Value: unreadable", "math_answer"), "ambiguous", None),
    ],
)
def test_the_role_settles_an_ambiguous_reading_only_on_one_of_its_candidates(
    role: Reading, status: str, value: float | None
) -> None:
    rules = Reading.ambiguous("its closing sentence lists quantities", "grammar", (6.0, 26.0))
    settled = confirmed_by_role(rules, role)
    assert settled.status == status and settled.value == value
    if status == "read":
        assert settled.by == "grammar+reader role (one of the rules' candidates)"


DOUBTED: list[str] = []


def confirming_responder(body: dict[str, Any]) -> str:
    """Students close plainly with the right number; the reader model reads the question's
    gold back, except for the first question it is asked about, where it judges that the reply
    stopped on a step."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    if "Score: N" in body["messages"][0]["content"]:
        return "The low answer struggles visibly.\nScore: 2"
    if prompt.startswith("You read another model's reply"):
        question = next(q for q in GOLDS if f"math question: {q}" in prompt)
        DOUBTED[:] = DOUBTED or [question]
        return "Value: unreadable" if question in DOUBTED else f"Value: {written(GOLDS[question])}"
    gold = next(g for q, g in GOLDS.items() if q in prompt)
    return f"Final Answer: {written(gold)}"


def test_with_reader_confirms_the_role_re_reads_every_value(tmp_path: Path) -> None:
    DOUBTED.clear()
    with FakeOpenAIServer(responder=confirming_responder) as server:
        spec = f"openai:fake@{server.base_url}"
        result = run_scenario(
            "classroom",
            {**PARAMS, "reader_confirms": True},
            model=spec,
            roles={"judge": [spec], "reader": [spec]},
            out=tmp_path / "run",
            use_cache=False,
            progress=False,
        )
    read = readings(result.run_dir)
    doubted = [r for r in read if r["problem"] in DOUBTED]
    confirmed = [r for r in read if r["problem"] not in DOUBTED]
    assert doubted and all(r["status"] == "ambiguous" for r in doubted)
    assert all("finds no value" in r["reason"] for r in doubted)
    assert confirmed and all(r["status"] == "read" for r in confirmed)
    assert all(r["by"].endswith("+reader role") for r in confirmed)
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        roles = [e.payload.get("role") for e in store.read(["llm.call"])]
    assert roles.count("reader") == len(read)  # one re-reading per answer the rules read
    assert result.metrics["metrics"]["reader_role"] == {
        "read": 0,
        "confirmed": len(confirmed),
        "settled": 0,
        "made ambiguous": len(doubted),
        "not confirmed": 0,
    }


def test_reader_confirms_under_the_drift_mode_asks_the_role_where_the_rules_say(
    tmp_path: Path,
) -> None:
    """The scripted drift mode (real models' habits) with the scripted double as the role
    (it answers by math-verify): the same invariants as on SmolLM2's text."""
    result = run_scenario(
        "classroom",
        {**PARAMS, "n_questions": 8, "reader_confirms": True},
        model="scripted:drift=0.3",
        roles={"judge": ["scripted"], "reader": ["scripted"]},
        out=tmp_path / "drift",
        use_cache=False,
        progress=False,
    )
    read = readings(result.run_dir)
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        roles = [e.payload.get("role") for e in store.read(["llm.call"])]
    asked = 0
    for reading in read:
        rules = read_answer(reading["text"], reading["problem"])
        asked += rules.status == "unreadable" or rules.ok or bool(rules.candidates)
        if rules.ok:
            assert "reader role" in (reading["by"] if reading["status"] == "read" else
                                     reading["reason"])  # fmt: skip
    assert roles.count("reader") == asked
    statuses = {r["status"] for r in read}
    assert "read" in statuses and len(statuses) > 1  # the drift leaves some answers unread


@pytest.mark.parametrize(
    ("replies", "status", "value", "calls"),
    [
        (["The answer is 42.", "Value: 42"], "read", 42.0, 2),  # asked again, then read
        (["Value: unreadable"], "unreadable", None, 1),  # a judgement: never asked again
        (["It is 42.", "Still 42, I think."], "unreadable", None, 2),  # then counted
    ],
)
def test_a_reader_reply_that_breaks_the_format_is_asked_again_once(
    replies: list[str], status: str, value: float | None, calls: int
) -> None:
    said = iter(replies)
    with FakeOpenAIServer(responder=lambda body: next(said)) as server:
        client = LLMClient(make_backend(f"openai:fake@{server.base_url}"), cache=None)
        reading = asyncio.run(RoleReader(client)("math_answer", "So 42 apples.", {}))
        asyncio.run(client.aclose())
        sent = server.requests
    assert reading.status == status and reading.value == value
    assert len(sent) == calls <= ROLE_REASKS + 1
    if calls == 2:
        follow_up = sent[1]["messages"]
        assert follow_up[1] == {"role": "assistant", "content": replies[0]}
        assert "could not be read: the reader wrote 0 'Value:' lines" in follow_up[2]["content"]
    if status == "unreadable" and calls == 2:
        assert reading.reason.endswith("(asked 2 times)")
