"""The trust-population scenario on the scripted backend: reproducibility, cache, log, metrics."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from conftest import DATA
from scipy import stats

from personasim.agents import DecisionParseError
from personasim.environments import TrustGame
from personasim.scenarios.trust.population import TrustPopulation, parse_transfer
from personasim.scenarios.trust.scripted import trustor_share
from personasim.scenarios.trust.traits import TEST_SPLIT_LEVELS
from personasim.simulation import (
    SCHEMA_VERSION,
    RunError,
    SQLiteEventStore,
    arun_scenario,
    events_frame,
    run_scenario,
)
from personasim.simulation.cli.main import main

SMALL = {"n_personas": 40}


def run(out: Path, **kwargs):
    return run_scenario(
        "trust-population", kwargs.pop("params", SMALL), out=out, progress=False, **kwargs
    )


def test_same_seed_gives_byte_identical_metrics(tmp_path: Path, monkeypatch) -> None:
    first = run(tmp_path / "a")
    monkeypatch.setenv("PERSONASIM_CACHE_DIR", str(tmp_path / "other-cache"))
    second = run(tmp_path / "b")
    a = (first.run_dir / "metrics.json").read_bytes()
    assert a == (second.run_dir / "metrics.json").read_bytes()
    assert second.manifest["llm"]["cache_hits"] == 0  # computed afresh, not from the first cache
    assert second.manifest["llm"]["calls"] >= 40


def test_other_seed_gives_other_population(tmp_path: Path) -> None:
    a = run(tmp_path / "a").metrics["metrics"]
    b = run(tmp_path / "b", seed=1).metrics["metrics"]
    assert a["attributes"] != b["attributes"]


def test_repeat_is_served_from_cache(tmp_path: Path) -> None:
    first = run(tmp_path / "a")
    assert first.manifest["llm"]["calls"] >= 40
    again = run(tmp_path / "b")
    assert again.manifest["llm"]["calls"] == 0
    assert again.manifest["llm"]["cache_hits"] == first.manifest["llm"]["calls"]
    assert again.manifest["llm"]["prompt_tokens"] == 0
    assert again.metrics == first.metrics


def test_no_cache_calls_the_model_every_time(tmp_path: Path) -> None:
    run(tmp_path / "a")
    again = run(tmp_path / "b", use_cache=False)
    assert again.manifest["llm"]["calls"] >= 40
    assert again.manifest["llm"]["cache_hits"] == 0


def test_manifest_contract(tmp_path: Path) -> None:
    result = run(tmp_path / "r")
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["scenario"] == "trust-population"
    assert manifest["seed"] == 0
    assert manifest["params"]["n_personas"] == 40
    assert manifest["model"]["backend"] == "scripted"
    assert "not a language model" in manifest["model"]["note"]
    assert set(manifest["llm"]) == {
        "calls",
        "cache_hits",
        "failures",
        "prompt_tokens",
        "completion_tokens",
        "hedged",
        "beyond_limit",
    }
    assert all(isinstance(v, int) for v in manifest["llm"].values())
    assert manifest["packages"]["mesa"].startswith("3.")
    assert (result.run_dir / "events.sqlite").exists()


def test_metrics_recomputed_from_log_alone(tmp_path: Path, capsys) -> None:
    result = run(tmp_path / "r")
    metrics_file = result.run_dir / "metrics.json"
    original = metrics_file.read_bytes()
    metrics_file.unlink()
    assert main(["metrics", str(result.run_dir)]) == 0
    assert metrics_file.read_bytes() == original
    assert main(["metrics", str(result.run_dir), "--check"]) == 0
    metrics_file.write_text("{}")
    assert main(["metrics", str(result.run_dir), "--check"]) == 1


def test_metrics_match_an_independent_computation(tmp_path: Path) -> None:
    """Recompute n, mean, SD and eta² per attribute straight from the exported JSON lines."""
    result = run(tmp_path / "r")
    assert main(["export", str(result.run_dir), "--format", "jsonl"]) == 0
    lines = (result.run_dir / "events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    traits = {
        e["agent_id"]: e["payload"]["persona"]["traits"]
        for e in events
        if e["kind"] == "agent.created" and "persona" in e["payload"]
    }
    sent = {e["agent_id"]: e["payload"]["sent"] for e in events if e["kind"] == "trust.transfer"}
    metrics = result.metrics["metrics"]
    assert metrics["n_decisions"] == len(sent)
    assert metrics["mean_sent"] == pytest.approx(np.mean(list(sent.values())))
    assert metrics["sd_sent"] == pytest.approx(np.std(list(sent.values()), ddof=1))
    groups: dict[str, list[int]] = {}
    for agent, amount in sent.items():
        groups.setdefault(traits[agent]["Openness To Experience"], []).append(amount)
    f, _ = stats.f_oneway(*groups.values())
    df_b, df_w = len(groups) - 1, len(sent) - len(groups)
    expected = f * df_b / (f * df_b + df_w)
    assert metrics["attributes"]["Openness To Experience"]["eta_squared"] == pytest.approx(
        expected, abs=1e-6
    )
    means = {level: np.mean(v) for level, v in groups.items()}
    ranking = metrics["attributes"]["Openness To Experience"]["ranking"]
    assert [means[level] for level in ranking] == sorted(means.values(), reverse=True)
    # the written tables carry the same numbers, with n per level
    reports = result.run_dir / "reports"
    levels = pd.read_csv(reports / "population_levels.csv")
    openness = levels[levels.attribute == "Openness To Experience"].set_index("level")
    assert openness["n"].to_dict() == {k: len(v) for k, v in groups.items()}
    assert openness["mean"].to_dict() == pytest.approx(means, abs=1e-6)
    traits_table = pd.read_csv(reports / "population_traits.csv").set_index("attribute")
    assert traits_table.loc["Openness To Experience", "eta_squared"] == pytest.approx(
        expected, abs=1e-6
    )
    assert set(traits_table.index) == set(metrics["attributes"])
    assert (reports / "population_eta_squared.png").stat().st_size > 0
    # the histogram's counts are the logged amounts, counted again here
    counted = pd.Series(list(sent.values())).value_counts()
    assert metrics["sent_counts"] == {f"{a:g}": int(n) for a, n in sorted(counted.items())}
    assert (reports / "population_amount_sent.png").stat().st_size > 0


def test_export_writes_one_object_per_event_in_the_schema(tmp_path: Path) -> None:
    result = run(tmp_path / "r", params={"n_personas": 5})
    target = tmp_path / "out.jsonl"
    assert main(["export", str(result.run_dir), "--output", str(target)]) == 0
    events = [json.loads(line) for line in target.read_text().splitlines()]
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        assert len(events) == len(list(store.read()))
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    for event in events:
        assert set(event) == {
            "schema_version",
            "seq",
            "round",
            "agent_id",
            "kind",
            "scope",
            "ts",
            "payload",
        }
        assert event["schema_version"] == SCHEMA_VERSION
    kinds = {e["kind"] for e in events}
    assert {
        "run.started",
        "agent.created",
        "env.created",
        "env.entered",
        "round.started",
        "llm.call",
        "decision.made",
        "trust.transfer",
        "trust.return",
        "round.completed",
        "run.completed",
    } <= kinds
    call = next(e for e in events if e["kind"] == "llm.call")
    assert {
        "request_key",
        "messages",
        "response",
        "sampling",
        "cached",
        "attempts",
        "latency_s",
    } <= set(call["payload"])
    assert call["payload"]["sampling"]["temperature"] == 0.05
    assert call["round"] == 1


def test_scripted_structure_shows_in_metrics(tmp_path: Path) -> None:
    """The behaviour model's largest effect (agreeableness, ±0.15 of E) is recovered."""
    params = {
        "n_personas": 300,
        "population": "synthetic",
        "attributes": "Agreeableness,Neuroticism",
    }
    metrics = run(tmp_path / "r", params=params).metrics["metrics"]
    agreeableness = metrics["attributes"]["Agreeableness"]
    assert agreeableness["ranking"] == ["High", "Medium", "Low"]
    assert agreeableness["eta_squared"] > 0.15
    assert metrics["attributes"]["Neuroticism"]["ranking"][-1] == "High"


def test_scripted_mean_follows_documented_rule(tmp_path: Path) -> None:
    result = run(tmp_path / "r", params={"n_personas": 200, "population": "synthetic"})
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        frame = events_frame(store.read())
    created = frame[frame.kind == "agent.created"].payload
    expected = [
        10 * min(1, max(0, trustor_share(p["persona"]["traits"])))
        for p in created
        if "persona" in p
    ]
    assert result.metrics["metrics"]["mean_sent"] == pytest.approx(np.mean(expected), abs=0.35)


def test_parse_failures_are_counted_never_defaulted(tmp_path: Path) -> None:
    """Scripted answers slip the format at a small rate; with no re-asks those are failures."""
    params = {"n_personas": 120, "max_repairs": 0}
    result = run(tmp_path / "r", params=params)
    metrics = result.metrics["metrics"]
    assert metrics["parse_failures"] > 0
    assert metrics["n_decisions"] + metrics["parse_failures"] == 120
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        failed = {e.agent_id for e in store.read(["decision.failed"])}
        transferred = {e.agent_id for e in store.read(["trust.transfer"])}
    assert failed and not failed & transferred


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_real_genagents_bank(tmp_path: Path) -> None:
    bank = DATA / "genagents" / "gss_agents.jsonl"
    if not bank.exists():
        pytest.skip(f"{bank} not present")
    params = {"n_personas": 200, "persona_file": str(bank)}
    metrics = run(tmp_path / "r", params=params).metrics["metrics"]
    assert metrics["n_personas"] == 200
    attributes = metrics["attributes"]
    assert "Religion" not in attributes  # Table 3's nine, by default
    views = attributes["Political Views"]["levels"]
    assert set(views) == set(TEST_SPLIT_LEVELS["Political Views"])  # 4 te of the 7 GSS values
    assert set(attributes["Work Status"]["levels"]) <= set(TEST_SPLIT_LEVELS["Work Status"])
    # the GSS bank has no te level of Family Structure At 16: nothing analysed, η² null
    family = attributes["Family Structure At 16"]
    assert family["levels"] == {} and family["eta_squared"] is None
    assert family["eta_squared_undefined"]
    every = run(
        tmp_path / "all",
        params={**params, "split": "all", "attributes": "Political Views,Religion"},
    )
    assert len(every.metrics["metrics"]["attributes"]["Political Views"]["levels"]) == 7
    assert len(every.metrics["metrics"]["attributes"]["Religion"]["levels"]) > 5


def rules(endowment: int = 10) -> SimpleNamespace:
    """Stands in for a TrustGame: its real reading and rules, without a simulation."""
    game = SimpleNamespace(endowment=endowment)
    game.check_transfer = partial(TrustGame.check_transfer, game)
    game.read_transfer = partial(TrustGame.read_transfer, game)
    return game


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("blah\nFinally, I will give 7 dollars", 7),
        ("Finally, I will give $3 dollars.", 3),
        ("I said 9 earlier. Finally, I will give 0 dollars", 0),
        ("finally i will give 10 dollars", 10),
        # real models' markup around a closing sentence that is there (drift habits)
        ("BELIEF: b.\n**Finally, I will give 5 dollars**", 5),
        ("Finally, I will give **$4** dollars.", 4),
        ("Finally, I will give \\boxed{6} dollars", 6),
        ("Finally, I will give $\\boxed{2}$ dollars", 2),
        ("Finally, I will give 5 dollars\n\nI hope this helps! Let me know.", 5),
    ],
)
def test_parse_transfer_accepts(reply: str, expected: int) -> None:
    assert parse_transfer(reply, rules()) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "I will give 5 dollars. I hope they return some.",  # a decision, but not the closing
        "Finally, I will give 11 dollars",
        "Finally, I will give 2.5 dollars",
        "Finally, I will give -1 dollars",
        "",
        "BELIEF: b.\nThe final answer is 5.",  # the closing sentence is not there: re-asked
        "I'm sorry, but I can't role-play as this person or make this decision on their behalf.",
    ],
)
def test_parse_transfer_rejects(reply: str) -> None:
    with pytest.raises(DecisionParseError):
        parse_transfer(reply, rules())


def test_scenario_declares_its_parameters() -> None:
    fields = TrustPopulation.Params.model_fields
    assert fields["temperature"].default == 0.05
    assert fields["endowment"].default == 10


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_readme_quickstart_run_line_runs(tmp_path: Path) -> None:
    """The quickstart's `personasim run` command, in a fresh process, from the README."""
    readme = Path(__file__).resolve().parents[1] / "README.md"
    run_line = next(
        line
        for line in readme.read_text().splitlines()
        if "personasim run trust-population" in line
    )
    command = run_line.split("&&")[-1].split()
    assert command[:3] == ["personasim", "run", "trust-population"]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "personasim.simulation.cli.main",
            *command[1:],
            "--out",
            str(tmp_path / "q"),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "run directory:" in done.stdout
    assert json.loads((tmp_path / "q" / "manifest.json").read_text())["status"] == "complete"


def test_async_api_for_notebooks(tmp_path: Path) -> None:
    """Inside a running loop (Jupyter) the sync call says what to do; the async one works."""

    async def notebook_cell():
        with pytest.raises(RunError, match="await arun_scenario"):
            run_scenario("trust-population", {"n_personas": 2}, out=tmp_path / "x")
        return await arun_scenario(
            "trust-population", {"n_personas": 2}, out=tmp_path / "a", progress=False
        )

    result = asyncio.run(notebook_cell())
    assert result.metrics["metrics"]["n_decisions"] == 2
    assert not (tmp_path / "x").exists()
