"""The career-chat scenario (seed 003) on the scripted backend: JSD, centroids, EMD, logprob
normalisation, ICC(3,k), the dialogue controller, full runs, real VSM items, the HTTP path."""

from __future__ import annotations

import csv
import itertools
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from conftest import DATA
from fake_openai import FakeOpenAIServer
from scipy.spatial.distance import jensenshannon
from scipy.stats import wasserstein_distance
from structured_runs import assert_formats_sent, assert_same_as_text, run_in_every_format

from personasim.analysis import Undefined
from personasim.analysis.agreement import icc3k, pearson
from personasim.analysis.divergences import emd_ordinal, js_centroid, jsd
from personasim.scenarios.career_chat.answers import (
    AssistantReply,
    FirstQuestion,
    FollowUp,
    OptionAnswer,
    Rating,
    Verdict,
)
from personasim.scenarios.career_chat.distances import group_distances, random_pairing_emd
from personasim.scenarios.career_chat.groupings import age_bin, country_group
from personasim.scenarios.career_chat.jobs import job_category, position_level
from personasim.scenarios.career_chat.metrics import DIMENSIONS
from personasim.scenarios.career_chat.options import option_distribution
from personasim.simulation import (
    RunResult,
    SQLiteEventStore,
    list_scenarios,
    response_format_for,
    run_scenario,
)
from personasim.simulation.cli.main import main
from personasim.simulation.runs.runner import RunSettings

VSM = DATA / "vsm2013"
SMALL = {"n_users": 8, "n_items": 3, "judge_samples": 1}
RESAMPLES = {"bootstrap": 50, "permutations": 50}
"""Enough resamples for every interval and p-value to be computed; the default 1,000 each
makes every run's metrics take seconds (tests of the statistics use their own counts)."""


def run(out: Path, params: dict[str, Any], **kwargs: Any) -> RunResult:
    params = {**RESAMPLES, **params}
    return run_scenario("career-chat", params, out=out, progress=False, **kwargs)


def payloads(result: RunResult, kind: str) -> list[dict[str, Any]]:
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        return [e.payload for e in store.read([kind])]


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    return run(tmp_path_factory.mktemp("cc") / "run", SMALL, use_cache=False)


# --- statistics ---------------------------------------------------------------------------------


def test_jsd_is_base_2_and_matches_scipy_squared() -> None:
    rng = np.random.default_rng(1)
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
        assert jsd(p, q) == pytest.approx(jensenshannon(p, q, base=2) ** 2, abs=1e-12)
    assert jsd([1, 0, 0, 0, 0], [0, 1, 0, 0, 0]) == pytest.approx(1.0)
    assert jsd([0.2] * 5, [0.2] * 5) == 0.0


@pytest.mark.slow  # a brute-force grid, among the fast tier's longest: CI runs it in the slow tier
def test_centroid_matches_brute_force_grid() -> None:
    cases = [[[1, 0, 0], [0, 1, 0]], [[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.3, 0.6, 0.1]]]
    grid = [
        (a, b, 1 - a - b)
        for a, b in itertools.product(np.linspace(0, 1, 201), repeat=2)
        if a + b <= 1 + 1e-12
    ]
    for points in cases:
        centroid = js_centroid(points)
        objective = sum(jsd(centroid.distribution, p) for p in points)
        best = min(grid, key=lambda c: sum(jsd(np.clip(c, 0, 1), p) for p in points))
        best_value = sum(jsd(np.clip(best, 0, 1), p) for p in points)
        assert centroid.converged
        assert objective <= best_value + 1e-9
        assert np.abs(centroid.distribution - np.clip(best, 0, 1)).max() < 0.01
    zero = js_centroid([[0.5, 0.5, 0], [0.2, 0.8, 0]]).distribution
    assert zero[2] == 0 and zero.sum() == pytest.approx(1)


def test_emd_matches_scipy_wasserstein_on_ordered_bins() -> None:
    rng = np.random.default_rng(2)
    for _ in range(20):
        a, b = rng.integers(1, 6, size=18), rng.integers(1, 6, size=18)
        assert emd_ordinal(a, b) == pytest.approx(wasserstein_distance(a, b))
    assert emd_ordinal([1, 1], [5, 5]) == pytest.approx(4.0)


def test_icc3k_and_pearson_against_hand_computed_values() -> None:
    # Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges; ICC(3,4) = 0.91 in their Table 4.
    ratings = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    # BMS = 11.24, EMS = 1.02 by hand: (11.2417 - 1.0194) / 11.2417
    assert icc3k(ratings) == pytest.approx((11.241667 - 1.019444) / 11.241667, abs=1e-5)
    assert round(icc3k(ratings), 2) == 0.91
    # r of (1,2,3,4) and (2,4,5,9): Sxy = 11, Sxx = 5, Syy = 26 by hand
    x, y = [1, 2, 3, 4], [2, 4, 5, 9]
    assert pearson(x, y) == pytest.approx(11 / math.sqrt(5 * 26), abs=1e-9)
    assert pearson([1, 2], [3, 4]) == Undefined("fewer than 3 pairs")
    assert icc3k([[1, 1], [1, 1]]) == Undefined("no variance between targets")


def test_undefined_statistics_of_the_career_chat() -> None:
    """Edge cases: empty or massless distributions and histograms are not distributions (a
    ValueError, not a distance of 0); correlations and ICC with too few or constant ratings,
    and a baseline with fewer than two users, are undefined with a reason."""
    for p, q in (([], []), ([0, 0, 0], [1, 0, 0]), ([1, 0], [1, 0, 0]), ([-0.5, 1.5], [1, 0])):
        with pytest.raises(ValueError):
            jsd(p, q)
    with pytest.raises(ValueError, match="no distributions"):
        js_centroid([])
    with pytest.raises(ValueError, match="at least one answer"):
        emd_ordinal([], [1, 2])
    assert emd_ordinal([3], [3]) == 0.0  # n = 1 per side is an ordinary distance
    assert pearson([1, 2, 3], [4, 4, 4]) == Undefined("y: constant input")
    assert pearson([2, 2, 2], [1, 2, 3]) == Undefined("x: constant input")
    assert pearson([], []) == Undefined("fewer than 3 pairs")
    assert icc3k([]) == Undefined("no values")
    assert icc3k([[1, 2]]) == Undefined("fewer than 2 targets")
    assert icc3k([[1], [2]]) == Undefined("fewer than 2 raters")
    # row means 2.0 and 2.0 although the raters disagree: BMS = 0
    assert icc3k([[1, 3], [3, 1]]) == Undefined("no variance between targets")
    rng = np.random.default_rng(0)
    assert random_pairing_emd([[1, 2]], [[2, 2]], rng) == Undefined("fewer than 2 users")


def test_group_distances_with_a_zero_or_missing_baseline() -> None:
    """Identical answers everywhere: every centroid equals the pooled one, the baseline is 0
    and each distance / baseline is undefined, not a division by zero."""
    same = [[0.5, 0.5, 0.0, 0.0, 0.0]]
    result = group_distances({"a": {"q1": same * 2}, "b": {"q1": same * 3}})
    assert result.baseline == 0.0 and result.pairs[("a", "b")] == 0.0
    assert result.ratio(("a", "b")) == Undefined("zero baseline")
    assert result.groups == {"a": 2, "b": 3}
    empty = group_distances({"a": {"q1": []}})
    assert empty.baseline == Undefined("no answers") and empty.pairs == {}


def test_groupings() -> None:
    assert [age_bin(a) for a in (29, 30, 45, 59, 60)] == ["<30", "30-40", "40-50", "50-60", ">60"]
    # the authors' table (constant.py), names resolved by pycountry as their code does
    assert country_group("India") == "Developing" and country_group("Atlantis") == "Unknown"
    assert country_group("United States") == "Developed" and country_group("DEU") == "Developed"
    assert country_group("Micronesia") == "Unknown"  # their lookup fails on the bare name
    assert job_category("Senior Software Engineer") == "Tech"
    assert job_category("Baker") == "Hospitality"  # a word of the food trade
    assert job_category("Fire eater") == "Unknown"  # no rule: no guess
    assert position_level("Senior Software Engineer") == "Professional"  # no rank named
    assert position_level("Chief Technology Officer") == "C-Suite"
    assert position_level("Restaurant manager") == "Management"
    assert position_level("Trainee solicitor") == "Entry Level"


# --- Appendix G: logprob normalisation ---------------------------------------------------------


def tokens(*pieces: str, at: int, top: dict[str, float]) -> list[dict[str, Any]]:
    return [
        {"token": p, "logprob": -0.1, "top": top if i == at else {}} for i, p in enumerate(pieces)
    ]


def test_option_distribution_edge_cases() -> None:
    lp = {"3": math.log(0.6), " 3": math.log(0.1), "2": math.log(0.2), '"': math.log(0.05)}
    lp["hello"] = math.log(0.05)
    d = option_distribution(tokens('{"option_id":', " ", "3", ', "reason": "x"}', at=2, top=lp))
    assert d == pytest.approx([0, 0.2 / 0.9, 0.7 / 0.9, 0, 0])  # missing options get 0
    quoted = tokens('{"option_id": ', '"4', '"}', at=1, top={'"4': -0.1, '"5': -2.0})
    assert np.argmax(option_distribution(quoted)) == 3
    no_digit = tokens('{"option_id": ', "x", "}", at=1, top={"x": -0.1, "y": -1.0})
    assert option_distribution(no_digit) is None
    assert option_distribution(None) is None and option_distribution([]) is None
    # the chosen token without its top alternatives is no distribution: one-hot fallback
    no_top = [{"token": '{"option_id":', "logprob": -0.01}, {"token": " 2,", "logprob": -0.1}]
    assert option_distribution(no_top) is None
    assert option_distribution(tokens('{"option_id": ', "2", "}", at=1, top={"2": 0.0})) == [
        0,
        1,
        0,
        0,
        0,
    ]


# --- the controller ------------------------------------------------------------------------------


def test_dialogues_end_when_goals_are_covered_and_ooc_is_rewritten(small: RunResult) -> None:
    m = small.metrics["metrics"]
    assert m["dialogues"]["ended"]["goals_covered"] == 8
    questions = payloads(small, "career.question")
    flagged = [q for q in questions if q["out_of_context"]]
    for q in flagged:
        assert q["question"] != q["proposed"]
    ended = payloads(small, "career.dialogue_ended")
    assert all(e["exchanges"] == 4 for e in ended)


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_max_turns_ends_dialogues_and_rewrites_happen(tmp_path: Path) -> None:
    result = run(tmp_path / "r", {**SMALL, "max_turns": 2, "scripted_inconsistency": 1.0})
    assert result.metrics["metrics"]["dialogues"]["ended"]["max_turns"] == 8
    questions = payloads(result, "career.question")
    aged = [q for q in questions if "years old" in q["proposed"]]  # every age stated is wrong
    assert len(questions) == 16 and aged
    assert all(q["out_of_context"] and q["question"] != q["proposed"] for q in aged)


# --- prompt pack ---------------------------------------------------------------------------------

USER_PROMPTS = {
    "career.user": ("user_initial", "user_followup"),
    "career.ooc": ("ooc_prompt",),
    "career.probe": ("ba_user_prompt", "ba_dialogue_prompt"),
    "career.judge": ("judge_prompt",),
}
SYSTEM_PROMPTS = {
    "career.user": ("user_system", "user_followup_system"),
    "career.ooc": ("ooc_system",),
    "career.probe": ("ba_user_system", "ba_dialogue_system"),
    "career.judge": tuple(f"judge_{d}" for d in DIMENSIONS),
}


def entry_pattern(text: str) -> re.Pattern[str]:
    """A pack text as a regex: its words literally, each ${placeholder} any text."""
    return re.compile(
        "(?s)" + "(.*)".join(re.escape(part) for part in re.split(r"\$\{\w+\}", text))
    )


def test_every_text_sent_comes_from_the_pack(small: RunResult) -> None:
    pack = list_scenarios()["career-chat"].shipped_prompts()
    assert pack is not None
    profile = entry_pattern(pack.text("profile"))
    calls = payloads(small, "llm.call")
    assert {c["task"] for c in calls} == {*USER_PROMPTS, "career.assistant"}
    for call in calls:
        messages = call["messages"]
        if call["task"] == "career.assistant":  # the dialogue alone (Algorithm 1's qa_llm)
            roles = [m["role"] for m in messages]
            assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"]
            continue
        system = messages[0]["content"]
        assert system in [pack.text(n) for n in SYSTEM_PROMPTS[call["task"]]], call["task"]
        prompt = (
            messages[-1]["content"]
            if system == pack.text("ba_dialogue_system")
            else messages[1]["content"]
        )
        matched = [
            m
            for n in USER_PROMPTS[call["task"]]
            if (m := entry_pattern(pack.text(n)).fullmatch(prompt))
        ]
        assert matched, (call["task"], prompt)
        if call["task"] != "career.probe" or system == pack.text("ba_user_system"):
            assert profile.fullmatch(matched[0].group(1)), prompt  # ${profile} comes first


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_an_edited_pack_reaches_every_role(tmp_path: Path, capsys) -> None:
    path = tmp_path / "pack.yaml"
    assert main(["prompts", "career-chat", "--output", str(path)]) == 0
    capsys.readouterr()
    data = yaml.safe_load(path.read_text())
    edits = {
        "profile": ("Years of Experience:", "Experience (years):"),
        "history_chatbot": ("Chatbot:", "Advisor:"),
        "judge_question": ("Question ${number}:", "Q${number}."),
        "ba_dialogue_prompt": ("Assume you are me", "Imagine you are me"),
    }
    for name, (old, new) in edits.items():
        assert old in data["prompts"][name]["text"]
        data["prompts"][name]["text"] = data["prompts"][name]["text"].replace(old, new)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = run(tmp_path / "r", {**SMALL, "n_users": 3}, prompts=path, use_cache=False)
    texts = {
        (c["task"], i): m["content"]
        for c in payloads(result, "llm.call")
        for i, m in enumerate(c["messages"])
    }
    sent = "\n".join(texts.values())
    assert "Experience (years): " in sent and "Years of Experience" not in sent
    assert "\nAdvisor: " in sent and "\nChatbot: " not in sent
    assert "\nQ1. " in sent and "Question 1:" not in sent
    assert "Imagine you are me" in sent and "Assume you are me" not in sent
    assert result.metrics["metrics"]["probes"]["dialogue"]["n"] == 9


# --- full runs -----------------------------------------------------------------------------------


def test_full_run_writes_every_table_and_figure(small: RunResult) -> None:
    reports = small.run_dir / "reports"
    for name in ("table1_dialogue_quality", "table2_adaptation", "table3_consistency"):
        assert (reports / f"{name}.csv").exists() and (reports / f"{name}.md").exists()
    assert (reports / "figure5_age.png").exists()
    m = small.metrics["metrics"]
    assert m["probes"]["profile"]["n"] == 24 and m["probes"]["dialogue"]["n"] == 24
    assert m["probes"]["profile"]["one_hot_fallback"] == 0
    assert m["consistency"]["n_users"] == 8 and m["consistency"]["baseline"] is not None
    assert main(["metrics", str(small.run_dir), "--check"]) == 0


@pytest.mark.slow  # an integration run; the fast tier stays under 5 minutes
def test_human_ratings_give_alignment(tmp_path: Path) -> None:
    human = tmp_path / "human.csv"
    rows = ["user,dimension,rating"] + [
        f"u{i:03d},{d},{(i + k) % 5 + 1}"
        for i in range(1, 9)
        for k, d in enumerate(("coverage", "correctness", "diversity", "relevance"))
    ]
    human.write_text("\n".join(rows) + "\n")
    result = run(tmp_path / "r", {**SMALL, "human_ratings": str(human)})
    alignment = result.metrics["metrics"]["human_alignment"]
    assert [r["n"] for r in alignment] == [8] * 4
    assert (result.run_dir / "reports" / "table5_judge_alignment.csv").exists()


def test_bad_inputs_exit_2_naming_file_and_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "profiles.csv"
    bad.write_text("id,age,gender,education,experience,job_title,country\nu1,30,F,MBA,3,x,India\n")
    out = tmp_path / "never"
    assert main(["run", "career-chat", "--profile-file", str(bad), "--out", str(out)]) == 2
    assert f"{bad}:2" in capsys.readouterr().err and not out.exists()
    survey = tmp_path / "survey.csv"
    survey.write_text("questions,full_question,option_1\nq,x,1\n")
    args = ["--survey-file", str(survey), "--dialogue-survey-file", str(survey)]
    assert main(["run", "career-chat", *args, "--out", str(out)]) == 2
    assert f"{survey}:1" in capsys.readouterr().err and not out.exists()
    human = tmp_path / "human.csv"
    for text, where, problem in (
        ("user,rating\nu001,3\n", 1, "needs columns user,dimension,rating"),
        ("user,dimension,rating\nu001,coverage,3\nu002,fluency,3\n", 3, "dimension must be"),
        ("user,dimension,rating\nu001,coverage,6\n", 2, "rating must be from 0 to 5"),
        ("user,dimension,rating\nu001,coverage,high\n", 2, "rating is not a number"),
    ):
        human.write_text(text)
        assert main(["run", "career-chat", "--human-ratings", str(human), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"--human-ratings: {human}:{where}: {problem}" in err and not out.exists()


def test_profile_file_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    rows = [
        {"id": f"x{i}", "age": 25 + 10 * i, "gender": "F", "education": "PhD", "experience": 2}
        | {"job_title": "Teacher", "country": "Kenya"}
        for i in range(3)
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    result = run(tmp_path / "r", {"profile_file": str(path), "n_items": 2, "judge_samples": 0})
    assert result.metrics["metrics"]["n_users"] == 3


@pytest.mark.slow  # an integration run; the fast tier stays under 5 minutes
def test_real_vsm_items(tmp_path: Path) -> None:
    params = {
        "survey_file": str(VSM / "vsm_direct_profile_questions_en_2024_Dec.csv"),
        "dialogue_survey_file": str(VSM / "vsm_dialogue_continue_questions_en_2024_Dec.csv"),
        "n_users": 4,
        "judge_samples": 0,
    }
    result = run(tmp_path / "r", params)
    m = result.metrics["metrics"]
    assert m["n_items"] == 18 and m["probes"]["profile"]["n"] == 72


# --- the HTTP path ---------------------------------------------------------------------------


def fake_reply(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    if "out-of-context" in system:
        return '{"has_out_of_context": false, "updated_question": ""}'
    if "role-playing" in system:
        if "end_conversation" in body["messages"][-1]["content"]:
            return '{"proposed_question": "", "end_conversation": true}'
        return '{"proposed_question": "I am 30. What next?"}'
    if "option_id" in body["messages"][-1]["content"]:
        return '{"option_id": 2, "reason": "fits"}'
    return "Some advice."


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_logprob_path_over_http(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(responder=fake_reply) as server:
        result = run(
            tmp_path / "r",
            {"n_users": 2, "n_items": 2, "judge_samples": 0},
            model="openai:fake-model",
            base_url=server.base_url,
        )
        probes = [r for r in server.requests if r.get("logprobs")]
    assert len(probes) == 8 and all(r["top_logprobs"] == 5 for r in probes)
    m = result.metrics["metrics"]
    assert m["probes"]["profile"]["one_hot_fallback"] == 0
    assert m["probes"]["profile"]["confidence"] == 1.0
    assert m["dialogues"]["ended"]["goals_covered"] == 2


def test_a_run_where_nothing_parses_finishes_with_empty_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found on SmolLM2 (tests/test_realmodel.py): with no parsed decision at all, the metrics
    crashed (pandas read an empty filter as a list of columns). Now they are empty or null, and
    the run is reported not valid."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "r"
    with FakeOpenAIServer(responder=lambda body: "I am not sure what you mean.") as server:
        code = main(
            [
                "run", "career-chat", "--n-users", "2", "--n-items", "1", "--judge-samples", "1",
                "--max-repairs", "0", "--model", "openai:fake-model", "--base-url",
                server.base_url, "--out", str(out), "--no-progress",
            ]
        )  # fmt: skip
    assert code == 3, capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["validity"]["overall"]["parsed"] == 0
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    for fmt in ("profile", "dialogue"):
        assert metrics["probes"][fmt]["n"] == 0 and metrics["probes"][fmt]["confidence"] is None
    assert main(["metrics", str(out), "--check"]) == 0


# --- structured answers (--response-format) ----------------------------------------------------

SCHEMAS = {
    "career.user": lambda r: FirstQuestion if r.hints["turn"] == 1 else FollowUp,
    "career.ooc": Verdict,
    "career.assistant": AssistantReply,
    "career.probe": OptionAnswer,
    "career.judge": Rating,
}


@pytest.mark.slow
def test_structured_runs_measure_what_the_text_run_measures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = {"n_users": 4, "n_items": 2, "judge_samples": 1}
    runs = run_in_every_format("career-chat", params, tmp_path, monkeypatch, seed=0)
    assert_same_as_text(runs)
    assert_formats_sent(runs, SCHEMAS)
    for fmt in ("json_object", "json_schema"):
        # the survey answers keep their logprobs: requested, and read at the option's token
        probes = [r for r, _ in runs[fmt].calls if r.task == "career.probe"]
        assert probes and all(r.logprobs and r.top_logprobs == 5 for r in probes)
        for survey in ("profile", "dialogue"):
            stats = runs[fmt].result.metrics["metrics"]["probes"][survey]
            assert stats["n"] > 0 and stats["one_hot_fallback"] == 0


def structured_reply(body: dict[str, Any]) -> str:
    """`fake_reply` under a json_schema format: the assistant's advice becomes JSON too."""
    assert body["response_format"]["type"] == "json_schema"
    if body["response_format"]["json_schema"]["name"] == "AssistantReply":
        return json.dumps({"response": "Some advice."})
    return fake_reply(body)


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_structured_logprob_path_over_http(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(responder=structured_reply) as server:
        result = run(
            tmp_path / "r",
            {"n_users": 2, "n_items": 2, "judge_samples": 0},
            model="openai:fake-model",
            base_url=server.base_url,
            settings=RunSettings(response_format="json_schema"),
        )
        probes = [r for r in server.requests if r.get("logprobs")]
    assert len(probes) == 8 and all(r["top_logprobs"] == 5 for r in probes)
    sent = response_format_for("json_schema", OptionAnswer)
    assert all(r["response_format"] == sent for r in probes)
    m = result.metrics["metrics"]
    for survey in ("profile", "dialogue"):
        assert m["probes"][survey]["n"] == 4 and m["probes"][survey]["one_hot_fallback"] == 0
    assert m["dialogues"]["ended"]["goals_covered"] == 2


# --- the paper's design on request (issue 25, item 5) -----------------------------------------


def test_paper_needs_the_profile_file(tmp_path: Path, capsys) -> None:
    out = tmp_path / "never"
    assert main(["run", "career-chat", "--paper", "true", "--out", str(out)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--paper needs --profile-file" in err and "recruitment_data.csv" in err
    assert not out.exists()
    missing = tmp_path / "recruitment_data.csv"
    args = ["--paper", "true", "--profile-file", str(missing), "--out", str(out)]
    assert main(["run", "career-chat", *args]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--profile-file" in err and str(missing) in err and not out.exists()


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_paper_design_and_the_default_says_what_differs(small: RunResult, tmp_path: Path) -> None:
    """`--paper` asks the 18 shipped VSM items of the recruitment profiles with the paper's
    repetitions; a default run says in one line what is not the paper's."""
    default = [line for line in small.report if "not the paper's design" in line]
    assert len(default) == 1
    assert "3 survey items (paper: the 18 VSM-2013 items)" in default[0]
    assert "8 synthetic users (paper: 1,000 recruitment profiles)" in default[0]
    # profiles in the paper's seed CSV format (ours, synthetic: tests/career_synthetic.py)
    profiles = Path(__file__).parent / "data" / "career_mba" / "synthetic" / "profiles.csv"
    params = {"paper": True, "profile_file": profiles, "n_users": 3, "judge_samples": 1}
    params |= {"bootstrap": 0, "permutations": 0}  # resampling is tested elsewhere
    result = run(tmp_path / "paper", params, use_cache=False)
    metrics = result.metrics["metrics"]
    assert metrics["n_items"] == 18 and metrics["n_users"] == 3
    assert result.manifest["params"]["max_turns"] == 5
    (line,) = [line for line in result.report if "not the paper's design" in line]
    assert "survey items" not in line and "synthetic" not in line
    assert "3 users (paper: 1,000)" in line and "1 judge samples (paper: 10)" in line
    assert "user: scripted (paper: gpt-4o-2024-08-06)" in line
    items = payloads(result, "career.survey")[0]["items"]
    with (VSM / "vsm_direct_profile_questions_en_2024_Dec.csv").open(newline="") as handle:
        questions = [" ".join(row["questions"].split()) for row in csv.DictReader(handle)]
    texts = [" ".join(item["profile"].split()) for item in items]
    assert len(questions) == 18 and all(q in t for q, t in zip(questions, texts, strict=True))
