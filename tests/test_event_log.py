"""EventLog scope semantics: main scope, branches, concurrency, incidents and resume."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from personasim.simulation import (
    INCIDENT_SCOPE,
    MAIN_SCOPE,
    Backend,
    ChatRequest,
    ChatResponse,
    EventLog,
    LLMClient,
    Message,
    ResumeMismatchError,
    ResumeState,
    SQLiteEventStore,
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteEventStore]:
    with SQLiteEventStore(tmp_path / "events.sqlite") as store:
        yield store


def kinds(store: SQLiteEventStore) -> list[str]:
    return [e.kind for e in store.read()]


def scoped(store: SQLiteEventStore) -> list[tuple[str, str]]:
    return [(e.scope, e.kind) for e in store.read()]


class Interrupted(Exception):
    """Stands in for a crash or Ctrl-C part-way through a run."""


def test_main_scope_events_are_written_immediately(store: SQLiteEventStore) -> None:
    log = EventLog(store, clock=lambda: 42.0)
    log.emit("run.started", {"x": 1}, round=None, agent_id=None)
    assert kinds(store) == ["run.started"]
    log.emit("round.started", round=1, agent_id="a")
    (first, second) = list(store.read())
    assert (first.scope, first.payload, first.ts) == (MAIN_SCOPE, {"x": 1}, 42.0)
    assert (second.round, second.agent_id, second.payload) == (1, "a", {})
    assert log.written == 2
    assert not log.replaying()


def test_branch_events_are_committed_together_when_it_returns(store: SQLiteEventStore) -> None:
    log = EventLog(store)
    seen_inside: list[list[str]] = []

    async def work() -> str:
        log.emit("b.one")
        seen_inside.append(kinds(store))
        await asyncio.sleep(0)
        log.emit("b.two")
        seen_inside.append(kinds(store))
        return "done"

    log.emit("before")
    assert asyncio.run(log.branch("unit", work)) == "done"
    assert seen_inside == [["before"], ["before"]]
    assert scoped(store) == [(MAIN_SCOPE, "before"), ("unit", "b.one"), ("unit", "b.two")]
    assert log.written == 3


def test_a_branch_that_raises_writes_nothing(store: SQLiteEventStore) -> None:
    log = EventLog(store)

    async def work() -> None:
        log.emit("b.one")
        await asyncio.sleep(0)
        log.emit("b.two")
        raise Interrupted

    with pytest.raises(Interrupted):
        asyncio.run(log.branch("unit", work))
    assert kinds(store) == []
    log.emit("after")  # the main scope is current again
    assert scoped(store) == [(MAIN_SCOPE, "after")]


def test_a_nested_branch_runs_as_part_of_the_outer_one(store: SQLiteEventStore) -> None:
    log = EventLog(store)

    async def inner() -> int:
        log.emit("inner")
        return 7

    async def outer() -> int:
        log.emit("outer.start")
        value = await log.branch("inner-name", inner)
        assert kinds(store) == []  # the inner branch did not commit on its own
        log.emit("outer.end")
        return value

    assert asyncio.run(log.branch("outer", outer)) == 7
    assert scoped(store) == [("outer", "outer.start"), ("outer", "inner"), ("outer", "outer.end")]


def test_a_failing_nested_branch_discards_the_whole_outer_unit(store: SQLiteEventStore) -> None:
    log = EventLog(store)

    async def inner() -> None:
        log.emit("inner")
        raise Interrupted

    async def outer() -> None:
        log.emit("outer.start")
        await log.branch("inner", inner)

    with pytest.raises(Interrupted):
        asyncio.run(log.branch("outer", outer))
    assert kinds(store) == []


def test_main_is_not_a_branch_name(store: SQLiteEventStore) -> None:
    log = EventLog(store)

    async def work() -> None:
        log.emit("x")

    with pytest.raises(ValueError, match="reserved"):
        asyncio.run(log.branch(MAIN_SCOPE, work))
    assert kinds(store) == []


def test_concurrent_branches_commit_their_own_events(store: SQLiteEventStore) -> None:
    log = EventLog(store)
    names = [f"r1/agent-{i}" for i in range(5)]

    async def unit(name: str, steps: int) -> str:
        for step in range(steps):
            log.emit(f"step.{step}", {"unit": name})
            await asyncio.sleep(0)
        return name

    async def run() -> list[str]:
        return await asyncio.gather(
            *(log.branch(name, lambda n=name, i=i: unit(n, i + 1)) for i, name in enumerate(names))
        )

    assert asyncio.run(run()) == names
    events = list(store.read())
    assert len(events) == sum(range(1, 6))
    for i, name in enumerate(names):
        mine = [e for e in events if e.scope == name]
        assert [e.kind for e in mine] == [f"step.{s}" for s in range(i + 1)]
        assert all(e.payload["unit"] == name for e in mine)
        seqs = [e.seq for e in mine]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # one contiguous commit
    # the shortest unit finished, and therefore committed, first
    assert [e.scope for e in events][:3] == [names[0], names[1], names[1]]


def test_incidents_are_written_at_once_even_from_an_abandoned_branch(
    store: SQLiteEventStore,
) -> None:
    log = EventLog(store)
    seen_inside: list[list[tuple[str, str]]] = []

    async def work() -> None:
        log.emit("b.one")
        log.incident("llm.error", {"request_key": "k", "attempts": 3}, round=1, agent_id="p1")
        seen_inside.append(scoped(store))
        raise Interrupted

    with pytest.raises(Interrupted):
        asyncio.run(log.branch("unit", work))
    assert seen_inside == [[(INCIDENT_SCOPE, "llm.error")]]
    (incident,) = list(store.read())
    assert (incident.scope, incident.round, incident.agent_id) == (INCIDENT_SCOPE, 1, "p1")
    assert incident.payload == {"request_key": "k", "attempts": 3}


@pytest.mark.parametrize("name", [MAIN_SCOPE, INCIDENT_SCOPE])
def test_reserved_scope_names_are_refused_as_branch_names(
    store: SQLiteEventStore, name: str
) -> None:
    """A unit named 'incident' would be skipped by resume and written twice; 'main' would mix."""

    async def work() -> None:
        return None

    with pytest.raises(ValueError, match="reserved"):
        asyncio.run(EventLog(store).branch(name, work))


# --- resume --------------------------------------------------------------------------------


async def scripted_run(log: EventLog, interrupt: bool = False, variant: str = "") -> None:
    """A small run: main events, three concurrent branches of 1, 2 and 3 events, main events.

    With `interrupt`, the longest branch fails at its last step, after the two others finished.
    `variant` changes one event kind, to provoke a resume mismatch.
    """
    log.emit("run.started")
    log.emit("changed" if variant == "main" else "round.started", round=1)

    async def unit(name: str, steps: int) -> None:
        for step in range(steps):
            await asyncio.sleep(0)
            if interrupt and name == "c" and step == steps - 1:
                raise Interrupted
            kind = "changed" if variant == name and step == 0 else f"{name}.{step}"
            log.emit(kind, round=1, agent_id=name)

    async with asyncio.TaskGroup() as group:
        for name, steps in (("a", 1), ("b", 2), ("c", 3)):
            group.create_task(log.branch(f"r1/{name}", lambda n=name, s=steps: unit(n, s)))
    log.emit("round.completed", round=1)
    log.emit("run.completed")


def first_error(error: BaseException) -> BaseException:
    """The first leaf of a (possibly nested) exception group, as Simulation reports it."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


def run_to_completion(log: EventLog, **kwargs: object) -> None:
    asyncio.run(scripted_run(log, **kwargs))  # type: ignore[arg-type]


def interrupted_store(path: Path) -> SQLiteEventStore:
    store = SQLiteEventStore(path)
    with pytest.raises(ExceptionGroup) as info:
        asyncio.run(scripted_run(EventLog(store), interrupt=True))
    assert info.group_contains(Interrupted)
    return store


def test_interrupted_run_keeps_main_and_finished_branches_only(tmp_path: Path) -> None:
    with interrupted_store(tmp_path / "e.sqlite") as store:
        assert scoped(store) == [
            (MAIN_SCOPE, "run.started"),
            (MAIN_SCOPE, "round.started"),
            ("r1/a", "a.0"),
            ("r1/b", "b.0"),
            ("r1/b", "b.1"),
        ]
        state = ResumeState.from_store(store)
    assert state.main_kinds == ["run.started", "round.started"]
    assert state.branch_kinds == {"r1/a": ["a.0"], "r1/b": ["b.0", "b.1"]}
    assert state.event_count == 5


def test_resume_writes_only_what_is_missing(tmp_path: Path) -> None:
    with SQLiteEventStore(tmp_path / "reference.sqlite") as reference:
        run_to_completion(EventLog(reference))
        expected = Counter(scoped(reference))
        expected_rows = [(e.scope, e.kind, e.round, e.agent_id) for e in reference.read()]

    with interrupted_store(tmp_path / "e.sqlite") as store:
        before = list(store.read())
        state = ResumeState.from_store(store)
        log = EventLog(store, state)
        assert log.replaying()  # the main scope starts by re-deriving logged events
        run_to_completion(log)
        after = list(store.read())

    assert after[: len(before)] == before  # what was logged is untouched
    assert log.written == len(after) - len(before) == len(expected_rows) - len(before)
    assert Counter((e.scope, e.kind) for e in after) == expected  # nothing twice, nothing lost
    assert sorted((e.scope, e.kind, e.round, e.agent_id) for e in after) == sorted(expected_rows)
    new = [(e.scope, e.kind) for e in after[len(before) :]]
    assert new == [
        ("r1/c", "c.0"),
        ("r1/c", "c.1"),
        ("r1/c", "c.2"),
        (MAIN_SCOPE, "round.completed"),
        (MAIN_SCOPE, "run.completed"),
    ]
    assert not log.replaying()


def test_resuming_a_complete_run_writes_nothing(tmp_path: Path) -> None:
    with SQLiteEventStore(tmp_path / "e.sqlite") as store:
        run_to_completion(EventLog(store))
        before = list(store.read())
        log = EventLog(store, ResumeState.from_store(store))
        run_to_completion(log)
        assert list(store.read()) == before
        assert log.written == 0


@pytest.mark.parametrize("variant", ["main", "a", "b"])
def test_resume_mismatch_in_logged_work(tmp_path: Path, variant: str) -> None:
    with interrupted_store(tmp_path / "e.sqlite") as store:
        before = list(store.read())
        log = EventLog(store, ResumeState.from_store(store))
        with pytest.raises((ResumeMismatchError, ExceptionGroup)) as info:
            run_to_completion(log, variant=variant)
        error = first_error(info.value)
        assert isinstance(error, ResumeMismatchError)
        scope = MAIN_SCOPE if variant == "main" else f"r1/{variant}"
        assert repr(scope) in str(error) and "'changed'" in str(error)
        assert list(store.read())[: len(before)] == before


def test_resume_mismatch_when_a_finished_branch_produces_fewer_events(
    store: SQLiteEventStore,
) -> None:
    async def two() -> None:
        log.emit("x")
        log.emit("y")

    async def one() -> None:
        resumed.emit("x")

    log = EventLog(store)
    asyncio.run(log.branch("u", two))
    resumed = EventLog(store, ResumeState.from_store(store))
    with pytest.raises(ResumeMismatchError, match="'u'"):
        asyncio.run(resumed.branch("u", one))
    assert kinds(store) == ["x", "y"]


def test_resume_mismatch_when_a_finished_branch_produces_extra_events(
    store: SQLiteEventStore,
) -> None:
    """Regression: extra events in a finished branch used to be committed as a second batch."""
    log = EventLog(store)

    async def original() -> None:
        log.emit("x")

    asyncio.run(log.branch("u", original))
    resumed = EventLog(store, ResumeState.from_store(store))

    async def longer() -> None:
        resumed.emit("x")
        resumed.emit("extra")

    with pytest.raises(ResumeMismatchError):
        asyncio.run(resumed.branch("u", longer))
    assert kinds(store) == ["x"]


def test_resume_ignores_incidents(tmp_path: Path) -> None:
    with interrupted_store(tmp_path / "e.sqlite") as store:
        EventLog(store).incident("llm.error", {"request_key": "k", "attempts": 5})
        before = list(store.read())
        state = ResumeState.from_store(store)
        assert state.event_count == len(before) - 1
        assert "llm.error" not in state.main_kinds
        log = EventLog(store, state)
        log.incident("llm.error", {"request_key": "again"})  # main scope is replaying: dropped
        assert list(store.read()) == before
        run_to_completion(log)  # no ResumeMismatchError from the incident in the log
        assert [e.kind for e in store.read(kinds=["llm.error"])] == ["llm.error"]
        assert kinds(store)[-2:] == ["round.completed", "run.completed"]


def test_resume_state_collects_logged_responses(tmp_path: Path) -> None:
    response = {"text": "Finally, I will give 4 dollars", "model": "m", "usage": {}}
    with SQLiteEventStore(tmp_path / "e.sqlite") as store:
        log = EventLog(store)
        log.emit("llm.call", {"request_key": "k-main", "response": response, "cached": False})

        async def work() -> None:
            log.emit("llm.call", {"request_key": "k-branch", "response": {"text": "b"}})
            log.emit("llm.error", {"request_key": "k-failed", "attempts": 3})

        asyncio.run(log.branch("unit", work))
        state = ResumeState.from_store(store)
    assert state.responses == {
        "main": {"k-main": [response]},
        "unit": {"k-branch": [{"text": "b"}]},
    }
    assert state.main_kinds == ["llm.call"]
    assert state.branch_kinds == {"unit": ["llm.call", "llm.error"]}


class _RefusingBackend(Backend):
    """Fails the test if a resumed client asks it anything."""

    def __init__(self, answer: str = "") -> None:
        self.answer = answer
        self.calls = 0

    def identity(self) -> dict[str, str]:
        return {"backend": "refusing-test-backend"}

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        self.calls += 1
        if not self.answer:
            raise AssertionError("a resumed call reached the backend")
        return ChatResponse(text=self.answer)


def test_resumed_client_answers_logged_calls_from_the_log(tmp_path: Path) -> None:
    request = ChatRequest(messages=(Message(role="user", content="How much?"),))
    with SQLiteEventStore(tmp_path / "e.sqlite") as store:
        first = EventLog(store)
        live = _RefusingBackend(answer="5 dollars")
        client = LLMClient(live, cache=None, emit=first.emit)
        assert asyncio.run(client.complete(request)).text == "5 dollars"
        assert live.calls == 1

        state = ResumeState.from_store(store)
        resumed = EventLog(store, state)
        offline = _RefusingBackend()
        replaying = LLMClient(
            offline, cache=None, emit=resumed.emit, replay=resumed.logged_response
        )
        assert asyncio.run(replaying.complete(request)).text == "5 dollars"
        assert offline.calls == 0 and replaying.calls == 0
        assert kinds(store) == ["llm.call"]  # re-derived, not written again
        assert resumed.written == 0


def test_each_unit_gets_back_its_own_answers_to_the_same_request(tmp_path: Path) -> None:
    """Two units sent one request and a real model answered differently: resume keeps both."""
    request = ChatRequest(messages=(Message(role="user", content="Same prompt"),))
    answers = iter(["first answer", "second answer"])

    class Varying(_RefusingBackend):
        async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
            return ChatResponse(text=next(answers))

    async def run(log: EventLog, client: LLMClient) -> dict[str, str]:
        got: dict[str, str] = {}

        async def unit(name: str) -> None:
            got[name] = (await client.complete(request)).text

        for name in ("a", "b"):
            await log.branch(name, lambda name=name: unit(name))
        return got

    with SQLiteEventStore(tmp_path / "e.sqlite") as store:
        first = EventLog(store)
        original = asyncio.run(run(first, LLMClient(Varying(), cache=None, emit=first.emit)))
        assert original == {"a": "first answer", "b": "second answer"}
        resumed = EventLog(store, ResumeState.from_store(store))
        offline = LLMClient(
            _RefusingBackend(), cache=None, emit=resumed.emit, replay=resumed.logged_response
        )
        assert asyncio.run(run(resumed, offline)) == original
