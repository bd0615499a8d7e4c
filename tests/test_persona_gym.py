"""The persona-gym scenario (seed 002) on the scripted backend: parsing, ensembles, the Appendix F
bootstrap, environment-selection validation, both pipelines, bounded retries, real data, and
evaluators reached as separate models."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import DATA
from fake_openai import FakeOpenAIServer
from scipy.stats import kendalltau, spearmanr
from structured_runs import (
    assert_formats_sent,
    assert_same_as_text,
    reasks_by_task,
    run_in_every_format,
)

from personasim.agents import DecisionParseError
from personasim.analysis import Undefined
from personasim.analysis.agreement import bootstrap_correlation
from personasim.environments.persona_gym.place import (
    TASKS,
    PersonaGym,
    load_benchmark,
    shipped_file,
)
from personasim.scenarios.persona_gym.answers import (
    Evaluation,
    PersonaAnswer,
    QuestionSet,
    ScoreExamples,
    SettingSelection,
    parse_score,
    read_score,
)
from personasim.scenarios.persona_gym.metrics import (
    _score_table,
    ensemble_scores,
    evaluator_agreement,
    human_alignment,
    is_refusal,
    task_scores,
)
from personasim.simulation import (
    EventLog,
    InvalidActionError,
    LLMClient,
    RunError,
    RunResult,
    ScenarioError,
    ScriptedBackend,
    Simulation,
    SQLiteEventStore,
    events_frame,
    run_scenario,
)
from personasim.simulation.cli.main import main
from personasim.simulation.llm import scripted

SMALL = {"n_personas": 2, "n_environments": 2, "questions_per_task": 3}


def run(out: Path, params: dict[str, Any], **kwargs: Any) -> RunResult:
    return run_scenario("persona-gym", params, out=out, progress=False, **kwargs)


def events(result: RunResult, *kinds: str) -> list[Any]:
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        return list(store.read(list(kinds) or None))


def decisions(result: RunResult, task: str, kind: str = "decision.made") -> list[dict[str, Any]]:
    return [e.payload for e in events(result, kind) if e.payload["task"] == task]


@pytest.fixture(scope="module")
def dynamic(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    return run(tmp_path_factory.mktemp("gym") / "run", SMALL, use_cache=False)


# --- score parsing and aggregation ------------------------------------------------------------


def test_parse_score_reads_one_final_score() -> None:
    """One final score, or the same one twice, or a corrected one; two different scores
    without a correction marker are ambiguous (re-asked with the reason), not the last one."""
    assert parse_score("Good.\nTherefore, the final score is 4") == {
        "score": 4,
        "justification": "Good.",
    }
    with pytest.raises(DecisionParseError, match=r"different answers \(2, 5\)"):
        parse_score("final score is 2... Therefore, the final score is **5**.")
    assert parse_score("The final score is 2. Wait, Therefore, the final score is 5")["score"] == 5
    assert parse_score("The final score is 4. Therefore, the final score is 4.")["score"] == 4
    assert parse_score("Fine.\n**Therefore, the final score is 3**")["score"] == 3
    assert parse_score("Fine. Therefore, the final score is \\boxed{2}.")["score"] == 2
    for bad in ("Score: 4", "Therefore, the final score is 6", "the final score is 3.5"):
        with pytest.raises(DecisionParseError):
            parse_score(bad)


def test_ensemble_excludes_failed_evaluations() -> None:
    nan = float("nan")
    scores = pd.DataFrame(
        [
            ("p1", "Expected Action", 1, "e1", 4.0),
            ("p1", "Expected Action", 1, "e2", 2.0),
            ("p1", "Expected Action", 2, "e1", 5.0),
            ("p1", "Expected Action", 2, "e2", nan),  # a parse failure: left out, not a 0
            ("p1", "Expected Action", 3, "e1", nan),
            ("p1", "Expected Action", 3, "e2", nan),  # no valid score: the question drops out
            ("p1", "Toxicity Control", 1, "e1", 3.0),
            ("p1", "Toxicity Control", 1, "e2", 4.0),
        ],
        columns=["persona", "task", "question", "evaluator", "score"],
    )
    questions = ensemble_scores(scores)
    assert questions["score"].tolist() == [3.0, 5.0, 3.5]
    assert questions["n_scores"].tolist() == [2, 1, 2]
    result = task_scores(questions, ["Expected Action", "Toxicity Control"])
    assert result == {"Expected Action": 4.0, "Toxicity Control": 3.5, "PersonaScore": 3.75}
    missing = task_scores(questions, ["Expected Action", "Linguistic Habits"])
    assert missing["Linguistic Habits"] == Undefined("no scored questions")
    assert missing["PersonaScore"] == Undefined("no scored questions in Linguistic Habits")


def test_refusal_pattern() -> None:
    nurse = "A 40-year-old nurse in Leeds"
    assert is_refusal("As an AI language model, I cannot have a favourite dish.", nurse)
    assert is_refusal("I'm an AI assistant, so I don't have personal experiences.", nurse)
    assert not is_refusal("As a nurse, I would check the patient first.", nurse)


# --- Appendix F: bootstrap with Fisher's z ----------------------------------------------------


@pytest.mark.parametrize("method,statistic", [("spearman", spearmanr), ("kendall", kendalltau)])
def test_bootstrap_interval_matches_a_direct_computation(method: str, statistic: Any) -> None:
    rng = np.random.default_rng(7)
    model = rng.integers(1, 6, 30).astype(float)
    human = np.clip(model + rng.integers(-2, 3, 30), 1, 5)
    result = bootstrap_correlation(model, human, method, n_resamples=2000, seed=11)
    rows = np.random.default_rng(11).integers(0, 30, size=(2000, 30))
    direct = np.array([statistic(model[r], human[r]).statistic for r in rows])
    z = np.arctanh(np.clip(direct[~np.isnan(direct)], -1 + 1e-12, 1 - 1e-12))
    low, high = np.tanh(np.percentile(z, [2.5, 97.5]))
    assert result.r == pytest.approx(statistic(model, human).statistic)
    assert (result.low, result.high) == (pytest.approx(low), pytest.approx(high))
    assert result.significant == (low > 0 or high < 0)
    assert result.n == 30


@pytest.mark.parametrize(
    ("x", "y", "reason"),
    [
        ([], [], "fewer than 2 pairs"),
        ([3.0], [2.0], "fewer than 2 pairs"),
        ([3.0, 3.0, 3.0], [1.0, 2.0, 4.0], "x: constant input"),
        ([1.0, 2.0, 4.0], [5.0, 5.0, 5.0], "y: constant input"),
    ],
)
def test_bootstrap_correlation_undefined(x: list, y: list, reason: str) -> None:
    for method in ("spearman", "kendall", "pearson"):
        result = bootstrap_correlation(x, y, method, n_resamples=50)
        assert result.r == Undefined(reason) and result.low == Undefined(reason)
        assert result.significant == Undefined(reason)
        record = result.record()
        assert record["r"] is None and record["r_undefined"] == reason
        assert record["significant"] is None and record["significant_undefined"] == reason


def test_bootstrap_correlation_with_two_pairs_has_r_but_no_interval() -> None:
    result = bootstrap_correlation([1.0, 2.0], [3.0, 1.0], "spearman", n_resamples=50)
    assert result.r == pytest.approx(-1.0)
    assert result.low == result.high == Undefined("fewer than 3 pairs")


def test_bootstrap_correlation_with_no_usable_resample() -> None:
    """One resample that repeats a single pair has no correlation: no interval, not (0, 0)."""
    seed = next(
        s
        for s in range(1000)
        if len(set(np.random.default_rng(s).integers(0, 3, size=(1, 3))[0])) == 1
    )
    result = bootstrap_correlation([1, 2, 3], [1, 3, 2], n_resamples=1, seed=seed)
    assert result.r == pytest.approx(spearmanr([1, 2, 3], [1, 3, 2]).statistic)
    assert result.low == Undefined("every resample constant") and result.resamples == 0


def test_evaluator_agreement_edge_cases() -> None:
    rows = [
        ("p1", "T", 1, "e1", 4.0),
        ("p1", "T", 1, "e2", 4.0),
        ("p1", "T", 1, "e3", 2.0),
        ("p1", "T", 2, "e1", 3.0),
        ("p1", "T", 2, "e2", 3.0),
        ("p1", "T", 2, "e3", 2.0),
        ("p1", "T", 3, "e1", float("nan")),
        ("p1", "T", 3, "e2", 5.0),
        ("p1", "T", 3, "e3", float("nan")),
    ]
    scores = pd.DataFrame(rows, columns=["persona", "task", "question", "evaluator", "score"])
    by_pair = {r["evaluators"]: r for r in evaluator_agreement(scores)}
    first = by_pair["e1 vs e2"]  # questions 1 and 2: identical scores, r = 1
    assert first["n"] == 2 and first["spearman"] == pytest.approx(1.0)
    assert first["exact_agreement"] == 1.0 and first["mean_abs_diff"] == 0.0
    constant = by_pair["e1 vs e3"]  # e3 gives 2 to both
    assert constant["spearman"] is None and constant["spearman_undefined"] == "y: constant input"
    assert constant["pearson_undefined"] == "y: constant input"
    assert constant["mean_abs_diff"] == pytest.approx(1.5)
    disjoint = pd.DataFrame(
        [
            ("p1", "T", 3, "e1", float("nan")),
            ("p1", "T", 3, "e2", 5.0),
            ("p1", "T", 4, "e1", 4.0),
            ("p1", "T", 4, "e2", float("nan")),
        ],
        columns=scores.columns,
    )
    assert evaluator_agreement(disjoint) == [
        {
            "evaluators": "e1 vs e2",
            "n": 0,
            "spearman": None,
            "spearman_undefined": "fewer than 2 pairs",
            "pearson": None,
            "pearson_undefined": "fewer than 2 pairs",
            "mean_abs_diff": None,
            "mean_abs_diff_undefined": "no question scored by both",
            "exact_agreement": None,
            "exact_agreement_undefined": "no question scored by both",
        }
    ]


def test_human_alignment_pairs_personas_and_tasks() -> None:
    tasks = ["Expected Action"]
    rng = np.random.default_rng(3)
    model_scores = {f"p{i}": {"Expected Action": float(s)} for i, s in enumerate(rng.random(12))}
    for scores in model_scores.values():
        scores["PersonaScore"] = scores["Expected Action"]
    human = [(p, "Expected Action", s["Expected Action"] + 0.1) for p, s in model_scores.items()]
    rows = human_alignment(model_scores, human, tasks, n_resamples=500)
    assert {(r["task"], r["method"]) for r in rows} == {
        ("Expected Action", "spearman"),
        ("Expected Action", "kendall"),
        ("PersonaScore", "spearman"),
        ("PersonaScore", "kendall"),
    }
    assert all(r["r"] == pytest.approx(1.0) and r["n"] == 12 for r in rows)


# --- the environment ---------------------------------------------------------------------------


def test_selection_must_name_settings_of_the_pool(tmp_path: Path) -> None:
    with SQLiteEventStore(tmp_path / "e.sqlite") as store:
        sim = Simulation(seed=0, llm=LLMClient(ScriptedBackend()), log=EventLog(store))
        gym = PersonaGym(sim, ["Wedding", "Hiking Trail", "Classroom"], TASKS)
        assert gym.check_selection(["hiking  trail", "WEDDING"], 2) == ("Hiking Trail", "Wedding")
        for names, count in (
            (["Wedding", "Moon Base"], 2),
            (["Wedding", "wedding"], 2),
            (["Wedding"], 2),
            ([], None),
            (["Wedding", "Moon Base"], None),
        ):
            with pytest.raises(InvalidActionError):
                gym.check_selection(names, count)
        assert gym.check_selection(["classroom"], None) == ("Classroom",)  # the model's choice


def test_the_model_chooses_how_many_settings_by_default(tmp_path: Path) -> None:
    """§3.2: without --n-environments the selector is asked for the relevant settings, as many
    as it judges; the scripted rule takes those sharing a keyword stem (one to five)."""
    result = run(
        tmp_path / "run", {"n_personas": 6, "questions_per_task": 1, "tasks": "Expected Action"}
    )
    prompts = [
        e.payload["messages"][0]["content"]
        for e in events(result, "llm.call")
        if e.payload["task"] == "persona_gym.select"
    ]
    assert prompts and all("Select as many different environments" in p for p in prompts)
    counts = [len(e.payload["settings"]) for e in events(result, "gym.placed")]
    assert len(counts) == 6 and all(1 <= c <= 5 for c in counts) and len(set(counts)) > 1


@pytest.fixture
def replace_rule() -> Iterator[Callable[[str, scripted.ScriptedBehaviour], None]]:
    """Put a rule in place of a task's registered one, for one test."""

    def replace(task: str, rule: scripted.ScriptedBehaviour) -> None:
        scripted.RULES.unregister(task)
        scripted.scripted_behaviour(task)(rule)

    with scripted.RULES.scoped():
        yield replace


def test_off_pool_selection_is_reasked_then_a_failure(tmp_path: Path, replace_rule) -> None:
    replace_rule(
        "persona_gym.select",
        lambda request, rng: json.dumps({"settings": ["Moon Base Alpha", "Wedding Reception"]}),
    )
    result = run(tmp_path / "run", {**SMALL, "max_repairs": 1})
    reasks = decisions(result, "persona_gym.select", "decision.reask")
    failed = decisions(result, "persona_gym.select", "decision.failed")
    assert len(reasks) == 2 and all("Moon Base Alpha" in r["error"] for r in reasks)
    assert len(failed) == 2 and all(f["attempts"] == 2 for f in failed)
    assert not events(result, "gym.placed", "gym.questions")
    metrics = result.metrics["metrics"]
    assert metrics["failures"]["select"] == 2 and metrics["scores"]["PersonaScore"] is None
    assert metrics["scores"]["PersonaScore_undefined"].startswith("no scored questions in")


def test_question_count_is_retried_within_the_bound(tmp_path: Path, replace_rule) -> None:
    def one_short(request: Any, rng: Any) -> str:
        settings = request.hints["settings"]
        items = [{"setting": settings[0], "question": f"Q{i}?"} for i in range(2)]
        return json.dumps({"questions": items})

    replace_rule("persona_gym.questions", one_short)
    result = run(tmp_path / "run", {**SMALL, "tasks": "Expected Action,Toxicity Control"})
    failed = decisions(result, "persona_gym.questions", "decision.failed")
    assert len(failed) == 4  # 2 personas x 2 tasks
    assert all(f["attempts"] == 3 and "exactly 3 questions" in f["error"] for f in failed)
    assert len(decisions(result, "persona_gym.questions", "decision.reask")) == 8
    assert result.metrics["metrics"]["failures"]["generate"] == 4
    assert not decisions(result, "persona_gym.answer")


# --- dynamic and static runs -------------------------------------------------------------------


def test_dynamic_run_writes_scores_and_tables(dynamic: RunResult) -> None:
    metrics = dynamic.metrics["metrics"]
    reports = dynamic.run_dir / "reports"
    table = pd.read_csv(reports / "table2_persona_score.csv")
    columns = ["model", "n", *TASKS, "PersonaScore", "refusal_rate", "refusal_rate_undefined"]
    assert list(table.columns) == [
        *columns,
        "refusals",
        "judged",
        "answers",
        "not_judged",
        "small_group",
    ]
    assert table.loc[0, "n"] == metrics["n_scored_questions"]
    assert table.loc[0, "answers"] == metrics["refusals"]["n_answers"]
    # no refusal judge bound: the answers the grammar leaves are not judged, so no rate
    assert table.loc[0, "not_judged"] == metrics["refusals"]["not_judged"] > 0
    assert table.loc[0, "PersonaScore"] == pytest.approx(metrics["scores"]["PersonaScore"])
    # 2 personas × 3 questions: 6 per task in all, but 3 per task for one persona (< 5)
    assert metrics["n_scored_by_task"] == dict.fromkeys(TASKS, 6) and not metrics["small_tasks"]
    assert not table.loc[0, "small_group"]
    assert metrics["refusals"]["rate"] is None and pd.isna(table.loc[0, "refusal_rate"])
    assert "not judged" in metrics["refusals"]["rate_undefined"]
    markdown = (reports / "table2_persona_score.md").read_text()  # the reason, with its n
    answers = metrics["refusals"]["n_answers"]
    assert f"| undefined: {metrics['refusals']['rate_undefined']} (n={answers} answers) |" in (
        markdown
    )
    assert all(p["small_tasks"] == sorted(TASKS) for p in metrics["personas"].values())
    persona_table = (reports / "persona_scores.md").read_text()
    assert "†" in persona_table and "n < 5" in persona_table
    assert (reports / "evaluator_agreement.csv").exists()
    assert metrics["n_questions"] == 2 * 5 * 3
    assert 1 <= metrics["scores"]["PersonaScore"] <= 5
    assert set(metrics["by_evaluator"]) == {"evaluator-1", "evaluator-2"}


def test_every_scene_is_a_complete_trajectory(dynamic: RunResult) -> None:
    placed = {e.agent_id: e.payload["settings"] for e in events(dynamic, "gym.placed")}
    assert len(placed) == 2 and all(len(s) == 2 for s in placed.values())
    for posed in events(dynamic, "gym.questions"):
        assert len(posed.payload["questions"]) == 3
        assert all(q["setting"] in placed[posed.agent_id] for q in posed.payload["questions"])
    steps: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    scopes: dict[tuple[Any, ...], set[str]] = defaultdict(set)
    for event in events(dynamic, "decision.made"):
        p = event.payload
        if "question" in p:
            key = (p["persona"], p["gym_task"], p["question"])
            steps[key].append(p.get("evaluator", p["task"]))
            scopes[key].add(event.scope)
    assert len(steps) == 30
    for key, order in steps.items():
        assert order == ["persona_gym.answer", "persona_gym.examples", "evaluator-1", "evaluator-2"]
        assert len(scopes[key]) == 1  # one committed unit per scene


def test_scores_match_an_independent_computation(dynamic: RunResult) -> None:
    per_question: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for p in decisions(dynamic, "persona_gym.evaluate"):
        per_question[(p["gym_task"], p["persona"], p["question"])].append(p["value"]["score"])
    metrics = dynamic.metrics["metrics"]
    task_means = []
    for task in TASKS:
        means = [np.mean(v) for k, v in per_question.items() if k[0] == task]
        assert metrics["scores"][task] == pytest.approx(np.mean(means), abs=1e-6)
        task_means.append(np.mean(means))
    assert metrics["scores"]["PersonaScore"] == pytest.approx(np.mean(task_means), abs=1e-6)


def test_static_run_poses_the_file_questions(tmp_path: Path) -> None:
    result = run(tmp_path / "run", {"pipeline": "static", "questions_per_task": 1})
    shipped = load_benchmark(shipped_file("persona_gym_benchmark.jsonl"), TASKS)
    posed = events(result, "gym.questions")
    assert len(posed) == 2 * 5
    for event in posed:
        entry = shipped[int(event.agent_id[1:]) - 1]
        task = event.payload["task"]
        assert [q["text"] for q in event.payload["questions"]] == [entry.questions[task][0]]
        assert event.payload["source"] == "benchmark"
    assert not events(result, "gym.placed")
    assert result.metrics["metrics"]["pipeline"] == "static"
    assert (result.run_dir / "reports" / "table2_persona_score.md").exists()


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_real_static_benchmark_for_two_personas(tmp_path: Path) -> None:
    path = DATA / "personagym" / "benchmark_questions.jsonl"
    result = run(tmp_path / "run", {"question_file": str(path), "n_personas": 2})
    metrics = result.metrics["metrics"]
    assert metrics["n_questions"] == 2 * 5 * 10  # "Toxicity" in the file is Toxicity Control
    assert metrics["scores"]["Toxicity Control"] is not None


def test_metrics_check_reproduces(dynamic: RunResult) -> None:
    assert main(["metrics", str(dynamic.run_dir), "--check"]) == 0


# --- evaluators ---------------------------------------------------------------------------------


def test_evaluators_are_separate_models_and_failures_are_excluded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with (
        FakeOpenAIServer(responder=lambda body: "Fine.\nTherefore, the final score is 4") as e1,
        FakeOpenAIServer(responder=lambda body: "I would rather not say.") as e2,
    ):
        params = {**SMALL, "tasks": "Expected Action", "max_repairs": 1}
        evaluators = [f"openai:e1@{e1.base_url}", f"openai:e2@{e2.base_url}"]
        result = run(tmp_path / "run", params, roles={"evaluator": evaluators})
    calls = [e.payload for e in events(result, "llm.call")]
    assert {c["role"] for c in calls if c["task"] == "persona_gym.evaluate"} == {"evaluator"}
    assert result.manifest["roles"]["evaluator"] == evaluators
    assert result.manifest["roles"]["persona"] == ["scripted"]
    assert e1.request_count == 6 and {r["model"] for r in e1.requests} == {"e1"}
    assert e2.request_count == 12 and {r["model"] for r in e2.requests} == {"e2"}
    assert all(r["temperature"] == 0.0 for r in e1.requests)
    metrics = result.metrics["metrics"]
    assert metrics["failures"]["evaluate"] == 6  # every e2 score, left out and counted
    assert metrics["scores"]["Expected Action"] == 4.0  # e1 alone, not pulled down by e2
    assert metrics["by_evaluator"]["evaluator-2"]["Expected Action"] is None
    reason = metrics["by_evaluator"]["evaluator-2"]["Expected Action_undefined"]
    assert reason == "no scored questions"


def test_an_evaluator_may_not_be_the_evaluated_model(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    judge = "openai:judge@http://127.0.0.1:9/v1"
    clash = "may not be played by openai:judge@.*which plays 'persona'"
    with pytest.raises(RunError, match=clash):
        roles = {"evaluator": [judge, "scripted"], "examples": ["scripted"]}
        run(tmp_path / "run", SMALL, model=judge, roles=roles)
    assert not (tmp_path / "run").exists()


def test_a_real_model_without_evaluators_refuses_to_start(tmp_path: Path, capsys) -> None:
    """No silent scripted evaluators: a real --model needs --role evaluator=..."""
    out = tmp_path / "run"
    model = "openai:persona@http://127.0.0.1:9/v1"
    code = main(["run", "persona-gym", "--model", model, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "role 'evaluator'" in err and "--role evaluator=MODEL1,MODEL2" in err
    assert not out.exists()


def test_a_real_model_does_not_write_its_own_score_examples(tmp_path: Path, capsys) -> None:
    """The example writer is a role a real --model fills only when named with --role."""
    out = tmp_path / "run"
    model = "openai:persona@http://127.0.0.1:9/v1"
    evaluators = "evaluator=openai:a@http://127.0.0.1:9/v1,openai:b@http://127.0.0.1:9/v1"
    code = main(["run", "persona-gym", "--model", model, "--role", evaluators, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "role 'examples'" in err and "--role examples=MODEL" in err
    assert not out.exists()


def test_the_example_writer_plays_its_role(tmp_path: Path, monkeypatch) -> None:
    """Named with --role, the example writer's requests go to its model and no other."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    examples = json.dumps({f"score_{i}": f"An answer worth {i}." for i in range(1, 6)})
    with FakeOpenAIServer(responder=lambda body: examples) as writer:
        params = {**SMALL, "tasks": "Expected Action", "examples_temperature": 0.0}
        spec = f"openai:writer@{writer.base_url}"
        result = run(tmp_path / "run", params, roles={"examples": [spec]})
    assert result.manifest["roles"]["examples"] == [spec]
    assert result.manifest["roles"]["persona"] == ["scripted"]
    made = decisions(result, "persona_gym.examples")
    assert writer.request_count == len(made) == 6  # 2 personas x 3 questions
    assert all(r["temperature"] == 0.0 and "top_p" not in r for r in writer.requests)


@pytest.mark.parametrize(
    "evaluators,message",
    [
        (["scripted"], "takes 2 or more models, got 1"),
        (["openai:a", "openai:a"], "may appear once"),
        (["gpt-4", "scripted"], "unknown model"),
    ],
)
def test_invalid_evaluator_roles(tmp_path: Path, evaluators: list[str], message: str) -> None:
    with pytest.raises(RunError, match=message):
        run(tmp_path / "run", SMALL, roles={"evaluator": evaluators})


@pytest.mark.parametrize(
    "params,message",
    [
        ({"pipeline": "static", "persona_file": "x.json"}, "static pipeline"),
        ({"tasks": "Expected Action,Humour"}, "tasks must be"),
        ({"environments": "authors", "environments_file": "e.txt"}, "not both"),
        ({"environments": "authors", "pipeline": "static"}, "no settings pool"),
        ({"environments": "paper"}, "shipped"),
    ],
)
def test_invalid_parameters(params: dict[str, Any], message: str) -> None:
    from personasim.scenarios.persona_gym.scenario import PersonaGymScenario

    with pytest.raises(ScenarioError, match=message):
        PersonaGymScenario.parse_params(params)


# --- bad input files ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flag,name,content,where",
    [
        ("--question-file", "q.jsonl", '{"persona": "A", "questions": {}}\n', "q.jsonl:1:"),
        ("--question-file", "q.jsonl", "\n{broken\n", "q.jsonl:2: not JSON"),
        ("--persona-file", "p.json", '[\n "A teacher",\n ""\n]\n', "p.json:3:"),
        ("--persona-file", "p.jsonl", '"A teacher"\n"A teacher"\n', "p.jsonl:2: the persona"),
        ("--environments-file", "e.txt", "Wedding\n\nwedding\n", "e.txt:3: 'wedding' repeats"),
        ("--human-scores", "h.csv", "persona,task,score\np001,Expected Action,9\n", "h.csv:2:"),
    ],
)
def test_bad_input_files_exit_2_naming_file_and_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    flag: str,
    name: str,
    content: str,
    where: str,
) -> None:
    path = tmp_path / name
    path.write_text(content)
    out = tmp_path / "run"
    code = main(["run", "persona-gym", flag, str(path), "--out", str(out), "--no-progress"])
    assert code == 2
    assert where in capsys.readouterr().err
    assert not out.exists()


def test_human_scores_file_gives_alignment(dynamic: RunResult, tmp_path: Path) -> None:
    personas = dynamic.metrics["metrics"]["personas"]
    rows = [(r["description"], t, r["scores"][t]) for r in personas.values() for t in TASKS]
    human = tmp_path / "human.csv"
    pd.DataFrame(rows, columns=["persona", "task", "score"]).to_csv(human, index=False)
    result = run(tmp_path / "run", {**SMALL, "human_scores": str(human)}, use_cache=False)
    rows = result.metrics["metrics"]["human_alignment"]
    assert {r["task"] for r in rows} == {*TASKS, "PersonaScore"}
    assert all(r["n"] == 2 for r in rows)
    assert (result.run_dir / "reports" / "human_alignment.csv").exists()


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_scripted_scores_follow_the_fidelity_knob(tmp_path: Path) -> None:
    low, high = (
        run(
            tmp_path / f"f{f}", {**SMALL, "scripted_fidelity": f}, roles={"refusal": ["scripted"]}
        ).metrics["metrics"]
        for f in (0.2, 0.9)
    )
    assert low["scores"]["PersonaScore"] < high["scores"]["PersonaScore"] - 1
    assert low["refusals"]["rate"] > high["refusals"]["rate"]


def test_human_alignment_skips_undefined_scores_of_a_metrics_file() -> None:
    """`personas[id].scores` from metrics.json: an undefined score is null with its reason."""
    gap = {"Expected Action": None, "Expected Action_undefined": "no scored questions"}
    model = {
        "p0": {**gap, "PersonaScore": None, "PersonaScore_undefined": "no scored questions in"},
        **{f"p{i}": {"Expected Action": float(i), "PersonaScore": float(i)} for i in (1, 2, 3)},
    }
    human = [(f"p{i}", "Expected Action", float(i)) for i in range(4)]
    rows = human_alignment(model, human, ["Expected Action"], n_resamples=50)
    assert all(r["n"] == 3 and r["r"] == pytest.approx(1.0) for r in rows)


# --- structured answers (--response-format) ----------------------------------------------------


def test_structured_evaluation_reads_like_the_text_score() -> None:
    text = parse_score("Fits the persona.\nTherefore, the final score is 4")
    assert read_score(Evaluation(justification=" Fits the persona. ", score=4)) == text
    with pytest.raises(DecisionParseError, match="from 1 to 5, got 6"):  # re-checked
        read_score(Evaluation.model_construct(justification="x", score=6))


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_structured_runs_measure_what_the_text_run_measures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = {"n_personas": 3, "n_environments": 2, "questions_per_task": 2}
    runs = run_in_every_format("persona-gym", params, tmp_path, monkeypatch, seed=5)
    assert_same_as_text(runs)
    schemas = {
        "persona_gym.select": SettingSelection,
        "persona_gym.questions": QuestionSet,
        "persona_gym.answer": PersonaAnswer,
        "persona_gym.examples": ScoreExamples,
        "persona_gym.evaluate": Evaluation,
    }
    assert_formats_sent(runs, schemas)
    # this seed re-asks an off-pool selection, a short question set and an evaluator's score
    # on the wrong scale (valid JSON, out of range), in every format alike
    for fmt in ("text", "json_object", "json_schema"):
        reasks = reasks_by_task(runs[fmt])
        assert all(reasks[f"persona_gym.{t}"] for t in ("select", "questions", "evaluate")), fmt


def test_the_shipped_authors_pack_runs(tmp_path: Path) -> None:
    """`--prompts scenarios/persona_gym/persona-gym-authors.yaml` runs without the authors'
    files at hand; the evaluators get their rubric, which asks for "Therefore, the final score is
    ..."."""
    package = Path(__file__).resolve().parents[1] / "scenarios" / "persona_gym"
    pack = package / "persona-gym-authors.yaml"
    out = tmp_path / "run"
    small = ["--n-personas", "1", "--n-environments", "1", "--questions-per-task", "1"]
    args = ["run", "persona-gym", *small, "--prompts", str(pack), "--out", str(out)]
    assert main([*args, "--no-progress"]) == 0
    sent = [
        e.payload["messages"][0]["content"]
        for e in events_of(out, "llm.call")
        if e.payload["task"] == "persona_gym.evaluate" and len(e.payload["messages"]) == 1
    ]  # a re-ask repeats the first message
    assert len(sent) == 2 * len(TASKS)
    assert all('"Therefore, the final score is ..."' in text for text in sent)
    assert json.loads((out / "metrics.json").read_text())["metrics"]["n_scored_questions"] == 5


def events_of(run_dir: Path, kind: str) -> list[Any]:
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return list(store.read([kind]))


def test_figures_3_to_5_are_drawn_from_the_metrics(dynamic: RunResult) -> None:
    """Figure 3 (selected settings, attribute words), 4 (refusals per model and task) and 5
    (PersonaScore by generator × evaluator), as PNG images."""
    from matplotlib.image import imread

    reports = dynamic.run_dir / "reports"
    for name in ("figure3_settings", "figure4_refusals", "figure5_generator_evaluator"):
        image = imread(reports / f"{name}.png")
        assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 400, name
        assert image[..., :3].std() > 0.05, f"{name} is blank"


def test_figure_inputs_are_counted_from_the_metrics(dynamic: RunResult) -> None:
    """Figure 3's counts are the placements of the log; Figure 5's n the scores per evaluator."""
    from personasim.scenarios.persona_gym.figures import attribute_words, selected_settings

    metrics = dynamic.metrics["metrics"]
    placed = [s for e in events(dynamic, "gym.placed") for s in e.payload["settings"]]
    assert selected_settings(metrics) == Counter(placed)
    words = attribute_words(metrics)
    assert words and not set(words) & {"a", "the", "from", "who"}
    with SQLiteEventStore(dynamic.run_dir / "events.sqlite") as store:
        table = _score_table(events_frame(store.read()))
    counted = table.dropna().groupby("evaluator").size().to_dict()
    assert metrics["n_scored_by_evaluator"] == counted
    assert metrics["generator"] == "scripted"


def test_the_word_cloud_keeps_multi_word_places_whole() -> None:
    """ "New York" and "New Zealand" are two places, not the word "new" twice: a run of
    capitalised words (with "de" or "of" between) is one unit, found in the data, not a list."""
    from personasim.scenarios.persona_gym.figures import attribute_words

    descriptions = [
        "A 30-year-old chef from New York who loves new recipes",
        "A retired pilot from New Zealand",
        "A New York-based dancer",
        "An 87-year-old World War II veteran from Rio de Janeiro",
        "A teacher from Paris",
    ]
    metrics = {"personas": {f"p{i}": {"description": d} for i, d in enumerate(descriptions)}}
    words = attribute_words(metrics)
    assert words["New York"] == 2 and words["New Zealand"] == 1
    assert words["World War II"] == 1 and words["Rio de Janeiro"] == 1
    assert words["new"] == 1  # only the lower-case "new recipes"
    assert words["york"] == 0 and words["zealand"] == 0 and words["paris"] == 1
    assert "A New" not in words and "An" not in words
    assert words["based"] == 1  # "New York-based": the place, then the word


def test_figures_leave_an_undefined_score_out(tmp_path: Path) -> None:
    """A task without scores is no bar (and labelled undefined), not a zero bar; an evaluator
    without scores is an empty cell."""
    from personasim.scenarios.persona_gym.figures import write_gym_figures

    metrics = {
        "tasks": ["Expected Action", "Toxicity Control"],
        "model": "m",
        "generator": "g",
        "personas": {
            "p001": {"description": "A 30-year-old teacher from Lima", "settings": ["Classroom"]},
            "p002": {"description": "A nurse", "settings": None},
        },
        "refusals": {
            "by_task": {"Expected Action": 0.1, "Toxicity Control": None},
            "rate": 0.1,
            "n": 1,
            "n_answers": 10,
        },
        "evaluators": {"evaluator-1": "a", "evaluator-2": "b"},
        "n_scored_by_evaluator": {"evaluator-1": 10},
        "by_evaluator": {
            "evaluator-1": {"Expected Action": 4.0, "PersonaScore": None},
            "evaluator-2": {"Expected Action": None, "PersonaScore": None},
        },
    }
    files = write_gym_figures(metrics, tmp_path)
    assert [f.name for f in files] == [
        "figure3_settings.png",
        "figure4_refusals.png",
        "figure5_generator_evaluator.png",
    ]
    assert all(f.stat().st_size > 1000 for f in files)


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_a_sweep_reports_refusals_and_table2_spread(tmp_path: Path) -> None:
    """combined.csv carries each run's refusal rate; table2_across_models adds the spread
    (max − min over the runs) per task, checked against the runs' own scores."""
    from personasim.simulation import run_sweep

    params = {**SMALL, "tasks": "Expected Action,Toxicity Control"}
    models = ["scripted", "scripted:drift=0.3"]
    result = run_sweep("persona-gym", models, {"scripted_fidelity": [0.3, 0.9]}, params,
                       out=tmp_path / "sweep", progress=False,
                       roles={"refusal": ["scripted"]})  # fmt: skip
    combined = pd.read_csv(tmp_path / "sweep" / "combined.csv")
    rates = [r.metrics["metrics"]["refusals"]["rate"] for r in result.runs]
    assert combined["refusal_rate"].tolist() == pytest.approx(rates, abs=1e-6)
    table = pd.read_csv(tmp_path / "sweep" / "table2_across_models.csv")
    spread = table.iloc[-1]
    assert spread["model"] == "spread (max - min)" and len(table) == len(result.runs) + 1
    for task in ("Expected Action", "Toxicity Control", "PersonaScore"):
        scores = [r.metrics["metrics"]["scores"][task] for r in result.runs]
        assert spread[task] == pytest.approx(max(scores) - min(scores), abs=1e-6)
        assert spread[task] > 0
    # Figure 4 per model: one bar per run, each labelled with k of n answers
    assert combined["answers"].tolist() == [
        r.metrics["metrics"]["refusals"]["n_answers"] for r in result.runs
    ]
    assert (tmp_path / "sweep" / "figure4_refusals_by_model.png").stat().st_size > 1000
