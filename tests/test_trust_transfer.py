"""The Trust Game's one transfer reader: the labelled corpus, and the re-ask over real HTTP.

The corpus (tests/data/trust_transfer_endings.yaml) was labelled before the reader was written;
each ending's label is what a careful person reads. The end-to-end tests run trust-population
and trust-forecast against the local fake server, whose first answers are the ones the old
pattern misread ("1,000 dollars" as 1, "3-5 dollars" as 3).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from fake_openai import FakeOpenAIServer

from personasim.agents import DecisionParseError
from personasim.environments import TrustGame, read_transfer
from personasim.scenarios.trust.forecast import FORECAST_CLOSING
from personasim.scenarios.trust.population import parse_transfer
from personasim.simulation import RetryPolicy, SQLiteEventStore, run_scenario

CORPUS = yaml.safe_load(
    (Path(__file__).parent / "data" / "trust_transfer_endings.yaml").read_text(encoding="utf-8")
)["endings"]
REAL = yaml.safe_load(
    (Path(__file__).parent / "data" / "trust_smollm2_replies.yaml").read_text(encoding="utf-8")
)["replies"]
FAST_RETRY = RetryPolicy(max_attempts=2, timeout=5, initial_backoff=0.01, max_backoff=0.05)


def rules(endowment: int = 10) -> Any:
    """Stands in for a TrustGame: its real reading and rules, without a simulation."""
    game = SimpleNamespace(endowment=endowment)
    game.check_transfer = partial(TrustGame.check_transfer, game)
    game.read_transfer = partial(TrustGame.read_transfer, game)
    return game


def outcome(reply: str) -> tuple[int | str, str]:
    """What the scenarios make of `reply`: the amount, or the kind of re-ask and its reason."""
    try:
        return parse_transfer(reply, rules()), ""
    except DecisionParseError as exc:
        reason = str(exc)
    if reason.startswith("the transfer must"):
        return "rejected", reason
    reading = read_transfer(reply, 10)
    return ("none" if _names_nothing(reason) else "ambiguous"), reading.problem or reason


def _names_nothing(reason: str) -> bool:
    return any(s in reason for s in ("does not end with", "no amount", "left blank"))


def test_the_corpus_is_large_and_covers_what_the_issue_lists() -> None:
    assert len(CORPUS) >= 60
    labels = {e["expect"] if isinstance(e["expect"], str) else "amount" for e in CORPUS}
    assert labels == {"amount", "ambiguous", "none", "rejected"}
    replies = " ".join(e["reply"] for e in CORPUS)
    for habit in ("**", "\\boxed", "$7", "7.00", "seven dollars", "all of it", "nothing",
                  "1,000", "cents", "3-5", "(which becomes 12"):  # fmt: skip
        assert habit in replies, habit


@pytest.mark.parametrize("ending", CORPUS, ids=[f"{i:02d}" for i in range(len(CORPUS))])
def test_each_ending_is_read_as_labelled(ending: dict[str, Any]) -> None:
    got, reason = outcome(ending["reply"])
    assert got == ending["expect"], (ending["why"], reason)
    if "says" in ending:
        assert ending["says"].lower() in reason.lower(), reason


def test_corpus_accuracy_is_measured() -> None:
    """The accuracy over the corpus (every label kind), printed for the report: all of it."""
    right = sum(outcome(e["reply"])[0] == e["expect"] for e in CORPUS)
    print(f"transfer reader: {right} of {len(CORPUS)} labelled endings read as labelled")
    assert right == len(CORPUS)


def test_real_smollm2_replies_are_read_as_labelled() -> None:
    """SmolLM2's real replies (tests/data/trust_smollm2_replies.yaml, labelled by hand): each
    gets a clean reading or a re-ask with its reason, and the label's; none is guessed."""
    wrong = []
    for index, entry in enumerate(REAL):
        got, reason = outcome(entry["reply"])
        assert isinstance(got, int) or reason, index  # a reading, or a reason to re-ask
        if got != entry["expect"]:
            wrong.append((index, got, entry["expect"], reason))
    print(f"transfer reader on SmolLM2: {len(REAL) - len(wrong)} of {len(REAL)} as labelled")
    assert len(REAL) >= 50 and wrong == []


def test_the_forecast_names_its_own_closing_sentence() -> None:
    with pytest.raises(DecisionParseError, match="Finally, I will send N dollars"):
        parse_transfer("I think 4.", rules(), FORECAST_CLOSING)
    assert parse_transfer("Finally, I will send $4.", rules(), FORECAST_CLOSING) == 4


def test_reading_follows_the_endowment() -> None:
    assert parse_transfer("Finally, I will give all of it.", rules(44)) == 44
    assert parse_transfer("Finally, I will give 1,000 dollars", rules(1000)) == 1000
    assert read_transfer("Finally, I will give half of it.", 7).amount == 3.5


# ---------------------------------------------------------------------------------------------
# Over real HTTP: misread answers are re-asked, and every decision is the clean amount
# ---------------------------------------------------------------------------------------------

FIRST_ANSWERS = ("Finally, I will give 1,000 dollars", "Finally, I will give 3-5 dollars")


def misread_then_clean(body: dict[str, Any]) -> str:
    """First answer: one the old pattern misread (by the prompt, so both kinds occur); asked
    again: a clean amount."""
    messages = body["messages"]
    if len(messages) > 1:
        return "BELIEF: b. DESIRE: d. INTENTION: i.\nFinally, I will give 4 dollars."
    first = FIRST_ANSWERS[len(messages[0]["content"]) % 2]
    send = "send ___ dollars" in messages[0]["content"]
    return first.replace("give", "send") if send else first


def events(run_dir: Path, kind: str) -> list[dict[str, Any]]:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return [e.payload for e in store.read([kind])]


def test_misread_answers_are_reasked_and_every_decision_is_the_clean_amount(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(responder=misread_then_clean) as server:
        result = run_scenario(
            "trust-population",
            {"n_personas": 30},
            model="openai:fake-model",
            base_url=server.base_url,
            out=tmp_path / "r",
            progress=False,
            retry=FAST_RETRY,
        )
        reasks = [r["messages"][-1]["content"] for r in server.requests if len(r["messages"]) > 1]
    metrics = result.metrics["metrics"]
    sent = [p["sent"] for p in events(result.run_dir, "trust.transfer")]
    assert sent == [4] * 30
    assert metrics["n_decisions"] == 30 and metrics["parse_failures"] == 0
    assert metrics["reasks"] == 30 and metrics["mean_sent"] == 4
    assert any("between 0 and 10 dollars, got 1000" in r for r in reasks)
    assert any("a range" in r for r in reasks)


def test_the_forecast_rereads_the_same_way(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=misread_then_clean) as server:
        result = run_scenario(
            "trust-forecast",
            {"n_personas": 1, "archetypes": ["M3"], "rounds": 2},
            model="openai:fake-model",
            base_url=server.base_url,
            out=tmp_path / "r",
            progress=False,
            retry=FAST_RETRY,
        )
    made = events(result.run_dir, "decision.made")
    assert {p["kind"] for p in made} == {"forecast", "action"} and len(made) == 4
    assert {p["value"] for p in made} == {4}
    assert len(events(result.run_dir, "decision.reask")) == 4


def test_a_model_that_never_gives_one_amount_is_a_counted_failure(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=lambda body: "Finally, I will give 3-5 dollars") as server:
        result = run_scenario(
            "trust-population",
            {"n_personas": 2, "max_repairs": 1},
            model="openai:fake-model",
            base_url=server.base_url,
            out=tmp_path / "r",
            progress=False,
            retry=FAST_RETRY,
        )
        assert server.request_count == 4  # each persona: the answer and one re-ask
    metrics = result.metrics["metrics"]
    assert metrics["parse_failures"] == 2 and metrics["n_decisions"] == 0
    assert not events(result.run_dir, "trust.transfer")


def test_every_trust_task_reads_with_the_one_reader() -> None:
    """The journeys' trust place, the forecast and the examples use the same reader: no module
    keeps its own closing-sentence pattern."""
    from personasim.scenarios.persona_journey import places as persona_journey
    from personasim.scenarios.trust import forecast as trust_forecast
    from personasim.scenarios.trust import population as trust_population

    assert persona_journey.parse_transfer is trust_population.parse_transfer
    assert trust_forecast.parse_transfer is trust_population.parse_transfer
    root = Path(__file__).resolve().parents[1]
    patterns = [
        path.relative_to(root).as_posix()
        for folder in ("scenarios", "environments", "agents", "examples")
        for path in (root / folder).rglob("*.py")
        if r"i\s+will\s+give" in path.read_text(encoding="utf-8")
        or r"i\s+will\s+send" in path.read_text(encoding="utf-8")
    ]
    assert patterns == []
