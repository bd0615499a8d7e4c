"""persona-journey: the graph of places, routes, memory in prompts, cross-environment metrics."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import mesa
import networkx as nx
import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from test_drift import Outcome, check_drift_run, drift_run

from personasim.agents import DecisionParseError
from personasim.analysis.undefined import Undefined
from personasim.environments.journey.place import GraphSpace, check_walk, parse_edges
from personasim.scenarios.persona_journey.metrics import (
    bootstrap_spearman,
    difference_of_means,
    spearman,
)
from personasim.scenarios.persona_journey.scripted import NextPlace, read_place
from personasim.simulation import (
    InvalidActionError,
    ScenarioError,
    SQLiteEventStore,
    events_frame,
    run_scenario,
)
from personasim.simulation.cli.main import main


def _events(run_dir: Path) -> pd.DataFrame:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return events_frame(store.read())


def _run(tmp_path: Path, **params: Any) -> tuple[Any, pd.DataFrame]:
    result = run_scenario(
        "persona-journey", params, out=tmp_path / "run", progress=False, use_cache=False
    )
    assert result.manifest["status"] == "complete"
    return result, _events(result.run_dir)


def _routes(events: pd.DataFrame) -> dict[str, list[tuple[str | None, str]]]:
    routes: dict[str, list[tuple[str | None, str]]] = defaultdict(list)
    for row in events[events["kind"] == "agent.moved"].itertuples():
        routes[row.agent_id].append((row.payload["from"], row.payload["to"]))
    return routes


def _calls(events: pd.DataFrame, agent: str) -> list[dict[str, Any]]:
    rows = events[(events["kind"] == "llm.call") & (events["agent_id"] == agent)]
    return rows["payload"].tolist()


# --- the graph machinery ---------------------------------------------------------------------


def test_graph_space_moves_along_edges_only_and_logs_each_move() -> None:
    emitted: list[tuple[str, dict[str, Any], str | None]] = []

    class Sim(mesa.Model):
        def emit(self, kind: str, payload: dict[str, Any], agent_id: str | None = None) -> None:
            emitted.append((kind, payload, agent_id))

    sim = Sim(rng=1)
    agent = mesa.Agent(sim)
    agent.agent_id = "a1"  # type: ignore[attr-defined]
    space = GraphSpace(sim, parse_edges(["x-y", "y-z"]), "places")  # type: ignore[arg-type]
    space.place(agent, "x")  # type: ignore[arg-type]
    space.move(agent, "y")  # type: ignore[arg-type]
    assert space.agents_at("y") == [agent] and space.agents_at("x") == []
    with pytest.raises(InvalidActionError, match="no edge y-w"):
        space.move(agent, "w")  # type: ignore[arg-type]
    space.move(agent, "z")  # type: ignore[arg-type]
    with pytest.raises(InvalidActionError, match="no edge z-x"):
        space.move(agent, "x")  # type: ignore[arg-type]
    moves = [(p["from"], p["to"]) for kind, p, who in emitted if kind == "agent.moved"]
    assert moves == [(None, "x"), ("x", "y"), ("y", "z")]
    assert emitted[0][0] == "graph.created" and sorted(emitted[0][1]["nodes"]) == ["x", "y", "z"]
    assert sorted(space.pairs()) == [("x", "y"), ("y", "x"), ("y", "z"), ("z", "y")]


def test_walks_and_edges_are_checked_with_clear_errors() -> None:
    graph = parse_edges(["trust-survey", "survey-gym"])
    check_walk(graph, ["trust", "survey", "gym"])
    with pytest.raises(ValueError, match="no edge trust-gym"):
        check_walk(graph, ["trust", "gym", "survey"])
    with pytest.raises(ValueError, match="'a-b-c' is not two different places"):
        parse_edges(["a-b-c"])
    with pytest.raises(ScenarioError, match="no edge trust-gym"):
        run_scenario(
            "persona-journey",
            {"edges": "trust-survey,survey-gym", "order": "trust,gym,survey"},
            out=Path("never-written"),
            progress=False,
        )
    assert not Path("never-written").exists()
    with pytest.raises(ScenarioError, match="unknown places"):
        run_scenario("persona-journey", {"edges": "trust-pub"}, out=Path("nw"), progress=False)


# --- the statistics --------------------------------------------------------------------------


def test_spearman_and_bootstrap_match_scipy_and_say_why_undefined() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=15).tolist(), rng.normal(size=15).tolist()
    assert spearman(x, y) == pytest.approx(spearmanr(x, y).statistic)
    record = bootstrap_spearman(x, y, n_boot=200)
    assert record["ci_low"] <= record["rho"] <= record["ci_high"]
    assert spearman([1, 2], [3, 4]) == Undefined("fewer than 3 personas with both values (n=2)")
    assert spearman([1, 1, 1], [1, 2, 3]) == Undefined("constant input")
    undefined = bootstrap_spearman([1, 1, 1], [1, 2, 3])
    assert undefined["rho"] is None and undefined["rho_undefined"] == "constant input"
    diff = difference_of_means([1.0, 2.0, 3.0], [0.0, 0.0, 1.0])
    assert diff["diff"] == pytest.approx(2.0 - 1 / 3)
    assert diff["ci_low"] < diff["diff"] < diff["ci_high"]
    empty = difference_of_means([], [1.0, 2.0])
    assert empty["diff"] is None and "empty group" in empty["diff_undefined"]
    single = difference_of_means([1.0], [1.0, 2.0])
    assert single["diff"] == -0.5 and single["ci_low"] is None


def test_intervals_are_scipys_bca_and_welch() -> None:
    """ρ's interval is scipy's BCa on the same resamples (rows of
    `default_rng(0).integers(0, n, (n_boot, n))`); a difference of means has Welch's."""
    from scipy import stats

    rng = np.random.default_rng(4)
    x = rng.normal(size=20)
    y = x + rng.normal(size=20)

    def rho(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        rows = zip(a.reshape(-1, a.shape[-1]), b.reshape(-1, a.shape[-1]), strict=True)
        return np.array([spearmanr(r, s).statistic for r, s in rows]).reshape(a.shape[:-1])

    expected = stats.bootstrap(
        (x, y), rho, paired=True, method="BCa", n_resamples=300, rng=np.random.default_rng(0)
    ).confidence_interval
    record = bootstrap_spearman(x.tolist(), y.tolist(), n_boot=300, seed=0)
    assert (record["ci_low"], record["ci_high"]) == pytest.approx(
        (expected.low, expected.high), abs=1e-6
    )
    welch = stats.ttest_ind(x, y, equal_var=False).confidence_interval()
    record = difference_of_means(x.tolist(), y.tolist())
    assert (record["ci_low"], record["ci_high"]) == pytest.approx((welch.low, welch.high), abs=1e-6)
    same = difference_of_means([1.0, 1.0, 1.0], [2.0, 2.0])
    assert same["diff"] == -1.0 and same["ci_low_undefined"].startswith("every value is the same")


# --- the offline run -------------------------------------------------------------------------


def test_offline_run_of_12_personas_and_metrics_recomputed(tmp_path: Path) -> None:
    result, events = _run(tmp_path, n_personas=12)
    metrics = result.metrics["metrics"]
    assert metrics["n_personas"] == 12 and metrics["failures"] == {}
    items = 6
    assert metrics["decisions"] == {
        "career.probe": 12 * items * 2,
        "persona_gym.answer": 12 * 3,
        "persona_gym.evaluate": 12 * 3 * 2,
        "persona_gym.examples": 12 * 3,
        "trust.trustor": 12,
    }
    assert metrics["survey_without_logprobs"] == 0  # the scripted survey rule gives logprobs
    routes = _routes(events)
    assert len(routes) == 12 and metrics["moves"] == 36
    for moves in routes.values():
        assert moves == [(None, "trust"), ("trust", "survey"), ("survey", "gym")]
    entered = events[events["kind"] == "env.entered"]
    assert set(entered["payload"].map(lambda p: p["env"])) >= {"trust", "survey", "gym"}
    # agreement recomputed from the per-persona table with scipy
    table = pd.DataFrame(metrics["personas"])
    rho = spearmanr(table["trust_sent"], table["survey_mean"]).statistic
    assert metrics["agreement"]["trust_vs_survey"]["rho"] == pytest.approx(rho, abs=1e-6)
    sent = {
        r.agent_id: r.payload["sent"]
        for r in events[events["kind"] == "trust.transfer"].itertuples()
    }
    assert {p["persona"]: p["trust_sent"] for p in metrics["personas"]} == sent
    # a fixed route: order effects are undefined with the reason, not a number
    assert metrics["order_effects"]["trust"]["diff"] is None
    assert (
        "every persona visited trust at step 1"
        in metrics["order_effects"]["trust"]["diff_undefined"]
    )
    assert "one memory mode" in metrics["memory_effects"]["undefined"]
    assert (result.run_dir / "reports" / "journey_agreement.png").stat().st_size > 1000
    assert main(["metrics", str(result.run_dir), "--check"]) == 0
    stored = json.loads((result.run_dir / "metrics.json").read_text())
    stored["metrics"]["n_personas"] = 11  # a tampered file is caught
    (result.run_dir / "metrics.json").write_text(json.dumps(stored))
    assert main(["metrics", str(result.run_dir), "--check"]) == 1


def test_order_parameter_is_the_route(tmp_path: Path) -> None:
    _result, events = _run(tmp_path, n_personas=3, order="gym,survey,trust", scenes=1, n_items=2)
    for agent, moves in _routes(events).items():
        assert [to for _, to in moves] == ["gym", "survey", "trust"]
        steps = {
            p["task"]: p["step"]
            for p in events.loc[
                (events["kind"] == "decision.made") & (events["agent_id"] == agent), "payload"
            ]
        }
        assert steps["persona_gym.answer"] == 1 and steps["career.probe"] == 2
        assert steps["trust.trustor"] == 3


def test_shuffled_routes_are_seeded_walks_visiting_every_place(tmp_path: Path) -> None:
    params = {
        "n_personas": 8,
        "route": "shuffled",
        "edges": "trust-survey,survey-gym",
        "scenes": 1,
        "n_items": 1,
        "survey_repeats": 1,
    }
    _first, events = _run(tmp_path / "a", **params)
    graph = nx.Graph([("trust", "survey"), ("survey", "gym")])
    routes = {a: [to for _, to in m] for a, m in _routes(events).items()}
    for route in routes.values():
        assert route[0] in graph and len(route) <= 3
        check_walk(graph, route)
    assert any(r[0] == "survey" for r in routes.values())  # the start is drawn too
    assert any(len(r) == 2 for r in routes.values())  # a walk from the middle ends early
    _, again = _run(tmp_path / "b", **params)
    assert {a: [to for _, to in m] for a, m in _routes(again).items()} == routes


def test_persona_route_follows_the_personas_own_choices(tmp_path: Path) -> None:
    params = {"n_personas": 6, "route": "persona", "scenes": 1, "n_items": 1}
    _, events = _run(tmp_path, **params)
    routes = {a: [to for _, to in m] for a, m in _routes(events).items()}
    choices = events[
        (events["kind"] == "decision.made")
        & events["payload"].map(lambda p: p.get("task") == "journey.choose")
    ]
    assert len(choices) == 6  # one real choice per persona: after trust, survey or gym
    traits = {
        r.agent_id: r.payload["persona"]["traits"]
        for r in events[events["kind"] == "agent.created"].itertuples()
        if "persona" in r.payload
    }
    open_minded = [a for a, t in traits.items() if t.get("Openness To Experience") == "High"]
    assert 0 < len(open_minded) < 6  # the scripted rule's two branches both run
    for row in choices.itertuples():
        assert row.payload["step"] == 2 and sorted(row.payload["options"]) == ["gym", "survey"]
        assert routes[row.agent_id][1] == row.payload["value"]
        if row.agent_id in open_minded:
            assert row.payload["value"] == row.payload["options"][0]
        assert routes[row.agent_id][0] == "trust" and len(set(routes[row.agent_id])) == 3
    asked = [c for c in _calls(events, choices.iloc[0].agent_id) if c["task"] == "journey.choose"]
    assert "- survey: a survey about what matters to you" in asked[0]["messages"][0]["content"]
    with pytest.raises(DecisionParseError, match="'pub' is not one of the places gym, survey"):
        read_place(NextPlace(place="pub"), ["gym", "survey"])
    assert read_place(NextPlace(place=" Survey "), ["gym", "survey"]) == "survey"


def test_each_memory_mode_changes_what_the_prompt_contains(tmp_path: Path) -> None:
    result, events = _run(tmp_path, n_personas=3, memory="none,summary,full", scenes=1, n_items=1)
    modes = {
        r.agent_id: r.payload["memory"]
        for r in events[events["kind"] == "journey.assigned"].itertuples()
    }
    assert sorted(modes.values()) == ["full", "none", "summary"]
    sent = {
        r.agent_id: r.payload["sent"]
        for r in events[events["kind"] == "trust.transfer"].itertuples()
    }
    for agent, mode in modes.items():
        calls = _calls(events, agent)
        trust = [c for c in calls if c["task"] == "trust.trustor"]
        later = [c for c in calls if c["task"] != "trust.trustor"]
        assert trust and later
        trust_prompt = trust[0]["messages"][-1]["content"]
        assert "Before this" not in trust_prompt and len(trust[0]["messages"]) == 1  # first place
        for call in later:
            messages = call["messages"]
            last = messages[-1]["content"]
            earlier_replies = [m["content"] for m in messages[:-1] if m["role"] == "assistant"]
            if mode == "none":
                assert "Before this" not in last and not earlier_replies
            elif mode == "summary":
                assert last.startswith("Before this, you took part in other activities:")
                assert f"sent ${sent[agent]} to the other player" in last
                assert not earlier_replies
            else:
                assert "Before this" not in last
                assert earlier_replies[0] == trust[0]["response"]["text"]  # the accepted reply
                assert any(m["content"] == trust_prompt for m in messages if m["role"] == "user")
    gym = {
        a: next(c for c in _calls(events, a) if c["task"] == "persona_gym.answer") for a in modes
    }
    by_mode = {modes[a]: c for a, c in gym.items()}
    assert len(by_mode["full"]["messages"]) > len(by_mode["none"]["messages"])  # survey too
    assert "In a survey about an ideal job" in by_mode["summary"]["messages"][-1]["content"]
    effects = result.metrics["metrics"]["memory_effects"]
    assert set(effects) == {
        f"{m}/{p}" for m in ("full", "summary") for p in ("trust", "survey", "gym")
    }
    assert effects["full/trust"]["diff"] is None  # trust is always first: nothing remembered
    assert effects["full/gym"]["n_a"] == 1 and effects["full/gym"]["ci_low"] is None


def test_persona_journey_under_drift(tmp_path: Path) -> None:
    params = {"n_personas": 6, "memory": "none,full", "scenes": 2, "n_items": 3, "route": "persona"}
    result = drift_run(tmp_path, "persona-journey", params)
    events = check_drift_run(result, [Outcome(frozenset({"trust.trustor"}), "trust.transfer")])
    metrics = result.metrics["metrics"]
    made = events[events["kind"] == "decision.made"]["payload"].map(lambda p: p["task"])
    assert metrics["decisions"] == {k: int(v) for k, v in made.value_counts().sort_index().items()}
    assert sum(metrics["failures"].values()) == int((events["kind"] == "decision.failed").sum())


def test_view_page_holds_each_personas_moves_in_its_trajectory(tmp_path: Path) -> None:
    """`personasim view` on a journey: every persona's own event block holds its `agent.moved`
    steps (from → to, the route's order), between the places' `env.left`/`env.entered`."""
    _run(tmp_path, n_personas=2, scenes=1, n_items=1, survey_repeats=1, order=("gym", "trust"))
    page = tmp_path / "page.html"
    assert main(["view", str(tmp_path / "run"), "--output", str(page)]) == 0
    html = page.read_text()

    def block(element_id: str) -> Any:
        start = html.index(f'<script type="application/json" id="{element_id}">')
        text = html[html.index(">", start) + 1 : html.index("</script>", start)]
        return json.loads(text)

    run = block("runs")[0]
    events = _events(tmp_path / "run")
    personas = events[events.kind == "journey.assigned"].agent_id.tolist()
    assert len(personas) == 2
    for agent_id in personas:
        trajectory = block(run["blocks"][agent_id])
        moves = [(e[4]["from"], e[4]["to"]) for e in trajectory if e[2] == "agent.moved"]
        assert moves == [(None, "gym"), ("gym", "trust")]
        assert all(e[3] == agent_id for e in trajectory if e[2] == "agent.moved")
        kinds = [e[2] for e in trajectory if e[2] in ("agent.moved", "env.left", "env.entered")]
        assert kinds == ["agent.moved", "env.entered", "agent.moved", "env.left", "env.entered"]
        entered = [e[4]["env"] for e in trajectory if e[2] == "env.entered"]
        assert entered == ["gym", "trust"]
