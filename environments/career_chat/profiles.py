"""Career chat's user profiles (seed 003): loaded from our CSV/JSONL layout or the paper's seed
CSV, or drawn as a seeded synthetic population."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from personasim.environments.career_chat.files import (
    CareerChatFileError,
    csv_header,
    csv_rows,
    jsonl_rows,
)

__all__ = [
    "EDUCATION_ALIASES",
    "EDUCATION_LEVELS",
    "PROFILE_FIELDS",
    "REFERENCE_YEAR",
    "SEED_COLUMNS",
    "Profile",
    "education_label",
    "load_profiles",
    "profile_from_row",
    "synthetic_profiles",
]

EDUCATION_LEVELS = ("High School", "Bachelor's", "Master's", "PhD")
PROFILE_FIELDS = ("id", "age", "gender", "education", "experience", "job_title", "country")

EDUCATION_ALIASES = {"Bachelor's Degree": "Bachelor's", "Master's Degree": "Master's"}
"""The paper's seed-file labels (its Kaggle recruitment CSV) for our education levels."""


def education_label(education: str) -> str:
    return EDUCATION_ALIASES.get(education, education)


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
        header = csv_header(path)
        seed = all(column in header for column in SEED_COLUMNS)
        rows = _seed_rows(path, reference_year) if seed else csv_rows(path, PROFILE_FIELDS)
    profiles = tuple(profile_from_row(path, line, row) for line, row in rows)
    if not profiles:
        raise CareerChatFileError(path, None, "no profiles")
    seen: set[str] = set()
    for (line, _), profile in zip(rows, profiles, strict=True):
        if profile.id in seen:
            raise CareerChatFileError(path, line, f"duplicate id {profile.id!r}")
        seen.add(profile.id)
    return profiles


def _seed_rows(path: Path, reference_year: int) -> list[tuple[int, dict[str, Any]]]:
    """The seed CSV's rows in our fields: id `user<i>` for row i (0-based, the authors'
    `user_idx`), age = `reference_year` − the year of `Date of Birth` (dd-mm-yyyy), the
    paper's education labels as ours."""
    rows = []
    for index, (line, row) in enumerate(csv_rows(path, SEED_COLUMNS)):
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
