"""The trust-forecast scenario (seed 001, §5) on the scripted backend: procedure, log, metrics."""

from __future__ import annotations

import json
import shutil
from collections import Counter, defaultdict
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from personasim.agents import DecisionParseError
from personasim.environments import TrustGame
from personasim.scenarios.trust.forecast import (
    FORECAST_CLOSING,
    TrustForecast,
    archetype_description,
)
from personasim.scenarios.trust.population import parse_transfer
from personasim.scenarios.trust.scripted_forecast import (
    ADAPTATION_RATE,
    expected_forecast,
    initial_send,
    intended_send,
)
from personasim.simulation import (
    ChatRequest,
    ChatResponse,
    Event,
    RunResult,
    ScenarioError,
    ScriptedBackend,
    SQLiteEventStore,
    run_scenario,
)
from personasim.simulation.cli.main import main

PACK = TrustForecast.shipped_prompts()
NO_CONTEXT = PACK.text("no_context")
NO_HISTORY = PACK.text("no_history")

ARCHETYPES = ("M1", "M3", "M5")
ROUNDS = 6
N_PERSONAS = 20  # enough for the horizon effect to be robust (checked on seeds 0..4)


# Appendix C.3.2–C.3.4 verbatim (line breaks as in C.3.4): the reference the scenario's
# template must reproduce.
PAPER_ARCHETYPES: dict[str, str] = {
    "M1": """\
You will be playing the role of Player B in a Trust Game.
In this game, Player A can send you some amount of money, which is
then tripled. You can then decide how much money to return
to Player A.
Your strategy is to return at most $1, regardless of how much
Player A sends you. If Player A sends you an amount that, when
tripled, is less than $1, you will return the full tripled amount.
Example:
- If Player A sends $1, you receive $3. You return $1.
- If Player A sends $5, you receive $15. You return $1.
- If Player A sends $0.25, you receive $0.75. You return $0.75.
Remember: Your maximum return is $1, even if you receive more.""",
    "M3": """\
You will be playing the role of Player B in a Trust Game.
In this game, Player A can send you some amount of money, which is
then tripled. You can then decide how much money to return
to Player A.
Your strategy is to return at most $3, regardless of how much
Player A sends you. If Player A sends you an amount that, when
tripled, is less than $3, you will return the full tripled amount.
Example:
- If Player A sends $1, you receive $3. You return $3.
- If Player A sends $5, you receive $15. You return $3.
- If Player A sends $0.75, you receive $2.25. You return $2.25.
Remember: Your maximum return is $3, even if you receive more.""",
    "M5": """\
You will be playing the role of Player B in a Trust Game.
In this game, Player A can send you some amount of money, which is
then tripled. You can then decide how much money to return
to Player A.
Your strategy is to return at most $5, regardless of how much
Player A sends you. If Player A sends you an amount that, when
tripled, is less than $5, you will return the full tripled amount.
Example:
- If Player A sends $1, you receive $3. You return $3.
- If Player A sends $5, you receive $15. You return $5.
- If Player A sends $1.50, you receive $4.50. You return $4.50.
Remember: Your maximum return is $5, even if you receive more.""",
}


def run(out: Path, params: dict[str, Any], **kwargs: Any) -> RunResult:
    return run_scenario("trust-forecast", params, out=out, progress=False, **kwargs)


def read_events(result: RunResult, *kinds: str) -> list[Event]:
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        return list(store.read(list(kinds) or None))


@pytest.fixture(scope="module")
def population(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    """One run shared by the read-only tests: 20 personas x M1/M3/M5 x 6 rounds (no cache)."""
    out = tmp_path_factory.mktemp("trust-forecast") / "run"
    return run(out, {"n_personas": N_PERSONAS}, use_cache=False)


def decisions(result: RunResult) -> list[Event]:
    return read_events(result, "decision.made", "decision.failed")


# --- the run and its reports ------------------------------------------------------------------


def test_run_writes_table_and_figure(population: RunResult) -> None:
    reports = population.run_dir / "reports"
    rows = (reports / "mae_by_horizon.csv").read_text().splitlines()
    assert rows[0] == "model,archetype,horizon,n,mae,mean_forecast,mean_actual,small,sd_abs_error"
    assert len(rows) == 1 + len(ARCHETYPES) * ROUNDS
    assert rows[1].startswith("scripted,M1,1,20,")
    assert "| scripted" in (reports / "mae_by_horizon.md").read_text()
    png = (reports / "mae_by_horizon.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(png) > 20_000


def test_setup_pairs_every_persona_with_every_archetype(population: RunResult) -> None:
    created = {e.agent_id: e.payload for e in read_events(population, "agent.created")}
    personas = {i: p["persona"] for i, p in created.items() if "persona" in p}
    assert len(personas) == N_PERSONAS * len(ARCHETYPES)
    by_base = defaultdict(list)
    for agent_id, persona in personas.items():
        base, archetype = agent_id.split("@")
        assert persona["id"] == agent_id
        by_base[base].append((archetype, persona["attributes"], persona["traits"]))
    for copies in by_base.values():
        assert sorted(a for a, _, _ in copies) == list(ARCHETYPES)
        assert all(c[1:] == copies[0][1:] for c in copies)  # the same person in every game
    games = {e.payload["env"]: e.payload for e in read_events(population, "env.created")}
    assert set(games) == {f"trust_game_{a}" for a in ARCHETYPES}
    assert all(g["settings"]["rounds"] == ROUNDS for g in games.values())
    entered = {e.agent_id: e.payload["env"] for e in read_events(population, "env.entered")}
    assert all(entered[i] == f"trust_game_{i.split('@')[1]}" for i in personas)
    assert created["trustee-M3"]["max_return"] == 3


def test_one_forecast_then_one_action_per_pair_and_round(population: RunResult) -> None:
    outcomes: dict[tuple[str, int, str], list[int]] = defaultdict(list)
    for event in decisions(population):
        kind = event.payload["kind"]
        step = event.payload["horizon" if kind == "forecast" else "round"]
        assert step == event.round
        assert event.payload["archetype"] == event.agent_id.split("@")[1]
        outcomes[(event.agent_id, event.round, kind)].append(event.seq)
    pairs = {(agent, r) for agent, r, _ in outcomes}
    assert len(pairs) == N_PERSONAS * len(ARCHETYPES) * ROUNDS
    for agent, r in pairs:
        [forecast] = outcomes[(agent, r, "forecast")]
        [action] = outcomes[(agent, r, "action")]
        assert forecast < action


def test_mae_matches_an_independent_computation(population: RunResult) -> None:
    """|forecast − sent| straight from the exported JSON lines, grouped by archetype and round."""
    target = population.run_dir / "events.jsonl"
    assert main(["export", str(population.run_dir), "--output", str(target)]) == 0
    events = [json.loads(line) for line in target.read_text().splitlines()]
    sent = {
        (e["agent_id"], e["round"]): e["payload"]["sent"]
        for e in events
        if e["kind"] == "trust.transfer"
    }
    errors: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
    for e in events:
        p = e["payload"]
        if e["kind"] == "decision.made" and p["task"] == "trust.forecast":
            actual = sent.get((e["agent_id"], p["horizon"]))
            if actual is not None:
                errors[(p["archetype"], p["horizon"])].append((p["value"], actual))
    metrics = population.metrics["metrics"]
    for archetype in ARCHETYPES:
        result = metrics["archetypes"][archetype]
        everything = []
        for row in result["by_horizon"]:
            pairs = np.array(errors[(archetype, row["horizon"])], dtype=float)
            everything.extend(np.abs(pairs[:, 0] - pairs[:, 1]))
            assert row["n"] == len(pairs)
            assert row["mae"] == pytest.approx(np.abs(pairs[:, 0] - pairs[:, 1]).mean(), abs=1e-6)
            assert row["mean_forecast"] == pytest.approx(pairs[:, 0].mean(), abs=1e-6)
            assert row["mean_actual"] == pytest.approx(pairs[:, 1].mean(), abs=1e-6)
        assert result["n_pairs"] == len(everything)
        assert result["mae"] == pytest.approx(np.mean(everything), abs=1e-6)
        assert result["n_trustors"] == N_PERSONAS


def test_scripted_forecasts_drift_from_behaviour_with_the_horizon(population: RunResult) -> None:
    """The shape of Figure 1 offline: MAE at the last round is above MAE at the first."""
    for archetype, result in population.metrics["metrics"]["archetypes"].items():
        first, last = result["by_horizon"][0], result["by_horizon"][-1]
        assert last["mae"] > first["mae"] + 1.0, archetype


def test_stingy_trustee_is_sent_less_and_less(population: RunResult) -> None:
    by_archetype = population.metrics["metrics"]["archetypes"]
    m1 = by_archetype["M1"]["by_horizon"]
    assert m1[-1]["mean_actual"] < m1[0]["mean_actual"] - 2
    m5 = by_archetype["M5"]["by_horizon"]
    assert m1[-1]["mean_actual"] < m5[-1]["mean_actual"]  # M5 repays more, so it gets more


def test_metrics_recomputed_from_the_log_alone(population: RunResult, tmp_path: Path) -> None:
    assert main(["metrics", str(population.run_dir), "--check"]) == 0
    copy = tmp_path / "copy"
    shutil.copytree(population.run_dir, copy)
    (copy / "metrics.json").write_text("{}")
    assert main(["metrics", str(copy), "--check"]) == 1
    assert main(["metrics", str(copy)]) == 0
    assert (copy / "metrics.json").read_bytes() == (
        population.run_dir / "metrics.json"
    ).read_bytes()


def test_metrics_name_the_model(population: RunResult) -> None:
    metrics = population.metrics["metrics"]
    assert metrics["model"]["backend"] == "scripted"
    assert metrics["model_label"] == "scripted"
    assert "not a language model" in metrics["model"]["note"]


# --- what the model is shown ------------------------------------------------------------------


def prompts(result: RunResult, agent_id: str) -> dict[tuple[str, int], str]:
    """(task, round) → the first user message of the agent's calls."""
    return {
        (e.payload["task"], e.round): e.payload["messages"][0]["content"]
        for e in read_events(result, "llm.call")
        if e.agent_id == agent_id
    }


def test_prompts_show_the_archetype_and_the_round_history(population: RunResult) -> None:
    agent = next(e.agent_id for e in read_events(population, "trust.transfer"))
    archetype = agent.split("@")[1]
    shown = prompts(population, agent)
    first_forecast, third_forecast = shown[("trust.forecast", 1)], shown[("trust.forecast", 3)]
    assert PAPER_ARCHETYPES[archetype] in first_forecast
    assert NO_CONTEXT in first_forecast
    assert "There are a total of 6 rounds" in first_forecast
    assert "You are currently in round 3." in third_forecast
    assert "The game so far (2 of 6 rounds played):" in third_forecast
    third_action = shown[("trust.react", 3)]
    assert "Previous rounds:\n" + NO_HISTORY in shown[("trust.react", 1)]
    assert "THIS IS ROUND 3 OF 6." in third_action
    assert "THOUGHT, ACTION, and OBSERVATION" in third_action
    assert PAPER_ARCHETYPES[archetype] not in third_action  # B.2 tells only the history
    transfers = [
        e.payload
        for e in read_events(population, "trust.transfer")
        if e.agent_id == agent and e.round < 3
    ]
    assert len(transfers) == 2
    for r, transfer in enumerate(transfers, start=1):
        line = f"Round {r}: you sent ${transfer['sent']}, the other player received"
        assert line in third_forecast
        assert line in third_action


def test_games_against_each_archetype_are_independent_samples(population: RunResult) -> None:
    """Round 1's role-play prompt is the same against every archetype, yet each game is its own
    sample (own request key, log and cache entry), so resume answers each call with its reply."""
    first_asks = defaultdict(list)  # persona → its round-1 role-play requests (not re-asks)
    for call in read_events(population, "llm.call"):
        payload = call.payload
        if call.round == 1 and payload["task"] == "trust.react" and len(payload["messages"]) == 1:
            first_asks[call.agent_id.split("@")[0]].append(payload)
    for asks in first_asks.values():
        assert len(asks) == len(ARCHETYPES)
        assert len({a["messages"][0]["content"] for a in asks}) == 1
        assert len({a["request_key"] for a in asks}) == len(ARCHETYPES)


def test_archetypes_are_described_as_in_the_paper(tmp_path: Path) -> None:
    for archetype, text in PAPER_ARCHETYPES.items():
        assert archetype_description(archetype, PACK) == text
    m7 = archetype_description("M7", PACK)
    assert "return at most $7" in m7
    assert "If Player A sends $1, you receive $3. You return $3." in m7
    assert "If Player A sends $1.75, you receive $5.25. You return $5.25." in m7
    out = tmp_path / "cli"
    argv = ["run", "trust-forecast", "--archetypes", "M2, M7", "--rounds", "2", "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    assert list(metrics["archetypes"]) == ["M2", "M7"]
    assert all(len(a["by_horizon"]) == 2 for a in metrics["archetypes"].values())


# --- failures are recorded, never defaulted ---------------------------------------------------


class NoForecastForRoundTwo(ScriptedBackend):
    """The scripted model, except that its forecasts for round 2 are unreadable."""

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "garbled": "forecasts of round 2"}

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        prompt = request.messages[0].content
        if request.task == "trust.forecast" and "You are currently in round 2." in prompt:
            return ChatResponse(text="Hard to say; it depends on the other player.")
        return await super().complete(request, timeout)


def test_unparseable_forecast_is_a_failure_and_left_out(tmp_path: Path) -> None:
    params = {"n_personas": 2, "rounds": 3, "max_repairs": 1}
    result = run(tmp_path / "r", params, backend=NoForecastForRoundTwo())
    failed = read_events(result, "decision.failed")
    assert len(failed) == 2 * len(ARCHETYPES)
    assert all(e.payload["kind"] == "forecast" and e.payload["horizon"] == 2 for e in failed)
    assert all(
        e.payload["attempts"] == 2 and "Hard to say" in e.payload["last_reply"] for e in failed
    )
    made = [e.payload for e in read_events(result, "decision.made")]
    assert not [p for p in made if p["kind"] == "forecast" and p["horizon"] == 2]
    transfers = Counter(e.round for e in read_events(result, "trust.transfer"))
    assert transfers == {1: 6, 2: 6, 3: 6}  # the round is still played
    metrics = result.metrics["metrics"]
    assert metrics["reasks"] >= len(failed)
    for per_archetype in metrics["archetypes"].values():
        assert per_archetype["forecast_failures"] == 2
        assert per_archetype["action_failures"] == 0
        assert per_archetype["n_pairs"] == 4
        reason = "no forecast–action pairs (2 forecasts, 0 actions failed)"
        assert per_archetype["by_horizon"][1] == {
            "horizon": 2,
            "n": 0,
            "mae": None,
            "mae_undefined": reason,
            "mean_forecast": None,
            "mean_forecast_undefined": reason,
            "mean_actual": None,
            "mean_actual_undefined": reason,
            "small": True,
            "sd_abs_error": None,
            "sd_abs_error_undefined": "fewer than 2 values",
        }
        assert per_archetype["by_horizon"][0]["n"] == 2
    for archetype, rows in metrics["explanations"].items():  # Tables 6-8 keep round 2's row
        assert [row["round"] for row in rows] == [1, 2, 3], archetype
        assert rows[1]["forecast"] is None
        assert rows[1]["forecast_undefined"] == "the forecast failed after 2 attempts"
        assert rows[1]["sent"] is not None


class NoActionInRoundOne(ScriptedBackend):
    """The scripted model, except that its round-1 role-play answers are unreadable."""

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        if request.task == "trust.react" and "THIS IS ROUND 1 OF" in request.messages[0].content:
            return ChatResponse(text="THOUGHT: hmm. ACTION: something.")
        return await super().complete(request, timeout)


def test_unparseable_action_means_no_transfer(tmp_path: Path) -> None:
    params = {"n_personas": 1, "rounds": 2, "max_repairs": 1, "archetypes": "M3"}
    result = run(tmp_path / "r", params, backend=NoActionInRoundOne())
    assert [e.round for e in read_events(result, "trust.transfer")] == [2]
    metrics = result.metrics["metrics"]["archetypes"]["M3"]
    assert metrics["action_failures"] == 1
    assert [row["n"] for row in metrics["by_horizon"]] == [0, 1]
    second = prompts(result, next(iter(_trustors(result))))[("trust.react", 2)]
    assert "Previous rounds:\n" + NO_HISTORY in second  # nothing was played in round 1


def _trustors(result: RunResult) -> set[str]:
    return {e.agent_id for e in read_events(result, "agent.created") if "persona" in e.payload}


# --- parsing, parameters, the scripted rules ---------------------------------------------------


def rules(endowment: int = 10) -> SimpleNamespace:
    """Stands in for a TrustGame: its real reading and rules, without a simulation."""
    game = SimpleNamespace(endowment=endowment)
    game.check_transfer = partial(TrustGame.check_transfer, game)
    game.read_transfer = partial(TrustGame.read_transfer, game)
    return game


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("I expect them to return $3.\nFinally, I will send 4 dollars", 4),
        ("Finally, I will send $0 dollars.", 0),
        ("finally i will send 10 dollars", 10),
        ("**Finally, I will send 3 dollars**", 3),
        ("Finally, I will send \\boxed{7} dollars", 7),
        ("Finally, I will give 5 dollars", 5),  # give for send: the same statement
    ],
)
def test_parse_forecast_accepts(reply: str, expected: int) -> None:
    assert parse_transfer(reply, rules(), FORECAST_CLOSING) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "$5",
        "Finally, I will send 3-5 dollars",
        "Finally, I will send 11 dollars",
        "Finally, I will send 2.5 dollars",
        "",
    ],
)
def test_parse_forecast_rejects(reply: str) -> None:
    with pytest.raises(DecisionParseError):
        parse_transfer(reply, rules(), FORECAST_CLOSING)


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ({"archetypes": "M1,X2"}, "--archetypes"),
        ({"archetypes": "M1,M1"}, "once"),
        ({"archetypes": ""}, "--archetypes"),
        ({"multiplier": 4}, "--multiplier"),  # not a parameter: the prompts say "tripled"
        ({"rounds": 21}, "--rounds"),
    ],
)
def test_invalid_parameters_are_refused(values: dict[str, Any], problem: str) -> None:
    with pytest.raises(ScenarioError, match=problem):
        TrustForecast.parse_params(values)


def test_parameter_defaults_follow_the_paper() -> None:
    params = TrustForecast.parse_params({"archetypes": " M5 , M1"})
    assert params.archetypes == ("M5", "M1")
    defaults = TrustForecast.parse_params({})
    assert (defaults.rounds, defaults.endowment, defaults.temperature) == (6, 10, 0.05)
    assert defaults.archetypes == ARCHETYPES


def test_scripted_rules_follow_their_documented_formulas() -> None:
    traits = {"Agreeableness": "High"}  # share 0.45 + 0.15
    assert initial_send(traits, 10) == pytest.approx(6.0)
    assert intended_send(traits, 10, []) == pytest.approx(6.0)
    stingy = [{"round": 1, "sent": 5, "returned": 1}]  # worthwhile: max(0, 1 − 1) = 0
    assert intended_send(traits, 10, stingy) == pytest.approx(5 - ADAPTATION_RATE * 5)
    generous = [{"round": 1, "sent": 2, "returned": 5}]  # worthwhile: 5 − 1 = 4
    assert intended_send(traits, 10, generous) == pytest.approx(2 + ADAPTATION_RATE * 2)
    assert expected_forecast(traits, 10, 1) == pytest.approx(6.0)
    assert expected_forecast(traits, 10, 6) == pytest.approx(8.0)


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ({"persona_file": "/nonexistent/bank.jsonl"}, "no such file"),
        ({"n_personas": 10_000}, "more than the"),
    ],
)
def test_persona_bank_is_read_as_in_trust_population(values: dict[str, Any], problem: str) -> None:
    scenario = TrustForecast(TrustForecast.parse_params(values))
    with pytest.raises(ScenarioError, match=problem):
        scenario.prepare()


def test_sweep_over_models_draws_one_line_per_model_and_archetype(tmp_path: Path) -> None:
    """Figure 1 from a sweep: combined rows per model, archetype and horizon, and the figure."""
    from personasim.simulation import run_sweep

    result = run_sweep(
        "trust-forecast",
        ["scripted"],
        {"rounds": [3]},
        {"n_personas": 2, "archetypes": "M1,M5"},
        out=tmp_path / "sweep",
        progress=False,
    )
    rows = result.rows
    assert {(r["model"], r["archetype"]) for r in rows} == {("scripted", "M1"), ("scripted", "M5")}
    assert sorted({r["horizon"] for r in rows}) == [1, 2, 3]
    per_run = result.runs[0].metrics["metrics"]["archetypes"]["M1"]["by_horizon"]
    assert [r["mae"] for r in rows if r["archetype"] == "M1"] == [h["mae"] for h in per_run]
    figure = tmp_path / "sweep" / "mae_by_horizon.png"
    assert figure in result.reports and figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- the paper's horizons design (§5.2): forecasts of rounds r..R from the state before r ---


def test_horizons_design_forecasts_every_round_left_and_scores_by_steps_ahead(
    tmp_path: Path,
) -> None:
    rounds, personas = 4, 3
    result = run(
        tmp_path / "h",
        {"n_personas": personas, "rounds": rounds, "archetypes": "M1,M5", "design": "horizons"},
    )
    made = [e for e in read_events(result, "decision.made") if e.payload["kind"] == "forecast"]
    failed = [e for e in read_events(result, "decision.failed") if e.payload["kind"] == "forecast"]
    # before round r, one forecast of each round r..R: R(R+1)/2 per persona and archetype
    assert len(made) + len(failed) == 2 * personas * rounds * (rounds + 1) // 2
    for e in made:
        p = e.payload
        assert p["steps_ahead"] == p["horizon"] - p["origin"] + 1 and e.round == p["origin"]
    sends = {
        (e.agent_id, e.round): e.payload["sent"] for e in read_events(result, "trust.transfer")
    }
    metrics = result.metrics["metrics"]
    assert metrics["design"] == "horizons"
    for archetype, per_archetype in metrics["archetypes"].items():
        errors: dict[int, list[float]] = {}
        for e in made:
            key = (e.agent_id, e.payload["horizon"])
            if e.payload["archetype"] == archetype and key in sends:
                errors.setdefault(e.payload["steps_ahead"], []).append(
                    abs(e.payload["value"] - sends[key])
                )
        for row in per_archetype["by_horizon"]:
            h = row["horizon"]
            assert row["n"] == len(errors.get(h, []))
            if errors.get(h):
                assert row["mae"] == pytest.approx(np.mean(errors[h]))
            if len(errors.get(h, [])) > 1:
                assert row["sd_abs_error"] == pytest.approx(np.std(errors[h], ddof=1))
        assert per_archetype["by_horizon"][0]["n"] == personas * rounds - sum(
            1
            for e in failed
            if e.payload["archetype"] == archetype and e.payload.get("steps_ahead") == 1
        )
    assert (result.run_dir / "reports" / "mae_by_horizon.png").stat().st_size > 0


def test_tables_6_to_8_show_the_first_personas_forecasts_and_reasons(
    population: RunResult,
) -> None:
    made = [e for e in read_events(population, "decision.made") if e.payload["kind"] == "forecast"]
    first = next(e.agent_id for e in read_events(population, "agent.created") if "@" in e.agent_id)
    persona = first.split("@")[0]
    calls = [
        e
        for e in read_events(population, "llm.call")
        if e.agent_id.split("@")[0] == persona and e.payload["task"] == "trust.forecast"
    ]
    for archetype, number in (("M1", 6), ("M3", 7), ("M5", 8)):
        table = pd.read_csv(
            population.run_dir / "reports" / f"table{number}_explanations_{archetype}.csv"
        )
        mine = {
            e.payload["horizon"]: e.payload["value"]
            for e in made
            if e.agent_id == f"{persona}@{archetype}"
        }
        assert dict(zip(table["round"], table["forecast"], strict=True)) == mine
        replies = [e.payload["response"]["text"] for e in calls if e.agent_id.endswith(archetype)]
        for explanation in table["explanation"]:
            assert "Finally, I will send" not in explanation
            assert any(explanation.split(":")[0] in reply for reply in replies)
