"""Markdown numbers keep 3 significant figures (issue 25, item 3), the sweep's table too."""

from __future__ import annotations

from pathlib import Path

import pytest

from personasim.simulation.runs.tables import significant, write_table


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
