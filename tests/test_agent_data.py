"""Agents as data: `load_agents(run_dir)` and `export --format parquet`'s agents.parquet, one row
per agent built from the event log alone (docs/sweeps.md, "Agents as data")."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from personasim.analysis import load_agents
from personasim.simulation import run_scenario
from personasim.simulation.cli.main import main
from personasim.simulation.log.events import Event
from personasim.simulation.log.sqlite_store import SQLiteEventStore
from personasim.simulation.runs.sweeps.sweep import run_sweep
from personasim.simulation.runs.tools.agent_data import agents_table

DOCS = Path(__file__).resolve().parents[1] / "docs" / "sweeps.md"


def logged(run_dir: Path) -> list[Event]:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return list(store.read())


@pytest.fixture(scope="module")
def drifted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Trust population on the drifting scripted model: some decisions fail after re-asks."""
    out = tmp_path_factory.mktemp("trust") / "r"
    run_scenario(
        "trust-population", {"n_personas": 6}, model="scripted:drift=0.6", out=out,
        progress=False, use_cache=False,
    )  # fmt: skip
    return out


def test_one_row_per_agent_with_traits_values_and_failures(drifted: Path) -> None:
    events = logged(drifted)
    agents = load_agents(drifted).set_index("agent_id")
    created = {e.agent_id: e.payload for e in events if e.kind == "agent.created"}
    assert set(agents.index) == set(created)
    made = {e.agent_id: e.payload["value"] for e in events if e.kind == "decision.made"}
    failed = {e.agent_id: e.payload for e in events if e.kind == "decision.failed"}
    reasks = Counter(e.agent_id for e in events if e.kind == "decision.reask")
    assert made and failed, "drift=0.6 should give both usable and failed decisions"
    for agent_id, payload in created.items():
        row = agents.loc[agent_id]
        assert row["type"] == payload["type"]
        if "persona" in payload:
            assert row["persona_id"] == payload["persona"]["id"]
            assert row["role"] == "persona"
            for trait, level in payload["persona"]["traits"].items():
                assert row[f"trait.{trait}"] == level
        else:  # the trustee: a fixed-rule agent, no model role
            assert row["archetype"] == payload["archetype"]
            assert pd.isna(row["role"])
        assert row["failures"] == (agent_id in failed)
        assert row["decisions"] == (agent_id in failed) + (agent_id in made)
        assert row["reasks"] == reasks[agent_id]
        if agent_id in made:
            assert row["trust.trustor"] == made[agent_id]
        else:
            assert pd.isna(row["trust.trustor"])
        if agent_id in failed:
            why = failed[agent_id]
            expected = f"trust.trustor: {why['reason']} after {why['attempts']} attempts"
            assert row["failed_decisions"] == expected
        else:
            assert pd.isna(row["failed_decisions"])
    dtypes = agents.dtypes.astype(str)
    assert dtypes["trust.trustor"] == "Int64"
    assert dtypes[["decisions", "failures", "reasks", "max_return"]].eq("Int64").all()
    assert dtypes[["type", "role", "trait.Sex", "failed_decisions"]].eq("string").all()
    assert agents["trust.trustor"].mean() == pytest.approx(sum(made.values()) / len(made))


def test_export_writes_agents_parquet_beside_the_events(drifted: Path, capsys) -> None:
    assert main(["export", str(drifted), "--format", "parquet"]) == 0
    assert f"7 agents written to {drifted / 'agents.parquet'}" in capsys.readouterr().out
    exported = pd.read_parquet(drifted / "agents.parquet")
    pd.testing.assert_frame_equal(exported, load_agents(drifted))


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_a_classroom_run_has_a_column_per_decision_of_a_task_decided_many_times_per_round(
    tmp_path: Path,
) -> None:
    """Students answer every question in one round: one `<task>@<scope>` column per unit of
    work, holding that decision's value, beside the `<task>.n` count."""
    out = tmp_path / "c"
    run_scenario(
        "classroom", {"n_questions": 2, "repetitions": 1}, out=out, progress=False,
        use_cache=False,
    )  # fmt: skip
    events = logged(out)
    agents = load_agents(out).set_index("agent_id")
    decided = Counter(
        (e.agent_id, e.payload["task"]) for e in events if e.kind.startswith("decision.")
    )
    tasks = {task for _, task in decided}
    assert {f"{task}.n" for task in tasks} <= set(agents.columns)
    assert not tasks & set(agents.columns)  # no single value column: many values per round
    for agent_id, row in agents.iterrows():
        for task in tasks:
            assert row[f"{task}.n"] == decided[(agent_id, task)]
    made = [e for e in events if e.kind == "decision.made"]
    value_columns = {c for c in agents.columns if "@" in c}
    assert value_columns == {f"{e.payload['task']}@{e.scope}" for e in made}
    for event in made:
        column = f"{event.payload['task']}@{event.scope}"
        value, got = event.payload["value"], agents.loc[event.agent_id, column]
        assert (json.loads(got) if isinstance(value, dict) else got) == value, column  # JSON text
    filled = agents[sorted(value_columns)].notna().sum(axis=1)
    assert filled.to_dict() == {a: agents.loc[a, "decisions"] for a in agents.index}
    judged = [c for c in agents.columns if c.startswith("classroom.judge@")]
    assert judged and str(agents[judged[0]].dtype) == "Int64"  # a judge's score stays a number
    assert list(agents.columns).index("classroom.answer.n") < list(agents.columns).index(
        next(c for c in agents.columns if c.startswith("classroom.answer@"))
    )
    assert agents.loc["judge", "role"] == "judge"
    assert agents.loc["student-low", "role"] == "student"
    assert agents.loc["student-low", "trait.level"] == "low"
    assert agents["decisions"].sum() == sum(decided.values())
    assert str(agents["classroom.answer.n"].dtype) == "Int64"


def decision(agent: str, rnd: int, value: object, scope: str = "main") -> Event:
    payload = {"task": "t.offer", "value": value, "attempts": 1}
    return Event("decision.made", payload, round=rnd, agent_id=agent, scope=scope)


FAILED = {"task": "t.offer", "reason": "unparsable", "attempts": 3}


def test_a_task_decided_once_per_round_gets_a_column_per_round_last_attempt_only() -> None:
    events = [
        Event("agent.created", {"type": "Bot"}, agent_id="a"),
        Event("agent.created", {"type": "Bot"}, agent_id="b"),
        decision("a", 1, 4, scope="r1/a"),
        decision("b", 1, 2.5),
        Event("decision.failed", FAILED, round=2, agent_id="a"),
        decision("b", 2, 1),
        Event("unit.retried", {"attempt": 2}, scope="r1/a"),  # a's round 1 again: 6 replaces 4
        decision("a", 1, 6, scope="r1/a"),
    ]
    events = [Event(e.kind, e.payload, e.round, e.agent_id, e.scope, seq=i + 1)
              for i, e in enumerate(events)]  # fmt: skip
    agents = agents_table(events).set_index("agent_id")
    assert list(agents.columns) == [
        "type", "t.offer.r1", "t.offer.r2", "decisions", "failures", "reasks", "failed_decisions",
    ]  # fmt: skip
    assert agents["t.offer.r1"].tolist() == [6.0, 2.5]  # integers and a number: float64
    assert str(agents["t.offer.r1"].dtype) == "float64"
    assert str(agents["t.offer.r2"].dtype) == "Int64"
    assert pd.isna(agents.loc["a", "t.offer.r2"])
    assert agents.loc["a", "failed_decisions"] == "t.offer r2: unparsable after 3 attempts"
    assert agents["decisions"].tolist() == [2, 2]


def test_a_sweeps_agents_in_one_file_with_a_cell_column(tmp_path: Path) -> None:
    sweep = run_sweep(
        "trust-population", ["scripted"], {"n_personas": ["3", "4"]},
        out=tmp_path / "sweep", progress=False,
    )  # fmt: skip
    assert main(["export", str(tmp_path / "sweep"), "--format", "parquet"]) == 0
    table = pd.read_parquet(tmp_path / "sweep" / "agents.parquet")
    counts = {r.run_dir.name: len(load_agents(r.run_dir)) for r in sweep.runs}
    assert table["cell"].value_counts().to_dict() == counts
    assert str(table["trust.trustor"].dtype) == "Int64"
    values = [e.payload["value"] for r in sweep.runs for e in logged(r.run_dir)
              if e.kind == "decision.made"]  # fmt: skip
    assert table["trust.trustor"].mean() == pytest.approx(sum(values) / len(values))


def test_the_docs_example_runs(tmp_path: Path) -> None:
    """docs/sweeps.md's `load_agents` example, after its `load_events` one, in a fresh folder."""
    text = DOCS.read_text(encoding="utf-8")
    examples = [
        re.search(rf"<!-- example: {name} -->\n```python\n(.*?)```", text, re.S).group(1)
        for name in ("load_events", "load_agents")
    ]
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        namespace: dict = {}
        for example in examples:
            exec(compile(example, str(DOCS), "exec"), namespace)
    finally:
        os.chdir(cwd)
    assert len(namespace["agents"]) == len(load_agents(tmp_path / "runs" / "example"))
