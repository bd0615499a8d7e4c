"""Held-out figures of every reader of model text (tests/data/heldout/, README there).

The sets were labelled by people who had not seen the new readers, and the readers were
written without looking at them. After their first measurement, each set was split once, by a
hash of its rows' ids fixed before any row was looked at (`part`): about 40 % became a second
development part (`dev`), whose misreadings the readers' authors may study; the other 60 %
(`heldout`) is only ever counted, never read, and its figures are the ones quoted in the docs.
Each test prints both parts' figures and checks the held-out part against the issue's goals:

- a *wrong* reading is a value other than the label, or a value where the label says a careful
  grader cannot take one (unreadable, ambiguous): a guess;
- an *abstention* is no value where the label has one (the reply is re-asked or counted);
- `wrong rate` = wrong / all rows; `unreadable rate` = abstentions / rows labelled with a value.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from personasim.simulation import Reading, same_value

HELDOUT = Path(__file__).parent / "data" / "heldout"
NO_VALUE = ("unreadable", "ambiguous")


def part(name: str, key: str) -> str:
    """The row's part: "dev" (may be studied) or "heldout" (only counted), fixed by a hash."""
    return "dev" if hashlib.sha256(f"{name}:{key}".encode()).digest()[0] % 5 < 2 else "heldout"


def jsonl(name: str, which: str) -> list[dict[str, Any]]:
    lines = (HELDOUT / name).read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return [row for row in rows if part(name, str(row["id"])) == which]


def titles(which: str) -> list[dict[str, str]]:
    with (HELDOUT / "job_titles.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [row for row in rows if part("job_titles.csv", row["title"]) == which]


@dataclass
class Tally:
    """Right, wrong and abstained readings of one labelled set; the wrong ones listed."""

    name: str
    counts: Counter[str] = field(default_factory=Counter)
    wrong: list[str] = field(default_factory=list, repr=False)
    abstained: list[str] = field(default_factory=list, repr=False)

    def add(self, row_id: str, label: Any, reading: Reading, text: str) -> None:
        has_value = label not in NO_VALUE
        self.counts["valued" if has_value else "no value"] += 1
        if reading.ok and (not has_value or not same_value(reading.value, label)):
            self.counts["wrong"] += 1
            shown = " ".join(text.split())[:90]
            self.wrong.append(f"{row_id}: label {label!r}, read {reading.value!r} ({shown})")
        elif reading.ok:
            self.counts["right"] += 1
        elif has_value:
            self.counts["abstained"] += 1
            shown = " ".join(text.split())[:90]
            self.abstained.append(
                f"{row_id}: label {label!r}, no value: {reading.reason} ({shown})"
            )
        else:
            self.counts["right"] += 1

    @property
    def n(self) -> int:
        return self.counts["valued"] + self.counts["no value"]

    @property
    def wrong_rate(self) -> float:
        return self.counts["wrong"] / self.n

    @property
    def unreadable_rate(self) -> float:
        return self.counts["abstained"] / max(self.counts["valued"], 1)

    def lines(self, listed: bool) -> list[str]:
        head = (
            f"held-out {self.name}: n={self.n}, right {self.counts['right']}, wrong "
            f"{self.counts['wrong']} ({self.wrong_rate:.1%}), no value where the label has one "
            f"{self.counts['abstained']} of {self.counts['valued']} ({self.unreadable_rate:.1%})"
        )
        return [head, *(f"  wrong: {line}" for line in self.wrong if listed)]


def tally(name: str, rows: Iterable[tuple[str, Any, Reading, str]]) -> Tally:
    result = Tally(name)
    for row_id, label, reading, text in rows:
        result.add(row_id, label, reading, text)
    return result


def show(capsys: pytest.CaptureFixture[str], *tallies: Tally) -> None:
    """Print each tally; the misreadings are listed for the dev part only."""
    with capsys.disabled():
        print()
        for item in tallies:
            print("\n".join(item.lines(listed=item.name.endswith("(dev)"))))


def goal(capsys: pytest.CaptureFixture[str], reader: str, met: bool) -> None:
    """Say whether the issue's goal for `reader` is met on the held-out part."""
    with capsys.disabled():
        print(f"{reader}: the held-out goal is {'met' if met else 'NOT met'}")


def math_reader() -> Callable[[str, str | None], Reading]:
    from personasim.environments.classroom.numeric_answers import read_answer

    return read_answer


def math_tally(name: str, rows: Iterable[dict[str, Any]]) -> Tally:
    read = math_reader()
    return tally(
        name, ((r["id"], r["label"], read(r["reply"], r.get("question")), r["reply"]) for r in rows)
    )


def test_math_answers_held_out(capsys: pytest.CaptureFixture[str]) -> None:
    parts = {
        which: math_tally(f"math answers ({which})", jsonl("math_answers.jsonl", which))
        for which in ("dev", "heldout")
    }
    show(capsys, parts["dev"], parts["heldout"])
    held = parts["heldout"]
    goal(capsys, "math answers", held.wrong_rate <= 0.01 and held.unreadable_rate <= 0.05)
    assert held.n >= 130
    assert held.counts["wrong"] <= MATH_WRONG_MEASURED
    assert held.counts["abstained"] <= MATH_NO_VALUE_MEASURED


MATH_WRONG_MEASURED = 3
MATH_NO_VALUE_MEASURED = 6
"""This round's held-out counts (of 135 hand-written replies, 104 with a value): the goal
(≤ 1 % wrong, ≤ 5 % without a value) is not met yet; the test fails if the reader gets worse.
The eleventh round (docs/readers.md) took the replies without a value from 7 to 6.
The tenth round (closing remarks, corrections that open a sentence, hedges in more languages,
docs/readers.md) took them from 4 wrong to 3.
The sixth round (what the question asks for, answer_units.py; docs/readers.md) took them from
3 wrong and 8 without a value to 4 and 7: one more wrong reading on these unseen rows, which
the thresholds record rather than hide.
The fifth round (the concluding-sentence rule and the fixes found on tests/data/dev_v3 and the
development part of tests/data/heldout_v4) left both counts where they were: 3 wrong, 8
without a value.
The released generations once beside them (116 held-out rows: 2 wrong, 1 of 104 without a
value at their last count) are no longer shipped (tests/data/heldout/README.md)."""


def transfer_reading(reply: str, endowment: int) -> Reading:
    """The transfer reader, then the game's rule: an amount the game refuses is no value
    (the reply is re-asked with the rule), as a label "rejected" says."""
    from personasim.environments.trust_game.transfer import read_transfer

    reading = read_transfer(reply, endowment)
    if reading.ok and not (float(reading.value).is_integer() and 0 <= reading.value <= endowment):
        return Reading.unreadable(f"the game refuses {reading.value!r}", "game rule")
    return reading


def transfer_tally(which: str) -> Tally:
    rows = jsonl("transfers.jsonl", which)
    return tally(
        f"transfers ({which})",
        (
            (
                r["id"],
                "unreadable" if r["label"] == "rejected" else r["label"],
                transfer_reading(r["reply"], int(r["endowment"])),
                r["reply"],
            )
            for r in rows
        ),
    )


def test_transfers_held_out(capsys: pytest.CaptureFixture[str]) -> None:
    dev, held = transfer_tally("dev"), transfer_tally("heldout")
    show(capsys, dev, held)
    goal(capsys, "transfers", held.wrong_rate <= 0.01)
    assert held.n >= 90
    assert held.counts["wrong"] <= TRANSFER_WRONG_MEASURED
    assert held.counts["abstained"] <= TRANSFER_NO_VALUE_MEASURED


TRANSFER_WRONG_MEASURED = 1
TRANSFER_NO_VALUE_MEASURED = 6
"""The held-out counts after the readers' fifteenth round (of 99, 67 with a value; 2 wrong and
5 without a value before it: a condition on the decision, "… if they …", is no decision): 1
wrong of 99 (1.01 %), just above the goal (≤ 1 % wrong); the test fails if the reader gets
worse."""


def title_figures(which: str) -> tuple[Counter[str], list[str]]:
    """Right, Unknown and wrong labels (category and level each count) of one part."""
    from personasim.scenarios.career_chat.jobs import classify_title

    labels: Counter[str] = Counter()
    wrong = []
    for row in titles(which):
        found = classify_title(row["title"])
        for kind in ("category", "level"):
            said, truth = getattr(found, kind), row[kind]
            labels["labels"] += 1
            if said == UNKNOWN:
                labels["unknown"] += 1
            elif said == truth:
                labels["right"] += 1
            else:
                labels["wrong"] += 1
                wrong.append(f"{row['title']!r} {kind}: label {truth}, rule {said}")
    return labels, wrong


def test_job_titles_held_out(capsys: pytest.CaptureFixture[str]) -> None:
    rates = {}
    with capsys.disabled():
        print()
        for which in ("dev", "heldout"):
            labels, wrong = title_figures(which)
            rates[which] = labels["wrong"] / labels["labels"]
            print(
                f"job titles ({which}): {labels['labels'] // 2} titles, {labels['labels']} labels:"
                f" right {labels['right']}, Unknown {labels['unknown']}, wrong "
                f"{labels['wrong']} ({rates[which]:.1%})"
            )
            if which == "dev":
                print("\n".join(f"  wrong: {line}" for line in wrong))
    goal(capsys, "job titles", rates["heldout"] <= JOB_WRONG_LIMIT)
    assert rates["heldout"] <= JOB_WRONG_LIMIT


UNKNOWN = "Unknown"
JOB_WRONG_LIMIT = 0.02
GRAMMAR_PRECISION_LIMIT = 0.9


def precision_recall(pairs: list[tuple[bool, bool]]) -> tuple[float, float, int, int, int]:
    """Precision and recall of (predicted out of persona, labelled out of persona) pairs."""
    tp = sum(p and t for p, t in pairs)
    fp = sum(p and not t for p, t in pairs)
    fn = sum(t and not p for p, t in pairs)
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1), tp, fp, fn


def refusal_figures(which: str) -> tuple[str, float, float, list[str]]:
    """Precision and recall of the grammar and of the grammar with the scripted judge rule
    on one part; the dev part's misjudged ids."""
    from personasim.scenarios.persona_gym.refusals import grammar_rules, refusal_rules

    rows = jsonl("refusals.jsonl", which)
    truth = [bool(r["out_of_persona"]) for r in rows]
    grammar = [bool(grammar_rules(r["answer"], r["persona"])) for r in rows]
    scripted = [bool(refusal_rules(r["answer"], r["persona"])) for r in rows]
    g_p, g_r, *g_counts = precision_recall(list(zip(grammar, truth, strict=True)))
    s_p, s_r, *s_counts = precision_recall(list(zip(scripted, truth, strict=True)))
    missed = [r["id"] for r, s_, t in zip(rows, scripted, truth, strict=True) if s_ != t]
    text = (
        f"refusals ({which}): n={len(rows)} ({sum(truth)} out of persona)\n"
        f"  grammar alone: precision {g_p:.3f}, recall {g_r:.3f} (tp, fp, fn {g_counts})\n"
        f"  grammar + scripted judge rule: precision {s_p:.3f}, recall {s_r:.3f} "
        f"(tp, fp, fn {s_counts})"
    )
    return text, g_p, s_p, missed


def test_refusals_held_out(capsys: pytest.CaptureFixture[str]) -> None:
    """The grammar (the first pass, which must be precise) and the grammar with the scripted
    double's judge rule. A real judge model is not measured here: the suite's real model is
    too small to judge (docs/persona-gym.md)."""
    dev_text, *_, dev_missed = refusal_figures("dev")
    held_text, grammar_precision, _, _ = refusal_figures("heldout")
    with capsys.disabled():
        print(f"\n{dev_text}\n  misjudged by the scripted rule: {dev_missed}\n{held_text}")
    assert grammar_precision >= GRAMMAR_PRECISION_LIMIT
