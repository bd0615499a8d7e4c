"""The out-of-persona reader (`scenarios/persona_gym/refusals.py`) on labelled replies of real
models and persona answers (tests/data/refusals/README.md): precision and recall, each at least
0.9."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from personasim.scenarios.persona_gym.refusals import RULES, is_refusal, refusal_rules

LABELLED = Path(__file__).parent / "data" / "refusals" / "labelled_replies.jsonl"


def labelled() -> list[dict]:
    return [json.loads(line) for line in LABELLED.read_text("utf-8").splitlines()]


def precision_recall(rows: list[dict]) -> tuple[float, float, Counter]:
    counts = Counter(
        ("T" if is_refusal(r["text"]) == r["out_of_persona"] else "F")
        + ("P" if is_refusal(r["text"]) else "N")
        for r in rows
    )
    precision = counts["TP"] / (counts["TP"] + counts["FP"])
    recall = counts["TP"] / (counts["TP"] + counts["FN"])
    return precision, recall, counts


def test_the_reader_finds_out_of_persona_answers_on_the_labelled_set() -> None:
    rows = labelled()
    assert len(rows) == 320 and sum(r["out_of_persona"] for r in rows) == 137
    precision, recall, counts = precision_recall(rows)
    print(
        f"\nout of persona: precision {precision:.3f}, recall {recall:.3f} over {len(rows)} "
        f"replies ({dict(counts)})"
    )
    for source in sorted({r.get("model", r["source"]) for r in rows}):
        part = [r for r in rows if r.get("model", r["source"]) == source]
        p, r, c = precision_recall(part)
        print(f"  {source}: precision {p:.3f}, recall {r:.3f} ({dict(c)})")
    for row in rows:
        if is_refusal(row["text"]) != row["out_of_persona"]:
            print(f"  missed {row['id']}: {row['text'][:100]!r}")
    assert precision >= 0.9 and recall >= 0.9


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("I'm Claude, an AI assistant made by Anthropic.", "ai_self"),
        ("I should clarify that I\u2019m an AI and not a nurse.", "ai_self"),
        ("Trained by OpenAI, I have no hometown.", "maker"),
        ("I don't actually have a body.", "no_self"),
        ("I'm not comfortable pretending to be a farmer.", "role_decline"),
        ("While I can imagine it, I'm not actually a teacher.", "persona_disclaim"),
        ("I'm sorry, but I can't assist with that.", "assistant_refusal"),
        ("That is against my guidelines.", "assistant_policy"),
    ],
)
def test_each_clause_of_the_grammar(text: str, rule: str) -> None:
    assert rule in refusal_rules(text)
    assert rule in {r.name for r in RULES}


@pytest.mark.parametrize(
    "text",
    [
        "As a nurse, I would check the patient first.",
        "I'm not an AI, I just build them!",
        "I won't pretend I wasn't nervous.",
        "I can't help you cheat on the exam. Come see me after class.",
        "Later I said: I'm sorry, but I can't help with that move.",  # not the opening
    ],
)
def test_in_persona_answers_are_left_alone(text: str) -> None:
    assert refusal_rules(text) == []


ROLE_REFUSALS = (
    "I'm Claude, an AI assistant made by Anthropic, so I don't have a workplace of my own.",
    "I should clarify that I'm an AI and can't speak from experience here.",
    "I'm not comfortable pretending to be someone I'm not.",
    "While I can imagine how a teacher might feel, I'm not actually a teacher.",
)
IN_ROLE = (
    "I'd never say that to a student; I'm a teacher and respect comes first.",
    "At the hackathon our team built an AI assistant for farmers. I wrote the backend.",
)


def test_a_model_refusing_half_its_answers_has_a_refusal_rate_of_one_half(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over HTTP: the persona model alternates a role refusal in current wordings with an
    in-role answer (some mentioning AI or refusing in role); the run reports 0.5."""
    from fake_openai import FakeOpenAIServer

    from personasim.simulation import run_scenario

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    answered: list[str] = []

    def persona(body: dict) -> str:
        k = len(answered)
        answered.append(ROLE_REFUSALS[k // 2 % 4] if k % 2 == 0 else IN_ROLE[k // 2 % 2])
        return answered[-1]

    params = {"n_personas": 2, "n_environments": 2, "questions_per_task": 2}
    with FakeOpenAIServer(responder=persona) as server:
        result = run_scenario(
            "persona-gym",
            params,
            model=f"openai:persona@{server.base_url}",
            roles={"evaluator": ["scripted", "scripted:drift=0.1"], "reasoner": ["scripted"],
                   "examples": ["scripted"]},
            out=tmp_path / "run",
            progress=False,
            use_cache=False,
        )  # fmt: skip
    refusals = result.metrics["metrics"]["refusals"]
    assert refusals["n_answers"] == len(answered) == 2 * 5 * 2
    assert refusals["n"] == 10 and refusals["rate"] == 0.5
    assert set(refusals["by_rule"]) >= {"ai_self", "maker", "role_decline", "persona_disclaim"}
