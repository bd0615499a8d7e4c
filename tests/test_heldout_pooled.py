"""The readers' held-out figures pooled over every set, with Wilson 95% intervals.

Each set's own figures are printed (and guarded) by tests/test_heldout_readers.py,
test_heldout_v2_readers.py and test_heldout_blind_readers.py; a single set of 80 to 190 rows
cannot tell 1 % from 2 % (one reading is about 1 %). Pooled, the held-out parts of all the
sets say how often a reader is wrong on replies its authors never read, and how sure that is.
Counts only: no row is shown."""

from __future__ import annotations

import pytest
from test_heldout_blind_readers import MATH, MEASURED
from test_heldout_readers import Tally, jsonl
from test_heldout_readers import math_tally as first_math_tally
from test_heldout_readers import transfer_tally as first_transfer_tally
from test_heldout_v2_readers import math_tally, transfer_tally

from personasim.analysis.intervals import wilson_interval

POOLED_ROWS = {"math": 1871, "transfers": 418}
"""Held-out rows in all sets: math answers in 14 sets, transfers in 5. The test fails when a
set is left out of the pool, or a new one is not added to it."""


def pooled(reader: str) -> Tally:
    if reader == "math":
        parts = [
            first_math_tally("held-out", jsonl("math_answers.jsonl", "heldout")),
            math_tally("heldout", "v2"),
            *(math_tally("heldout", corpus) for corpus in sorted(MATH)),
        ]
    else:
        parts = [
            first_transfer_tally("heldout"),
            transfer_tally("heldout", "v2"),
            *(transfer_tally("heldout", corpus) for corpus in sorted(MEASURED)),
        ]
    total = Tally(f"{reader}, all sets")
    for part in parts:
        total.counts.update(part.counts)
    return total


def rate(k: int, n: int) -> str:
    low, high = wilson_interval(k, n)
    return f"{k} of {n} ({k / n:.2%}; 95% {low:.2%}–{high:.2%})"


@pytest.mark.parametrize(("reader", "wrong_goal", "no_value_goal"), [
    ("math", 0.01, 0.05),
    ("transfers", 0.01, None),
])  # fmt: skip
def test_pooled_held_out_figures(
    reader: str, wrong_goal: float, no_value_goal: float | None, capsys: pytest.CaptureFixture[str]
) -> None:
    total = pooled(reader)
    wrong, valued, abstained = (total.counts[k] for k in ("wrong", "valued", "abstained"))
    met = total.wrong_rate <= wrong_goal
    if no_value_goal is not None:
        met = met and total.unreadable_rate <= no_value_goal
    with capsys.disabled():
        print(
            f"\nheld-out {total.name}: wrong {rate(wrong, total.n)}, no value where the label "
            f"has one {rate(abstained, valued)}; the goal is {'met' if met else 'NOT met'}"
        )
    assert total.n == POOLED_ROWS[reader]
