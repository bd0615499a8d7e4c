"""Career chat's value survey (seed 003, VSM 2013): the items, asked in two phrasings (profile
and dialogue) whose files are aligned row by row."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from personasim.environments.career_chat.files import CareerChatFileError, csv_rows

__all__ = [
    "SURVEY_COLUMNS",
    "SurveyItem",
    "load_survey",
]

SURVEY_COLUMNS = ("questions", "full_question", *(f"option_{k}" for k in range(1, 6)))


@dataclass(frozen=True)
class SurveyItem:
    """One item in both phrasings: third person with a profile, first person after a dialogue."""

    index: int
    profile_text: str
    dialogue_text: str
    options: tuple[str, ...]

    def record(self) -> dict[str, Any]:
        """As logged in `career.survey`."""
        return {"index": self.index, "profile": self.profile_text, "dialogue": self.dialogue_text}


def _survey_rows(path: Path) -> list[tuple[int, dict[str, str]]]:
    rows = csv_rows(path, SURVEY_COLUMNS)
    for line, row in rows:
        if any(not (row.get(c) or "").strip() for c in SURVEY_COLUMNS):
            raise CareerChatFileError(path, line, "every column needs a value")
        if "{question}" not in row["full_question"]:
            raise CareerChatFileError(path, line, "full_question must contain {question}")
    if not rows:
        raise CareerChatFileError(path, None, "no survey items")
    return rows


def _phrased(row: dict[str, str]) -> str:
    return row["full_question"].replace("{question}", " ".join(row["questions"].split()))


def load_survey(profile_path: Path, dialogue_path: Path) -> tuple[SurveyItem, ...]:
    """Items from the profile-phrasing and dialogue-phrasing files, aligned by row; the two
    must offer the same options."""
    profile_rows, dialogue_rows = _survey_rows(profile_path), _survey_rows(dialogue_path)
    if len(profile_rows) != len(dialogue_rows):
        raise CareerChatFileError(
            dialogue_path,
            None,
            f"{len(dialogue_rows)} items, but {profile_path} has {len(profile_rows)}",
        )
    items = []
    for index, ((_, a), (line, b)) in enumerate(zip(profile_rows, dialogue_rows, strict=True), 1):
        options = tuple(" ".join(a[f"option_{k}"].split()) for k in range(1, 6))
        if options != tuple(" ".join(b[f"option_{k}"].split()) for k in range(1, 6)):
            raise CareerChatFileError(dialogue_path, line, "options differ from the profile file")
        items.append(SurveyItem(index, _phrased(a), _phrased(b), options))
    return tuple(items)
