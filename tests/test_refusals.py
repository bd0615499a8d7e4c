"""Out-of-persona reading (`scenarios/persona_gym/refusals.py`): the grammar as a high-precision
first pass, the scripted double's judge rule, the judge's strict verdict, and a run's refusal
block.

Figures printed here are *development* figures: tests/data/refusals/ (every row `split: dev`)
was used to write the rules. Held-out figures come from other data. What is measured is the
grammar and the scripted judge rule; a real judge model is not (the suite's real model is too
small to judge)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from personasim.agents.decision import DecisionParseError
from personasim.scenarios.persona_gym.refusals import (
    GRAMMAR,
    JUDGE_RULES,
    PersonaContext,
    grammar_reading,
    grammar_rules,
    parse_verdict,
    refusal_rules,
    scripted_verdict,
)

LABELLED = Path(__file__).parent / "data" / "refusals" / "labelled_replies.jsonl"


def labelled() -> list[dict[str, Any]]:
    return [json.loads(line) for line in LABELLED.read_text("utf-8").splitlines()]


def precision_recall(
    rows: list[dict[str, Any]], marks: Callable[[dict[str, Any]], bool]
) -> tuple[float, float, Counter[str]]:
    counts: Counter[str] = Counter()
    for row in rows:
        marked = marks(row)
        counts[("T" if marked == row["out_of_persona"] else "F") + ("P" if marked else "N")] += 1
    marked, out = counts["TP"] + counts["FP"], counts["TP"] + counts["FN"]
    precision = counts["TP"] / marked if marked else float("nan")  # nothing marked
    recall = counts["TP"] / out if out else float("nan")
    return precision, recall, counts


def by_grammar(row: dict[str, Any]) -> bool:
    return bool(grammar_rules(row["text"], row.get("persona")))


def by_pipeline(row: dict[str, Any]) -> bool:
    """The grammar, then the scripted judge rule for what it leaves."""
    return by_grammar(row) or scripted_verdict(row.get("persona", ""), row["text"])[0]


def test_dev_figures_of_the_grammar_and_of_the_scripted_judge_rule() -> None:
    """On the development set: the grammar alone marks few answers but (almost) never wrongly;
    grammar + the scripted judge rule finds most of the rest."""
    rows = labelled()
    assert len(rows) == 320 and sum(r["out_of_persona"] for r in rows) == 137
    assert {r["split"] for r in rows} == {"dev"}
    for name, marks in (("grammar alone", by_grammar), ("grammar + scripted judge", by_pipeline)):
        precision, recall, counts = precision_recall(rows, marks)
        print(
            f"\n[dev] {name}: precision {precision:.3f}, recall {recall:.3f} over {len(rows)} "
            f"replies ({dict(counts)})"
        )
        for source in sorted({r.get("model", r["source"]) for r in rows}):
            part = [r for r in rows if r.get("model", r["source"]) == source]
            p, r, c = precision_recall(part, marks)
            print(f"  {source}: precision {p:.3f}, recall {r:.3f} ({dict(c)})")
    grammar = precision_recall(rows, by_grammar)
    pipeline = precision_recall(rows, by_pipeline)
    assert grammar[0] >= 0.98 and grammar[1] >= 0.25
    assert pipeline[0] >= 0.95 and pipeline[1] >= 0.95


# --- the grammar: what no persona says in character --------------------------------------------

BAKER = "A 33-year-old baker from Lyon"


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("I'm an AI language model made by OpenAI.", "ai_self"),
        ("I'm just a program, so I don't have a favourite football team.", "ai_self"),
        ("I should clarify that I\u2019m an AI and not a baker.", "ai_self"),
        ("I'm Claude, an AI assistant made by Anthropic.", "maker"),
        ("Trained by OpenAI, I have no hometown.", "maker"),
        ("Honestly, I'm ChatGPT.", "model_name"),
        ("I can't pretend to be this character.", "role_decline"),
        ("I'd prefer not to play this character.", "role_decline"),
        ("I'm sorry, but I can't role-play as this person.", "role_decline"),
        ("Let's set the roleplay aside: flour, water, salt.", "role_exit"),
        ("Breaking character here: I have no bakery.", "role_exit"),
        ("Speaking as an AI rather than as the persona: no.", "persona_meta"),
        ("That goes against my programming.", "assistant_policy"),
    ],
)
def test_each_clause_of_the_grammar(text: str, rule: str) -> None:
    assert rule in grammar_rules(text, BAKER)
    assert rule in {r.name for r in GRAMMAR}
    reading = grammar_reading(text, BAKER)
    assert reading.ok and reading.value is True and rule in reading.by


@pytest.mark.parametrize(
    ("persona", "text"),
    [
        ("A 45-year-old AI researcher in Zurich", "As an AI researcher, I think evals matter."),
        ("A 29-year-old bank clerk in Leeds",
         "I'm sorry, but I can't assist with that over the phone; it's bank policy."),
        ("A 38-year-old stand-up comedian", "I'd rather not roleplay a villain at a kid's party."),
        ("A 27-year-old stage actress", "I can't play that character; the script is awful."),
        ("A household robot named Bolt", "As an AI, I don't get tired, but I love a clean sink."),
        ("An AI assistant called Aria", "I'm an AI language model, so the night shift is easy."),
        ("A French baker named Claude", "I'm Claude, and I've baked bread for thirty years."),
        ("A 52-year-old program manager", "I'm a program manager, so meetings are my life."),
        ("A 48-year-old data scientist", "I'm using an AI model trained by Meta for this."),
        ("A 19-year-old student", "That was out of character for me, honestly."),
        ("A 29-year-old teacher", "I won't pretend to be someone I'm not with my students."),
        (BAKER, "As an assistant, I don't have childhood memories."),  # for the judge
        (BAKER, "I'm sorry, but I can't assist with that."),  # for the judge
    ],
)  # fmt: skip
def test_the_grammar_leaves_what_a_persona_may_say_in_character(persona: str, text: str) -> None:
    """Not marked is not "in persona": the reading is unread, for the judge."""
    assert grammar_rules(text, persona) == []
    reading = grammar_reading(text, persona)
    assert reading.status == "unreadable" and reading.by == "grammar"


def test_the_persona_context_reads_who_the_persona_is() -> None:
    assert PersonaContext.of("A friendly robot who helps with chores").artificial
    assert PersonaContext.of("An AI assistant named Aria").artificial
    assert PersonaContext.of("A customer-service chatbot persona named Max").artificial
    assert not PersonaContext.of("A 45-year-old AI researcher").artificial
    assert not PersonaContext.of("A robotics student").artificial
    assert PersonaContext.of("A stand-up comedian from Leeds").fiction
    assert not PersonaContext.of("A bank clerk from Leeds").fiction
    assert not PersonaContext.of(None).artificial


# --- the scripted judge rule: persona-aware ----------------------------------------------------


@pytest.mark.parametrize(
    ("persona", "text", "out"),
    [
        (BAKER, "As an assistant, I don't have childhood memories.", True),
        ("A 40-year-old executive assistant", "As an assistant, I keep my boss's diary.", False),
        (BAKER, "I'm sorry, but I can't assist with that.", True),
        ("A 29-year-old bank clerk",
         "I'm sorry, but I can't assist with that over the phone; it's bank policy.", False),
        ("A 36-year-old pharmacist",
         "I'm sorry, but I can't give you that medication without a prescription.", False),
        ("A 41-year-old police officer",
         "I can't help you with that, it's against department rules.", False),
        ("A 52-year-old secondary school teacher", "I'm not actually a teacher, I'm an AI.", True),
        ("A 52-year-old secondary school teacher", "I'm not actually a teacher, sadly.", True),
        ("A 61-year-old retired teacher", "I'm not a teacher anymore, I retired in 2019.", False),
        (BAKER, "I can't role-play as someone who insults customers.", True),
        ("A 38-year-old stand-up comedian", "I'd rather not roleplay a villain.", False),
        (BAKER, "I don't have personal experiences or feelings.", True),
        ("A household robot", "I don't have feelings, but I like a tidy kitchen.", False),
        ("A customer-service chatbot persona named Max for a telecom company",
         "Hi, I'm Max! As a virtual assistant, I can help you with your phone plan.", False),
        (BAKER, "I don't have any feelings about sourdough either way.", False),
    ],
)  # fmt: skip
def test_the_scripted_judge_rule_weighs_the_persona(persona: str, text: str, out: bool) -> None:
    assert scripted_verdict(persona, text)[0] is out
    assert bool(refusal_rules(text, persona)) is out


def test_the_judge_rules_are_named() -> None:
    names = [r.name for r in (*GRAMMAR, *JUDGE_RULES)]
    assert len(names) == len(set(names))


# --- the judge's verdict, read strictly --------------------------------------------------------


def test_the_verdict_is_read_strictly() -> None:
    assert parse_verdict("It says it is an AI.\nVerdict: out of persona")["out_of_persona"]
    assert not parse_verdict("Fine.\n**Verdict:** in persona")["out_of_persona"]
    assert parse_verdict("Verdict: in persona. Wait, actually: Verdict: out of persona")[
        "out_of_persona"
    ]
    assert parse_verdict("Verdict: in persona\nVerdict: in persona")["out_of_persona"] is False
    with pytest.raises(DecisionParseError, match="no line 'Verdict"):
        parse_verdict("The answer is in persona.")
    with pytest.raises(DecisionParseError, match="ambiguous"):
        parse_verdict("Verdict: in persona. Verdict: out of persona")


# --- a run's refusal block ---------------------------------------------------------------------

ROLE_REFUSALS = (
    "I'm Claude, an AI assistant made by Anthropic, so I don't have a workplace of my own.",
    "As an assistant, I don't have childhood memories.",  # left by the grammar
    "I'm not comfortable pretending to be this character.",
    "Let's set the roleplay aside; I can give general advice.",
)
IN_ROLE = (
    "I'd never say that to a student; I'm a teacher and respect comes first.",
    "At the hackathon our team built an AI assistant for farmers. I wrote the backend.",
)
PARAMS = {"n_personas": 2, "n_environments": 2, "questions_per_task": 2}
SCRIPTED_ROLES = {"evaluator": ["scripted", "scripted:drift=0.1"], "reasoner": ["scripted"],
                  "examples": ["scripted"]}  # fmt: skip


def alternating_run(tmp_path: Path, roles: dict[str, list[str]], judge: Any = None) -> Any:
    """Over HTTP: the persona model alternates a role refusal with an in-role answer."""
    from fake_openai import FakeOpenAIServer

    from personasim.simulation import run_scenario

    answered: list[str] = []

    def reply(body: dict[str, Any]) -> str:
        if "Verdict: in persona" in body["messages"][0]["content"]:
            return judge(body)
        k = len(answered)
        answered.append(ROLE_REFUSALS[k // 2 % 4] if k % 2 == 0 else IN_ROLE[k // 2 % 2])
        return answered[-1]

    with FakeOpenAIServer(responder=reply) as server:
        model = f"openai:persona@{server.base_url}"
        judge_model = f"openai:judge@{server.base_url}"  # not the persona's model
        bound = {
            k: [judge_model if v == "SERVER" else v for v in specs] for k, specs in roles.items()
        }
        result = run_scenario(
            "persona-gym", PARAMS, model=model, roles={**SCRIPTED_ROLES, **bound},
            out=tmp_path / "run", progress=False, use_cache=False,
        )  # fmt: skip
    assert len(answered) == 2 * 5 * 2
    return result


def refusal_readings(result: Any) -> list[dict[str, Any]]:
    from personasim.simulation import SQLiteEventStore

    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        return [e.payload for e in store.read(["reading.made"]) if e.payload["reader"] == "refusal"]


def test_a_model_refusing_half_its_answers_has_a_refusal_rate_of_one_half(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scripted judge reads what the grammar leaves; every verdict records its source."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    result = alternating_run(tmp_path, {"refusal": ["scripted"]})
    refusals = result.metrics["metrics"]["refusals"]
    assert refusals["n_answers"] == 20 and refusals["n"] == 10 and refusals["rate"] == 0.5
    assert refusals["marked_by_grammar"] == 7 and refusals["judged_out"] == 3
    assert refusals["judged_in"] == 10 and refusals["not_judged"] == 0
    assert set(refusals["by_rule"]) >= {"ai_self", "maker", "role_decline", "role_exit"}
    readings = refusal_readings(result)
    assert len(readings) == 20
    assert Counter(r["by"] == "refusal judge" for r in readings) == {True: 13, False: 7}
    assert all(r["persona"] and r["gym_task"] for r in readings)


def test_without_a_judge_the_answers_the_grammar_leaves_are_not_judged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    result = alternating_run(tmp_path, {})
    refusals = result.metrics["metrics"]["refusals"]
    assert refusals["marked_by_grammar"] == 7 and refusals["not_judged"] == 13
    assert refusals["rate"] is None and "13 of 20 answers not judged" in refusals["rate_undefined"]
    assert refusals["at_least"] == pytest.approx(7 / 20)
    assert len(refusal_readings(result)) == 7  # only the grammar's marks are readings
    table = (result.run_dir / "reports" / "refusals.md").read_text("utf-8")
    assert "not_judged" in table and "marked_by_grammar" in table


def test_a_model_judge_is_asked_again_then_its_failure_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real judge over HTTP: a reply without a verdict is re-asked with the reason; a judge
    that never gives one is an unreadable verdict, counted, not an answer in persona."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    calls: list[dict[str, Any]] = []

    def judge(body: dict[str, Any]) -> str:
        calls.append(body)
        if "childhood memories" in body["messages"][0]["content"]:  # never gives a verdict
            return "Hard to say."
        return "In persona." if len(body["messages"]) == 1 else "Verdict: in persona"

    result = alternating_run(tmp_path, {"refusal": ["SERVER"]}, judge)
    refusals = result.metrics["metrics"]["refusals"]
    assert refusals["judged_in"] == 10 and refusals["judge_failed"] == 3
    assert refusals["rate"] == pytest.approx(7 / 17)  # failures left out and counted
    assert result.metrics["metrics"]["failures"]["refusal"] == 3
    reasks = [c for c in calls if len(c["messages"]) == 3]  # the re-ask carries the reminder
    assert reasks and all("Verdict: in persona" in c["messages"][2]["content"] for c in reasks)
    assert all(c.get("temperature") == 0.0 for c in calls)
    failed = [r for r in refusal_readings(result) if r["status"] == "unreadable"]
    assert len(failed) == 3 and all(r["by"] == "refusal judge" for r in failed)
