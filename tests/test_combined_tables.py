"""The sweep's combined.md and the counterfactual table show every statistic with its n, p
values rounded only in the cell, and an undefined statistic as "undefined: <reason>" (issue
"Intervals and tests that hold at the edges", item 4); the CSVs keep full precision."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from personasim.analysis.counterfactual_table import mean_change_text
from personasim.simulation.cli.main import main
from personasim.simulation.runs.lifecycle.tables import significant
from personasim.simulation.runs.sweeps.sweep import run_sweep


def markdown_rows(path: Path) -> list[dict[str, str]]:
    """The Markdown table's rows as {column: cell} (the notes under it left out)."""
    lines = [line for line in path.read_text().splitlines() if line.startswith("|")]
    header, *body = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    return [dict(zip(header, cells, strict=True)) for cells in body[1:]]


def test_combined_md_shows_each_statistic_with_its_n(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    run_sweep(
        "trust-population",
        ["scripted"],
        {"n_personas": [1, 3]},
        out=out,
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    one, three = markdown_rows(out / "combined.md")
    assert one["mean_sent"].endswith(", n=1 decided")
    assert one["sd_sent"] == "undefined: fewer than 2 values (n=1 decided)"
    assert three["sd_sent"].endswith(", n=3 decided")
    with (out / "combined.csv").open() as f:
        numbers = list(csv.DictReader(f))
    assert numbers[0]["sd_sent"] == "" and numbers[0]["sd_sent_undefined"] == "fewer than 2 values"
    recorded = json.loads((out / "scripted__n_personas=3" / "metrics.json").read_text())
    mean = recorded["metrics"]["mean_sent"]
    assert float(numbers[1]["mean_sent"]) == mean  # the CSV keeps the metrics' number
    assert three["mean_sent"].startswith(f"{mean:.3g}")  # 3 significant figures in the cell


def test_counterfactual_md_shows_mean_interval_test_p_and_pairs(tmp_path: Path) -> None:
    out = tmp_path / "cf"
    argv = ["counterfactual", "trust-population", "--attribute", "Sex", "--levels",
            "Male,Female", "--by", "Agreeableness", "--n-personas", "6", "--out", str(out),
            "--cache-dir", str(tmp_path / "cache"), "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    rows = markdown_rows(out / "reports" / "counterfactual.md")
    block = json.loads((out / "metrics.json").read_text())["metrics"]["counterfactual"]
    assert len(rows) == len(block["rows"])
    for cell, row in zip(rows, block["rows"], strict=True):
        n = row["n"]
        assert cell["mean_difference"].endswith(f", n={n} paired")
        assert cell["changed"] == f"{100 * row['changed']:.1f}% of {n} paired"
        assert cell["test"] == row["test"]
        # Sex is not in the scripted rules: every difference is zero, so no p and no interval
        assert cell["p"] == cell["p_holm"] != ""
        assert cell["p"].startswith("undefined: ") and cell["ci_low"].startswith("undefined: ")
    single = [c for c, r in zip(rows, block["rows"], strict=True) if r["n"] == 1]
    assert single and all(c["p"] == "undefined: it needs at least two values" for c in single)


def test_a_counterfactual_row_with_a_p_keeps_it_to_three_figures(tmp_path: Path) -> None:
    out = tmp_path / "cf"
    argv = ["counterfactual", "trust-population", "--attribute", "Agreeableness", "--levels",
            "Low,Medium,High", "--n-personas", "8", "--out", str(out),
            "--cache-dir", str(tmp_path / "cache"), "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    rows = markdown_rows(out / "reports" / "counterfactual.md")
    block = json.loads((out / "metrics.json").read_text())["metrics"]["counterfactual"]
    with_p = [(c, r) for c, r in zip(rows, block["rows"], strict=True) if r["p"] is not None]
    assert with_p
    for cell, row in with_p:
        assert cell["p"] == significant(row["p"]) and cell["p_holm"] == significant(row["p_holm"])
        assert float(cell["p"]) == pytest.approx(row["p"], rel=5e-3)  # rounded, not another p
        assert cell["mean_difference"].startswith("+")  # Agreeableness raises what is sent


def test_an_undefined_mean_says_why_with_its_n() -> None:
    row = {"n": 0, "mean_difference": None, "mean_difference_undefined": "no values"}
    assert mean_change_text(row) == "undefined: there is no value to compute it from (n=0 paired)"
    row = {"n": 20, "mean_difference": 2.95, "ci_low": 2.85, "ci_high": 3.05}
    assert mean_change_text(row) == "+2.95 [2.85, 3.05], n=20 paired"


SMALL_SWEEPS = {  # the smallest run of each scenario that still fills its summary rows
    "career-chat": {"n_users": 2, "n_items": 1, "judge_samples": 0, "max_turns": 2,
                    "bootstrap": 0, "permutations": 0},
    "classroom": {"n_questions": 1, "repetitions": 1, "races": "none,AA"},
    "persona-gym": {"n_personas": 1, "n_environments": 1, "questions_per_task": 1},
    "persona-journey": {"n_personas": 2, "scenes": 1, "n_items": 1},
    "trust-beliefs": {"n_personas": 3},
    "trust-conditioning": {"n_personas": 3},
    "trust-forecast": {"n_personas": 1, "rounds": 2},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SMALL_SWEEPS))
def test_every_declared_statistic_shows_its_n(name: str, tmp_path: Path) -> None:
    from personasim.simulation.core.scenario import get_scenario

    counts = get_scenario(name).metrics.summary_counts
    assert counts, f"{name} declares no summary_counts"
    out = tmp_path / "sweep"
    run_sweep(name, ["scripted"], params=SMALL_SWEEPS[name], out=out, progress=False,
              use_cache=False)  # fmt: skip
    with (out / "combined.csv").open() as f:
        numbers = list(csv.DictReader(f))
    cells = markdown_rows(out / "combined.md")
    shown = 0
    for number, cell in zip(numbers, cells, strict=True):
        for stat, count in counts.items():
            if stat not in number or (number[stat] == "" and number.get(count.n, "") == ""):
                continue  # not part of this row
            n = number.get(count.n, "")
            if n == "":  # the row records no n for it (a single trait's ρ): its value alone
                assert cell[stat] == significant(float(number[stat])), (stat, cell[stat])
                continue
            counted = f"{int(float(n))} {count.noun}"
            if number[stat] == "":
                assert cell[stat].endswith(f"(n={counted})") or f"(n={counted}, " in cell[stat]
            elif count.percent is not None:
                assert f" of {counted}" in cell[stat], (stat, cell[stat])
                assert cell[stat].startswith(f"{count.percent * float(number[stat]):.1f}%")
            else:
                assert cell[stat].endswith(f", n={counted}") or f", n={counted}, " in cell[stat]
                assert cell[stat].startswith(significant(float(number[stat])))
            shown += 1
    assert shown, f"no declared statistic of {name} was in its rows"
