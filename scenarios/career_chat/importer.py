"""`personasim import career-chat --format model-behavior-adaption`: the paper's released answers.

The authors (FerdinandZhong/model_behavior_adaption, MIT) released, per probed model, one JSONL
file per format: per line a user (`user_idx`, the row of their seed CSV) and its
`value_selections` (`question_index`, `selected_option_id`, `normalized_probs` over the five
options, `reason_for_selection`). Their seed CSV is the Kaggle recruitment file (row i = user
i; `Date of Birth` dd-mm-yyyy, `Education Level`, `Country`, `Job Title`, `Gender`, `Years of
Experience`). Each answer becomes a `decision.made` of task `career.probe` carrying the released
`distribution`; each user an `agent.created` UserSimulator with its profile. Age is the
reference year minus the birth year, as the authors' `calculate_age` computes it (it parses the
month as minutes, so only the year counts); the default reference year 2025 is the year of
their released runs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from personasim.environments.career_chat import load_job_groups, load_profiles
from personasim.scenarios.career_chat.options import N_OPTIONS
from personasim.simulation import (
    ImportedEvent,
    ImportedRun,
    ImportFormat,
    ScenarioError,
    file_identity,
    read_input,
    register_import_format,
)

__all__ = ["MODEL_BEHAVIOR_ADAPTION", "read_released_answers"]


def _error(path: Path, line: int | None, problem: str) -> ScenarioError:
    return ScenarioError(f"{path}:{line}: {problem}" if line else f"{path}: {problem}")


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _error(path, None, getattr(exc, "strerror", None) or str(exc)) from None


def _selection(path: Path, line: int, item: Any) -> tuple[int, int, list[float], str]:
    if not isinstance(item, dict):
        raise _error(path, line, "each value_selections entry must be an object")
    try:
        question, selected = int(item["question_index"]), int(item["selected_option_id"])
        probs = [float(x) for x in item["normalized_probs"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise _error(path, line, f"value selection without a usable {exc}") from None
    if not 1 <= selected <= N_OPTIONS:
        raise _error(path, line, f"selected_option_id {selected} is not 1–{N_OPTIONS}")
    if len(probs) != N_OPTIONS or any(not math.isfinite(p) or p < 0 for p in probs):
        raise _error(path, line, f"normalized_probs must be {N_OPTIONS} non-negative numbers")
    if not math.isclose(sum(probs), 1.0, rel_tol=1e-5, abs_tol=1e-8):
        raise _error(path, line, f"normalized_probs of question {question} sum to {sum(probs)}")
    return question, selected, probs, str(item.get("reason_for_selection", ""))


def read_released_answers(path: Path) -> dict[int, list[tuple[int, int, list[float], str]]]:
    """`user_idx` → its (question, selected option, probabilities, reason) per question."""
    users: dict[int, list[tuple[int, int, list[float], str]]] = {}
    for line, raw in enumerate(_text(path).splitlines(), 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
            user = int(row["user_idx"])
            selections = row["value_selections"]
        except json.JSONDecodeError as exc:
            raise _error(path, line, f"invalid JSON: {exc.msg}") from None
        except (KeyError, TypeError, ValueError):
            raise _error(path, line, "needs user_idx (a number) and value_selections") from None
        if user in users:
            raise _error(path, line, f"user_idx {user} appears twice")
        if not isinstance(selections, list) or not selections:
            raise _error(path, line, "value_selections must be a non-empty list")
        users[user] = [_selection(path, line, item) for item in selections]
    if not users:
        raise _error(path, None, "no answers")
    return users


def _build(files: Mapping[str, Path], options: Mapping[str, str]) -> ImportedRun:
    try:
        year, n_users = int(options["reference-year"]), options["n-users"]
        limit = int(n_users) if n_users else None
        resamples = {name: int(options[name]) for name in ("bootstrap", "permutations")}
    except ValueError:
        raise ScenarioError(
            "--reference-year, --n-users, --bootstrap and --permutations must be whole numbers"
        ) from None
    if min(resamples.values()) < 0:
        raise ScenarioError("--bootstrap and --permutations must be 0 or more")
    profiles = [
        profile.record()
        for profile in read_input(
            "--profiles", lambda: load_profiles(files["profiles"], reference_year=year)
        )
    ]
    answers = {
        "profile": read_released_answers(files["profile-answers"]),
        "dialogue": read_released_answers(files["dialogue-answers"]),
    }
    users = sorted(set(answers["profile"]) & set(answers["dialogue"]))[:limit]
    for fmt, flag in (("profile", "profile-answers"), ("dialogue", "dialogue-answers")):
        if unknown := [u for u in answers[fmt] if not 0 <= u < len(profiles)]:
            raise _error(files[flag], None, f"user_idx {unknown[0]} has no row in --profiles")
    if len(users) < 2:
        raise ScenarioError("fewer than 2 users answered in both --profile-answers files")
    questions = sorted({q for u in users for fmt in answers for q, *_ in answers[fmt][u]})
    events = [_user_event(profiles[u]) for u in users]
    if options["job-groups"]:
        events.append(_job_groups_event(Path(options["job-groups"])))
    events.append(ImportedEvent("career.survey", {"items": [_item(q) for q in questions]}))
    for fmt, by_user in answers.items():
        for u in users:
            for question, selected, probs, reason in by_user[u]:
                payload = {
                    "task": "career.probe",
                    "attempts": 1,
                    "value": selected,
                    "user": f"user{u}",
                    "format": fmt,
                    "item": question,
                    "distribution": probs,
                    "reason": reason,
                }
                events.append(ImportedEvent("decision.made", payload, f"user{u}", 2))
    model = {"backend": "import", "model": options["model-name"], "note": "released answers"}
    params = {"n_users": len(users), "judge_samples": 0, **resamples}
    return ImportedRun(params=params, model=model, events=events)


def _user_event(profile: dict[str, Any]) -> ImportedEvent:
    persona = {"id": profile["id"], "attributes": profile, "traits": {}}
    payload = {"type": "UserSimulator", "persona": persona}
    return ImportedEvent("agent.created", payload, profile["id"])


def _job_groups_event(path: Path) -> ImportedEvent:
    titles = read_input("--job-groups", lambda: load_job_groups(path))
    return ImportedEvent("career.job_groups", {"titles": titles, **file_identity(path)})


def _item(question: int) -> dict[str, Any]:
    """A survey item known only by index (the released files carry no question text)."""
    return {"index": question, "profile": None, "dialogue": None}


MODEL_BEHAVIOR_ADAPTION = register_import_format(
    ImportFormat(
        scenario="career-chat",
        name="model-behavior-adaption",
        summary="the paper's released value answers (FerdinandZhong/model_behavior_adaption)",
        files={
            "profile-answers": "JSONL of BA_user answers (their direct_questions/*.jsonl)",
            "dialogue-answers": "JSONL of BA_dialogue answers (their dialogue_questions/*.jsonl)",
            "profiles": "their seed CSV (the Kaggle recruitment file; row i = user i)",
        },
        options={
            "reference-year": ("2025", "age = this year − birth year (their calculate_age)"),
            "n-users": ("", "the first N users answering in both files (default: all)"),
            "model-name": ("imported", "the probed model's name for tables"),
            "job-groups": ("", "CSV job_title,job_category,position_level (default: keywords)"),
            "bootstrap": ("1000", "user resamples for the group-distance intervals (0: none)"),
            "permutations": ("1000", "label permutations for the ratio's p-value (0: none)"),
        },
        build=_build,
    )
)
