"""Synthetic career-chat import inputs, in the formats of the paper's released files.

The career-chat importer (`personasim import career-chat --format model-behavior-adaption`)
reads two JSONL answer files and the seed CSV. The authors' files are not part of this project
(tests comparing with their numbers read them from `PERSONASIM_CAREER_MBA_DATA`), so the tests
of structure and invariants run on these: our own data, made by this script with a seeded
generator, written to `tests/data/career_mba/synthetic/`:

- `profiles.csv`: 25 invented people with the seed CSV's six columns (Date of Birth dd-mm-yyyy,
  Education Level, Country, Job Title, Gender, Years of Experience), drawn from the lists below;
- `profile_answers.jsonl`, `dialogue_answers.jsonl`: per user (`user_idx` = row) a
  `value_selections` entry for each of the 18 VSM-2013 items (`question_index` 0–17):
  `normalized_probs` over the five options (a peaked softmax of seeded random logits, in
  ten-thousandths that sum to one) and `selected_option_id`, the most probable option. The
  dialogue answers share half of each user's logits with the profile answers, so the two
  formats are related but not equal.

Regenerate (a test checks that the committed files equal a fresh run):
`python tests/career_synthetic.py`.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import numpy as np

from personasim.environments.career_chat import SEED_COLUMNS

FOLDER = Path(__file__).parent / "data" / "career_mba" / "synthetic"
N_USERS = 25
N_ITEMS = 18  # the VSM-2013 items the paper asks (tests/data/public/vsm2013)
N_OPTIONS = 5
SEED = 2025
EDUCATION = ("High School", "Bachelor's Degree", "Master's Degree", "PhD")
COUNTRIES = (  # each of the authors' development levels, and names their table lacks
    "Germany",
    "Japan",
    "France",
    "India",
    "Brazil",
    "Vietnam",
    "Kenya",
    "Ethiopia",
    "Greenland",
    "Micronesia",
)
JOB_TITLES = (
    "Chief Technology Officer",
    "Designer, furniture",
    "Nurse, adult",
    "Teacher, primary school",
    "Accountant, chartered",
    "Software engineer",
    "Hotel manager",
    "Research scientist (physical sciences)",
    "Marketing executive",
    "Administrative assistant",
    "Pharmacist, hospital",
    "Civil engineer, contracting",
)
GENDERS = ("Female", "Male")


def profile_rows(rng: np.random.Generator) -> list[dict[str, str]]:
    """Invented people; birth years 1955–2004, so every age bin of 2025 has members."""
    rows = []
    for _ in range(N_USERS):
        year = int(rng.integers(1955, 2005))
        day, month = int(rng.integers(1, 29)), int(rng.integers(1, 13))
        experience = int(rng.integers(0, max(1, min(2025 - year - 18, 40)) + 1))
        rows.append(
            {
                "Date of Birth": f"{day:02d}-{month:02d}-{year}",
                "Education Level": str(rng.choice(EDUCATION)),
                "Country": str(rng.choice(COUNTRIES)),
                "Job Title": str(rng.choice(JOB_TITLES)),
                "Gender": str(rng.choice(GENDERS)),
                "Years of Experience": str(experience),
            }
        )
    return rows


def distribution(logits: np.ndarray) -> list[float]:
    """Softmax of `logits` in ten-thousandths summing to exactly 10,000 (largest remainder)."""
    weights = np.exp(logits - logits.max())
    scaled = weights / weights.sum() * 10_000
    counts = np.floor(scaled).astype(int)
    for index in np.argsort(counts - scaled)[: 10_000 - counts.sum()]:
        counts[index] += 1
    return [int(c) / 10_000 for c in counts]


def answer_lines(logits: np.ndarray) -> list[str]:
    """One JSONL line per user: `user_idx` and its 18 value selections."""
    lines = []
    for user, per_item in enumerate(logits):
        selections = []
        for item, item_logits in enumerate(per_item):
            probs = distribution(item_logits)
            selections.append(
                {
                    "question_index": item,
                    "selected_option_id": int(np.argmax(probs)) + 1,
                    "normalized_probs": probs,
                }
            )
        lines.append(json.dumps({"user_idx": user, "value_selections": selections}))
    return lines


def synthetic_files() -> dict[str, str]:
    """File name → text of the three synthetic inputs."""
    rng = np.random.default_rng(SEED)
    rows = profile_rows(rng)
    shape = (N_USERS, N_ITEMS, N_OPTIONS)
    profile = rng.normal(0.0, 3.0, shape)
    dialogue = 0.5 * profile + rng.normal(0.0, 2.5, shape)
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=SEED_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return {
        "profiles.csv": table.getvalue(),
        "profile_answers.jsonl": "\n".join(answer_lines(profile)) + "\n",
        "dialogue_answers.jsonl": "\n".join(answer_lines(dialogue)) + "\n",
    }


def write_synthetic(folder: Path = FOLDER) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in synthetic_files().items():
        (folder / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write_synthetic(Path(sys.argv[1]) if len(sys.argv) > 1 else FOLDER)
