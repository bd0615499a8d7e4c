"""Word problems in the GSM8K format (Cobbe et al. 2021; seed 000, §2.1): loading and sampling.

One JSON object per line with `question` and `answer`; the answer's worked solution ends with
`#### N`, the gold number (GSM8K writes thousands with commas, e.g. `#### 1,450,000`, and has a
few negative answers). The package ships 31 problems of its own in this format
(`data/word_problems.jsonl`) so the `classroom` scenario runs offline; the real test split is
passed by path.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import numpy as np

from personasim.simulation import unstorable, utf8_problem

__all__ = [
    "SHIPPED_PROBLEMS",
    "QuestionFileError",
    "WordProblem",
    "gold_answer",
    "load_word_problems",
    "parse_number",
    "sample_problems",
    "shipped_problems",
]

SHIPPED_PROBLEMS = "data/word_problems.jsonl"
"""The shipped problems, relative to this package."""

_NUMBER = re.compile(r"^(-?)\s*\\?\$?\s*(\d{1,3}(?:,\d{3})+|\d+)?(\.\d+)?$")


class QuestionFileError(ValueError):
    """A question file that cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class WordProblem:
    """One question with its gold number; `id` is its place in the file (`q<line>`)."""

    id: str
    question: str
    solution: str
    gold: float


def parse_number(text: str) -> float:
    """A number as GSM8K and students write it: `1,234`, `-7`, `.75`, `$12.50` → float.

    Commas must group thousands (`1,2` is not a number), so a list is never read as one value.
    """
    match = _NUMBER.match(text.strip())
    if match is None or not (match.group(2) or match.group(3)):
        raise ValueError(f"not a number: {text!r}")
    sign, whole, fraction = match.groups()
    return float(f"{sign}{(whole or '0').replace(',', '')}{fraction or ''}")


def gold_answer(solution: str) -> float:
    """The number after the last `####` of a GSM8K worked solution."""
    if "####" not in solution:
        raise ValueError("the answer has no '#### N' line")
    return parse_number(solution.rsplit("####", 1)[1])


def load_word_problems(path: Path | str) -> list[WordProblem]:
    """Every problem in a GSM8K-format JSONL file; errors name the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line, problem = utf8_problem(exc)
        raise QuestionFileError(f"{path}:{line}: {problem}") from None
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            problems.append(_problem(line, f"{path}:{number}", f"q{number}"))
    if not problems:
        raise QuestionFileError(f"{path}: no questions")
    return problems


def _problem(line: str, where: str, problem_id: str) -> WordProblem:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise QuestionFileError(f"{where}: not valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError):  # a 5,000-digit number, [[[[...]]]]
        raise QuestionFileError(
            f"{where}: not valid JSON (too long a number or too deep)"
        ) from None
    if not isinstance(record, dict):
        raise QuestionFileError(f"{where}: expected a JSON object with question and answer")
    if problem := unstorable(record):  # a "\ud800" escape: not text a model or the log takes
        raise QuestionFileError(f"{where}: {problem}")
    question, solution = record.get("question"), record.get("answer")
    if not isinstance(question, str) or not question.strip():
        raise QuestionFileError(f"{where}: 'question' must be a non-empty string")
    if not isinstance(solution, str):
        raise QuestionFileError(f"{where}: 'answer' must be a string ending in '#### N'")
    try:
        gold = gold_answer(solution)
    except ValueError as exc:
        raise QuestionFileError(f"{where}: {exc}") from None
    return WordProblem(problem_id, question.strip(), solution, gold)


def shipped_problems() -> list[WordProblem]:
    """The package's own 31 grade-school word problems (offline demos and tests)."""
    resource = files(__package__).joinpath(SHIPPED_PROBLEMS)
    with resource.open(encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    return [_problem(line, f"{SHIPPED_PROBLEMS}:{i}", f"q{i}") for i, line in enumerate(lines, 1)]


def sample_problems(
    problems: list[WordProblem], n: int, rng: np.random.Generator
) -> list[WordProblem]:
    """`n` distinct problems drawn without replacement, in file order (seed 000, §4.1)."""
    if n > len(problems):
        raise ValueError(f"cannot sample {n} questions from {len(problems)}")
    chosen = sorted(rng.choice(len(problems), size=n, replace=False).tolist())
    return [problems[i] for i in chosen]
