"""The classroom scenario (seed 000, REVERSO) offline: grading, aggregation, tags, judge, runs."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import DATA
from fake_openai import FakeOpenAIServer
from scipy import stats
from structured_runs import assert_formats_sent, assert_same_as_text, run_in_every_format

from personasim.environments import load_word_problems
from personasim.environments import read_answer as careful_reading
from personasim.environments.classroom.gsm8k import gold_answer, parse_number, shipped_problems
from personasim.scenarios.classroom.answers import (
    ContrastScore,
    Refinement,
    StudentAnswer,
    answer_text,
    parse_judge_score,
    parse_refinement,
    read_answer,
    read_judge_score,
    read_refinement,
)
from personasim.scenarios.classroom.metrics import behaviour_distribution, behaviour_tags
from personasim.scenarios.classroom.scenario import ClassroomScenario, doc_pairs
from personasim.scenarios.classroom.scripted import judge_score
from personasim.scenarios.classroom.validation import judge_agreement, read_judge_validation
from personasim.simulation import (
    Backend,
    ChatRequest,
    ChatResponse,
    RunResult,
    ScriptedBackend,
    SQLiteEventStore,
    events_frame,
    response_format_for,
    run_scenario,
)
from personasim.simulation.cli.main import main
from personasim.simulation.runs.lifecycle.run_dir import RunError
from personasim.simulation.runs.runner import RunSettings

GSM8K = DATA / "gsm8k" / "test.jsonl"


def run(out: Path, params: dict[str, Any], **kwargs: Any) -> RunResult:
    return run_scenario("classroom", params, out=out, progress=False, **kwargs)


def events_of(run_dir: Path) -> pd.DataFrame:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return events_frame(store.read())


def of_kind(events: pd.DataFrame, kind: str) -> list[dict[str, Any]]:
    return events.loc[events["kind"] == kind, "payload"].tolist()


# --- answers: gold numbers and students' final answers ----------------------------------------


def test_gold_answers_with_commas_and_negatives() -> None:
    assert gold_answer("Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 eggs.\n#### 18") == 18
    assert gold_answer("It costs 1,000 + 450,000 = 1,450,000\n#### 1,450,000") == 1_450_000
    assert gold_answer("The change is 5 - 15 = -10\n#### -10") == -10
    assert gold_answer("#### 0.75") == 0.75
    with pytest.raises(ValueError, match="####"):
        gold_answer("no final line")
    with pytest.raises(ValueError, match="not a number"):
        gold_answer("#### twelve")
    with pytest.raises(ValueError):  # commas must group thousands
        parse_number("1,2")


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("So 3 + 4 = 7 apples. Final Answer: 7", 7),
        ("I think... 85, but I'm not sure. **Final Answer: 85**", 85),
        ("The total is $1,234.50.\nFinal Answer: $1,234.50", 1234.5),
        ("Final Answer: 50,000", 50_000),
        ("It dropped below zero. Final Answer: -7 degrees.", -7),
        ("Final Answer: {12}", 12),
        ("I think it is 18? Final Answer: \\boxed{18}", 18),
        ("So... **Final Answer: \\boxed{1,450}**", 1450),
        ("final answer: 0.70", 0.7),
        ("Final Answer: 3, I hope that's right", 3),
        ("Final Answer: 10 ... wait, no. Final Answer: 12", 12),  # corrected after "wait"
        ("Final Answer: 10\nFinal Answer: 12", None),  # two answers, no correction: ambiguous
        ("So the answer is 42.", 42),  # an explicit statement, though not the asked format
        ("Final Answer: twelve", 12),
    ],
)
def test_final_answer_extraction(response: str, expected: float | None) -> None:
    assert careful_reading(response).value == expected


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("3 + 4 = 7, and 7 x 2 = 14. So the answer is 14.", 14),
        ("The answer is \\boxed{18}.", 18),
        ("First I add the apples, then I lost track of the rest.", None),  # no value stated
        ("It drops to -7 degrees", None),
        ("I cannot tell.", None),
    ],
)
def test_answers_without_a_statement_are_unreadable(response: str, expected: float | None) -> None:
    """Figure 2's no-persona prompt asks for "the final answer as a number", nothing more;
    an answer without an explicit statement is unreadable (graded not right, counted), never
    read by its last number."""
    reading = careful_reading(response)
    assert reading.value == expected
    assert reading.status == ("read" if expected is not None else "unreadable")


def test_shipped_problems_are_well_formed_and_their_arithmetic_checks_out() -> None:
    problems = shipped_problems()
    assert len(problems) == 31 and len({p.id for p in problems}) == 31
    for problem in problems:
        for expression, value in re.findall(r"<<([^=]+)=([^>]+)>>", problem.solution):
            assert math.isclose(eval(expression), float(value)), (problem.id, expression)
        last = re.findall(r"<<[^=]+=([^>]+)>>", problem.solution)[-1]
        assert math.isclose(float(last), problem.gold), problem.id
    assert {p.gold for p in problems} >= {-7, -16, 0.75, 2505, 132.25}


def test_question_file_errors_name_file_and_line(tmp_path: Path) -> None:
    good = json.dumps({"question": "1 + 1?", "answer": "1 + 1 = 2\n#### 2"})
    cases = {
        "not valid JSON": "{oops",
        "'question' must be": json.dumps({"answer": "#### 2"}),
        "no '#### N' line": json.dumps({"question": "q?", "answer": "2"}),
        "not a number": json.dumps({"question": "q?", "answer": "#### two"}),
    }
    for message, bad in cases.items():
        path = tmp_path / "q.jsonl"
        path.write_text(f"{good}\n\n{bad}\n")
        with pytest.raises(ValueError, match=rf"q\.jsonl:3: .*{re.escape(message)}"):
            load_word_problems(path)


def test_bad_question_file_exits_2_before_any_run_dir(tmp_path: Path, capsys) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"question": "q?", "answer": "#### 1"}) + "\n{broken\n")
    out = tmp_path / "run"
    code = main(["run", "classroom", "--question-file", str(path), "--out", str(out)])
    assert code == 2
    assert f"{path}:2" in capsys.readouterr().err
    assert not out.exists()
    missing = ["run", "classroom", "--question-file", str(tmp_path / "none.jsonl")]
    assert main([*missing, "--out", str(out)]) == 2
    too_many = ["run", "classroom", "--n-questions", "32", "--out", str(out)]
    assert main(too_many) == 2 and not out.exists()


# --- behaviour tags (Table 3) and the scripted judge ------------------------------------------


def test_behaviour_tags_from_hand_written_responses() -> None:
    paper_style = (
        "First, half of 500... {(3) Using fingers to count by 50s} is 250. (4) Shows visible "
        'frustration "Ugh" {(1) Makes calculation error initially} 250 ÷ 5 = 45? '
        "(2) Second-guesses final answer. **Final Answer: 85**"
    )
    assert behaviour_tags(paper_style) == [3, 4, 1, 2]
    assert behaviour_tags("2 × (3) = 6 and (5) Not a category and (2)") == []
    assert behaviour_tags("(1) **Wrong** step, (1) again") == [1, 1]
    distribution = behaviour_distribution([1, 1, 2, 3, 1])
    assert distribution == {
        "n_comments": 5,
        "counts": {"1": 3, "2": 1, "3": 1, "4": 0},
        "shares": {"1": 60.0, "2": 20.0, "3": 20.0, "4": 0.0},
    }
    empty = behaviour_distribution([])["shares"]
    assert all(empty[c] is None and empty[f"{c}_undefined"] == "no tagged comments" for c in "1234")


def test_scripted_judge_scores_from_features() -> None:
    struggling = "Um... (1) Mixing up numbers. (2) Not sure. Final Answer: 5"
    assert judge_score(True, False, struggling) == 3
    assert judge_score(True, True, struggling) == 3  # two kinds of struggle
    assert judge_score(True, True, "(2) Not sure. Final Answer: 5") == 2
    assert judge_score(True, True, "I think it is 5? Final Answer: 5") == 2
    assert judge_score(True, True, "It is 5. Final Answer: 5") == 1
    assert judge_score(False, False, struggling) == 2  # a 3 needs a flawless high answer


def test_judge_and_refinement_parsing() -> None:
    assert parse_judge_score("Clear difference.\nScore: 3") == 3
    assert parse_judge_score("Score: 1 at first... wait, final **Score: 2**") == 2  # corrected
    assert parse_judge_score("Score: 2. In short, Score: 2") == 2  # the same score twice
    with pytest.raises(ValueError, match=r"different scores \(1, 2\)"):  # re-asked
        parse_judge_score("Score: 1 for clarity, Score: 2 for contrast")
    assert parse_judge_score("Clear.\n**Score:** 3") == 3
    assert parse_judge_score("Clear.\nScore: \\boxed{1}") == 1
    for bad in ("no score here", "Score: 4"):
        with pytest.raises(ValueError):
            parse_judge_score(bad)
    for off_scale in ("Score: 2.5", "Score: 2,5"):  # never truncated to 2
        with pytest.raises(ValueError, match=r"whole number 1, 2 or 3, got 2[.,]5"):
            parse_judge_score(off_scale)
    assert parse_judge_score("Score: 3.0") == 3  # on the scale, however written
    parsed = parse_refinement("Reflection: too easy. Revised Response: Um... Final Answer: 3")
    assert parsed == {
        "reflection": "too easy.",
        "revised_response": "Um... Final Answer: 3",
        "labelled": True,
    }
    # without the labels the reply is read whole for its final answer, flagged unlabelled
    unlabelled = parse_refinement("Looking back, it was too easy. Um... Final Answer: 3")
    assert unlabelled == {
        "reflection": "",
        "revised_response": "Looking back, it was too easy. Um... Final Answer: 3",
        "labelled": False,
    }
    with pytest.raises(ValueError, match="empty"):
        parse_refinement("  ")


# --- aggregation against a hand-made log ------------------------------------------------------


def hand_made_log() -> pd.DataFrame:
    """Two repetitions of two questions, zero-shot, level only, order before.

    baseline: rep 1 2/2, rep 2 1/2 → 100, 50 → 75 ± 35.355
    high:     rep 1 2/2, rep 2 2/2 → 100 ± 0, change +25
    low:      rep 1 0/2 (one without a final answer), rep 2 1/2 → 0, 50 → 25 ± 35.355, change −50
    DoC:      rep 1 scores 3, 2 → 2.5; rep 2 one 3 and one failed judgement → 3 → 2.75 ± 0.354
    """
    params = ClassroomScenario.Params(
        strategies=("none", "zero-shot"), races=("none",), orders=("before",), repetitions=2
    ).model_dump(mode="json")
    rows: list[tuple[str, dict[str, Any]]] = [
        (
            "run.started",
            {
                "scenario": "classroom",
                "params": params,
                "model": {"backend": "x"},
                "roles": {"student": ["x"], "judge": ["x"]},
            },
        ),
        ("env.created", {"env": "classroom", "kind": "classroom", "settings": {"questions": {}}}),
    ]
    grades = [  # (rep, strategy/level, question, correct, found)
        (1, "none", "q1", True, True),
        (1, "none", "q2", True, True),
        (2, "none", "q1", True, True),
        (2, "none", "q2", False, True),
        (1, "high", "q1", True, True),
        (1, "high", "q2", True, True),
        (2, "high", "q1", True, True),
        (2, "high", "q2", True, True),
        (1, "low", "q1", False, False),
        (1, "low", "q2", False, True),
        (2, "low", "q1", True, True),
        (2, "low", "q2", False, True),
    ]
    for rep, level, question, correct, found in grades:
        persona = level != "none"
        labels = {
            "strategy": "zero-shot" if persona else "none",
            "race": "none",
            "order": "before" if persona else "none",
            "level": level,
        }
        status = "read" if found else "unreadable"
        graded = {"question_id": question, "correct": correct, "status": status}
        rows.append(("classroom.graded", {**graded, **labels, "repetition": rep}))
    cell = {"strategy": "zero-shot", "race": "none", "order": "before"}
    for rep, question, score in ((1, "q1", 3), (1, "q2", 2), (2, "q1", 3)):
        judged = {"task": "classroom.judge", "value": score, "question_id": question}
        rows.append(("decision.made", {**judged, **cell, "repetition": rep}))
    failed = {"task": "classroom.judge", "question_id": "q2", "repetition": 2, **cell}
    rows.append(("decision.failed", failed))
    return pd.DataFrame(
        [
            {
                "seq": i,
                "round": None,
                "agent_id": None,
                "kind": k,
                "scope": "main",
                "ts": 0.0,
                "payload": p,
            }
            for i, (k, p) in enumerate(rows, 1)
        ]
    )


def test_accuracy_and_doc_aggregation_hand_checked() -> None:
    metrics = ClassroomScenario.compute_metrics(hand_made_log())
    sd_50 = float(np.std([0, 50], ddof=1))
    assert metrics["baseline"]["accuracy"] == 75.0
    assert metrics["baseline"]["accuracy_sd"] == pytest.approx(sd_50, abs=1e-6)
    (cell,) = metrics["cells"]
    assert cell["high"]["accuracy"] == 100.0 and cell["high"]["accuracy_sd"] == 0.0
    assert cell["high"]["change"] == 25.0
    assert cell["low"]["accuracy"] == 25.0 and cell["low"]["change"] == -50.0
    assert cell["low"]["accuracy_sd"] == pytest.approx(sd_50, abs=1e-6)
    assert cell["low"]["by_repetition"] == {"1": 0.0, "2": 50.0}
    assert cell["low"]["unreadable_answers"] == 1 and cell["low"]["n_graded"] == 4
    assert cell["doc"]["mean"] == 2.75
    assert cell["doc"]["sd"] == pytest.approx(float(np.std([2.5, 3.0], ddof=1)), abs=1e-6)
    assert cell["doc"]["n_judged"] == 3 and cell["doc"]["judge_failures"] == 1
    assert metrics["judge_failures"] == 1 and metrics["unreadable_answers"] == 1


# --- full runs --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    """Every strategy × race × order cell, on 3 shipped questions, once (no cache)."""
    out = tmp_path_factory.mktemp("classroom") / "run"
    return run(out, {"n_questions": 3, "repetitions": 1}, use_cache=False)


def test_every_cell_answers_every_question(full_run: RunResult) -> None:
    metrics = full_run.metrics["metrics"]
    assert metrics["n_questions"] == 3
    names = {(c["strategy"], c["race"], c["order"]) for c in metrics["cells"]}
    expected = {
        (s, r, o)
        for s in ("zero-shot", "one-shot", "self-refine", "two-stage")
        for r in ("none", "AA", "WA", "HS")
        for o in ("before", "after")
        if not (s == "two-stage" and r == "none")
    }
    assert names == expected and len(names) == 30
    failures = metrics["answer_failures"]
    assert failures == 0
    for cell in metrics["cells"]:
        assert cell["low"]["n_graded"] == cell["high"]["n_graded"] == 3
        assert cell["doc"]["n_judged"] + cell["doc"]["judge_failures"] == 3
    assert metrics["baseline"]["n_graded"] == 3
    graded = of_kind(events_of(full_run.run_dir), "classroom.graded")
    assert len(graded) == 3 + 30 * 2 * 3


def test_run_writes_tables_and_figure(full_run: RunResult) -> None:
    reports = full_run.run_dir / "reports"
    header = (reports / "table1_level.csv").read_text().splitlines()[0]
    assert header.startswith("model,strategy,race,order,no_persona,acc_low,acc_low_sd,")
    assert len((reports / "table2_race.csv").read_text().splitlines()) == 1 + 24
    assert "(1),(2),(3),(4),n_comments" in (reports / "table3_behaviours.csv").read_text()
    assert len((reports / "table5_order.csv").read_text().splitlines()) == 1 + 15
    png = (reports / "figure3_race_effect.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 20_000


def test_prompts_follow_figures_2_4_5(full_run: RunResult) -> None:
    calls = of_kind(events_of(full_run.run_dir), "llm.call")
    first = {}
    for call in calls:
        first.setdefault(call["task"], []).append(call["messages"])
    answers = [m[0]["content"] for m in first["classroom.answer"]]
    baseline = [a for a in answers if a.startswith("Answer the question and give")]
    assert len(baseline) == 3
    level_only = [a for a in answers if a.startswith("You are a middle school student with low")]
    assert level_only and all("'Final Answer: {number}'." in a for a in level_only)
    hispanic = ClassroomScenario.shipped_prompts().text("race_definition_HS")
    assert hispanic.startswith("A person of Cuban, Mexican, Puerto Rican")  # Figure 4
    assert any(hispanic in a and "You are a Hispanic middle" in a for a in answers)
    assert any(a.startswith("You are an African American middle school student") for a in answers)
    after = [a for a in answers if not a.startswith(("You are", "Answer the"))]
    assert after and all(a.rstrip().endswith("'Final Answer: {number}'.") for a in after)
    refine = [m for m in first["classroom.refine"]]
    assert all(len(m) == 3 and m[1]["role"] == "assistant" for m in refine)
    assert any("the racial group" in m[2]["content"] for m in refine)
    rewrites = [m[0]["content"] for m in first["classroom.rewrite"]]
    assert all("Rewrite the following solution" in r for r in rewrites)
    judge = first["classroom.judge"][0][0]["content"]
    assert "High-performance answer:" in judge and "Score: N" in judge


def test_the_baseline_answers_in_its_prompts_format_and_is_graded(full_run: RunResult) -> None:
    """The no-persona prompt never asks for 'Final Answer:', so the scripted baseline does not
    write one; it closes "So the answer is N.", an explicit statement: graded, not zero."""
    events = events_of(full_run.run_dir)
    baseline = [
        c["response"]["text"]
        for c in of_kind(events, "llm.call")
        if c["messages"][0]["content"].startswith("Answer the question and give the final")
    ]
    assert len(baseline) == 3 and not any("final answer" in t.lower() for t in baseline)
    graded = [g for g in of_kind(events, "classroom.graded") if g["strategy"] == "none"]
    assert len(graded) == 3
    # "So the answer is N." is an explicit statement; no format was asked, so none is counted
    assert all(g["status"] == "read" and g["by"].startswith("grammar:") for g in graded)
    assert all(g["format_compliant"] is None for g in graded)
    personas = [g for g in of_kind(events, "classroom.graded") if g["strategy"] != "none"]
    assert {g["status"] for g in personas} <= {"read", "unreadable"}
    readings = [e for e in of_kind(events, "reading.made") if e["reader"] == "math_answer"]
    assert len(readings) == len(graded) + len(personas)  # every grade's reading, logged
    assert all(isinstance(g["format_compliant"], bool) for g in personas)
    assert full_run.metrics["metrics"]["baseline"]["accuracy"] is not None


def test_identical_prompts_are_independent_samples(full_run: RunResult) -> None:
    """Self-refine's first turn repeats the zero-shot prompt and two-stage's stage 1 the
    level-only one; each keeps its own request key (sample_index)."""
    calls = [c for c in of_kind(events_of(full_run.run_dir), "llm.call")]
    students = [c for c in calls if c["task"] == "classroom.answer"]
    by_messages: dict[str, set[str]] = {}
    for call in students:
        by_messages.setdefault(json.dumps(call["messages"]), set()).add(call["request_key"])
    counts = [len(keys) for keys in by_messages.values()]
    assert max(counts) >= 4  # level-only zero-shot: zero-shot, self-refine, 3 × two-stage
    assert len({c["request_key"] for c in students}) == len(students)


def test_metrics_recomputed(full_run: RunResult) -> None:
    assert main(["metrics", str(full_run.run_dir), "--check"]) == 0


def test_doc_pairs_for_human_annotation(full_run: RunResult) -> None:
    pairs = doc_pairs(events_of(full_run.run_dir))
    assert len(pairs) == sum(c["doc"]["n_judged"] for c in full_run.metrics["metrics"]["cells"])
    assert {"judge_score", "high_response", "low_response", "question_id"} <= set(pairs.columns)
    assert pairs["low_response"].str.contains("Final Answer|lost track").all()


def test_runs_on_the_real_gsm8k_file(tmp_path: Path) -> None:
    params = {
        "question_file": str(GSM8K),
        "n_questions": 4,
        "repetitions": 1,
        "strategies": "none,zero-shot,two-stage",
        "races": "none,AA",
        "orders": "before,after",
    }
    result = run(tmp_path / "run", params)
    metrics = result.metrics["metrics"]
    assert metrics["n_questions"] == 4 and len(metrics["cells"]) == 6
    golds = {p.id: p.gold for p in load_word_problems(GSM8K)}
    graded = of_kind(events_of(result.run_dir), "classroom.graded")
    assert all(g["gold"] == golds[g["question_id"]] for g in graded)
    assert (result.run_dir / "reports" / "figure3_race_effect.png").exists()


class BrokenJudge(Backend):
    """Scripted students; a judge that never gives a usable score."""

    name = "scripted"  # a scripted double: it plays the must-name judge too, as `scripted` does

    def __init__(self) -> None:
        self.students = ScriptedBackend()

    def identity(self) -> dict[str, Any]:
        return {"backend": "broken-judge"}

    async def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        if request.task == "classroom.judge":
            return ChatResponse(text="They differ a lot. Score: high")
        return await self.students.complete(request, timeout)


def test_unusable_judge_scores_are_counted_never_defaulted(tmp_path: Path) -> None:
    params = {"n_questions": 2, "repetitions": 1, "strategies": "zero-shot", "races": "none"}
    result = run(
        tmp_path / "r", {**params, "orders": "before", "max_repairs": 1}, backend=BrokenJudge()
    )
    metrics = result.metrics["metrics"]
    (cell,) = metrics["cells"]
    assert cell["doc"] == {
        "mean": None,
        "mean_undefined": "no judged pairs",
        "sd": None,
        "sd_undefined": "no judged pairs",
        "n_judged": 0,
        "judge_failures": 2,
        "small": True,
    }
    assert metrics["judge_failures"] == 2 and metrics["reasks"] == 2
    assert cell["low"]["n_graded"] == 2  # the answers still count for accuracy


def test_judge_on_its_own_endpoint_with_its_own_cache(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    params = {
        "n_questions": 2,
        "repetitions": 1,
        "strategies": "zero-shot",
        "races": "none,WA",
        "orders": "before",
    }
    with FakeOpenAIServer(responder=lambda body: "Clear contrast.\nScore: 2") as judge:
        roles = {"judge": [f"openai:judge@{judge.base_url}"]}
        first = run(tmp_path / "a", params, roles=roles)
        sent = judge.request_count
        second = run(tmp_path / "b", params, roles=roles)
        assert judge.request_count == sent == 4  # 2 cells × 2 questions, then all cached
    assert all(r["model"] == "judge" for r in judge.requests)
    assert all("HIGH math performance" in r["messages"][0]["content"] for r in judge.requests)
    for result, source in ((first, "model"), (second, "cache")):
        calls = of_kind(events_of(result.run_dir), "llm.call")
        judged = [c for c in calls if c["task"] == "classroom.judge"]
        assert {c["backend"]["model"] for c in judged} == {"judge"}
        assert {c["role"] for c in judged} == {"judge"}
        assert {c["role"] for c in calls if c not in judged} == {"student"}
        assert {c["source"] for c in judged} == {source}
        assert all(c["backend"]["backend"] == "scripted" for c in calls if c not in judged)
        assert all(c["doc"]["mean"] == 2.0 for c in result.metrics["metrics"]["cells"])


def test_params_are_checked() -> None:
    from personasim.simulation import ScenarioError

    for bad in (
        {"strategies": "zero-shot,three-shot"},
        {"races": "AA,AA"},
        {"orders": "middle"},
        {"strategies": "two-stage", "races": "none"},
    ):
        with pytest.raises(ScenarioError):
            ClassroomScenario.parse_params(bad)


# --- judge validation (Appendix B) ------------------------------------------------------------


def test_judge_validation_pearson_matches_scipy(tmp_path: Path) -> None:
    table = pd.DataFrame(
        {
            "pair_id": range(6),
            "judge_score": [3, 2, 1, 3, 2, 1],
            "human_1": [3, 2, 1, 2, 2, 1],
            "human_2": [3, 3, 1, 3, 1, 2],
            "human_3": [2, 2, 1, 3, None, 1],
        }
    )
    path = tmp_path / "human.csv"
    table.to_csv(path, index=False)
    result = read_judge_validation(path)
    human_mean = table[["human_1", "human_2", "human_3"]].mean(axis=1)
    expected = stats.pearsonr(table["judge_score"], human_mean)
    assert result["r"] == pytest.approx(expected.statistic)
    assert result["p"] == pytest.approx(expected.pvalue)
    assert result["n_pairs"] == 6 and result["n_annotators"] == 3 and result["n_left_out"] == 0
    assert judge_agreement([1, 2], [1, 2]) == {
        "r": None,
        "r_undefined": "fewer than 3 pairs",
        "p": None,
        "p_undefined": "fewer than 3 pairs",
        "n_pairs": 2,
    }
    constant = judge_agreement([2, 2, 2, 2], [1, 2, 3, 1])
    assert constant["r"] is None and constant["r_undefined"] == "judge: constant input"
    with pytest.raises(ValueError, match="pair up"):
        judge_agreement([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="human"):
        read_judge_validation(table.drop(columns=["human_1", "human_2", "human_3"]))


# --- structured answers (--response-format) ----------------------------------------------------


def test_structured_answers_read_into_the_text_parsers_values() -> None:
    answer = StudentAnswer(response=" Um... (2) Not sure. ", final_answer=1234.0)
    assert read_answer(answer) == "Um... (2) Not sure. Final Answer: 1,234"
    assert careful_reading(read_answer(answer)).value == 1234
    # a text stating another final answer than the schema's number is ambiguous, as in text
    overridden = read_answer(StudentAnswer(response="Final Answer: 7", final_answer=0.125))
    assert careful_reading(overridden).status == "ambiguous"
    # null: no final answer, unreadable like a text answer without a statement
    lost = "6 + 6 = 12. I lost track of the final number."
    forgot = read_answer(StudentAnswer(response=lost, final_answer=None))
    assert forgot == lost and careful_reading(forgot).status == "unreadable"
    assert answer_text("", -3.5) == "Final Answer: -3.5"
    with pytest.raises(ValueError, match="empty"):
        read_answer(StudentAnswer(response="  ", final_answer=None))
    with pytest.raises(ValueError, match="finite"):
        read_answer(StudentAnswer(response="x", final_answer=float("inf")))
    refined = Refinement(reflection=" too easy. ", revised_response="Um...", final_answer=3)
    text = parse_refinement("Reflection: too easy. Revised Response: Um... Final Answer: 3")
    assert read_refinement(refined) == text
    with pytest.raises(ValueError, match="revised response is empty"):
        read_refinement(Refinement(reflection="r", revised_response=" ", final_answer=None))
    assert read_judge_score(ContrastScore(explanation="clear", score=3)) == 3
    with pytest.raises(ValueError, match="1, 2 or 3, got 4"):  # re-checked past the schema
        read_judge_score(ContrastScore.model_construct(explanation="x", score=4))


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_structured_runs_measure_what_the_text_run_measures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = {"n_questions": 3, "repetitions": 1, "races": "none,AA", "orders": "before"}
    runs = run_in_every_format("classroom", params, tmp_path, monkeypatch, seed=2)
    # the no-persona answer ends in prose ("So the answer is N."), its JSON in `final_answer`:
    # graded alike (by its number), written differently
    assert_same_as_text(runs, written=lambda p: p.get("strategy") != "none")
    schemas = {
        "classroom.answer": StudentAnswer,
        "classroom.refine": Refinement,
        "classroom.rewrite": StudentAnswer,
        "classroom.judge": ContrastScore,
    }
    assert_formats_sent(runs, schemas)
    metrics = runs["json_schema"].result.metrics["metrics"]
    # this seed takes the paths where text and JSON differ most: a forgotten final answer
    # (null in JSON) and a judge's re-ask (score 0 in JSON)
    assert metrics["unreadable_answers"] > 0 and metrics["reasks"] > 0
    nulls = [r for q, r in runs["json_object"].calls if '"final_answer": null' in r]
    assert len(nulls) >= metrics["unreadable_answers"]


@pytest.mark.parametrize("fmt", ["json_schema", "json_object"])
def test_structured_judge_over_http_parses_json_and_reasks_out_of_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    replies = iter(
        [
            json.dumps({"explanation": "Strong contrast.", "score": 5}),  # valid JSON, out of range
            json.dumps({"explanation": "The low answer hesitates.", "score": 2}),
        ]
    )
    params = {
        "n_questions": 1,
        "repetitions": 1,
        "strategies": "zero-shot",
        "races": "none",
        "orders": "before",
    }
    with FakeOpenAIServer(responder=lambda body: next(replies)) as judge:
        result = run(
            tmp_path / "r",
            params,
            use_cache=False,
            settings=RunSettings(response_format=fmt),
            roles={"judge": [f"openai:judge@{judge.base_url}"]},
        )
        sent = judge.requests
    assert len(sent) == 2
    assert all(r["response_format"] == response_format_for(fmt, ContrastScore) for r in sent)
    assert "end with a line 'Score: N'" in sent[0]["messages"][0]["content"]  # prompt as printed
    assert "JSON object" in sent[1]["messages"][-1]["content"]
    events = events_of(result.run_dir)
    (reask,) = of_kind(events, "decision.reask")
    assert reask["task"] == "classroom.judge" and "not a valid ContrastScore" in reask["error"]
    judged = [p for p in of_kind(events, "decision.made") if p["task"] == "classroom.judge"]
    assert [(p["value"], p["attempts"]) for p in judged] == [(2, 2)]
    assert result.metrics["metrics"]["cells"][0]["doc"]["mean"] == 2.0


# --- natural answers, headings, both accuracies (issue 12) -------------------------------------

NATURAL = (
    "Let me work it out step by step. So the answer is {gold}.",
    "The final answer is $\\boxed{{{gold}}}$.",
    "**Final Answer:** {gold}",  # "~{gold}" is a hedge: ambiguous (docs/readers.md)
    '{{"reasoning": "First I add, then I multiply.", "answer": "{gold}"}}',
)


def natural_student(empty_every: int = 0) -> Any:
    """A model that answers every question right, in its own words and formats (a statement,
    a box, bold markdown, a JSON object; no 'Final Answer:' line);
    every `empty_every`-th question it answers with nothing (unparseable, re-asked, failed)."""
    golds = {p.question: p.gold for p in shipped_problems()}

    def respond(body: dict[str, Any]) -> str:
        prompt = body["messages"][0]["content"]
        index, gold = next((i, g) for i, (q, g) in enumerate(golds.items()) if q in prompt)
        if empty_every and index % empty_every == 0:
            return " "
        number = f"{gold:,.0f}" if gold == int(gold) else f"{gold}"
        return NATURAL[index % len(NATURAL)].format(gold=number.replace("-", "\u2212"))

    return respond


def test_a_natural_answer_model_scores_full_marks_on_the_no_persona_baseline(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    params = {"n_questions": 31, "repetitions": 1, "strategies": "none", "races": "none"}
    with FakeOpenAIServer(responder=natural_student()) as server:
        result = run(tmp_path / "r", params, roles={"student": [f"openai:m@{server.base_url}"]})
    base = result.metrics["metrics"]["baseline"]
    assert (base["accuracy"], base["n_graded"], base["ambiguous_answers"]) == (100.0, 31, 0)
    assert base["readings"]["unreadable"] == 0  # every answer states its final answer
    assert base["accuracy_all"] == 100.0 and base["n_answers"] == 31


def test_unparseable_answers_are_excluded_or_counted_wrong_with_denominators(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    params = {"n_questions": 31, "repetitions": 1, "strategies": "none", "races": "none"}
    with FakeOpenAIServer(responder=natural_student(empty_every=4)) as server:
        result = run(
            tmp_path / "r",
            {**params, "max_repairs": 1},
            roles={"student": [f"openai:m@{server.base_url}"]},
        )
    metrics = result.metrics["metrics"]
    base = metrics["baseline"]
    failed = len([p for p in of_kind(events_of(result.run_dir), "decision.failed")])
    assert failed == base["answer_failures"] == 8 == metrics["answer_failures"]  # q0, q4, ... q28
    assert (base["n_graded"], base["n_answers"]) == (23, 31)
    assert base["accuracy"] == 100.0
    assert base["accuracy_all"] == pytest.approx(100 * 23 / 31)
    report = "\n".join(ClassroomScenario.report(metrics))
    assert (
        "no persona: 100.0% of 23 graded, 31 asked (0 unreadable, 0 ambiguous); 74.2% of all "
        "31 asked, the 8 failed counted wrong" in report
    )


@pytest.mark.parametrize(
    "reply",
    [
        "Reflection: too easy.\nRevised Response: Um... Final Answer: 3",
        "**Reflection:** too easy.\n**Revised Response:** Um... Final Answer: 3",
        "**Reflection**: too easy.\n**Revised Response**\nUm... Final Answer: 3",
        "**Reflection** too easy. **Revised Response** Um... Final Answer: 3",
        "### Reflection\ntoo easy.\n### Revised Response\nUm... Final Answer: 3",
    ],
)
def test_self_refinement_headings_without_a_colon_are_accepted(reply: str) -> None:
    assert parse_refinement(reply) == {
        "reflection": "too easy.",
        "revised_response": "Um... Final Answer: 3",
        "labelled": True,
    }


def test_revised_response_inside_a_sentence_is_not_a_label() -> None:
    reply = "Reflection: my revised response will be better. Final Answer: 3"
    parsed = parse_refinement(reply)
    assert parsed["labelled"] is False and parsed["revised_response"] == reply


def test_a_real_model_does_not_judge_itself_unless_named(tmp_path: Path, monkeypatch) -> None:
    """The judge is a must-name role: a real --model alone cannot start the run."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    params = {"n_questions": 2, "repetitions": 1, "strategies": "zero-shot", "races": "none"}
    params["orders"] = "before"
    with FakeOpenAIServer(responder=natural_student()) as server:
        model = f"openai:m@{server.base_url}"
        with pytest.raises(RunError, match="--role judge=MODEL"):
            run(tmp_path / "a", params, model=model)
        assert server.request_count == 0 and not (tmp_path / "a" / "events.sqlite").exists()
        result = run(tmp_path / "b", params, model=model, roles={"judge": ["scripted"]})
        assert (
            main(
                [
                    "run",
                    "classroom",
                    "--model",
                    model,
                    "--out",
                    str(tmp_path / "c"),
                    "--n-questions",
                    "1",
                    "--strategies",
                    "none",
                    "--races",
                    "none",
                ]
            )
            != 0
        )
    calls = of_kind(events_of(result.run_dir), "llm.call")
    assert {c["backend"]["backend"] for c in calls if c["role"] == "judge"} == {"scripted"}
    assert {c["backend"]["backend"] for c in calls if c["role"] == "student"} == {"openai"}
    assert result.metrics["metrics"]["judge_model"] == "scripted"


def test_the_judge_validation_sample_is_stratified_as_appendix_b() -> None:
    from personasim.scenarios.classroom.validation import validation_sample

    pairs = pd.DataFrame(
        {"race": ["none"] * 40 + ["AA"] * 20 + ["HS"] * 20, "judge_score": [1, 2, 3, 2] * 20}
    ).assign(pair=lambda f: range(len(f)))
    sample = validation_sample(pairs, seed=3)
    assert len(sample) == 60 and sample["pair"].is_unique
    counts = sample.groupby("setting")["race"].agg(lambda r: sorted(set(r)))
    assert counts["level only"] == ["none"] and set(counts["level and race"]) <= {"AA", "HS"}
    assert (sample["setting"].value_counts() == 30).all()
    assert sample.equals(validation_sample(pairs, seed=3))  # reproducible from its seed
    with pytest.raises(ValueError, match="'level and race' setting; the run has 5"):
        validation_sample(pairs.iloc[:45])


# --- Tables 1 and 2 in the paper's wide shape; Figure 3 across models ---------------------------


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_wide_tables_from_a_run_match_the_long_tables(tmp_path: Path) -> None:
    params = {"n_questions": 4, "repetitions": 2, "strategies": "none,zero-shot,two-stage"}
    result = run(tmp_path / "r", {**params, "races": "none,AA", "orders": "before,after"})
    reports = result.run_dir / "reports"
    table1 = pd.read_csv(reports / "table1_wide.csv")
    table2 = pd.read_csv(reports / "table2_wide.csv")
    long1 = pd.read_csv(reports / "table1_level.csv").query("order == 'before'")
    assert len(table1) == 1 and len(table2) == 1  # one model; the main order only
    row, zero = table1.iloc[0], long1.query("strategy == 'zero-shot'").iloc[0]
    # every cell with its n: the graded answers (and the asked ones where some were left out)
    graded = f"of {zero['no_persona_graded']} graded"
    assert row["No Persona"] == f"{zero['no_persona']:.1f}% {graded}"
    assert row["0-shot low"] == (
        f"{zero['acc_low']:.1f}% ({zero['acc_low_change']:+.1f}) of {zero['n_low']} graded"
    )
    assert row["0-shot DoC"] == f"{zero['doc']:.2f}, n={zero['n_judged']} judged"
    assert table1["1-shot low"].isna().all()  # not run: empty, never 0
    assert "Two-stage low" not in table1.columns and table2["race"].tolist() == ["AA"]
    two = (
        pd.read_csv(reports / "table2_race.csv")
        .query("order == 'before' and strategy == 'two-stage'")
        .iloc[0]
    )
    assert table2.iloc[0]["Two-stage high"] == (
        f"{two['acc_high']:.1f}% ({two['acc_high_change']:+.1f}) of {two['n_high']} graded"
    )
    assert (reports / "table2_wide.md").read_text().count("(") >= 4


def test_a_wide_cell_says_when_answers_were_left_out_of_its_denominator() -> None:
    """11.1% of 9 graded when 12 were asked: the cell says both (issue 36)."""
    from personasim.scenarios.classroom.tables import wide_table

    row = {"model": "m", "strategy": "zero-shot", "race": "none", "order": "before",
           "no_persona": 75.0, "no_persona_graded": 12, "no_persona_asked": 12,
           "acc_low": 100 / 9, "acc_low_change": -63.9, "n_low": 9, "n_asked_low": 12,
           "acc_high": None, "acc_high_change": None, "n_high": 0, "n_asked_high": 12,
           "acc_high_undefined": "no graded answers", "doc": None, "n_judged": 0}  # fmt: skip
    (table,) = wide_table([row], "none")
    assert table["No Persona"] == "75.0% of 12 graded"
    assert table["0-shot low"] == "11.1% (-63.9) of 9 graded, 12 asked"
    assert table["0-shot high"] == "undefined: no graded answers (n=0 graded, 12 asked)"
    assert table["0-shot DoC"] == "— (n=0 judged)"
    assert table["1-shot low"] is None  # not run


@pytest.mark.slow
def test_a_sweep_writes_tables_1_and_2_and_figure_3_across_models(tmp_path: Path) -> None:
    from personasim.simulation.runs.sweeps.sweep import run_sweep

    params = {"n_questions": 3, "repetitions": 2, "strategies": "none,zero-shot"}
    models = ["scripted", "scripted:drift=0.3"]
    sweep = run_sweep(
        "classroom",
        models,
        params={**params, "races": "none,AA,HS", "orders": "before,after"},
        out=tmp_path / "s",
        progress=False,
    )
    names = {p.name for p in sweep.reports}
    assert {"table1_wide.csv", "table2_wide.md", "figure3_race_effect_models.png"} <= names
    assert {"table3_wide.csv", "table5_wide.md"} <= names  # the paper's layout, from each log
    table3 = pd.read_csv(sweep.directory / "table3_wide.csv")
    table5 = pd.read_csv(sweep.directory / "table5_wide.csv")
    assert table3["model"].tolist() == table5["model"].tolist() == models
    for run_result, (_, row3), (_, row5) in zip(
        sweep.runs, table3.iterrows(), table5.iterrows(), strict=True
    ):
        metrics = run_result.metrics["metrics"]
        cell = next(
            c for c in metrics["cells"] if (c["strategy"], c["race"], c["order"]) == (
                "zero-shot", "none", "before")
        )  # fmt: skip
        assert row3["0-shot n"] == cell["behaviours"]["n_comments"]
        order = next(o for o in metrics["order_effect"] if o["race"] == "AA")
        assert row5["AA n"] == f"{order['n_low']} / {order['n_high']} / {order['n_judged']}"
    table1 = pd.read_csv(sweep.directory / "table1_wide.csv")
    table2 = pd.read_csv(sweep.directory / "table2_wide.csv")
    assert table1["model"].tolist() == models
    assert table2[["race", "model"]].values.tolist() == [
        [r, m] for r in ("AA", "HS") for m in models
    ]
    for run_result, model in zip(sweep.runs, models, strict=True):
        effect = {(e["race"], e["level"]): e for e in run_result.metrics["metrics"]["race_effect"]}
        rows = [r for r in sweep.rows if r["model"] == model and r["strategy"] == "zero-shot"]
        for r in (r for r in rows if r["race"] != "none" and r["order"] == "before"):
            assert r["race_effect_low"] == effect[(r["race"], "low")]["change"]
            assert r["race_effect_high_sd"] == effect[(r["race"], "high")]["sd"]


def test_figure_3_across_models_draws_no_bar_for_an_undefined_change() -> None:
    from personasim.scenarios.classroom.tables import race_effect_models_figure

    def row(model: str, race: str, low: float | None, high: float | None) -> dict[str, Any]:
        return {
            "model": model,
            "strategy": "zero-shot",
            "race": race,
            "order": "before",
            "race_effect_low": low,
            "race_effect_low_sd": None,
            "race_effect_high": high,
            "race_effect_high_sd": 1.0,
        }

    rows = [row("a", "AA", -10.0, 2.0), row("a", "HS", None, 1.0), row("b", "AA", None, None)]
    figure = race_effect_models_figure(rows)
    first, second = figure.axes[:2]
    heights = sorted(p.get_height() for p in first.patches)
    assert heights == [-10.0, 1.0, 2.0]  # the undefined low HS bar is absent, not 0
    assert not second.patches
    assert sum(t.get_text().startswith("undefined") for t in second.texts) == 2
