"""The decision graph's own CPU: personasim's hand-built Pregel graph (`agents/decision_graph.py`,
LangGraph's public API) against the same three-node decision written as LangGraph users write
it, a `StateGraph` with conditional edges. Both run the valid path (ask → done) and the re-ask
path (ask → repair → ask → done) with nodes that do nothing else, so what is timed is the
graph machinery per decision; prints microseconds per decision (best of `--repeats`) and the
difference (a script, not a test).

    python benchmarks/bench_graph.py                  # 3,000 decisions per path, best of 5
    python benchmarks/bench_graph.py --n 10000 --repeats 3
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, TypedDict

from langgraph.graph import END, START, StateGraph

from personasim.agents.decision_graph import build_decision_graph


class Route(NamedTuple):
    to: str
    state: dict[str, Any]


class Context(TypedDict):
    reasks: int


class State(TypedDict, total=False):
    attempts: int
    to: str
    value: int


async def ask(state: dict[str, Any], runtime: Any) -> Route:
    attempts = state["attempts"] + 1
    if attempts <= runtime.context["reasks"]:
        return Route("repair", {**state, "attempts": attempts})
    return Route("done", {**state, "attempts": attempts, "value": 7})


async def repair(state: dict[str, Any], runtime: Any) -> Route:
    return Route("ask", state)


async def fail(state: dict[str, Any], runtime: Any) -> Route:
    return Route("done", state)


def pregel() -> Callable[[int], Awaitable[dict[str, Any]]]:
    graph = build_decision_graph(
        {"ask": (ask, ("done", "repair", "fail")), "repair": (repair, ("ask",)),
         "fail": (fail, ("done",))},
        Context,
        entry="ask",
    )  # fmt: skip

    async def run(reasks: int) -> dict[str, Any]:
        final: dict[str, Any] = {}
        async for final in graph.astream(  # noqa: B007 - the last state is the outcome
            Route("ask", {"attempts": 0}),
            context={"reasks": reasks},
            stream_mode="values",
            output_keys="done",
        ):
            pass
        return final

    return run


def state_graph() -> Callable[[int], Awaitable[dict[str, Any]]]:
    """The same decision as a `StateGraph`: each node returns its update and the next node's
    name in `to`; conditional edges follow it."""

    async def as_update(node: Any, state: State, runtime: Any) -> State:
        route = await node(state, runtime)
        return {**route.state, "to": route.to}  # type: ignore[typeddict-item]

    builder = StateGraph(State, context_schema=Context)
    for name, node in (("ask", ask), ("repair", repair), ("fail", fail)):

        async def step(state: State, runtime: Any, node: Any = node) -> State:
            return await as_update(node, state, runtime)

        builder.add_node(name, step)
    builder.add_edge(START, "ask")
    route = {"done": END, "repair": "repair", "fail": "fail", "ask": "ask"}
    for name in ("ask", "repair", "fail"):
        builder.add_conditional_edges(name, lambda state: state["to"], route)
    graph = builder.compile()

    async def run(reasks: int) -> dict[str, Any]:
        return await graph.ainvoke({"attempts": 0}, context={"reasks": reasks})

    return run


async def per_decision(run: Callable[[int], Awaitable[Any]], n: int, reasks: int) -> float:
    outcome = await run(reasks)
    assert outcome["value"] == 7 and outcome["attempts"] == reasks + 1, outcome
    started = time.process_time()
    for _ in range(n):
        await run(reasks)
    return (time.process_time() - started) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3000, help="decisions per path and repeat")
    parser.add_argument("--repeats", type=int, default=5, help="best of this many")
    args = parser.parse_args()
    graphs = {"hand-built Pregel": pregel(), "StateGraph": state_graph()}
    for path, reasks in (("valid (ask → done)", 0), ("one re-ask", 1)):
        best = {
            name: min(asyncio.run(per_decision(run, args.n, reasks)) for _ in range(args.repeats))
            for name, run in graphs.items()
        }
        own = best["hand-built Pregel"]
        extra = best["StateGraph"] - own
        print(f"{path}: " + ", ".join(f"{k} {v:.0f} µs" for k, v in best.items()))
        print(f"  StateGraph costs {extra:+.0f} µs per decision ({extra / own:+.0%})")


if __name__ == "__main__":
    main()
