"""The career-chat place (seed 003): user profiles, the value survey, and the dialogue controller.

`CareerChat` runs Algorithm 1 (Appendix C) as rules: a dialogue opens, each exchange is a user
question (as the out-of-context detector left it) and the assistant's answer, and the dialogue
ends when the user says its goals are covered, when `max_turns` exchanges were made, or when a
step failed. Every utterance and verdict is an event. It knows no prompts.

File formats (documented in environments/career_chat/data/career_chat_README.md):

- profiles: CSV with a header, or JSONL, with fields `id, age, gender, education, experience,
  job_title, country`; education is one of `EDUCATION_LEVELS`.
- survey: the VSM-2013 CSV layout, columns `questions, full_question, option_1..option_5`,
  `full_question` holding `{question}`; one file per phrasing (profile and dialogue), rows
  aligned by position.
- human ratings: CSV `user,dimension,rating`, dimension one of the judge's four, rating 0–5,
  one row per rater (Appendix E).
"""

from __future__ import annotations

import csv
import json
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from personasim.simulation import (
    Environment,
    InvalidActionError,
    ScenarioError,
    csv_separator_problem,
)

if TYPE_CHECKING:
    from personasim.simulation import SimAgent, Simulation

__all__ = [
    "EDUCATION_LEVELS",
    "PROFILE_FIELDS",
    "REFERENCE_YEAR",
    "SEED_COLUMNS",
    "CareerChat",
    "CareerChatFileError",
    "Profile",
    "RecordedDialogue",
    "RecordedTurn",
    "SurveyItem",
    "jsonl_rows",
    "load_human_ratings",
    "load_job_groups",
    "load_profiles",
    "load_survey",
    "profile_from_row",
    "shipped_career_file",
    "synthetic_profiles",
]

EDUCATION_LEVELS = ("High School", "Bachelor's", "Master's", "PhD")
PROFILE_FIELDS = ("id", "age", "gender", "education", "experience", "job_title", "country")
SURVEY_COLUMNS = ("questions", "full_question", *(f"option_{k}" for k in range(1, 6)))


class CareerChatFileError(ValueError):
    """An input file the scenario cannot use; the message starts with `path:line:`."""

    def __init__(self, path: Path, line: int | None, problem: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")


DIMENSIONS = ("coverage", "correctness", "diversity", "relevance")
"""The judge's four dimensions (Figures 8–11), each with its pack entry `judge_<name>`."""
EDUCATION_ALIASES = {"Bachelor's Degree": "Bachelor's", "Master's Degree": "Master's"}
"""The paper's seed-file labels (its Kaggle recruitment CSV) for our education levels."""


def education_label(education: str) -> str:
    return EDUCATION_ALIASES.get(education, education)


def shipped_career_file(name: str) -> Path:
    """A data file shipped with the package (see data/career_chat_README.md beside this module)."""
    return Path(str(resources.files(__package__).joinpath("data", name)))


# ---------------------------------------------------------------------------------------------
# Profiles
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """A simulated user (the attributes of §3: age, gender, education, occupation, country)."""

    id: str
    age: int
    gender: str
    education: str
    experience: int
    job_title: str
    country: str

    def record(self) -> dict[str, Any]:
        """The attributes by name; the scenario's pack entry `profile` lays them out."""
        return asdict(self)


def profile_from_row(path: Path, line: int | None, row: dict[str, Any]) -> Profile:
    """A profile from a row of a profiles file (or a dialogue file), checked field by field."""
    missing = [f for f in PROFILE_FIELDS if row.get(f) in (None, "")]
    if missing:
        raise CareerChatFileError(path, line, f"missing {', '.join(missing)}")
    try:
        age, experience = int(row["age"]), int(row["experience"])
    except (TypeError, ValueError):
        raise CareerChatFileError(path, line, "age and experience must be whole numbers") from None
    if not 16 <= age <= 100 or not 0 <= experience <= age:
        raise CareerChatFileError(path, line, "age must be 16–100 and experience 0–age")
    education = education_label(" ".join(str(row["education"]).split()))
    if education not in EDUCATION_LEVELS:
        raise CareerChatFileError(
            path, line, f"education {row['education']!r} is not one of {list(EDUCATION_LEVELS)}"
        )
    text = {f: " ".join(str(row[f]).split()) for f in ("id", "gender", "job_title", "country")}
    return Profile(age=age, experience=experience, education=education, **text)


SEED_COLUMNS = (
    "Date of Birth",
    "Education Level",
    "Country",
    "Job Title",
    "Gender",
    "Years of Experience",
)
"""The paper's seed CSV (the Kaggle recruitment file of FerdinandZhong/model_behavior_adaption;
also `recruitment_data.csv` in Hitha-ts/Employee-Data-analysis): the columns used."""

REFERENCE_YEAR = 2025
"""Age = this year − the birth year, as the authors' `calculate_age` computes it (it parses the
month as minutes, so only the year counts); 2025 is the year of their released runs."""


def load_profiles(path: Path, reference_year: int = REFERENCE_YEAR) -> tuple[Profile, ...]:
    """Profiles from CSV (with header) or JSONL (`.jsonl`); ids must be unique. A CSV with the
    paper's seed columns is read as the authors read it (`_seed_rows`)."""
    if path.suffix == ".jsonl":
        rows = jsonl_rows(path)
    else:
        header = _csv_header(path)
        seed = all(column in header for column in SEED_COLUMNS)
        rows = _seed_rows(path, reference_year) if seed else _csv_rows(path, PROFILE_FIELDS)
    profiles = tuple(profile_from_row(path, line, row) for line, row in rows)
    if not profiles:
        raise CareerChatFileError(path, None, "no profiles")
    seen: set[str] = set()
    for (line, _), profile in zip(rows, profiles, strict=True):
        if profile.id in seen:
            raise CareerChatFileError(path, line, f"duplicate id {profile.id!r}")
        seen.add(profile.id)
    return profiles


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CareerChatFileError(path, None, getattr(exc, "strerror", None) or str(exc)) from None


def jsonl_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) per non-blank line of a JSONL file; anything else is an error."""
    rows = []
    for number, raw in enumerate(_read(path).splitlines(), 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise CareerChatFileError(path, number, f"invalid JSON: {exc.msg}") from None
        if not isinstance(row, dict):
            raise CareerChatFileError(path, number, "each line must be a JSON object")
        rows.append((number, row))
    return rows


def _csv_header(path: Path) -> list[str]:
    return next(csv.reader(_read(path).splitlines()), [])


def _seed_rows(path: Path, reference_year: int) -> list[tuple[int, dict[str, Any]]]:
    """The seed CSV's rows in our fields: id `user<i>` for row i (0-based, the authors'
    `user_idx`), age = `reference_year` − the year of `Date of Birth` (dd-mm-yyyy), the
    paper's education labels as ours."""
    rows = []
    for index, (line, row) in enumerate(_csv_rows(path, SEED_COLUMNS)):
        day_month_year = str(row["Date of Birth"] or "").split("-")
        if len(day_month_year) != 3 or not day_month_year[2].strip().isdigit():
            raise CareerChatFileError(path, line, "Date of Birth must be dd-mm-yyyy")
        fields = {
            "id": f"user{index}",
            "age": reference_year - int(day_month_year[2]),
            "gender": row["Gender"],
            "education": row["Education Level"],
            "experience": row["Years of Experience"],
            "job_title": row["Job Title"],
            "country": row["Country"],
        }
        rows.append((line, fields))
    return rows


def _csv_rows(path: Path, columns: tuple[str, ...]) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(_read(path).splitlines(keepends=True))
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


GENDERS = ("Female", "Male")
JOB_TITLES = (
    "Software Engineer",
    "Data Analyst",
    "Marketing Manager",
    "Registered Nurse",
    "High School Teacher",
    "Accountant",
    "Sales Representative",
    "Research Scientist",
    "Operations Director",
    "Mechanical Technician",
)
COUNTRIES = (
    "United States",
    "Germany",
    "Japan",
    "Brazil",
    "China",
    "Mexico",
    "India",
    "Nigeria",
    "Vietnam",
    "Ethiopia",
)
EDUCATION_WEIGHTS = (0.25, 0.4, 0.25, 0.1)


def synthetic_profiles(rng: np.random.Generator, n: int) -> tuple[Profile, ...]:
    """A seeded population: ages 20–67, education weighted toward Bachelor's, experience
    ≤ age − 18 (− more years of study for higher degrees)."""
    profiles = []
    for i in range(1, n + 1):
        age = int(rng.integers(20, 68))
        level = int(rng.choice(len(EDUCATION_LEVELS), p=EDUCATION_WEIGHTS))
        study = (0, 4, 6, 10)[level]
        experience = int(rng.integers(0, max(1, age - 18 - study) + 1))
        profiles.append(
            Profile(
                id=f"u{i:03d}",
                age=age,
                gender=str(rng.choice(GENDERS)),
                education=EDUCATION_LEVELS[level],
                experience=min(experience, age),
                job_title=str(rng.choice(JOB_TITLES)),
                country=str(rng.choice(COUNTRIES)),
            )
        )
    return tuple(profiles)


# ---------------------------------------------------------------------------------------------
# The value survey
# ---------------------------------------------------------------------------------------------


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
    rows = _csv_rows(path, SURVEY_COLUMNS)
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


# ---------------------------------------------------------------------------------------------
# Job labels given per title (e.g. the authors' zero-shot classifier's output)
# ---------------------------------------------------------------------------------------------

JOB_GROUP_COLUMNS = ("job_title", "job_category", "position_level")


def load_job_groups(path: Path) -> dict[str, dict[str, str]]:
    """Job title → its `job_category` and `position_level` from a CSV with those columns; an
    empty cell leaves that label to the word rule (scenarios/career_chat/jobs.py)."""
    titles: dict[str, dict[str, str]] = {}
    for line, row in _csv_rows(path, JOB_GROUP_COLUMNS):
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


# ---------------------------------------------------------------------------------------------
# Human ratings of the dialogues (Appendix E)
# ---------------------------------------------------------------------------------------------


def load_human_ratings(path: Path) -> list[list[Any]]:
    """Rows (user, dimension, rating) of a CSV with those columns; a row per rater."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            if not {"user", "dimension", "rating"} <= set(reader.fieldnames or ()):
                raise ScenarioError(
                    f"--human-ratings: {path}:1: needs columns user,dimension,rating"
                )
            return [_human_row(path, reader.line_num, row) for row in reader]
    except OSError as exc:
        raise ScenarioError(f"--human-ratings: {path}: {exc.strerror or exc}") from None


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


# ---------------------------------------------------------------------------------------------
# The controller (Algorithm 1)
# ---------------------------------------------------------------------------------------------

END_REASONS = ("goals_covered", "max_turns", "failed")


@dataclass(frozen=True)
class RecordedTurn:
    """One exchange of a dialogue made elsewhere: the question as asked (after the detector),
    the answer, the user's own proposal and the detector's verdict."""

    question: str
    answer: str
    proposed: str
    out_of_context: bool


@dataclass(frozen=True)
class RecordedDialogue:
    """A whole dialogue made elsewhere: its user's profile, exchanges and end reason."""

    profile: Profile
    turns: tuple[RecordedTurn, ...]
    ended: str


@dataclass
class Dialogue:
    """One user's conversation: alternating user and assistant utterances."""

    turns: list[tuple[str, str]] = field(default_factory=list)
    ended: str | None = None

    @property
    def exchanges(self) -> int:
        return sum(role == "assistant" for role, _ in self.turns)


class CareerChat(Environment):
    """Dialogues between simulated users and the assistant, under Algorithm 1's rules.

    The original controller silently drops a profile whose question the detector flags; here
    the detector's rewrite replaces the question (both are logged), so every profile keeps a
    dialogue and the verdicts stay measurable.
    """

    kind: ClassVar[str] = "career_chat"

    def __init__(self, sim: Simulation, max_turns: int = 5) -> None:
        self.max_turns = max_turns
        self.dialogues: dict[str, Dialogue] = {}
        super().__init__(sim)

    def settings(self) -> dict[str, Any]:
        return {"max_turns": self.max_turns, "ooc": "rewrite"}

    def open(self, user: SimAgent) -> None:
        if user.agent_id in self.dialogues:
            raise InvalidActionError(f"{user.agent_id} already has a dialogue")
        self.dialogues[user.agent_id] = Dialogue()
        self.emit("career.dialogue_started", {}, agent_id=user.agent_id)

    def _open_dialogue(self, user: SimAgent) -> Dialogue:
        dialogue = self.dialogues.get(user.agent_id)
        if dialogue is None or dialogue.ended is not None:
            raise InvalidActionError(f"{user.agent_id} has no open dialogue")
        return dialogue

    def can_continue(self, user: SimAgent) -> bool:
        """Another exchange is allowed: the dialogue is open and under the turn limit."""
        dialogue = self._open_dialogue(user)
        return dialogue.exchanges < self.max_turns

    def ask(self, user: SimAgent, proposed: str, flagged: bool, rewrite: str) -> str:
        """The user's question after the detector: its rewrite if it flagged one."""
        dialogue = self._open_dialogue(user)
        if dialogue.turns and dialogue.turns[-1][0] == "user":
            raise InvalidActionError("the assistant must answer before the next question")
        if not self.can_continue(user):
            raise InvalidActionError(f"{user.agent_id} reached {self.max_turns} exchanges")
        question = rewrite if flagged else proposed
        if not question.strip():
            raise InvalidActionError("an empty question")
        dialogue.turns.append(("user", question))
        payload = {"turn": dialogue.exchanges + 1, "proposed": proposed, "out_of_context": flagged}
        self.emit("career.question", {**payload, "question": question}, agent_id=user.agent_id)
        return question

    def answer(self, user: SimAgent, text: str) -> None:
        dialogue = self._open_dialogue(user)
        if not dialogue.turns or dialogue.turns[-1][0] != "user":
            raise InvalidActionError("no question to answer")
        dialogue.turns.append(("assistant", text))
        self.emit(
            "career.answer", {"turn": dialogue.exchanges, "answer": text}, agent_id=user.agent_id
        )

    def close(self, user: SimAgent, reason: str) -> None:
        if reason not in END_REASONS:
            raise InvalidActionError(f"unknown end reason {reason!r}")
        dialogue = self._open_dialogue(user)
        if dialogue.turns and dialogue.turns[-1][0] == "user":
            dialogue.turns.pop()  # an unanswered question is not part of the dialogue
        dialogue.ended = reason
        self.emit(
            "career.dialogue_ended",
            {"reason": reason, "exchanges": dialogue.exchanges},
            agent_id=user.agent_id,
        )

    def replay(self, user: SimAgent, dialogue: RecordedDialogue) -> None:
        """A dialogue made in another run (`career_dialogues`), logged as if it happened here."""
        self.open(user)
        for turn in dialogue.turns:
            self.ask(user, turn.proposed, turn.out_of_context, turn.question)
            self.answer(user, turn.answer)
        self.close(user, dialogue.ended)

    def transcript(self, user: SimAgent) -> list[tuple[str, str]]:
        return list(self.dialogues[user.agent_id].turns)

    def usable(self, user: SimAgent) -> bool:
        """A finished dialogue with at least one exchange (probed in BA_dialogue)."""
        dialogue = self.dialogues.get(user.agent_id)
        return bool(dialogue and dialogue.ended in ("goals_covered", "max_turns"))
