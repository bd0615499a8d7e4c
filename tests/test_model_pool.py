"""A second model in one run (a judge, an evaluator), reached by its spec."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer

from personasim.agents import DecisionTask, decide
from personasim.simulation import (
    ChatRequest,
    EventLog,
    LLMClient,
    Message,
    ModelPool,
    ModelSpecError,
    OpenAIBackend,
    ScriptedBackend,
    Simulation,
    SQLiteEventStore,
    make_backend,
    parse_model_spec,
)


def test_model_specs(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    backend = make_backend("openai:judge@http://127.0.0.1:9/v1", base_url="http://other/v1")
    assert isinstance(backend, OpenAIBackend)
    assert backend.identity() == {
        "backend": "openai",
        "base_url": "http://127.0.0.1:9/v1",
        "model": "judge",
    }
    assert make_backend("openai:m", base_url="http://x/v1").identity()["base_url"] == "http://x/v1"
    spec = parse_model_spec("openai:llama3@http://localhost:8000/v1")
    assert (spec.kind, spec.name, spec.url) == ("openai", "llama3", "http://localhost:8000/v1")
    assert parse_model_spec("openai:gpt-4o-mini").url is None
    assert parse_model_spec("scripted").kind == "scripted"
    for bad in ("gpt-4", "openai:", "openai:a b", "openai:m@"):
        with pytest.raises(ModelSpecError, match=re.escape(repr(bad))):
            parse_model_spec(bad)


def test_a_task_can_ask_another_model(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with (
        FakeOpenAIServer(responder=lambda body: "SCORE: 3") as judge,
        SQLiteEventStore(tmp_path / "e.sqlite") as store,
    ):
        log = EventLog(store)
        main = LLMClient(ScriptedBackend(), emit=log.emit)
        pool = ModelPool(
            main, lambda spec: LLMClient(make_backend(spec), emit=log.emit), "scripted"
        )
        roles = {"persona": ("scripted",), "judge": (f"openai:judge-model@{judge.base_url}",)}
        sim = Simulation(seed=0, models=pool, log=log, roles=roles)
        task = DecisionTask(
            name="judge.score",
            request=ChatRequest(messages=(Message(role="user", content="Score it."),)),
            parse=lambda reply: int(reply.split(":")[1]),
            reminder=lambda error: error,
            role="judge",
        )

        async def run():
            try:
                return await decide(sim, "judge", task)
            finally:
                await pool.aclose()

        decision = asyncio.run(run())
        assert decision.ok and decision.value == 3
        assert judge.request_count == 1 and judge.requests[0]["model"] == "judge-model"
        calls = [e.payload for e in store.read(["llm.call"])]
        assert calls[0]["response"]["model"] == "judge-model"
        assert calls[0]["role"] == "judge"
        assert sim.models.get(sim.model_for("persona")) is main
        with pytest.raises(KeyError, match="no role 'critic'"):
            sim.model_for("critic")
    assert pool.get() is main and pool.get(None) is main and pool.get("scripted") is main


def test_a_pool_without_a_builder_says_so() -> None:
    from personasim.simulation import LLMError

    with pytest.raises(LLMError, match="openai:x"):
        ModelPool(LLMClient(ScriptedBackend())).get("openai:x")
