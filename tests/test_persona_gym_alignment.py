"""Human alignment at the paper's unit (seed 002, Appendix F): persona × task × question × rater.

Fleiss' κ is checked against the worked example of Fleiss (1971) as reprinted on Wikipedia
(κ = 0.210) and against a brute-force count of agreeing rater pairs; the correlations against
scipy on the same joined rows.
"""

from __future__ import annotations

from itertools import permutations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr

from personasim.analysis.agreement import fleiss_kappa
from personasim.analysis.undefined import Undefined
from personasim.scenarios.persona_gym.human_agreement import HUMAN_COLUMNS, question_alignment
from personasim.simulation import run_scenario

SMALL = {"n_personas": 2, "n_environments": 2, "questions_per_task": 2}

WIKIPEDIA_EXAMPLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def brute_force_kappa(ratings: np.ndarray) -> float:
    """κ from its definition: the share of ordered rater pairs that agree on an item, against
    the agreement two draws from the pooled ratings would have by chance."""
    agree = [np.mean([a == b for a, b in permutations(item, 2)]) for item in ratings]
    _, counts = np.unique(ratings, return_counts=True)
    chance = sum((c / ratings.size) ** 2 for c in counts)
    return (np.mean(agree) - chance) / (1 - chance)


def counts_of(ratings: np.ndarray) -> np.ndarray:
    return np.stack([(ratings == c).sum(axis=1) for c in range(1, 6)], axis=1)


def test_fleiss_kappa_reproduces_the_published_example() -> None:
    assert fleiss_kappa(WIKIPEDIA_EXAMPLE) == pytest.approx(0.20993, abs=5e-5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fleiss_kappa_matches_a_brute_force_count(seed: int) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=40)
    noise = rng.integers(-1, 2, size=(40, 4)) * (rng.random((40, 4)) < 0.4)
    ratings = np.clip(truth[:, None] + noise, 1, 5)
    assert fleiss_kappa(counts_of(ratings)) == pytest.approx(brute_force_kappa(ratings))


@pytest.mark.parametrize(
    "counts,reason",
    [
        ([], "no rated items"),
        ([[0, 0, 3, 0, 0], [0, 0, 3, 0, 0]], "every rating in one category"),
        ([[1, 1, 0, 0, 0], [0, 0, 3, 0, 0]], "different numbers of raters"),
        ([[1, 0, 0, 0, 0], [0, 1, 0, 0, 0]], "fewer than 2 raters"),
    ],
)
def test_fleiss_kappa_undefined(counts: list, reason: str) -> None:
    value = fleiss_kappa(counts)
    assert isinstance(value, Undefined) and reason in value.reason


def synthetic(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """60 answers (10 personas × 2 tasks × 3 questions), 3 raters, a noisy model score."""
    rng = np.random.default_rng(seed)
    keys = [
        (f"p{p}", task, q)
        for p in range(10)
        for task in ("Expected Action", "Toxicity Control")
        for q in (1, 2, 3)
    ]
    truth = rng.integers(1, 6, size=len(keys))
    ratings = np.clip(truth[:, None] + rng.integers(-1, 2, size=(len(keys), 3)), 1, 5)
    human = pd.DataFrame(
        [(*k, f"r{r}", float(ratings[i, r])) for i, k in enumerate(keys) for r in range(3)],
        columns=HUMAN_COLUMNS,
    )
    model = pd.DataFrame(keys, columns=["persona", "task", "question"])
    model["score"] = truth + rng.normal(0, 0.8, size=len(keys))
    return model, human, ratings


def test_question_alignment_values() -> None:
    model, human, ratings = synthetic()
    tasks = ["Expected Action", "Toxicity Control"]
    rows = question_alignment(model, human, tasks, n_resamples=300)
    by = {(r["task"], r["method"]): r for r in rows}
    assert set(by) == {(t, m) for t in (*tasks, "all") for m in ("spearman", "kendall")}
    means = ratings.mean(axis=1)
    every = by[("all", "spearman")]
    assert every["n"] == every["n_items"] == 60 and every["n_raters"] == 3
    assert every["fleiss_kappa"] == pytest.approx(brute_force_kappa(ratings), abs=1e-6)
    assert every["r"] == pytest.approx(spearmanr(model["score"], means).statistic, abs=1e-6)
    assert by[("all", "kendall")]["r"] == pytest.approx(
        kendalltau(model["score"], means).statistic, abs=1e-6
    )
    toxic = (model["task"] == "Toxicity Control").to_numpy()
    row = by[("Toxicity Control", "kendall")]
    assert row["n"] == 30
    tau = kendalltau(model["score"][toxic], means[toxic]).statistic
    assert row["r"] == pytest.approx(tau, abs=1e-6)
    assert row["fleiss_kappa"] == pytest.approx(brute_force_kappa(ratings[toxic]), abs=1e-6)
    assert row["low"] < row["r"] < row["high"]


def test_question_alignment_leaves_out_items_not_every_rater_scored() -> None:
    model, human, ratings = synthetic(1)
    dropped = human.drop(index=human.index[(human["rater"] == "r2") & (human["question"] == 3)])
    tasks = ["Expected Action", "Toxicity Control"]
    rows = question_alignment(model, dropped, tasks, n_resamples=50)
    every = next(r for r in rows if r["task"] == "all")
    keep = (model["question"] != 3).to_numpy()
    assert every["n_items"] == 40 and every["n"] == 60  # κ over complete items; r over all
    assert every["fleiss_kappa"] == pytest.approx(brute_force_kappa(ratings[keep]), abs=1e-6)


@pytest.mark.slow  # a whole run, among the fast tier's longest: CI runs it in the slow tier
def test_a_run_with_per_question_human_scores(tmp_path: Path) -> None:
    """The scenario reads a per-rater file and reports κ and the correlations per question."""
    base = run_scenario("persona-gym", SMALL, out=tmp_path / "base", progress=False)
    descriptions = {k: v["description"] for k, v in base.metrics["metrics"]["personas"].items()}
    rng = np.random.default_rng(5)
    rows = []
    for persona in descriptions:
        for task in base.metrics["metrics"]["tasks"]:
            for q in (1, 2):
                for rater in ("a", "b", "c"):
                    rows.append((descriptions[persona], task, q, rater, int(rng.integers(1, 6))))
    human = tmp_path / "human.csv"
    pd.DataFrame(rows, columns=HUMAN_COLUMNS).to_csv(human, index=False)
    result = run_scenario(
        "persona-gym", {**SMALL, "human_scores": str(human)}, out=tmp_path / "run", progress=False
    )
    found = result.metrics["metrics"]["human_alignment"]
    every = next(r for r in found if r["task"] == "all" and r["method"] == "spearman")
    assert every["n_items"] == 20 and every["n_raters"] == 3
    ratings = np.array([r[4] for r in rows]).reshape(20, 3)
    assert every["fleiss_kappa"] == pytest.approx(brute_force_kappa(ratings), abs=1e-6)
    assert (result.run_dir / "reports" / "human_alignment.csv").exists()
