"""`personasim import persona-gym --format published-scores`: the paper's published task scores
and PersonaScore (tests/data/public/personagym/published_scores.json, the six files of the authors'
`evaluations/`) as an imported run directory, beside a run of ours."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA

from personasim.simulation.cli.main import main

PUBLISHED = DATA / "personagym" / "published_scores.json"
TASKS = ("Expected Action", "Linguistic Habits", "Persona Consistency", "Toxicity Control",
         "Action Justification")  # fmt: skip


def table(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_published_scores_import_with_both_persona_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ours = tmp_path / "ours"
    small = ["--n-personas", "2", "--n-environments", "2", "--questions-per-task", "1"]
    assert main(["run", "persona-gym", *small, "--out", str(ours), "--no-progress"]) == 0
    out = tmp_path / "imported"
    args = ["import", "persona-gym", "--format", "published-scores", "--scores", str(PUBLISHED)]
    assert main([*args, "--beside", str(ours), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "20240710_claude_3_haiku: PersonaScore published 3.64, mean of tasks 3.84" in printed

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["import"]["format"] == "published-scores"
    assert manifest["import"]["sources"]["scores"]["file"] == "published_scores.json"
    assert manifest["llm"]["calls"] == 0
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    assert metrics["n_scored_questions"] is None
    assert "no per-question scores" in metrics["n_scored_questions_undefined"]

    released = json.loads(PUBLISHED.read_text())
    rows = {r["model"]: r for r in metrics["published"]}
    assert set(rows) == set(released)
    for model, scores in released.items():  # both PersonaScores, checked by hand here
        mean = np.mean([scores[t] for t in TASKS])
        assert rows[model]["PersonaScore"] == scores["PersonaScore"]
        assert rows[model]["mean_of_tasks"] == pytest.approx(mean, abs=1e-6)
        assert rows[model]["differs"] == (abs(scores["PersonaScore"] - mean) > 0.01)
        assert rows[model]["n"] is None
    assert metrics["differing"] == ["20240710_claude_3_haiku"]
    assert rows["20240710_claude_3_haiku"]["mean_of_tasks"] == pytest.approx(3.84)

    # our run beside the paper's six, with the spread (the sweep's Table 2)
    across = table(out / "reports" / "table2_across_models.csv")
    assert [r["model"] for r in across] == ["scripted", *released, "spread (max - min)"]
    assert across[0]["source"] == "run ours" and across[1]["source"] == "published"
    ours_metrics = json.loads((ours / "metrics.json").read_text())["metrics"]
    assert float(across[0]["PersonaScore"]) == pytest.approx(
        ours_metrics["scores"]["PersonaScore"], abs=1e-6
    )
    # the spread is over the paper's models: the scripted double (a test double) is left out
    persona_scores = [float(r["PersonaScore"]) for r in across[1:-1]]
    spread = max(persona_scores) - min(persona_scores)
    assert float(across[-1]["PersonaScore"]) == pytest.approx(spread, abs=1e-6)
    assert (
        across[-1]["spread_over"]
        == "6 of 7 rows; 1 scripted left out (the test double, not a model)"
    )
    assert float(across[0]["n"]) == ours_metrics["n_scored_questions"]
    assert "published_scores.csv" in {p.name for p in (out / "reports").iterdir()}
    # asked for, the scripted run counts in the spread
    counted = tmp_path / "counted"
    assert main([*args, "--beside", str(ours), "--spread-with-scripted", "yes",
                 "--out", str(counted)]) == 0  # fmt: skip
    with_scripted = table(counted / "reports" / "table2_across_models.csv")
    every = [float(r["PersonaScore"]) for r in with_scripted[:-1]]
    assert float(with_scripted[-1]["PersonaScore"]) == pytest.approx(max(every) - min(every))
    assert with_scripted[-1]["spread_over"] == "7 of 7 rows"
    assert main([*args, "--spread-with-scripted", "maybe", "--out", str(tmp_path / "x")]) == 2
    assert "--spread-with-scripted 'maybe': expected yes or no" in capsys.readouterr().err

    assert main(["metrics", str(out), "--check"]) == 0
    page = tmp_path / "view.html"
    assert main(["view", str(ours), str(out), "--output", str(page)]) == 0
    assert "20240710_claude_3_haiku" in page.read_text(encoding="utf-8")


def test_one_authors_scores_file_is_named_by_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "20240710_claude_3_haiku"
    folder.mkdir()
    scores = json.loads(PUBLISHED.read_text())["20240710_claude_3_haiku"]
    (folder / "scores.json").write_text(json.dumps(scores))
    out = tmp_path / "imported"
    args = ["import", "persona-gym", "--format", "published-scores"]
    assert main([*args, "--scores", str(folder / "scores.json"), "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    assert [r["model"] for r in metrics["published"]] == ["20240710_claude_3_haiku"]


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ({"m": {"PersonaScore": 3.0}}, "m: missing Expected Action"),
        ({"m": {**dict.fromkeys(TASKS, 3.0), "PersonaScore": 7}}, "PersonaScore 7 is outside"),
        ({"m": {**dict.fromkeys(TASKS, "x"), "PersonaScore": 3}}, "is not a number"),
        ([1, 2], "expected a JSON object"),
    ],
)
def test_bad_scores_are_an_error_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scores: object, message: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(scores))
    out = tmp_path / "imported"
    args = ["import", "persona-gym", "--format", "published-scores", "--scores", str(bad)]
    assert main([*args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and str(bad) in err and message in err
    assert not out.exists()
