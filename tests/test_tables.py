"""Markdown numbers keep 3 significant figures (issue 25, item 3), the sweep's table too."""

from __future__ import annotations

from pathlib import Path

import pytest

from personasim.simulation.runs.lifecycle.tables import cell_text, percent, significant, write_table


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.5, "0.500"),
        (0.00123456, "0.00123"),
        (12.345, "12.3"),
        (0.0999999, "0.100"),
        (9.9999, "10.0"),
        (-0.0025, "-0.00250"),
        (2.4e-6, "2.40e-06"),
        (1234.4, "1234"),
        (0.0, "0"),
    ],
)
def test_significant_figures(value: float, shown: str) -> None:
    assert significant(value) == shown


def test_markdown_keeps_small_baselines_readable(tmp_path: Path) -> None:
    rows = [{"grouping": "age", "n": 12, "baseline": 0.00123456, "ratio": 2.345678}]
    csv_path, md_path = write_table(rows, tmp_path, "t")
    text = md_path.read_text()
    assert "0.00123" in text and "2.35" in text and "| 12 " in text.replace("|  ", "| ")
    assert "0.00123456" in csv_path.read_text()  # the CSV keeps every digit


# --- one place renders a cell with its n (issue 36) --------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "shown"),
    [
        ((100 / 9, 9), {"noun": "graded", "asked": 12, "as_percent": True},
         "11.1% of 9 graded, 12 asked"),
        ((44.4, 36), {"noun": "graded", "asked": 36, "as_percent": True, "note": "(-47.2)"},
         "44.4% (-47.2) of 36 graded"),
        ((60.0, 20), {"as_percent": True}, "60.0% of 20"),
        ((2.8611, 36), {"noun": "judged"}, "2.86, n=36 judged"),
        ((2.8611, 36), {"noun": "judged", "digits": 2, "note": "(+0.25)"},
         "2.86 (+0.25), n=36 judged"),
        ((None, 0), {"noun": "graded", "asked": 12, "reason": "no graded answers",
                     "as_percent": True}, "undefined: no graded answers (n=0 graded, 12 asked)"),
        ((float("nan"), 3), {}, "— (n=3)"),
        ((4.51, None), {}, "4.51"),  # published aggregates: no n to give
        (("4.00 (SD 2.20)", 60), {"noun": "deciders"}, "4.00 (SD 2.20), n=60 deciders"),
    ],
)  # fmt: skip
def test_a_cell_shows_its_value_with_its_n_and_denominator(
    args: tuple, kwargs: dict, shown: str
) -> None:
    assert cell_text(*args, **kwargs) == shown


def test_percentages_have_one_format() -> None:
    assert percent(60.0) == "60.0%" and percent(4.0, 2) == "4.00%"


def test_markdown_cells_render_with_their_n_while_the_csv_keeps_numbers(tmp_path: Path) -> None:
    rows = [
        {"task": "a", "rate": 0.06, "judged": 200, "refusals": 12},
        {"task": "b", "rate": None, "judged": None, "refusals": None},  # a gap in an int column
    ]
    cells = {"rate": lambda r: cell_text(None if r["rate"] is None else 100 * r["rate"],
                                         r["judged"], noun="judged", as_percent=True)}  # fmt: skip
    csv_path, md_path = write_table(rows, tmp_path, "t", cells=cells)
    text = md_path.read_text()
    assert "| 6.0% of 200 judged |" in text and "| —" in text
    assert "|         12 |" in text and "12.0" not in text  # ints stay ints beside a gap
    assert "0.06" in csv_path.read_text()


def test_the_classroom_summary_says_in_words_what_was_not_run() -> None:
    """Never "no persona undefined (no graded answers) % of 0"."""
    from personasim.scenarios.classroom.reports import report_lines

    base = {"accuracy": None, "accuracy_undefined": "no graded answers", "accuracy_sd": None,
            "accuracy_all": None, "n_answers": 0, "n_graded": 0}  # fmt: skip
    metrics = {"model": "m", "n_questions": 2, "repetitions": 1, "baseline": base,
               "answer_failures": 0, "judge_failures": 0, "reasks": 0, "cells": []}  # fmt: skip
    (line,) = report_lines(metrics)
    assert "no persona: not run (no answers asked)" in line
    assert "undefined (" not in line and "% of 0" not in line
    lost = {**base, "n_answers": 3}
    (line,) = report_lines({**metrics, "baseline": lost})
    assert "no persona: no answer graded of 3 asked (all failed)" in line
