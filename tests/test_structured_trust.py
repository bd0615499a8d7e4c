"""Structured answers (`--response-format`) in the Trust Game scenarios and the coin example.

A scripted run that asks for JSON must measure exactly what the text run measures with the
same seed: the rules draw the same numbers in either format, so any difference would be a
schema, a `read` or a rule that disagrees with the text path. Every request of a structured
run must carry its task's schema in the format's form, and the text run none.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAIServer
from pydantic import BaseModel

from personasim.scenarios.trust.answers import ForecastAnswer, ReactAnswer, TrustorAnswer
from personasim.scenarios.trust.beliefs import DollarBelief, RankingBelief
from personasim.simulation import (
    RunSettings,
    Scenario,
    SQLiteEventStore,
    response_format_for,
    run_scenario,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from coin_guess import CoinGuess, CoinGuessAnswer

SCHEMAS: dict[str, type[BaseModel]] = {
    "trust.trustor": TrustorAnswer,
    "trust.belief.ranking": RankingBelief,
    "trust.belief.dollars": DollarBelief,
    "trust.react": ReactAnswer,
    "trust.forecast": ForecastAnswer,
    "coin.guess": CoinGuessAnswer,
}

# (scenario, params, tasks whose re-ask path the text run takes at this size and seed)
CASES: dict[str, tuple[str | type[Scenario], dict[str, Any], set[str]]] = {
    "trust-population": ("trust-population", {"n_personas": 40}, {"trust.trustor"}),
    "trust-beliefs": ("trust-beliefs", {"n_personas": 30}, {"trust.trustor"}),
    "trust-conditioning": ("trust-conditioning", {"n_personas": 20}, {"trust.trustor"}),
    "trust-forecast": (
        "trust-forecast",
        {"n_personas": 2, "rounds": 6},
        {"trust.react", "trust.forecast"},
    ),
    "coin-guess": (CoinGuess, {"n_personas": 6, "rounds": 2}, set()),
}


def scripted_run(name: str, fmt: str, out: Path) -> dict[str, Any]:
    scenario, params, _ = CASES[name]
    result = run_scenario(
        scenario,
        params,
        out=out,
        progress=False,
        use_cache=False,
        settings=RunSettings(response_format=fmt),
    )
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        events = list(store.read())
    decisions = sorted(
        (e.agent_id, e.round, e.payload["task"], json.dumps(e.payload["value"], sort_keys=True))
        for e in events
        if e.kind == "decision.made"
    )
    return {
        "metrics": result.metrics["metrics"],
        "decisions": decisions,
        "calls": [e.payload for e in events if e.kind == "llm.call"],
        "reasks": Counter(e.payload["task"] for e in events if e.kind == "decision.reask"),
        "failed": [e.payload for e in events if e.kind == "decision.failed"],
    }


@pytest.fixture(scope="module")
def text_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    root = tmp_path_factory.mktemp("text")
    return {name: scripted_run(name, "text", root / name) for name in CASES}


@pytest.mark.parametrize("fmt", ["json_object", "json_schema"])
@pytest.mark.parametrize("name", list(CASES))
def test_structured_run_measures_what_the_text_run_does(
    name: str, fmt: str, text_runs: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    text = text_runs[name]
    structured = scripted_run(name, fmt, tmp_path / "r")
    assert not text["failed"] and not structured["failed"]
    assert structured["metrics"] == text["metrics"]
    assert structured["decisions"] == text["decisions"]
    # the comparison covers the re-ask path: a first answer that slipped, in either format
    slipped = CASES[name][2]
    assert {task for task, n in text["reasks"].items() if n} == slipped
    assert structured["reasks"] == text["reasks"]


@pytest.mark.parametrize("fmt", ["json_object", "json_schema"])
@pytest.mark.parametrize("name", list(CASES))
def test_every_call_carries_its_tasks_schema(
    name: str, fmt: str, text_runs: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    assert all("response_format" not in call for call in text_runs[name]["calls"])
    calls = scripted_run(name, fmt, tmp_path / "r")["calls"]
    assert calls
    for call in calls:
        schema = SCHEMAS[call["task"]]
        assert call["response_format"] == response_format_for(fmt, schema)
        answer = json.loads(call["response"]["text"])  # bare JSON: no fence, no prose
        assert set(answer) <= set(schema.model_fields)  # a slip may leave `amount` out


def test_the_json_a_server_returns_is_read(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    answer = {"belief": "b", "desire": "d", "intention": "i", "amount": 7}
    with FakeOpenAIServer(responder=lambda body: json.dumps(answer)) as server:
        result = fake_run(server, tmp_path, n=3)
    metrics = result.metrics["metrics"]
    assert (metrics["n_decisions"], metrics["mean_sent"], metrics["reasks"]) == (3, 7, 0)
    sent = response_format_for("json_object", TrustorAnswer)
    assert all(body["response_format"] == sent for body in server.requests)


@pytest.mark.parametrize(
    ("bad", "error"),
    [(50, "the transfer must be between 0 and 10 dollars, got 50"), (-1, "not a valid")],
)
def test_an_out_of_range_amount_in_valid_json_is_reasked(
    bad: int, error: str, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    replies = iter(
        json.dumps({"belief": "b", "desire": "d", "intention": "i", "amount": amount})
        for amount in (bad, 4)
    )
    with FakeOpenAIServer(responder=lambda body: next(replies)) as server:
        result = fake_run(server, tmp_path, n=1)
    metrics = result.metrics["metrics"]
    assert (metrics["n_decisions"], metrics["mean_sent"], metrics["reasks"]) == (1, 4, 1)
    assert server.request_count == 2
    reminder = server.requests[1]["messages"][-1]["content"]
    assert error in reminder and "JSON object" in reminder
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        [reask] = [e.payload for e in store.read(["decision.reask"])]
    assert error in reask["error"]


def fake_run(server: FakeOpenAIServer, tmp_path: Path, n: int):
    return run_scenario(
        "trust-population",
        {"n_personas": n},
        model="openai:fake-model",
        base_url=server.base_url,
        out=tmp_path / "r",
        progress=False,
        settings=RunSettings(response_format="json_object"),
    )
