"""A networked Trust Game: personas on a social network play with their neighbours.

The same graph machinery as `persona-journey` (`personasim.environments.journey.place.GraphSpace`, a
networkx graph with Mesa's network space) puts every persona on its own node of a small-world or
scale-free network; who plays whom follows the edges: along each edge, in both directions, the
persona at one end is the trustor (seed 001's prompt, trust-population's pack) and its neighbour
the trustee. The trustee's return is a documented rule, not a model: it returns a share of what
it received that grows with its Agreeableness (`RETURN_SHARE`). Metrics: transfers, and whether
well-connected personas end richer (Spearman's ρ of degree and payoff, null with its reason when
the degrees are all equal). Run it:

    personasim run examples/networked_trust.py --n-personas 10
    python examples/networked_trust.py --network scale-free
"""

from __future__ import annotations

import argparse
from typing import Any, Literal

import networkx as nx
import pandas as pd
from pydantic import Field

from personasim.agents import DecisionTask, PersonaAgent, augment_big_five, synthetic_population
from personasim.analysis import shown_stat, stat_fields
from personasim.environments import TrustGame
from personasim.environments.journey.place import GraphSpace
from personasim.scenarios.persona_journey.metrics import spearman
from personasim.scenarios.trust.answers import TrustorAnswer
from personasim.scenarios.trust.population import (
    TrustPopulation,
    checked_transfer,
    parse_transfer,
)
from personasim.simulation import (
    ChatRequest,
    Message,
    RunSettings,
    Scenario,
    ScenarioParams,
    Simulation,
    run_scenario,
)

RETURN_SHARE = {"Low": 0.1, "Medium": 0.33, "High": 0.5}
"""Share of the received amount a trustee returns, by its Agreeableness level (a rule)."""


class NetworkedTrustParams(ScenarioParams):
    n_personas: int = Field(10, ge=3, le=200, description="synthetic personas, one per node")
    network: Literal["small-world", "scale-free", "ring"] = Field("small-world")
    endowment: int = Field(10, ge=1, description="dollars per game (E)")


def social_network(kind: str, n: int, seed: int) -> nx.Graph:
    """The persona graph: nodes 0..n-1."""
    if kind == "ring":
        return nx.cycle_graph(n)
    if kind == "scale-free":
        return nx.barabasi_albert_graph(n, 1, seed=seed)
    return nx.connected_watts_strogatz_graph(n, min(4, n - 1), 0.3, seed=seed)


class NetworkedTrust(Scenario):
    name = "networked-trust"
    summary = "Trust Game along the edges of a social network (example scenario)"
    Params = NetworkedTrustParams
    params: NetworkedTrustParams

    def setup(self, sim: Simulation) -> None:
        p = self.params
        self.pack = TrustPopulation.shipped_prompts()
        self.game = TrustGame(sim, endowment=p.endowment)
        people = augment_big_five(synthetic_population(p.n_personas, sim.rng), sim.rng)
        self.people = [PersonaAgent(sim, person) for person in people]
        graph = social_network(p.network, p.n_personas, int(sim.rng.integers(2**31)))
        self.network = GraphSpace(
            sim, nx.relabel_nodes(graph, {i: str(i) for i in graph}), "social"
        )
        for node, person in enumerate(self.people):
            self.network.place(person, str(node))
            person.move_to(self.game)

    async def play_round(self, sim: Simulation, round_index: int) -> None:
        await sim.concurrently(
            {f"{a}->{b}": (lambda a=a, b=b: self._play(a, b)) for a, b in self.network.pairs()}
        )

    def _on(self, node: Any) -> PersonaAgent:
        return self.network.agents_at(node)[0]

    async def _play(self, a: Any, b: Any) -> None:
        trustor, trustee = self._on(a), self._on(b)
        p = self.params
        prompt = self.pack.render(
            "trustor",
            initial_amount=p.endowment,
            persona_details=trustor.persona.profile_text(),
            theoretical_props="",
        )
        task = DecisionTask(
            name="trust.trustor",
            request=ChatRequest(
                messages=(Message(role="user", content=prompt),),
                temperature=0.05,
                sample_index=int(b),  # one game per neighbour: its own sample
                task="trust.trustor",
                hints={"traits": dict(trustor.persona.traits), "endowment": p.endowment},
            ),
            parse=lambda reply: parse_transfer(reply, self.game),
            reminder=lambda e: self.pack.render(
                "format_reminder", error=e, initial_amount=p.endowment
            ),
            details={"trustee": trustee.agent_id},
            schema=TrustorAnswer,
            read=lambda answer: checked_transfer(answer.amount, self.game),
        )
        decision = await trustor.decide(task)
        if decision.ok:
            received = self.game.transfer(trustor, trustee, decision.value)
            share = RETURN_SHARE.get(trustee.persona.traits.get("Agreeableness", ""), 0.33)
            self.game.repay(trustor, trustee, round(received * share))

    @classmethod
    def compute_metrics(cls, events: pd.DataFrame) -> dict[str, Any]:
        games = pd.DataFrame(events.loc[events["kind"] == "trust.return", "payload"].tolist())
        moved = events.loc[events["kind"] == "agent.moved", ["agent_id", "payload"]]
        node = {r.agent_id: r.payload["to"] for r in moved.itertuples()}
        graph = next(p for p in events.loc[events["kind"] == "graph.created", "payload"])
        degree = {n: sum(n in e for e in graph["edges"]) for n in graph["nodes"]}
        payoff: dict[str, float] = {agent: 0.0 for agent in node}
        for g in games.to_dict("records"):
            payoff[g["trustor"]] += g["trustor_payoff"]
        trustee_ids = events.loc[events["kind"] == "trust.return", "agent_id"].tolist()
        for trustee, g in zip(trustee_ids, games.to_dict("records"), strict=True):
            payoff[trustee] += g["trustee_payoff"]
        agents = sorted(payoff)
        rho = spearman([degree[node[a]] for a in agents], [payoff[a] for a in agents])
        return {
            "edges": len(graph["edges"]),
            "games": len(games),
            "failures": int((events["kind"] == "decision.failed").sum()),
            "mean_sent": round(float(games["sent"].mean()), 6) if len(games) else None,
            **stat_fields("rho_degree_payoff", rho),
        }

    @classmethod
    def report(cls, metrics: dict[str, Any]) -> list[str]:
        return [
            f"{metrics['games']} games on {metrics['edges']} edges, mean sent "
            f"{metrics['mean_sent']}, "
            f"rho(degree, payoff) {shown_stat(metrics, 'rho_degree_payoff')}"
        ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="scripted")
    parser.add_argument("--base-url")
    parser.add_argument("--out")
    parser.add_argument("--n-personas", type=int, default=10)
    parser.add_argument("--network", default="small-world")
    args = parser.parse_args()
    result = run_scenario(
        NetworkedTrust,
        {"n_personas": args.n_personas, "network": args.network},
        model=args.model,
        base_url=args.base_url,
        out=args.out,
        settings=RunSettings(),
    )
    print("\n".join(result.report))
    print(f"run directory: {result.run_dir}")
