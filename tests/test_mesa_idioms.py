"""A personasim model is a Mesa model a Mesa user can query and collect from: its agents live in
Mesa's `model.agents` (an `AgentSet`), a round advances `model.steps` as Mesa's `step` does, and
Mesa's own `DataCollector` records agent and model values round by round."""

from __future__ import annotations

from pathlib import Path

import mesa

from personasim.simulation import (
    EventLog,
    LLMClient,
    ScriptedBackend,
    SimAgent,
    Simulation,
    SQLiteEventStore,
)


class Saver(SimAgent):
    """An agent with one number a DataCollector can report."""

    def __init__(self, model: Simulation, agent_id: str, savings: int) -> None:
        super().__init__(model, agent_id)
        self.savings = savings


def test_mesa_agentset_steps_and_datacollector_work_on_a_personasim_model(tmp_path: Path) -> None:
    with SQLiteEventStore(tmp_path / "events.sqlite") as store:
        sim = Simulation(seed=0, llm=LLMClient(ScriptedBackend()), log=EventLog(store))
        for index, savings in enumerate((3, 5, 8)):
            Saver(sim, f"saver-{index}", savings)
        collector = mesa.DataCollector(
            model_reporters={"total": lambda m: sum(m.agents.get("savings"))},
            agent_reporters={"savings": "savings", "id": "agent_id"},
        )
        for round_index in (1, 2):
            sim.begin_round(round_index)
            sim.agents.do(lambda agent: setattr(agent, "savings", agent.savings * 2))
            sim.end_round()
            collector.collect(sim)

    assert isinstance(sim.agents, mesa.agent.AgentSet) and len(sim.agents) == 3
    assert sim.steps == 2  # a round is one Mesa step
    rich = sim.agents.select(lambda agent: agent.savings >= 20)
    assert sorted(agent.agent_id for agent in rich) == ["saver-1", "saver-2"]
    assert sim.agent("saver-0") is sim.agents.select(lambda a: a.agent_id == "saver-0")[0]
    model_table = collector.get_model_vars_dataframe()
    assert model_table["total"].tolist() == [32, 64]
    agent_table = collector.get_agent_vars_dataframe().reset_index()
    assert sorted(agent_table.loc[agent_table["Step"] == 2, "savings"]) == [12, 20, 32]
