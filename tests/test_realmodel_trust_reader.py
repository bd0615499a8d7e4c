"""The transfer reader on live SmolLM2 replies (realmodel tier): it never guesses.

Runs trust-population in free text on SmolLM2-135M and reads every reply the model gave: each
is either an amount that its closing sentence states (the amount's number appears in the last
decision sentence the reader itself finds, `decision_clauses`) or a re-ask whose reason is the
one the reader gives, and every decision recorded is a reply's reading. Run with `python -m
pytest -q -m realmodel tests/test_realmodel_trust_reader.py`.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from personasim.agents import DecisionParseError
from personasim.environments import TrustGame
from personasim.environments.trust_game.decision_text import decision_clauses, plain
from personasim.scenarios.trust.population import parse_transfer
from personasim.simulation import SQLiteEventStore
from personasim.simulation.cli.main import main
from personasim.simulation.cli.options import NOT_VALID

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(900)]


PERSONAS = 5
"""Personas in the run: 10 replies at most, enough for reads and re-asks (a few minutes)."""


def payloads(run_dir: Path, kind: str) -> list[dict[str, Any]]:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return [e.payload for e in store.read([kind])]


def rules(endowment: int = 10) -> Any:
    """Stands in for the run's TrustGame: its real reading and rules."""
    game = SimpleNamespace(endowment=endowment)
    game.check_transfer = partial(TrustGame.check_transfer, game)
    game.read_transfer = partial(TrustGame.read_transfer, game)
    return game


def test_every_smollm2_reply_is_read_or_reasked_never_guessed(
    smollm2: str, tmp_path: Path, realmodel_runs: dict[str, dict[str, Any]]
) -> None:
    out = tmp_path / "run"
    args = ["run", "trust-population", "--model", "openai:smollm2", "--base-url", smollm2]
    args += ["--out", str(out), "--seed", "0", "--concurrency", "1", "--timeout", "300"]
    args += [
        "--max-tokens",
        "256",
        "--no-progress",
        "--n-personas",
        str(PERSONAS),
        "--max-repairs",
        "1",
    ]
    started = time.perf_counter()
    assert main(args) in (0, NOT_VALID)  # a run with many failures is complete, marked not valid
    elapsed = time.perf_counter() - started
    replies = [p["response"]["text"] for p in payloads(out, "llm.call")]
    errors = [
        p["error"] for kind in ("decision.reask", "decision.failed") for p in payloads(out, kind)
    ]
    made = [p["value"] for p in payloads(out, "decision.made")]
    amounts, reasons = [], []
    for reply in replies:
        try:
            amount = parse_transfer(reply, rules())
        except DecisionParseError as exc:
            assert str(exc)  # re-asked with a reason, never a default
            reasons.append(str(exc))
            continue
        text = plain(reply)
        closing = decision_clauses(text)[-1]  # the reader's own closing sentence
        assert str(amount) in text[closing.start :].replace(",", ""), reply[-200:]
        amounts.append(amount)
    assert sorted(made) == sorted(amounts)  # every decision is a reply's own reading
    assert sorted(errors) == sorted(reasons)  # every re-ask and failure says the reader's reason
    print(f"SmolLM2 trust replies: {len(amounts)} read, {len(reasons)} re-asked of {len(replies)}")
    realmodel_runs["trust reader on SmolLM2 (text)"] = {
        "seconds": elapsed,
        "decisions": PERSONAS,
        "parsed": len(made),
        "first_try": 0,
        "reasks": len(payloads(out, "decision.reask")),
        "calls": len(replies),
    }
