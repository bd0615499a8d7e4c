"""The LangGraph decision procedure (agents/decision.py): act, repair, fail; never a default."""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from personasim.agents import Decision, DecisionParseError, DecisionTask, decide
from personasim.simulation import (
    Backend,
    ChatRequest,
    ChatResponse,
    Event,
    EventLog,
    LLMClient,
    Message,
    Simulation,
    SQLiteEventStore,
)

_instances = itertools.count()

PROMPT = "How many dollars do you send? Answer with a number from 0 to 10."


def reminder(error: str) -> str:
    return f"Your answer could not be used: {error}. Answer with a whole number from 0 to 10."


class ListBackend(Backend):
    """Answers with the given replies in order and remembers every request."""

    name = "list"

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.requests: list[ChatRequest] = []
        self.instance = next(_instances)

    def identity(self) -> dict[str, Any]:
        return {"backend": "list-test", "instance": self.instance}

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        self.requests.append(request)
        if not self.replies:
            raise AssertionError("the decision graph asked more often than scripted")
        return ChatResponse(text=self.replies.pop(0), model="list")


def parse_amount(reply: str) -> int:
    try:
        value = int(reply.strip())
    except ValueError:
        raise DecisionParseError(f"{reply!r} is not a whole number") from None
    if not 0 <= value <= 10:
        raise DecisionParseError(f"{value} is not between 0 and 10")
    return value


def make_task(max_repairs: int = 2) -> DecisionTask:
    return DecisionTask(
        name="test.amount",
        request=ChatRequest(messages=(Message(role="user", content=PROMPT),), task="test.amount"),
        parse=parse_amount,
        reminder=reminder,
        max_repairs=max_repairs,
        details={"game": "g1"},
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteEventStore]:
    with SQLiteEventStore(tmp_path / "e.sqlite") as store:
        yield store


def make_sim(store: SQLiteEventStore, backend: Backend) -> Simulation:
    log = EventLog(store)
    sim = Simulation(seed=0, llm=LLMClient(backend, cache=None, emit=log.emit), log=log)
    sim.round = 1
    return sim


def run_decision(
    store: SQLiteEventStore, replies: list[str], max_repairs: int = 2
) -> tuple[Decision, ListBackend]:
    """One decision as scenarios make it: a unit of work in `sim.concurrently`."""
    backend = ListBackend(replies)
    sim = make_sim(store, backend)
    task = make_task(max_repairs)
    results = asyncio.run(sim.concurrently({"p1": lambda: decide(sim, "p1", task)}))
    assert all(e.scope == "r1/p1" for e in store.read())
    return results["p1"], backend


def decision_events(store: SQLiteEventStore) -> list[Event]:
    return [e for e in store.read() if e.kind.startswith("decision.")]


def test_valid_first_answer(store: SQLiteEventStore) -> None:
    decision, backend = run_decision(store, ["7"])
    assert decision == Decision(ok=True, value=7, attempts=1, error=None)
    assert len(backend.requests) == 1
    assert backend.requests[0] == make_task().request
    (made,) = decision_events(store)
    assert (made.kind, made.agent_id, made.round) == ("decision.made", "p1", 1)
    assert made.payload == {"task": "test.amount", "value": 7, "attempts": 1, "game": "g1"}
    assert [e.kind for e in store.read()] == ["llm.call", "decision.made"]


def test_invalid_then_valid_answer_is_repaired(store: SQLiteEventStore) -> None:
    decision, backend = run_decision(store, ["about seven", "7"])
    assert decision == Decision(ok=True, value=7, attempts=2, error=None)

    first, second = backend.requests
    assert [m.content for m in first.messages] == [PROMPT]
    assert second.messages == (
        Message(role="user", content=PROMPT),
        Message(role="assistant", content="about seven"),
        Message(
            role="user",
            content="Your answer could not be used: 'about seven' is not a whole number. "
            "Answer with a whole number from 0 to 10.",
        ),
    )
    assert (second.task, second.temperature) == (first.task, first.temperature)

    reask, made = decision_events(store)
    assert reask.kind == "decision.reask"
    assert reask.payload == {
        "task": "test.amount",
        "attempt": 1,
        "error": "'about seven' is not a whole number",
    }
    assert made.kind == "decision.made"
    assert made.payload["value"] == 7 and made.payload["attempts"] == 2
    assert [e.kind for e in store.read()] == [
        "llm.call",
        "decision.reask",
        "llm.call",
        "decision.made",
    ]


def test_always_invalid_fails_without_a_default(store: SQLiteEventStore) -> None:
    decision, backend = run_decision(store, ["eleven", "42", "no idea"], max_repairs=2)
    assert decision.ok is False
    assert decision.value is None
    assert decision.attempts == 3
    assert decision.error == "'no idea' is not a whole number"
    assert len(backend.requests) == 3
    assert len(backend.requests[2].messages) == 5  # prompt + two (reply, reminder) pairs

    kinds = [e.kind for e in decision_events(store)]
    assert kinds == ["decision.reask", "decision.reask", "decision.failed"]
    assert "decision.made" not in [e.kind for e in store.read()]
    (failed,) = [e for e in store.read() if e.kind == "decision.failed"]
    assert failed.agent_id == "p1"
    assert failed.payload == {
        "task": "test.amount",
        "error": "'no idea' is not a whole number",
        "attempts": 3,
        "last_reply": "no idea",
        "reason": "unparsable",
        "error_class": "DecisionParseError",
        "game": "g1",
    }
    reasks = [e.payload for e in store.read(kinds=["decision.reask"])]
    assert [(r["attempt"], r["error"]) for r in reasks] == [
        (1, "'eleven' is not a whole number"),
        (2, "42 is not between 0 and 10"),
    ]


def test_no_repairs_allowed_fails_at_once(store: SQLiteEventStore) -> None:
    decision, backend = run_decision(store, ["x"], max_repairs=0)
    assert (decision.ok, decision.value, decision.attempts) == (False, None, 1)
    assert [e.kind for e in decision_events(store)] == ["decision.failed"]
    assert len(backend.requests) == 1


def test_zero_is_a_valid_answer_not_a_failure(store: SQLiteEventStore) -> None:
    decision, _ = run_decision(store, ["0"])
    assert decision == Decision(ok=True, value=0, attempts=1)


def test_decision_in_the_main_scope_is_written_at_once(store: SQLiteEventStore) -> None:
    """Outside a unit of work the events go straight to the store, from the event loop."""
    sim = make_sim(store, ListBackend(["x", "7"]))
    decision = asyncio.run(decide(sim, "p1", make_task()))
    assert decision == Decision(ok=True, value=7, attempts=2)
    events = list(store.read())
    assert [e.kind for e in events] == ["llm.call", "decision.reask", "llm.call", "decision.made"]
    assert {e.scope for e in events} == {"main"}


def test_details_may_not_overwrite_the_decision_fields() -> None:
    with pytest.raises(ValueError, match="task"):
        DecisionTask(
            name="t",
            request=ChatRequest(messages=(Message(role="user", content="q"),)),
            parse=str,
            reminder=str,
            details={"task": "other"},
        )


LOADED = (
    "import sys, json\n"
    "from personasim.simulation.core.scenario import list_scenarios\n"
    "list_scenarios()\n"  # every built-in scenario's module, with its agents and environments
    "before = 'langgraph' in sys.modules\n"
    "from personasim.agents.decision import decision_graph\n"
    "decision_graph()\n"
    "print(json.dumps([before, 'langgraph' in sys.modules]))"
)


def test_langgraph_loads_with_the_first_decision_not_with_a_scenario() -> None:
    """Reading a run (metrics, view, rescore) imports its scenario but decides nothing: it
    must not pay LangGraph's import; building the graph does load it."""
    done = subprocess.run(
        [sys.executable, "-c", LOADED], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == [False, True]
