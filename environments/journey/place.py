"""Places and people on graphs: a networkx graph whose nodes agents stand on (Mesa's network space).

`GraphSpace` is the one piece of machinery: a networkx graph, a Mesa `Network` built on it, and
`move`, which only follows an edge and logs every step as `agent.moved` `{from, to}`. Two uses:

- `JourneyMap`: the nodes are environments (places). Moving along an edge also leaves one
  environment and enters the next (`env.left` / `env.entered`), so a journey is a walk, and a user
  adds a place by adding a node and its edges.
- a social network (`examples/networked_trust.py`): the nodes are personas, each standing on its
  own node; who plays whom is read off the edges (`pairs`).

Routes are chosen outside (a fixed order, a rule, a persona's decision); `check_walk` says whether
an order is a walk of the graph before anything is played.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import networkx as nx
from mesa.discrete_space import Network

from personasim.simulation import Environment, InvalidActionError

if TYPE_CHECKING:
    from personasim.simulation import SimAgent, Simulation

__all__ = ["GraphSpace", "JourneyMap", "check_walk", "parse_edges"]


def parse_edges(text: Sequence[str]) -> nx.Graph:
    """`("trust-survey", "survey-gym")` → the undirected graph with those edges; a one-line error
    names an item that is not `a-b`."""
    graph = nx.Graph()
    for item in text:
        ends = [end.strip() for end in item.split("-")]
        if len(ends) != 2 or not all(ends) or ends[0] == ends[1]:
            raise ValueError(f"edge {item!r} is not two different places joined by '-' (a-b)")
        graph.add_edge(*ends)
    return graph


def check_walk(graph: nx.Graph, order: Sequence[Hashable]) -> None:
    """Raise a ValueError unless `order` names nodes of `graph` and each step follows an edge."""
    for node in order:
        if node not in graph:
            raise ValueError(f"{node!r} is not a place of the graph ({', '.join(map(str, graph))})")
    for here, there in itertools.pairwise(order):
        if not graph.has_edge(here, there):
            raise ValueError(f"no edge {here}-{there}: the route must follow the graph's edges")


class GraphSpace:
    """A networkx graph with agents on its nodes (Mesa `Network` cells); moves follow edges."""

    def __init__(self, sim: Simulation, graph: nx.Graph, name: str = "graph") -> None:
        if graph.number_of_nodes() == 0:
            raise ValueError(f"{name}: the graph has no nodes")
        self.sim = sim
        self.name = name
        self.graph = graph
        self.space = Network(graph, random=sim.random)
        self.position: dict[str, Hashable] = {}
        sim.emit(
            "graph.created",
            {
                "graph": name,
                "nodes": [str(n) for n in graph.nodes],
                "edges": [[str(a), str(b)] for a, b in graph.edges],
            },
        )

    def where(self, agent: SimAgent) -> Hashable | None:
        return self.position.get(agent.agent_id)

    def neighbours(self, node: Hashable) -> list[Hashable]:
        """The nodes one edge away, in the graph's order (deterministic for a seeded rule)."""
        return list(self.graph.neighbors(node))

    def agents_at(self, node: Hashable) -> list[Any]:
        return list(self.space[node].agents)

    def place(self, agent: SimAgent, node: Hashable) -> None:
        """Put an agent on its first node (from nowhere: `from` is null)."""
        if agent.agent_id in self.position:
            raise InvalidActionError(f"{agent.agent_id} is already on {self.where(agent)!r}")
        self._arrive(agent, None, node)

    def move(self, agent: SimAgent, node: Hashable) -> None:
        """Step along an edge to `node` (an error if there is no edge from where it stands)."""
        here = self.position.get(agent.agent_id)
        if here is None:
            raise InvalidActionError(f"{agent.agent_id} is not on {self.name!r}; place it first")
        if not self.graph.has_edge(here, node):
            raise InvalidActionError(f"no edge {here}-{node} in {self.name!r}")
        self.space[here].remove_agent(agent)
        self._arrive(agent, here, node)

    def _arrive(self, agent: SimAgent, here: Hashable | None, node: Hashable) -> None:
        if node not in self.graph:
            raise InvalidActionError(f"{node!r} is not a node of {self.name!r}")
        self.space[node].add_agent(agent)
        self.position[agent.agent_id] = node
        payload = {"graph": self.name, "from": None if here is None else str(here), "to": str(node)}
        self.sim.emit("agent.moved", payload, agent_id=agent.agent_id)

    def pairs(self) -> list[tuple[Hashable, Hashable]]:
        """Every edge in both directions, in the graph's order: who plays whom."""
        return [pair for a, b in self.graph.edges for pair in ((a, b), (b, a))]


class JourneyMap(GraphSpace):
    """A graph whose nodes are environments: a step also leaves one and enters the next."""

    def __init__(self, sim: Simulation, graph: nx.Graph, places: Mapping[str, Environment]) -> None:
        missing = [str(n) for n in graph if n not in places]
        unused = [name for name in places if name not in graph]
        if missing or unused:
            raise ValueError(
                f"the journey graph and its places differ: nodes without a place {missing}, "
                f"places without a node {unused}"
            )
        self.places = dict(places)
        super().__init__(sim, graph, name="journey")

    def _arrive(self, agent: SimAgent, here: Hashable | None, node: Hashable) -> None:
        super()._arrive(agent, here, node)
        agent.move_to(self.places[str(node)])
