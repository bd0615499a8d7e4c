"""The Trust Game's one transfer reader: the labelled corpus, and the re-ask over real HTTP.

The corpus (tests/data/trust_transfer_endings.yaml) was labelled before the reader was written;
each ending's label is what a careful person reads. The end-to-end tests run trust-population
and trust-forecast against the local fake server, whose first answers are the ones the old
pattern misread ("1,000 dollars" as 1, "3-5 dollars" as 3).
"""

from __future__ import annotations

from collections import Counter
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from fake_openai import FakeOpenAIServer

from personasim.agents import DecisionParseError
from personasim.environments import TrustGame, read_transfer
from personasim.environments.trust_game.transfer import library_reading, own_reading, plain
from personasim.scenarios.trust.forecast import FORECAST_CLOSING
from personasim.scenarios.trust.population import parse_transfer
from personasim.simulation import (
    RetryPolicy,
    SQLiteEventStore,
    agree,
    independent_reader,
    run_scenario,
)

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
    assert reading.reason == reason  # the re-ask says the reading's own reason
    return ("none" if reading.status == "unreadable" else "ambiguous"), reason


def dev_figures(rows: list[dict[str, Any]]) -> Counter[str]:
    """Right, wrong (an amount accepted that is not the label), re-asked by the reader
    (unreadable / ambiguous) and rejected by the game's rule, over labelled rows."""
    figures: Counter[str] = Counter()
    for row in rows:
        got, _ = outcome(row["reply"])
        figures["right" if got == row["expect"] else "wrong" if isinstance(got, int) else ""] += 1
        figures["re-asked by the reader" if got in ("none", "ambiguous") else ""] += 1
        figures["rejected by the game" if got == "rejected" else ""] += 1
    del figures[""]
    return figures


def library_figures(rows: list[dict[str, Any]]) -> Counter[str]:
    """How the two readers met on the rows the grammar read: both, one alone, disagreeing."""
    figures: Counter[str] = Counter()
    for row in rows:
        own = own_reading(plain(row["reply"]), 10)
        if own.ok:
            library = library_reading(row["reply"], {"endowment": 10})
            met = agree(own, library)
            kind = "disagree" if not met.ok else "single" if "single" in met.by else "agree"
            figures[kind] += 1
    return figures


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
    """The dev figures over the corpus (every label kind), printed for the report; and how
    often the libraries' reader disagrees with the grammar where the grammar read an amount."""
    figures = dev_figures(CORPUS)
    met = library_figures(CORPUS)
    print(f"transfer reader, dev endings ({len(CORPUS)}): {dict(figures)}; libraries: {dict(met)}")
    assert figures["right"] == len(CORPUS) and figures["wrong"] == 0
    assert met["disagree"] == 0 and met["agree"] > met["single"]


def test_real_smollm2_replies_are_read_as_labelled() -> None:
    """SmolLM2's real replies (tests/data/trust_smollm2_replies.yaml, dev, labelled by hand):
    each gets a clean reading or a re-ask with its reason, and the label's; none is guessed."""
    wrong = []
    for index, entry in enumerate(REAL):
        got, reason = outcome(entry["reply"])
        assert isinstance(got, int) or reason, index  # a reading, or a reason to re-ask
        if got != entry["expect"]:
            wrong.append((index, got, entry["expect"], reason))
    print(f"transfer reader, dev SmolLM2 replies ({len(REAL)}): {dict(dev_figures(REAL))}")
    assert len(REAL) >= 50 and wrong == []


def test_the_forecast_names_its_own_closing_sentence() -> None:
    with pytest.raises(DecisionParseError, match="Finally, I will send N dollars"):
        parse_transfer("I think 4.", rules(), FORECAST_CLOSING)
    assert parse_transfer("Finally, I will send $4.", rules(), FORECAST_CLOSING) == 4


def test_reading_follows_the_endowment() -> None:
    assert parse_transfer("Finally, I will give all of it.", rules(44)) == 44
    assert parse_transfer("Finally, I will give 1000 dollars", rules(1000)) == 1000
    assert parse_transfer("Finally, I will give $1,000.00", rules(1000)) == 1000
    assert parse_transfer("Finally, I will give all but 2 dollars.", rules(20)) == 18
    assert read_transfer("Finally, I will give half of it.", 7).value == 3.5
    with pytest.raises(DecisionParseError, match=r"whole dollars, got 3\.5"):
        parse_transfer("Finally, I will give half of it.", rules(7))


def test_every_reading_says_which_rule_read_it() -> None:
    both = read_transfer("Finally, I will give $7.", 10)
    assert both.value == 7 and both.by == "closing-sentence:money+text2num+price-parser"
    share = read_transfer("Finally, I will give half of my money.", 10)
    assert share.value == 5 and share.by.startswith("closing-sentence:share (single reader")
    fixed = read_transfer("Finally, I will give 8 dollars; actually, make it 6.", 10)
    assert fixed.value == 6 and "corrected" in fixed.by


def test_the_libraries_reader_is_registered_and_reads_alone() -> None:
    reader = independent_reader("transfer")
    assert reader is library_reading
    assert reader("Finally, I will give seven dollars.", {"endowment": 10}).value == 7
    assert reader("Finally, I will give Player 2 $7.", {"endowment": 10}).value == 7
    assert not reader("Finally, I will give half of it.", {"endowment": 10}).ok  # abstains


@pytest.mark.parametrize(
    ("reply", "expect"),
    [
        ("Finally, I will transfer USD 3 to them.", 3),
        ("**Final decision**\n\nFinally, I'd like to give **$4**.", 4),
        ("Finally, I choose to send 6 dollars to Player 2 (who may return 18).", 6),
        ("Finally, I will give 5 dollars.\nWait, I will give 6 dollars instead.", 6),
        ("Finally, I will give 5 dollars.\nI hope Player 2 returns 9 dollars.", 5),
        ("Finally, I will give $\\frac{1}{2}$ of my money.", 5),
        ("Finally, I will give 25% of my $10.", "rejected"),
        ("Finally, I will give 3 dollars, leaving me with 7 dollars.", 3),
        ("Finally, I will give 5 dollars, nothing more, nothing less.", 5),
        ("Finally, I will give 1 000 dollars.", "rejected"),
        ("Finally, I will give 12,50 dollars.", "rejected"),
        ("Finally, I won't give a single cent.", 0),
        ("Finally, I will not give more than 5 dollars.", "ambiguous"),
        ("Finally, I will probably give 5 dollars.", "ambiguous"),
        ("Finally, I will give roughly $5.", "ambiguous"),
        ("Finally, I will give at most 4 dollars.", "ambiguous"),
        ("Finally, I will give 5 euros.", "ambiguous"),
        ("Finally, I will give half of what they return.", "ambiguous"),
        ("Finally, I will give 10 * 0.6 dollars.", "ambiguous"),
        ("Finally, I will give 4 dollars. Actually, I think that is fair.", 4),
    ],
)
def test_replies_as_current_models_write_them(reply: str, expect: int | str) -> None:
    """Beyond the corpus: replies written the way chat models write, read by the rules."""
    assert outcome(reply)[0] == expect, read_transfer(reply, 10)


@pytest.mark.parametrize(
    ("reply", "expect"),
    [
        # the decision sentence in other languages (rule 2)
        ("Finalement, je donnerai 5 dollars.", 5),
        ("Enfin, je donnerai cinq dollars, car je fais confiance.", 5),
        ("Finalement, je donnerai environ 6 dollars.", "ambiguous"),
        ("Finalement, je ne donnerai rien.", 0),
        ("Finalmente, daré 5 dólares.", 5),
        ("Finalmente, daré la mitad: 5 dólares.", 5),
        ("Finalmente, daré la mitad: 6 dólares.", "ambiguous"),
        ("Finalmente, daré unos 5 dólares.", "ambiguous"),
        ("Finalmente, daré 4 o 5 dólares.", "ambiguous"),
        ("Finalmente, vou dar sete dólares.", 7),
        ("Infine, darò 7 dollari.", 7),
        ("Infine, darò 5 euro.", "ambiguous"),
        ("Schließlich gebe ich 5 Dollar.", 5),
        ("Schließlich werde ich 5 Dollar geben.", 5),
        ("Schließlich werde ich 5 Dollar behalten.", "none"),
        ("Schließlich werde ich 1.000 Dollar geben.", "ambiguous"),
        ("Uiteindelijk zal ik zes dollar geven.", 6),
        ("最后，我会给对方五美元。", 5),
        ("最后，我会给大约5美元。", "ambiguous"),
        # other ways to open the decision (rule 2)
        ("Finally, I think I will give 7 dollars.", 7),
        ("Finally, after much thought, I will give 4 dollars.", 4),
        ("Reasons.\nIn the end, I would like to give 6 dollars.", 6),
        ("My decision: I will give 2 dollars.", 2),
        ("I will send 7 dollars.", 7),  # its last sentence: a natural variant of the closing
        ("I will send 7 dollars. I hope they return some.", "none"),  # not the last sentence
        # what follows the decision (rules 2 and 5)
        ("Finally, I will give 6 dollars... or maybe 4, I'm not sure.", "ambiguous"),
        ("Finally, I will give 6 dollars. Or maybe 4.", "ambiguous"),
        ("Finally, I will give 5 dollars... I hope they return some.", 5),
        (
            "Finally, I will give 5 dollars.\n\nOn reflection, I would prefer to give 4.",
            "ambiguous",
        ),
        ("Finally, I will give 5 dollars.\nAmount sent: $6", "ambiguous"),
        ('{"transfer": 6}\nFinally, I will give 6 dollars.', 6),
        ("Finally, I will give 5 dollars, but maybe 3.", "ambiguous"),
        # the amount (rules 3, 4 and 5)
        ("Finally, I will give the maximum amount, 10 dollars.", 10),
        ("Finally, I will give the maximum.", 10),
        ("Finally, I will give a maximum of 5 dollars.", "ambiguous"),
        ("Finally, I will give 9 dollars, almost all of it.", 9),
        ("Finally, I will give almost all of it.", "ambiguous"),
        ("Finally, I will give half of it (6 dollars).", "ambiguous"),
        ("Finally, I will give half of it (5 dollars).", 5),
        ("Finally, I will give 30 percent, i.e. 4 dollars.", "ambiguous"),
        ("Finally, I will give half, so 6 dollars.", "ambiguous"),
        ("Finally, I will give $4 and keep the rest ($6).", 4),
        ("Finally, I will give 10 dollars minus 3, so 7 dollars.", 7),
        ("Finally, I will give 10 dollars minus 3.", "ambiguous"),
    ],
)
def test_replies_in_other_languages_and_words(reply: str, expect: int | str) -> None:
    """The families of the second development part's misreadings (tests/data/heldout/, dev),
    written anew: other languages, other openings, what follows, restated amounts."""
    assert outcome(reply)[0] == expect, read_transfer(reply, 10)


# ---------------------------------------------------------------------------------------------
# Over real HTTP: misread answers are re-asked, and every decision is the clean amount
# ---------------------------------------------------------------------------------------------

FIRST_ANSWERS = ("Finally, I will give 1000 dollars", "Finally, I will give 3-5 dollars")


def misread_then_clean(body: dict[str, Any]) -> str:
    """First answer: one the first pattern misread (by the prompt, so both kinds occur); asked
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
    readings = events(result.run_dir, "reading.made")  # one per accepted decision
    assert len(readings) == 30 and {r["reader"] for r in readings} == {"transfer"}
    assert {(r["status"], r["value"], r["endowment"]) for r in readings} == {("read", 4, 10)}
    assert {r["by"] for r in readings} == {"closing-sentence:money+text2num+price-parser"}


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
