"""The per-decision procedure of a persona: a compiled LangGraph state machine.

    ask ─┬─ done    (valid answer: `decision.made` recorded)
     ↑   ├─ repair  (invalid, repairs left: re-ask with a reminder)
     └───┘  fail    (out of repairs, or the call ran out of attempts: `decision.failed`,
                     no default) ─ done

A call that ran out of attempts on transient errors (`LLMCallFailedError`: timeouts, 429, 5xx)
is data like an unparsable answer: the decision fails with reason `call_failed` and the run
goes on. So is a prompt too long for the model's context when the unit's own replies made it
long (a re-ask, an earlier round's answers): reason `context_exceeded`. A permanent endpoint
error (refused, bad key, unknown model, a scenario's first prompt that cannot fit) is not
caught: it stops the run, since every other call would fail the same way. A re-ask shows the
model only the end of its unusable reply (`bounded_reply`).

The graph is built and compiled once, on the first decision (`agents/decision_graph.py`, so
LangGraph loads only when something decides); everything that differs between decisions (the agent,
the prompt, the parser) travels in the run's context, not in the mutable state. It is a Pregel
graph, LangGraph's runtime under `StateGraph`, built with its public API (`NodeBuilder`,
`Pregel`, a channel class): each node returns a `Route` — the next node (or `done`) and the
state it gets — which is written to every node's channel, and each channel keeps only the
routes addressed to it, so only the next node runs. A `StateGraph` would add a `__start__`
step to every run, and each LangGraph step costs more CPU than the rest of a decision
(`benchmarks/bench_graph.py`: +0.52 ms per valid decision, ~80 % of its CPU; README there);
here the request enters on the ask node's channel, so a valid decision
is one step. Every node is a coroutine run by a minimal `Runnable` (LangGraph runs plain
functions in a worker thread, which would cost a thread hop per node and write events from
outside the event loop), and untraced, as `StateGraph` makes its nodes.

With a structured response format (`Simulation.response_format`), a task that declares its
answer's `schema` is sent with that schema as the request's `response_format`, and its reply is
read as JSON into the schema and then by `read`; the prompt's wording stays the paper's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from functools import cache, partial
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict, TypeVar

from pydantic import BaseModel

from personasim.simulation import (
    ChatRequest,
    ContextExceededError,
    LLMCallFailedError,
    PermanentLLMError,
    response_format_for,
)

if TYPE_CHECKING:
    from langgraph.pregel import Pregel
    from langgraph.runtime import Runtime

    from personasim.simulation import Simulation

__all__ = [
    "Decision",
    "DecisionParseError",
    "DecisionTask",
    "decide",
    "parse_nonempty",
    "parse_structured",
]


class DecisionParseError(ValueError):
    """The model's answer is not in the requested format or out of range; says which."""


def parse_nonempty(reply: str) -> str:
    """For free-text answers: any non-empty reply is usable, stripped."""
    if not reply.strip():
        raise DecisionParseError("the answer is empty")
    return reply.strip()


M = TypeVar("M", bound=BaseModel)


def parse_structured(reply: str, schema: type[M]) -> M:
    """The reply's JSON object (bare or fenced) as a validated `schema`, or
    `DecisionParseError` saying why.

    LangChain's parser reads a JSON object in a code fence, or one followed by text; a sentence
    before an unfenced object ("Sure! Here it is: {...}") is skipped here too.
    """
    # imported here: LangChain's parsers import its tracers (0.3 s), which text tasks never use
    from langchain_core.exceptions import OutputParserException
    from langchain_core.output_parsers import PydanticOutputParser

    parser = PydanticOutputParser(pydantic_object=schema)
    try:
        return parser.parse(reply)
    except OutputParserException as exc:
        error = str(exc)
    start = reply.find("{")
    if start > 0 and "```" not in reply:
        try:
            return parser.parse(reply[start:])
        except OutputParserException:
            pass
    first_line = error.splitlines()[0] if error else "invalid JSON"
    raise DecisionParseError(f"the answer is not a valid {schema.__name__}: {first_line}")


STRUCTURED_REMINDER = (
    "Your answer could not be used: {error}. Answer again with only a JSON object of the "
    "requested form."
)


@dataclass(frozen=True)
class DecisionTask:
    """What to ask and how to read the answer.

    `parse` raises `DecisionParseError` on an unusable answer; `reminder` turns that error into
    the user turn added before the re-ask, so the model learns what was wrong.
    """

    name: str
    request: ChatRequest
    parse: Callable[[str], Any]
    reminder: Callable[[str], str]
    max_repairs: int = 2
    details: dict[str, Any] = field(default_factory=dict)
    role: str = "persona"
    """The scenario role whose model answers (a judge, an evaluator...)."""
    member: int = 0
    """Which of the role's models answers, for a role played by several (an ensemble)."""
    schema: type[BaseModel] | None = None
    """The answer's pydantic model, sent as the response format when the run asks for JSON."""
    read: Callable[[Any], Any] | None = None
    """Turns a validated `schema` instance into the decision's value (default: the instance);
    raises `DecisionParseError` like `parse`."""

    def __post_init__(self) -> None:
        if clash := RESERVED_DETAILS & set(self.details):
            raise ValueError(f"details may not use the decision event's own keys {sorted(clash)}")

    def structured(self, response_format: str) -> DecisionTask:
        """This task as asked under the run's response format: unchanged for `text` or a task
        without a schema; else the schema-constrained request, a JSON parser and reminder."""
        if response_format == "text" or self.schema is None:
            return self
        schema, read = self.schema, self.read or (lambda answer: answer)
        request = self.request.model_copy(
            update={"response_format": response_format_for(response_format, schema)}
        )
        return replace(
            self,
            request=request,
            parse=lambda reply: read(parse_structured(reply, schema)),
            reminder=lambda error: STRUCTURED_REMINDER.format(error=error),
        )


RESERVED_DETAILS = frozenset(
    {"task", "attempts", "value", "error", "last_reply", "reason", "error_class", "request_key"}
)


@dataclass(frozen=True)
class Decision:
    """The outcome: `ok` with a `value`, or a recorded failure (`value` is None)."""

    ok: bool
    value: Any
    attempts: int
    error: str | None = None
    reply: str | None = field(default=None, compare=False)
    """The last reply's text (the accepted one when `ok`), e.g. for a later prompt's memory."""


@dataclass(frozen=True)
class _Context:
    sim: Simulation
    agent_id: str
    task: DecisionTask
    driver: _DriverReader | None = None
    """In a worker process: the driver reads each reply with the task's own parser."""

    async def read(self, reply: str) -> Any:
        if self.driver is None:
            return self.task.parse(reply)
        return await self.driver.read(reply)

    def reminder(self, error: str) -> str:
        return self.task.reminder(error) if self.driver is None else self.driver.reminders[error]


@dataclass
class _DriverReader:
    """A worker's way to read a reply: the task's parser and reminder are the scenario's own
    functions (closures over its game and prompts), which stay in the driver; the worker sends
    the reply's text and gets back the value, or the error and its reminder."""

    ask: Callable[[Any], Awaitable[Any]]
    reminders: dict[str, str] = field(default_factory=dict)

    async def read(self, reply: str) -> Any:
        ok, value, reminder = await self.ask(reply)
        if ok:
            return value
        self.reminders[value] = reminder
        raise DecisionParseError(value)


class _State(TypedDict, total=False):
    request: ChatRequest
    reply: str
    value: Any
    error: str | None
    attempts: int
    failure: dict[str, Any]


class Route(NamedTuple):
    """A node's output: the node that runs next (or `done`) and the state it gets."""

    to: str
    state: _State


async def _ask(state: _State, runtime: Runtime[_Context]) -> Route:
    """Ask the model, read its answer and, when it is usable, record the decision."""
    ctx = runtime.context
    task = ctx.task
    attempts = state["attempts"] + 1
    try:
        response = await ctx.sim.ask(
            state["request"], agent_id=ctx.agent_id, role=task.role, member=task.member
        )
    except LLMCallFailedError as exc:
        if isinstance(exc, ContextExceededError) and not _has_replies(state["request"]):
            raise PermanentLLMError(str(exc)) from exc  # the scenario's own prompt cannot fit
        failure = {
            "reason": getattr(exc, "reason", "call_failed"),
            "error_class": type(exc).__name__,
        }
        if exc.request_key is not None:
            failure["request_key"] = exc.request_key
        lost: _State = {**state, "attempts": attempts, "error": str(exc), "failure": failure}
        return Route("fail", lost)
    try:
        value = await ctx.read(response.text)
    except DecisionParseError as exc:
        failed: _State = {**state, "reply": response.text, "attempts": attempts, "error": str(exc)}
        return Route("repair" if attempts <= task.max_repairs else "fail", failed)
    _record(ctx, "decision.made", attempts, value=value)
    done: _State = {**state, "reply": response.text, "attempts": attempts, "value": value}
    return Route("done", {**done, "error": None})


async def _repair(state: _State, runtime: Runtime[_Context]) -> Route:
    ctx = runtime.context
    ctx.sim.emit(
        "decision.reask",
        {"task": ctx.task.name, "attempt": state["attempts"], "error": state["error"]},
        agent_id=ctx.agent_id,
    )
    reply = bounded_reply(state["reply"])
    request = state["request"].with_reply(reply, ctx.reminder(state["error"]))
    return Route("ask", {**state, "request": request})


REASK_REPLY_CHARS = 1500
"""How much of an unusable reply a re-ask carries back: its end, where an answer would stand.
A model that rambled would otherwise see its whole ramble again, and a second one after it,
until the conversation outgrows the context (SmolLM2 at 4,096 tokens did within one re-ask)."""


def bounded_reply(reply: str, limit: int = REASK_REPLY_CHARS) -> str:
    """The reply as a re-ask shows it back: whole when short, else its last `limit`
    characters after a line saying how much was left out."""
    if len(reply) <= limit:
        return reply
    return f"[… the first {len(reply) - limit} characters are left out …]\n{reply[-limit:]}"


def _has_replies(request: ChatRequest) -> bool:
    """Whether the request carries model replies: the unit's own conversation, which a
    scenario cannot bound in advance (unlike its first prompt)."""
    return any(message.role == "assistant" for message in request.messages)


async def _fail(state: _State, runtime: Runtime[_Context]) -> Route:
    _record(
        runtime.context,
        "decision.failed",
        state["attempts"],
        error=state["error"],
        last_reply=state.get("reply"),
        **state.get("failure", _UNPARSABLE),
    )
    return Route("done", state)


_UNPARSABLE = {"reason": "unparsable", "error_class": DecisionParseError.__name__}


def _record(ctx: _Context, kind: str, attempts: int, **outcome: Any) -> None:
    payload = {"task": ctx.task.name, "attempts": attempts, **outcome, **ctx.task.details}
    ctx.sim.emit(kind, payload, agent_id=ctx.agent_id)


_Node = Callable[[_State, "Runtime[_Context]"], Awaitable[Route]]


_EDGES: dict[str, tuple[_Node, tuple[str, ...]]] = {
    "ask": (_ask, ("done", "repair", "fail")),
    "repair": (_repair, ("ask",)),
    "fail": (_fail, ("done",)),
}
"""Each node, and the channels its routes may address (the picture at the top)."""


@cache
def decision_graph() -> Pregel:
    """The compiled graph, built on the first decision (LangGraph loads then)."""
    from personasim.agents.decision_graph import build_decision_graph

    return build_decision_graph(_EDGES, _Context, entry="ask")


async def decide(sim: Simulation, agent_id: str, task: DecisionTask) -> Decision:
    """Run the decision graph once for `agent_id`, in the run's response format: here, or in
    a worker process when the run has them (`--workers`) and the unit has nothing logged yet
    (a resumed unit is re-derived here, from its logged answers)."""
    task = task.structured(sim.response_format)
    if sim.offload is not None and sim.log.fresh_unit():
        shipped = replace(
            task, parse=_read_in_driver, reminder=_read_in_driver, schema=None, read=None
        )
        job = (agent_id, sim.round, shipped)
        decision: Decision = await sim.offload.run(WORKER_DECIDE, job, partial(_reading, task))
        return decision
    return await _run(_Context(sim, agent_id, task))


WORKER_DECIDE = f"{__name__}:decide_in_worker"
"""What a worker process runs for one decision (simulation/runs/workers/decision_workers.py)."""


async def decide_in_worker(
    sim: Simulation, job: tuple[str, int | None, DecisionTask], ask: Callable[[Any], Awaitable[Any]]
) -> Decision:
    """One decision in a worker process, on its own `Simulation` (its own model client); the
    driver reads the replies (`_reading`)."""
    agent_id, round_index, task = job
    sim.round = round_index  # a round's decisions all end before the next round begins
    return await _run(_Context(sim, agent_id, task, _DriverReader(ask)))


def _reading(task: DecisionTask, reply: str) -> tuple[bool, Any, str | None]:
    """In the driver: a worker's reply read by the task's own parser, or the error and the
    reminder the re-ask adds."""
    try:
        return True, task.parse(reply), None
    except DecisionParseError as exc:
        return False, str(exc), task.reminder(str(exc))


def _read_in_driver(text: str) -> Any:
    raise RuntimeError("a shipped task's replies are read in the driver (decide_in_worker)")


async def _run(context: _Context) -> Decision:
    start = Route("ask", {"request": context.task.request, "attempts": 0})
    final: _State = {}
    async for final in decision_graph().astream(  # noqa: B007 - the last state is the outcome
        start, context=context, stream_mode="values", output_keys="done"
    ):
        pass
    if "attempts" not in final:  # a route to a channel its node may not address
        raise RuntimeError(f"the decision graph ended without an outcome for {context.agent_id}")
    ok = final.get("error") is None
    value = final.get("value") if ok else None
    return Decision(ok, value, final["attempts"], final.get("error"), final.get("reply"))
