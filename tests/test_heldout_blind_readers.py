"""The readers on the blind sets written after the first two (tests/data/heldout_v4/,
heldout_v5/, heldout_v7/ to heldout_v16/, READMEs there): each written by
labellers who never opened the readers' code, their tests or an earlier corpus's rows, counted
first as a whole (counts only), then split once, like the earlier sets, by a hash of each
row's id (`part`): the development part's misreadings are printed for the readers' authors,
the held-out part is only ever counted.

- **v4** (2026-11-28): as a whole, the readers before the fifth round: math 10 wrong of 300 and
  48 of 267 valued replies without a value, transfers 0 wrong and 5 of 135; the fifth round's:
  math 8 and 37, transfers 0 and 5. Held-out part at the split: math 3 wrong, 24 without a
  value; after the fifth round: 2 and 22; after the sixth: 2 and 23.
- **v5** (2026-11-28): as a whole, the readers before the sixth round: math 6 wrong of 300
  (2.0 %) and 40 of 265 valued replies without a value (15.1 %), transfers 0 wrong of 140 and 7
  of 117; the sixth round's rules as they were when the set arrived: math 7 wrong and 38
  without a value, transfers the same. Held-out part at the split: math 1 wrong of 158, 25 of
  143 without a value; transfers 0 wrong of 79, 2 of 63; after the sixth round (its
  development part studied): math 1 wrong and 20 without a value, transfers the same; after
  the seventh round: math 1 and 16.
- **v7** (2026-11-28, math only): written while the seventh round was built, counted as a whole
  when it arrived: the readers before the seventh round 7 wrong of 300 (2.3 %) and 20 of 274
  valued replies without a value (7.3 %), the seventh round's 7 and 18 (6.6 %). Held-out part
  at the split: 5 wrong of 178 (2.8 %), 6 of 161 without a value (3.7 %); after the eighth
  round: 5 and 7 (one more without a value); after the ninth: 4 and 8 (no sentence ends at
  "i.e.").
- **v8** (2026-11-28, math only): written while the eighth round was built, counted as a whole
  when it arrived: the readers before the eighth round 7 wrong of 300 (2.3 %) and 36 of 277
  valued replies without a value (13.0 %), the round's first rule 7 and 37. Held-out part at
  the split: 4 wrong of 173 (2.3 %), 21 of 160 without a value (13.1 %; 20 before the round);
  after the round (its development part studied): 4 and 20; after the ninth: 4 and 19 (money
  words).
- **v9** (2026-11-28, math only): written while the ninth round was built, counted as a whole
  when it arrived: the readers before the ninth round 8 wrong of 300 (2.7 %) and 26 of 272
  valued replies without a value (9.6 %), the round's rules built by then 8 and 24 (8.8 %).
  Held-out part at the split: 5 wrong of 191 (2.6 %), 10 of 174 without a value (5.7 %; 12
  before the round).
- **v10** (2026-11-28): written while the tenth round was built, counted as a whole when it
  arrived: math, the readers before the tenth round 16 wrong of 300 (5.3 %) and 52 of 268
  valued replies without a value (19.4 %), the round's rules built by then 18 and 45;
  transfers 0 wrong of 120 and 16 of 96, before and after. Held-out part at the split: math
  11 wrong of 167 (6.6 %) and 23 of 149 without a value before the round; after it (its
  development part studied): 11 and 19; transfers 0 wrong of 70, 8 of 56 without a value.
- **v11** (2026-11-28, math only, 150 rows): written while the tenth round was built, counted
  as a whole when it arrived: the readers before the tenth round 7 wrong of 150 (4.7 %) and 22
  of 134 valued replies without a value (16.4 %); the round's rules as committed then 5 and 20.
  Held-out part at the split: 4 wrong of 83 before the round, 2 after it; 11 of 75 without a
  value, before and after.
- **v12** (2026-11-28, math only, 150 rows): written after the tenth round was built, counted
  as a whole when it arrived: the readers before the tenth round 3 wrong of 150 and 21 of 134
  without a value; the round as submitted 1 and 16. Held-out part: 2 → 0 wrong of 85, 15 → 12
  of 77 without a value; no rule changed after this count. After the eleventh round: 0 and 11.
- **v13** (2026-11-28, math only, 150 rows): written while the eleventh round was built, counted
  as a whole when it arrived: 8 wrong of 150 (5.3 %) and 17 of 131 valued replies without a
  value (13.0 %), with the readers before the round and with its rules built by then alike.
  Held-out part at the split: 5 wrong of 92 (5.4 %), 13 of 84 without a value (15.5 %); after
  the round (its development part studied): the same; as a whole 5 and 16. After the twelfth
  round: 5 and 12.
- **v14** (2026-11-28, math only, 150 rows): written while the twelfth round was built, counted
  as a whole when it arrived: the readers before the round 4 wrong of 150 (2.7 %) and 28 of 132
  valued replies without a value (21.2 %); the round's rules built by then 4 and 27. Held-out
  part at the split: 1 wrong of 84, 17 of 74 without a value; after the round (its development
  part studied): the same; after the fourteenth round: 1 and 16.
- **v15** (2026-11-29, math only, 150 rows): written while the fourteenth round was built,
  counted as a whole when it arrived: the readers before the round 2 wrong of 150 (1.3 %) and
  22 of 129 valued replies without a value (17.1 %); the round's rules 2 and 20. Held-out part
  at the split: 2 wrong of 99, 15 of 85 without a value, before and after the round (its
  development part studied).
- **v16** (2026-11-29, math only, 150 rows): written while the fifteenth round was built,
  counted as a whole when it arrived: 7 wrong of 150 (4.7 %) and 14 of 130 valued replies
  without a value (10.8 %), the same with the readers before the round and with the round's
  rules built by then. Held-out part at the split: 3 wrong of 96, 12 of 82 without a value;
  after the round (its development part studied): the same.

The eighth round also moved the older sets' held-out parts: v4 2 → 1 wrong and 23 → 21 without
a value, v5 16 → 14 without a value; the tenth: v5 14 → 13 → 14 without a value (a reply cut off
inside its last result is unreadable: one held-out reply it took is labelled with a value), v7
4 → 3 wrong, v8
4 → 2 wrong and 19 → 18 without a value, v9 5 → 4 wrong and 10 → 8 without a value; the
eleventh: v4 21 → 20, v7 8 → 7, v10 19 → 16 and v12 12 → 11 without a value, v9 4 → 3 wrong
and 8 → 7 without a value; the twelfth: v2 4 → 3 wrong (a value under a condition, then
another value, is ambiguous), v5 14 → 13 and v10 16 → 15 without a value (an approximate
restatement in another unit does not hedge the value before it); the fourteenth: v4 20 → 19
and v10 15 → 13 without a value; the fifteenth: v10 11 → 10 and v13 5 → 4 wrong (bold steps
are no emphasised answer), v13 12 → 13 and v4 19 → 17 without a value.

`MEASURED`: the held-out part's counts after the last round studied its development part; the
tests fail if a reader gets worse."""

from __future__ import annotations

import pytest
from test_heldout_readers import goal
from test_heldout_v2_readers import counted, math_tally, transfer_tally

MEASURED = {
    # corpus: (rows, math wrong, math without a value, transfer rows, wrong, without a value)
    "v4": (300, 1, 17, 160, 0, 1),
    "v5": (300, 1, 13, 140, 0, 2),
    "v10": (300, 10, 13, 120, 0, 8),
}
MATH_ONLY = {
    "v7": (300, 3, 8),
    "v8": (300, 2, 17),
    "v9": (300, 3, 7),
    "v11": (150, 2, 11),
    "v12": (150, 0, 11),
    "v13": (150, 4, 13),
    "v14": (150, 1, 16),
    "v15": (150, 2, 15),
    "v16": (150, 3, 12),
}
"""Sets of math replies alone: (rows, math wrong, math without a value)."""
MATH = {**{corpus: counts[:3] for corpus, counts in MEASURED.items()}, **MATH_ONLY}


@pytest.mark.parametrize("corpus", sorted(MATH))
def test_math_answers_held_out(corpus: str, capsys: pytest.CaptureFixture[str]) -> None:
    rows, wrong, no_value = MATH[corpus]
    dev, held = math_tally("dev", corpus), math_tally("heldout", corpus)
    counted(dev, capsys, listed=True, corpus=corpus)
    counted(held, capsys, listed=False, corpus=corpus)
    met = held.wrong_rate <= 0.01 and held.unreadable_rate <= 0.05
    goal(capsys, f"math answers ({corpus})", met)
    assert dev.n + held.n == rows and held.n >= rows // 2
    assert held.counts["wrong"] <= wrong
    assert held.counts["abstained"] <= no_value


@pytest.mark.parametrize("corpus", sorted(MEASURED))
def test_transfers_held_out(corpus: str, capsys: pytest.CaptureFixture[str]) -> None:
    *_, rows, wrong, no_value = MEASURED[corpus]
    dev, held = transfer_tally("dev", corpus), transfer_tally("heldout", corpus)
    counted(dev, capsys, listed=True, corpus=corpus)
    counted(held, capsys, listed=False, corpus=corpus)
    goal(capsys, f"transfers ({corpus})", held.wrong_rate <= 0.01)
    assert dev.n + held.n == rows and held.n >= rows // 2
    assert held.counts["wrong"] <= wrong
    assert held.counts["abstained"] <= no_value
