"""Career chat's input files (seed 003): the error that names a file and line, the shipped data
files, the JSONL and CSV readers every loader uses, and the files others made: job labels per
title (e.g. the authors' zero-shot classifier's output) and human ratings of the dialogues
(Appendix E)."""

from __future__ import annotations

import csv
import json
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from personasim.simulation import (
    ScenarioError,
    csv_problem,
    csv_separator_problem,
    unstorable,
    utf8_problem,
)

if TYPE_CHECKING:
    pass


__all__ = [
    "DIMENSIONS",
    "CareerChatFileError",
    "csv_header",
    "csv_rows",
    "jsonl_rows",
    "load_human_ratings",
    "load_job_groups",
    "read_text",
    "shipped_career_file",
]

DIMENSIONS = ("coverage", "correctness", "diversity", "relevance")
"""The judge's four dimensions (Figures 8–11), each with its pack entry `judge_<name>`."""


class CareerChatFileError(ValueError):
    """An input file the scenario cannot use; the message starts with `path:line:`."""

    def __init__(self, path: Path, line: int | None, problem: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")


def shipped_career_file(name: str) -> Path:
    """A data file shipped with the package (see data/career_chat_README.md beside this module)."""
    return Path(str(resources.files(__package__).joinpath("data", name)))


def read_text(path: Path) -> str:
    """The file's UTF-8 text; unreadable is a `CareerChatFileError` naming the file (and the
    line of a byte that is not UTF-8)."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CareerChatFileError(path, *utf8_problem(exc)) from None
    except OSError as exc:
        raise CareerChatFileError(path, None, exc.strerror or str(exc)) from None


def jsonl_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) per non-blank line of a JSONL file; anything else is an error."""
    rows = []
    for number, raw in enumerate(read_text(path).splitlines(), 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise CareerChatFileError(path, number, f"invalid JSON: {exc.msg}") from None
        except (ValueError, RecursionError):  # a 5,000-digit number, [[[[...]]]]
            raise CareerChatFileError(path, number, "invalid JSON (too long or deep)") from None
        if not isinstance(row, dict):
            raise CareerChatFileError(path, number, "each line must be a JSON object")
        if problem := unstorable(row):  # NaN, a "\ud800" escape: nothing a run records
            raise CareerChatFileError(path, number, problem)
        rows.append((number, row))
    return rows


def csv_header(path: Path) -> list[str]:
    """The CSV file's header row (empty for an empty file)."""
    try:
        return next(csv.reader(read_text(path).splitlines()), [])
    except csv.Error as exc:
        raise CareerChatFileError(path, 1, csv_problem(exc)) from None


def csv_rows(path: Path, columns: tuple[str, ...]) -> list[tuple[int, dict[str, Any]]]:
    """(line number, row) per CSV record; a missing column, a non-comma separator or a cell
    over the CSV reader's limit is an error naming the line."""
    reader = csv.DictReader(read_text(path).splitlines(keepends=True))
    try:
        return _csv_records(path, reader, columns)
    except csv.Error as exc:  # DictReader's line_num is set after a row; its reader's is now
        raise CareerChatFileError(path, reader.reader.line_num, csv_problem(exc)) from None


def _csv_records(
    path: Path, reader: csv.DictReader[str], columns: tuple[str, ...]
) -> list[tuple[int, dict[str, Any]]]:
    if problem := csv_separator_problem(reader.fieldnames):
        raise CareerChatFileError(path, 1, problem)
    absent = [c for c in columns if c not in (reader.fieldnames or ())]
    if absent:
        raise CareerChatFileError(path, 1, f"missing columns {', '.join(absent)}")
    rows = []
    start = 2
    for row in reader:
        rows.append((start, row))
        start = reader.line_num + 1
    return rows


JOB_GROUP_COLUMNS = ("job_title", "job_category", "position_level")


def load_job_groups(path: Path) -> dict[str, dict[str, str]]:
    """Job title → its `job_category` and `position_level` from a CSV with those columns; an
    empty cell leaves that label to the word rule (scenarios/career_chat/jobs.py)."""
    titles: dict[str, dict[str, str]] = {}
    for line, row in csv_rows(path, JOB_GROUP_COLUMNS):
        title = " ".join(str(row["job_title"] or "").split())
        if not title:
            raise CareerChatFileError(path, line, "job_title is empty")
        if title in titles:
            raise CareerChatFileError(path, line, f"job title {title!r} appears twice")
        labels = {c: " ".join(str(row[c] or "").split()) for c in JOB_GROUP_COLUMNS[1:]}
        titles[title] = {c: label for c, label in labels.items() if label}
    if not titles:
        raise CareerChatFileError(path, None, "no job titles")
    return titles


def load_human_ratings(path: Path) -> list[list[Any]]:
    """Rows (user, dimension, rating) of a CSV with those columns; a row per rater."""
    try:
        reader = csv.DictReader(read_text(path).splitlines(keepends=True))
    except CareerChatFileError as exc:  # missing, unreadable, not UTF-8 (with its line)
        raise ScenarioError(f"--human-ratings: {exc}") from None
    try:
        if not {"user", "dimension", "rating"} <= set(reader.fieldnames or ()):
            raise ScenarioError(f"--human-ratings: {path}:1: needs columns user,dimension,rating")
        return [_human_row(path, reader.line_num, row) for row in reader]
    except csv.Error as exc:  # a cell over the CSV reader's limit
        where = f"{path}:{reader.reader.line_num}"
        raise ScenarioError(f"--human-ratings: {where}: {csv_problem(exc)}") from None


def _human_row(path: Path, line: int, row: dict[str, str]) -> list[Any]:
    if row["dimension"] not in DIMENSIONS:
        raise ScenarioError(
            f"--human-ratings: {path}:{line}: dimension must be one of {', '.join(DIMENSIONS)}"
        )
    try:
        rating = float(row["rating"])
    except (TypeError, ValueError):
        raise ScenarioError(f"--human-ratings: {path}:{line}: rating is not a number") from None
    if not 0 <= rating <= 5:
        raise ScenarioError(f"--human-ratings: {path}:{line}: rating must be from 0 to 5")
    return [row["user"].strip(), row["dimension"], rating]
