"""career-chat's optional job-title classifier (`--role classifier=…`, seed 003 §5.1): asked once
per distinct title, its labels logged and used by the metrics, an unusable answer counted and
shown as "Unclassified", a rerun answered from a real SQLite cache; its reader on a labelled
corpus of replies."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAIServer

from personasim.agents.decision import DecisionParseError, parse_structured
from personasim.agents.level_names import LevelNameError, match_level_name
from personasim.environments.career_chat import load_job_groups
from personasim.scenarios.career_chat.answers import JobLabelsAnswer, read_job_labels
from personasim.scenarios.career_chat.jobs import (
    CATEGORY_LABELS,
    LEVEL_LABELS,
    POSITION_LEVELS,
    UNCLASSIFIED,
    UNKNOWN,
    classify_title,
    title_key,
)
from personasim.scenarios.career_chat.reports import report_lines
from personasim.simulation import RunResult, SQLiteEventStore, independent_reader, run_scenario
from personasim.simulation.cli.main import main

TITLES = (
    "Software Engineer",
    "software  engineer",  # the same title, spaced and cased otherwise: asked once
    "Chief Technology Officer",
    "Doctor",
    "Pastry Chef",
    "Doctor",
    "Astronaut",
)
FAST = {"n_items": 2, "judge_samples": 0, "max_turns": 1, "bootstrap": 0, "permutations": 0}


def profiles(tmp_path: Path, titles: tuple[str, ...] = TITLES) -> Path:
    path = tmp_path / "profiles.jsonl"
    rows = [
        {"id": f"u{i}", "age": 25 + 5 * i, "gender": "F", "education": "PhD", "experience": 3}
        | {"job_title": title, "country": "Kenya"}
        for i, title in enumerate(titles)
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return path


def run(tmp_path: Path, name: str, roles: dict[str, list[str]], **kwargs: Any) -> RunResult:
    params = {**FAST, "profile_file": str(profiles(tmp_path)), "n_users": len(TITLES)}
    params |= kwargs.pop("params", {})
    return run_scenario(
        "career-chat", params, out=tmp_path / name, progress=False, roles=roles, **kwargs
    )


def events(result: RunResult, kind: str) -> list[dict[str, Any]]:
    with SQLiteEventStore(result.run_dir / "events.sqlite") as store:
        return [e.payload for e in store.read([kind])]


def classify_calls(result: RunResult) -> list[dict[str, Any]]:
    return [c for c in events(result, "llm.call") if c["task"] == "career.classify"]


def asked_title(body: dict[str, Any]) -> str:
    match = re.search(r"^Job title: (.*)$", body["messages"][1]["content"], re.M)
    assert match, body["messages"]
    return match.group(1)


def job_sizes(result: RunResult, grouping: str = "job") -> dict[str, int]:
    return result.metrics["metrics"]["adaptation"]["profile"][grouping]["groups"]


# --- the reader ---------------------------------------------------------------------------------


def said(category: str, level: str) -> str:
    return json.dumps({"job_category": category, "position_level": level})


CORPUS: list[tuple[str, tuple[str, str] | None]] = [
    ('{"job_category": "Tech", "position_level": "C-Suite"}', ("Tech", "C-Suite")),
    ('{"job_category": "tech", "position_level": "c-suite"}', ("Tech", "C-Suite")),
    ('{"job_category": "Health.", "position_level": "C Suite"}', ("Health", "C-Suite")),
    (said("Hospitality", "entry level"), ("Hospitality", "Entry Level")),
    (f"```json\n{said('Other', 'Professional')}\n```", ("Other", "Professional")),
    (f"Sure! {said('Business', 'Management')}", ("Business", "Management")),
    ('{"job_category": "Arts", "position_level": "SENIOR-MANAGEMENT"}', None),  # not offered
    ('{"job_category": "Engineering", "position_level": "Professional"}', None),  # not offered
    ('{"job_category": "Tech", "position_level": "Senior"}', None),  # not a whole label
    ('{"job_category": "Tech, Science", "position_level": "Management"}', None),  # two labels
    ('{"job_category": "Tech"}', None),  # a label missing
    ('{"job_category": 3, "position_level": "Management"}', None),  # not a label
    ("The job category is Tech and the level is Management.", None),  # no JSON
    ("", None),
]  # fmt: skip
"""Replies written the ways chat models write them (case, punctuation, fences, a preamble)
and ones a person would not read as one offered label: each labelled by hand."""


@pytest.mark.parametrize(("reply", "expected"), CORPUS)
def test_the_reader_takes_offered_labels_only(reply: str, expected: tuple[str, str] | None) -> None:
    if expected is None:
        with pytest.raises(DecisionParseError):
            read_job_labels(parse_structured(reply, JobLabelsAnswer))
        return
    labels = read_job_labels(parse_structured(reply, JobLabelsAnswer))
    assert (labels["job_category"], labels["position_level"]) == expected


def test_a_single_choice_matches_one_offered_label_or_none() -> None:
    assert match_level_name(" senior management ", POSITION_LEVELS) == "Senior Management"
    for said in ("Manager", "C-Suite or Management", None, ""):
        with pytest.raises(LevelNameError):
            match_level_name(said, POSITION_LEVELS)


# --- runs ---------------------------------------------------------------------------------------


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_unbound_the_word_rule_groups_and_no_classifier_is_asked(tmp_path: Path) -> None:
    result = run(tmp_path, "r", {})
    assert classify_calls(result) == [] and events(result, "career.job_groups") == []
    assert result.manifest["roles"]["classifier"] == []
    words = Counter(classify_title(t).category for t in TITLES)
    assert job_sizes(result) == dict(words)
    assert result.metrics["metrics"]["job_labels"]["classifier"] == []
    rows = (result.run_dir / "reports" / "job_titles.csv").read_text().splitlines()
    assert "Doctor,Health,Professional,word rule,2,doctor,no rank named" in rows
    assert f"Astronaut,{UNKNOWN},{UNKNOWN},word rule,1,none,none" in rows
    assert "Software Engineer,Tech,Professional,word rule,1,engineer,no rank named" in rows
    readings = events(result, "reading.made")
    assert len(readings) == len(TITLES) and {r["reader"] for r in readings} == {"job_title"}
    astronaut = next(r for r in readings if r["text"] == "Astronaut")
    assert astronaut["status"] == "unreadable" and astronaut["by"].startswith("word rule")
    doctor = next(r for r in readings if r["text"] == "Doctor")
    assert doctor["value"] == {"category": "Health", "level": "Professional"}
    assert independent_reader("job_title") is None  # no library reads job titles


@pytest.mark.parametrize("classifier", ["scripted", "scripted:drift=0.15", "scripted:drift=0.6"])
def test_scripted_classifier_asks_each_title_once_and_logs_its_labels(
    tmp_path: Path, classifier: str
) -> None:
    """The scripted classifier is the word rule (docs/scripted.md), so the groups equal an
    unbound run's; under drift (with the run's model drifting too) every title still ends
    labelled from the offered sets or counted as failed (at drift 0.6, "Doctor" fails after
    its re-asks)."""
    result = run(tmp_path, "r", {"classifier": [classifier]}, model=classifier)
    calls = classify_calls(result)
    decided = [d for d in events(result, "decision.made") if d["task"] == "career.classify"]
    failed = [d for d in events(result, "decision.failed") if d["task"] == "career.classify"]
    reasks = [d for d in events(result, "decision.reask") if d["task"] == "career.classify"]
    distinct = {title_key(t) for t in TITLES}
    assert len(decided) + len(failed) == len(distinct) == 5
    assert bool(failed) == classifier.endswith("0.6")  # the failure path is exercised
    assert len(calls) == len(distinct) + len(reasks)  # one call per title, plus its re-asks
    (logged,) = events(result, "career.job_groups")
    assert logged["source"] == "classifier" and logged["asked"] == 5
    assert set(logged["titles"]) == {" ".join(t.split()) for t in TITLES}
    for title, labels in logged["titles"].items():
        if title in logged["unclassified"]:
            assert labels == {"job_category": UNCLASSIFIED, "position_level": UNCLASSIFIED}
        else:
            word = classify_title(title)
            assert labels == {"job_category": word.category, "position_level": word.level}
    assert len({title_key(t) for t in logged["unclassified"]}) == len(failed)
    readings = events(result, "reading.made")
    assert len(readings) == len(TITLES)  # the classifier's, one per user; no word-rule reading
    assert all(r["by"] == f"classifier ({classifier})" for r in readings)
    assert sum(r["status"] == "unreadable" for r in readings) >= sum(
        " ".join(t.split()) in logged["unclassified"] for t in TITLES
    )
    validity = result.manifest["validity"]["tasks"]["career.classify"]
    assert validity["decisions"] == 5 and validity["failed"] == len(failed)
    assert result.metrics["metrics"]["failures"]["classify"] == len(failed)
    groups = Counter(logged["titles"][" ".join(t.split())]["job_category"] for t in TITLES)
    assert job_sizes(result) == dict(groups)


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_metrics_use_the_logged_labels_and_an_unusable_answer_is_unclassified(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A classifier over HTTP that calls every title Hospitality / C-Suite except "Astronaut",
    which it labels "Space" every time: after the re-asks that title is a counted failed
    decision, and its user forms the visible group "Unclassified" — no default."""

    def classifier(body: dict[str, Any]) -> str:
        space = asked_title(body) == "Astronaut"
        return json.dumps(
            {"job_category": "Space" if space else "Hospitality", "position_level": "C-Suite"}
        )

    with FakeOpenAIServer(responder=classifier) as server:
        result = run(
            tmp_path,
            "r",
            {"classifier": [f"openai:cls@{server.base_url}"]},
            params={"max_repairs": 1},
            use_cache=False,
        )
        asked = [asked_title(body) for body in server.requests]
    assert Counter(asked) == {
        "Software Engineer": 1,
        "Chief Technology Officer": 1,
        "Doctor": 1,
        "Pastry Chef": 1,
        "Astronaut": 2,  # asked, then re-asked once (max_repairs 1)
    }
    failed = [d for d in events(result, "decision.failed") if d["task"] == "career.classify"]
    assert [f["title"] for f in failed] == ["Astronaut"]
    assert result.manifest["validity"]["tasks"]["career.classify"]["failed"] == 1
    assert job_sizes(result) == {"Hospitality": 6, UNCLASSIFIED: 1}
    assert job_sizes(result, "position") == {"C-Suite": 6, UNCLASSIFIED: 1}
    labels = result.metrics["metrics"]["job_labels"]
    assert labels["unclassified_titles"] == ["Astronaut"] and labels["unclassified_users"] == 1
    assert main(["metrics", str(result.run_dir)]) == 0  # recomputed from the log alone
    assert "metrics.json: unchanged (recomputed from events.sqlite" in capsys.readouterr().out
    printed = "\n".join(report_lines(result.metrics["metrics"]))
    assert "1 without a usable answer, their 1 users in the group 'Unclassified'" in printed
    table = (result.run_dir / "reports" / "table2_groups.csv").read_text().splitlines()
    assert f"BA_user,job,{UNCLASSIFIED},1,True" in table
    assert f"BA_user,position,{UNCLASSIFIED},1,True" in table
    titles = result.run_dir / "reports" / "job_titles.csv"
    rows = titles.read_text().splitlines()
    assert rows[0] == "job_title,job_category,position_level,source,n,category_rule,level_rule"
    assert f"Astronaut,{UNCLASSIFIED},{UNCLASSIFIED},unclassified,1,," in rows
    assert "Doctor,Hospitality,C-Suite,classifier,2,," in rows
    assert len(load_job_groups(titles)) == 6  # usable as --job-groups


@pytest.mark.slow  # an integration run; the fast tier stays under 5 minutes
def test_a_rerun_with_the_cache_asks_the_classifier_nothing(tmp_path: Path) -> None:
    """A real SQLite cache: the second run's classifier calls are all cache hits and its
    endpoint receives no request; the labels are the same."""

    def classifier(body: dict[str, Any]) -> str:
        word = classify_title(asked_title(body))
        return json.dumps({"job_category": word.category, "position_level": word.level})

    cache = tmp_path / "cache"
    with FakeOpenAIServer(responder=classifier) as server:
        roles = {"classifier": [f"openai:cls@{server.base_url}"]}
        first = run(tmp_path, "first", roles, cache_dir=cache)
        count = server.request_count
        second = run(tmp_path, "second", roles, cache_dir=cache)
        assert server.request_count == count == 5
    assert {c["source"] for c in classify_calls(first)} == {"model"}
    assert [c["source"] for c in classify_calls(second)] == ["cache"] * 5
    assert events(first, "career.job_groups") == events(second, "career.job_groups")


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_a_job_groups_file_keeps_its_titles_and_the_classifier_labels_the_rest(
    tmp_path: Path,
) -> None:
    groups = tmp_path / "groups.csv"
    groups.write_text(
        "job_title,job_category,position_level\n"
        "Doctor,Science,Management\n"
        "Pastry Chef,Hospitality,\n"  # a level left open: the classifier is asked
    )
    result = run(tmp_path, "r", {"classifier": ["scripted"]}, params={"job_groups": str(groups)})
    asked = {c["messages"][1]["content"].splitlines()[0] for c in classify_calls(result)}
    assert "Job title: Doctor" not in asked and "Job title: Pastry Chef" in asked
    assert len(asked) == 4
    assert job_sizes(result)["Science"] == 2  # both Doctors, from the file


def test_the_role_is_listed_as_optional(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "career-chat"]) == 0
    line = next(s for s in capsys.readouterr().out.splitlines() if "role classifier" in s)
    assert "optional: only when --role names it" in line


def test_offered_labels_are_the_word_rules() -> None:
    """The authors' labels, "Other", and "Unknown": a classifier need not guess either."""
    assert CATEGORY_LABELS[-2:] == ("Other", UNKNOWN) and len(CATEGORY_LABELS) == 9
    assert LEVEL_LABELS[:-1] == POSITION_LEVELS and LEVEL_LABELS[-1] == UNKNOWN
    assert POSITION_LEVELS[0] == "Entry Level" and POSITION_LEVELS[-1] == "C-Suite"
