"""A classroom run reads a right answer as right however a model closes it (issue 24).

A model on a local OpenAI-compatible server answers every question right, in its own words,
closing its replies the ways current chat models do ("Answer:42", "**Final Answer:** 42 … I
checked step 2 twice (it was 12)", `$\\boxed{42}$`, "#### 42", "The answer is 1,234 dollars.",
"**Answer** — 42", a check after the answer, a self-correction, French and Chinese closings
with their own number grouping, a JSON object) and refining with or without the
'Reflection:/Revised Response:' labels. The baseline and every low/high cell must read at least
95 % right; format compliance (the paper's exact 'Final Answer: {number}') is reported beside
it and matches what the model wrote.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAIServer

from personasim.environments.classroom.gsm8k import shipped_problems
from personasim.scenarios.classroom.tables import behaviour_wide_table, order_wide_table
from personasim.simulation import SQLiteEventStore, events_frame, run_scenario

CLOSINGS = (
    "Answer:{gold}",
    "**Final Answer:** {gold}\n\nI checked step 2 twice (it was 12).",
    "So the total is $\\boxed{{{gold}}}$.",
    "#### {gold}",
    "The answer is {gold} dollars.",
    "Answer: {gold}. Check: 6*7",
    "**Answer** \u2014 {gold}",  # a dash is punctuation, not a minus
    "So the answer is {gold}. Check: 6 \u00d7 7 = 42 \u2713",
    "Final Answer: 999999\n\nWait, it is actually {gold}.",
    "La r\u00e9ponse est {gold_fr}.\n\nV\u00e9rification : 16 \u2212 3 \u2212 4 = 9.",
    "\u6700\u7ec8\u7b54\u6848\uff1a{gold}\n\n\u9a8c\u8bc1\uff1a16 \u2212 3 \u2212 4 = 9",
    '```json\n{{"reasoning": "3 + 4 = 7 first", "answer": "{gold}"}}\n```',
    "Final Answer: {gold}",  # the paper's asked format
)
ASKED = CLOSINGS.index("Final Answer: {gold}")
REQUIRED = 95.0


def _written(gold: float) -> str:
    """As a chat model writes a number: thousands separators, no trailing zeros."""
    return f"{gold:,.0f}" if gold == int(gold) else f"{gold:,}"


def _written_fr(gold: float) -> str:
    """As French writes it: a (no-break) space between thousands, a decimal comma."""
    return _written(gold).replace(",", "\u202f").replace(".", ",")


class CarefulStudent:
    """The fake model: always right, a closing chosen from the prompt's hash; counts the
    graded replies it closed in the asked format, per task."""

    def __init__(self) -> None:
        self.golds = {p.question: p.gold for p in shipped_problems()}

    def _gold(self, text: str) -> float:
        return next(g for q, g in self.golds.items() if q in text)

    def __call__(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        prompt = "\n".join(m["content"] for m in messages)
        if "Score: N" in messages[0]["content"]:
            return "The low answer struggles visibly.\nScore: 2"
        gold = self._gold(prompt)
        digest = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
        closing = CLOSINGS[digest % len(CLOSINGS)].format(
            gold=_written(gold), gold_fr=_written_fr(gold)
        )
        question = next(q for q in self.golds if q in prompt)
        body_text = f"The question: {question}\nI work through it step by step: 3 + 4 = 7 first.\n"
        if len(messages) > 1:  # self-refinement's second turn
            if digest % 2:
                return f"Reflection: It fits my level.\nRevised Response: {body_text}{closing}"
            return f"Looking back, my answer fits my level.\n{body_text}{closing}"
        return body_text + closing


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reading") / "run"
    params = {
        "n_questions": 20,
        "repetitions": 1,
        "races": "none,AA",
        "orders": "before,after",
        "max_repairs": 0,
    }
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "sk-test")
    try:
        with FakeOpenAIServer(responder=CarefulStudent()) as server:
            model = f"openai:careful@{server.base_url}"
            run_scenario(
                "classroom",
                params,
                out=out,
                progress=False,
                roles={"student": [model], "judge": [model]},
            )
    finally:
        mp.undo()
    return out


def metrics_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "metrics.json").read_text())["metrics"]


def test_every_cell_reads_a_right_answer_as_right(run_dir: Path) -> None:
    metrics = metrics_of(run_dir)
    records = {"baseline": metrics["baseline"]}
    for cell in metrics["cells"]:
        for level in ("low", "high"):
            records[f"{cell['strategy']}/{cell['race']}/{cell['order']}/{level}"] = cell[level]
    assert len(records) == 1 + 2 * 14  # every strategy, races none and AA, both orders
    for name, record in records.items():
        print(f"{name:<32} {record['accuracy']:6.1f} % of {record['n_graded']}")
        assert record["n_graded"] == 20 and record["answer_failures"] == 0, name
        assert record["accuracy"] >= REQUIRED, name
    assert metrics["ambiguous_answers"] == 0 and metrics["answer_failures"] == 0
    assert metrics["unreadable_answers"] == 0


def test_format_compliance_counts_the_asked_closing_beside_accuracy(run_dir: Path) -> None:
    """A graded reply is compliant when its final response ends exactly 'Final Answer:
    {number}' (a self-refinement also needs its labels); the baseline was asked for none."""
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        events = events_frame(store.read())
    graded = events.loc[events["kind"] == "classroom.graded", "payload"].tolist()
    keys = ("strategy", "race", "order", "level", "question_id", "repetition")
    finals = {
        tuple(d[k] for k in keys): d["value"]
        for d in events.loc[events["kind"] == "decision.made", "payload"]
        if d.get("final") and d.get("level") in ("low", "high")
    }
    assert all(g["format_compliant"] is None for g in graded if g["strategy"] == "none")
    persona = [g for g in graded if g["strategy"] != "none"]
    for grade in persona:
        value = finals[tuple(grade[k] for k in keys)]
        text = value["revised_response"] if isinstance(value, dict) else value
        labelled = value["labelled"] if isinstance(value, dict) else True
        asked = text.rsplit("\n", 1)[-1].startswith("Final Answer: ") and labelled
        assert grade["format_compliant"] is asked, text
    compliant = sum(g["format_compliant"] for g in persona)
    assert 0 < compliant < len(persona)  # the model mostly closes in its own ways
    metrics = metrics_of(run_dir)
    shares = [c[level]["format_compliance"] for c in metrics["cells"] for level in ("low", "high")]
    assert all(0 <= s < 100 for s in shares)
    assert metrics["baseline"]["format_compliance"] is None
    assert "asks for no format" in metrics["baseline"]["format_compliance_undefined"]


def test_tables_show_accuracy_and_format_side_by_side(run_dir: Path) -> None:
    table1 = (run_dir / "reports" / "table1_wide.csv").read_text()
    header = table1.splitlines()[0]
    assert "0-shot low" in header and "0-shot format" in header
    for name in ("table3_wide", "table5_wide"):
        assert (run_dir / "reports" / f"{name}.md").exists(), name


def test_tables_3_and_5_in_the_papers_wide_layout_with_their_n() -> None:
    behaviours = [
        {"model": "m", "strategy": s, "race": "none", "order": "before", "(1)": 50.0,
         "(2)": 25.0, "(3)": 25.0, "(4)": 0.0, "n_comments": n}
        for s, n in (("zero-shot", 8), ("one-shot", 4))
    ] + [{"model": "m", "strategy": "zero-shot", "race": "AA", "order": "before", "(1)": 1.0,
          "(2)": 1.0, "(3)": 1.0, "(4)": 1.0, "n_comments": 99}]  # fmt: skip
    (row,) = behaviour_wide_table(behaviours)
    assert (row["0-shot (1)"], row["0-shot n"], row["1-shot n"]) == ("50.0% of 8", 8, 4)
    assert row["Self-refinement (1)"] is None and row["Self-refinement n"] is None  # not run
    order = [
        {"model": "m", "strategy": "zero-shot", "race": "AA", "acc_low": 80.0,
         "acc_low_change": -5.0, "acc_high": 95.0, "acc_high_change": None, "doc": 2.5,
         "doc_change": 0.25, "n_low": 20, "n_high": 19, "n_judged": 18},
        {"model": "m", "strategy": "one-shot", "race": "AA", "acc_low": 1.0,
         "acc_low_change": 1.0, "acc_high": 1.0, "acc_high_change": 1.0, "doc": 1.0,
         "doc_change": 1.0, "n_low": 1, "n_high": 1, "n_judged": 1},
    ]  # fmt: skip
    (row,) = order_wide_table(order)
    assert row == {
        "model": "m",
        "AA low": "80.0% (-5.0) of 20 graded",
        "AA high": "95.0% of 19 graded",  # an undefined change: no subscript, never +0.0
        "AA DoC": "2.50 (+0.25), n=18 judged",
        "AA n": "20 / 19 / 18",
    }
