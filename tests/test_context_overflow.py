"""A conversation that outgrows the model's context is its unit's failure, not the run's.

A re-ask shows the model only the end of its unusable reply; when the unit's own replies still
make a prompt too long, the decision fails with reason `context_exceeded` (counted in validity,
asked again by `retry --retry-failed`), while a scenario's first prompt that cannot fit still
stops the run with the endpoint's one-line message (tests/test_endpoint_errors.py).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import trustor_reply
from fake_openai import FakeOpenAIServer, MalformedFault

import personasim.simulation.llm.client as llm_client
from personasim.agents.decision import REASK_REPLY_CHARS, bounded_reply
from personasim.simulation import RetryPolicy, SQLiteEventStore
from personasim.simulation.cli.main import main

RAMBLE = "Let me think about the other player again. " * 150  # 6,450 characters, no amount


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fast = functools.partial(RetryPolicy, initial_backoff=0.01, max_backoff=0.02, jitter=0)
    monkeypatch.setattr(llm_client, "RetryPolicy", fast)
    with FakeOpenAIServer(responder=trustor_reply) as fake:
        yield fake


def run(server: FakeOpenAIServer, out: Path, n_personas: int = 5) -> int:
    return main(
        [
            "run", "trust-population", "--n-personas", str(n_personas),
            "--model", "openai:fake-model", "--base-url", server.base_url, "--out", str(out),
            "--no-progress", "--no-cache", "--concurrency", "1", "--max-attempts", "2",
        ]
    )  # fmt: skip


def test_a_short_reply_is_shown_back_whole_and_a_long_one_by_its_end() -> None:
    assert bounded_reply("I give 5.") == "I give 5."
    shown = bounded_reply(RAMBLE)
    head, tail = shown.split("\n", 1)
    assert tail == RAMBLE[-REASK_REPLY_CHARS:]
    assert head == f"[… the first {len(RAMBLE) - REASK_REPLY_CHARS} characters are left out …]"


def test_a_re_ask_carries_only_the_end_of_a_rambling_reply(server, tmp_path: Path) -> None:
    server.enqueue_faults(MalformedFault(content=RAMBLE))
    assert run(server, tmp_path / "r", n_personas=1) == 0
    first, reask = server.requests[:2]
    shown = [m["content"] for m in reask["messages"] if m["role"] == "assistant"]
    assert len(shown) == 1 and len(shown[0]) < len(RAMBLE)
    assert shown[0].endswith(RAMBLE[-REASK_REPLY_CHARS:])
    assert len(json.dumps(reask)) < len(json.dumps(first)) + REASK_REPLY_CHARS + 2000


def read_events(run_dir: Path) -> list[Any]:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return list(store.read())


def decisions(run_dir: Path) -> list[dict[str, Any]]:
    return [e.payload for e in read_events(run_dir) if e.kind.startswith("decision.")]


def rambles(which: set[int]) -> Any:
    """A model that rambles (no amount) on its first answer to the personas whose index (in
    order of first request) is in `which`, and answers the others and every re-ask plainly."""
    firsts: list[str] = []

    def reply(body: dict[str, Any]) -> str:
        prompt = body["messages"][0]["content"]
        if len(body["messages"]) == 1 and prompt not in firsts:
            firsts.append(prompt)
            if firsts.index(prompt) in which:
                return RAMBLE
        return trustor_reply(body)

    return reply


def test_an_overflowing_re_ask_fails_its_unit_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r"
    # The first prompt fits; it with the re-ask's end of a ramble does not.
    with FakeOpenAIServer(responder=rambles({2}), context_words=400) as server:
        assert run(server, out) == 0  # 1 failed of 5: within the default 20 % limit
        printed = capsys.readouterr().out
        failed = [d for d in decisions(out) if d.get("reason") == "context_exceeded"]
        assert len(failed) == 1 and "request_key" in failed[0]
        assert "the prompt is too long for the context" in failed[0]["error"]
        assert len([d for d in decisions(out) if "value" in d]) == 4
        overall = json.loads((out / "manifest.json").read_text())["validity"]["overall"]
        assert (overall["failed"], overall["context_exceeded"], overall["failed_calls"]) == (
            1,
            1,
            0,
        )
        assert "failed decisions 1 (1 outgrew the model's context)" in printed
        assert main(["metrics", str(out), "--check"]) == 0

        # The failure is data: a retry asks that unit again, here on a larger context.
        server.context_words = None
        assert main(["retry", str(out), "--retry-failed", "--no-progress"]) == 0
    assert len([e for e in read_events(out) if e.kind == "unit.retried"]) == 1
    assert json.loads((out / "manifest.json").read_text())["validity"]["overall"]["failed"] == 0


def test_overflows_in_every_unit_make_the_run_not_valid(tmp_path: Path) -> None:
    out = tmp_path / "r"
    with FakeOpenAIServer(responder=rambles({0, 1, 2}), context_words=400) as server:
        assert run(server, out, n_personas=3) == 3  # not valid, and the reason is counted
    overall = json.loads((out / "manifest.json").read_text())["validity"]["overall"]
    assert (overall["failed"], overall["context_exceeded"]) == (3, 3)


def test_a_first_prompt_that_cannot_fit_stops_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer(responder=trustor_reply, context_words=20) as server:
        assert run(server, tmp_path / "r", n_personas=2) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: model call failed: the prompt is too long for the context")
