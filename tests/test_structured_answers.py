"""Structured answers (`--response-format`) and the run-wide token cap, on the decision graph."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import BaseModel, Field
from test_decision_graph import ListBackend, make_task

from personasim.agents import DecisionParseError, decide
from personasim.simulation import (
    EventLog,
    LLMClient,
    Simulation,
    SQLiteEventStore,
    response_format_for,
)


class Amount(BaseModel):
    reasoning: str
    amount: int = Field(ge=0)


def read_amount(answer: Amount) -> int:
    if answer.amount > 10:
        raise DecisionParseError(f"{answer.amount} is more than 10")
    return answer.amount


def structured_decision(tmp_path: Path, replies: list[str], fmt: str, **sim_options):
    backend = ListBackend(replies)
    with SQLiteEventStore(tmp_path / "e.sqlite") as store:
        log = EventLog(store)
        client = LLMClient(backend, cache=None, emit=log.emit)
        sim = Simulation(seed=0, llm=client, log=log, response_format=fmt, **sim_options)
        sim.round = 1
        task = make_task()
        task = type(task)(**{**task.__dict__, "schema": Amount, "read": read_amount})
        result = asyncio.run(sim.concurrently({"p1": lambda: decide(sim, "p1", task)}))
        events = [(e.kind, e.payload) for e in store.read()]
    return result["p1"], backend, events


def test_json_object_sends_the_schema_in_llama_cpp_form(tmp_path: Path) -> None:
    reply = json.dumps({"reasoning": "fair", "amount": 4})
    decision, backend, _ = structured_decision(tmp_path, [reply], "json_object")
    assert decision.ok and decision.value == 4
    sent = backend.requests[0].response_format
    assert sent == {"type": "json_object", "schema": Amount.model_json_schema()}
    assert backend.requests[0].messages == make_task().request.messages  # the prompt is unchanged


def test_json_schema_sends_openai_form(tmp_path: Path) -> None:
    reply = "```json\n" + json.dumps({"reasoning": "x", "amount": 0}) + "\n```"
    decision, backend, _ = structured_decision(tmp_path, [reply], "json_schema")
    assert decision.ok and decision.value == 0
    assert backend.requests[0].response_format == {
        "type": "json_schema",
        "json_schema": {"name": "Amount", "schema": Amount.model_json_schema()},
    }


def test_text_format_leaves_the_task_alone(tmp_path: Path) -> None:
    decision, backend, _ = structured_decision(tmp_path, ["7"], "text")
    assert decision.value == 7 and backend.requests[0].response_format is None


def test_invalid_json_is_reasked_then_failed_with_the_reply(tmp_path: Path) -> None:
    replies = ["seven", json.dumps({"reasoning": "r", "amount": 11}), "{}"]
    decision, backend, events = structured_decision(tmp_path, replies, "json_object")
    assert not decision.ok and decision.value is None and decision.attempts == 3
    kinds = [kind for kind, _ in events if kind.startswith("decision.")]
    assert kinds == ["decision.reask", "decision.reask", "decision.failed"]
    reasks = [p for kind, p in events if kind == "decision.reask"]
    assert "not a valid Amount" in reasks[0]["error"]
    assert reasks[1]["error"] == "11 is more than 10"
    assert "JSON object" in backend.requests[1].messages[-1].content
    failed = next(p for kind, p in events if kind == "decision.failed")
    assert failed["last_reply"] == "{}"


def test_the_format_changes_the_cache_key() -> None:
    text = make_task().request
    structured = text.model_copy(
        update={"response_format": response_format_for("json_object", Amount)}
    )
    backend = ListBackend([])
    assert backend.cache_key(text) != backend.cache_key(structured)


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown response format 'xml'"):
        response_format_for("xml", Amount)  # type: ignore[arg-type]


@pytest.mark.parametrize(("own", "sent"), [(None, 64), (500, 64), (20, 20)])
def test_max_tokens_caps_every_request(tmp_path: Path, own: int | None, sent: int) -> None:
    backend = ListBackend(["3"])
    with SQLiteEventStore(tmp_path / "e.sqlite") as store:
        log = EventLog(store)
        sim = Simulation(
            seed=0, llm=LLMClient(backend, cache=None, emit=log.emit), log=log, max_tokens=64
        )
        sim.round = 1
        task = make_task()
        request = task.request.model_copy(update={"max_tokens": own})
        task = type(task)(**{**task.__dict__, "request": request})
        asyncio.run(sim.concurrently({"p1": lambda: decide(sim, "p1", task)}))
    assert backend.requests[0].max_tokens == sent
