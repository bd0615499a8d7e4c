"""The decision's LangGraph runtime: a Pregel graph whose nodes route to each other through
addressed channels (the design is described in `agents/decision.py`).

Kept apart so that LangGraph and LangChain's runnables (about 0.8 s of imports) load with the
first decision, not with every module that names a decision task: `personasim list`,
`metrics`, `view` and `rescore` read scenarios without deciding anything.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.channels import EphemeralValue, LastValue
from langgraph.pregel import NodeBuilder, Pregel
from langgraph.runtime import get_runtime

__all__ = ["build_decision_graph"]

Node = Callable[[Any, Any], Awaitable[Any]]
"""A node: (its state, the LangGraph runtime) → a route, a `(to, state)` named tuple."""


class _Addressed(EphemeralValue[Any]):
    """A node's channel: keeps the state of a route addressed to it (its key, the node's
    name) and ignores the others, so writing a route to every channel triggers one node."""

    def update(self, values: Sequence[Any]) -> bool:
        return super().update(_addressed(self.key, values))


class _Result(LastValue[Any]):
    """The `done` channel: the final state, kept after the last step (the graph's output)."""

    def update(self, values: Sequence[Any]) -> bool:
        return super().update(_addressed(self.key, values))


def _addressed(key: str, routes: Sequence[Any]) -> list[Any]:
    return [route.state for route in routes if route.to == key]


def _channel(name: str) -> _Addressed | _Result:
    channel = _Result(dict) if name == "done" else _Addressed(dict)
    channel.key = name  # `BaseChannel.key`: the channel's name, which routes address
    return channel


class _Step(Runnable[Any, Any]):
    """Runs one node's coroutine on the event loop, untraced (no callback run per node)."""

    def __init__(self, name: str, function: Node) -> None:
        self.name = name
        self.function = function

    def invoke(self, input: Any, config: RunnableConfig | None = None, **_: Any) -> Any:
        raise TypeError("the decision graph runs only asynchronously (ainvoke)")

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **_: Any) -> Any:
        return await self.function(input, get_runtime())


def build_decision_graph(
    edges: Mapping[str, tuple[Node, tuple[str, ...]]], context_schema: type, entry: str
) -> Pregel:
    """The compiled graph: each node of `edges` with the channels its routes may address,
    entered on `entry`'s channel, its output the `done` channel."""
    return Pregel(
        nodes={
            name: NodeBuilder().subscribe_only(name).do(_Step(name, fn)).write_to(*targets)
            for name, (fn, targets) in edges.items()
        },
        channels={name: _channel(name) for name in (*edges, "done")},
        input_channels=entry,
        output_channels="done",
        context_schema=context_schema,
    )
