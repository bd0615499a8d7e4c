"""What a reader of model text returns: a value, or "unreadable" / "ambiguous" with the reason.

Every reader of model text (numbers, transfers, level names, job titles, refusals, judge
scores) answers with a `Reading`. A value is returned only from a structure a careful grader
accepts without doubt; anything else is *unreadable* (nothing the reader can take as the
answer) or *ambiguous* (two candidates, or two readers that disagree), with the reason, and is
re-asked where the scenario allows, else counted. `by` names the rule or the role that produced
the reading, so tables, the viewer and the audit can say how each value was read.

Two rules every reader shares (docs/readers.md):

- **Two independent readers** (`agree`): where a well-kept library reads the same kind of text,
  its reading stands beside the project's own; the value is accepted when both read the same
  value, or when one abstains and the other read it (marked "single reader" in `by`); two
  different values are *ambiguous*, never one side's guess.
- **Self-corrections** (`corrected`): a statement followed by an explicit correction marker
  ("wait", "actually", "correction", "I mean", "sorry", "make it", "on second thought",
  "rather", "no,", and their French, Spanish, German, Portuguese and Chinese counterparts) and
  a new value is replaced by that value — the last corrected statement
  wins; two statements that differ without such a marker are *ambiguous*.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from personasim.simulation.base.registry import Registry

__all__ = [
    "CORRECTION",
    "READERS",
    "READERS_ENTRY_POINT_GROUP",
    "IndependentReader",
    "ReadStatus",
    "Reading",
    "agree",
    "corrected",
    "independent_reader",
    "register_reader",
    "same_value",
]

IndependentReader = Callable[[str, Mapping[str, Any]], "Reading"]
"""A second reading of a text, independent of the reader that produced the logged one: the
text and the labels logged beside it (an endowment...) → a `Reading`."""

READERS_ENTRY_POINT_GROUP = "personasim.readers"
"""Entry-point group of outside packages' independent readers (a module that registers them)."""

READERS: Registry[IndependentReader] = Registry("independent reader", READERS_ENTRY_POINT_GROUP)
"""Each reader's independent reader, by the name its readings are logged under."""

ReadStatus = Literal["read", "unreadable", "ambiguous"]
"""read: one value, without doubt; unreadable: no value the reader can take; ambiguous: more
than one candidate (or two readers that disagree)."""

CORRECTION = re.compile(
    r"\b(?:wait|actually|correction|i\s+meant?|sorry|oops|make\s+(?:it|that)|"
    r"on\s+second\s+thought|rather(?!\s+than)|scratch\s+that|let\s+me\s+correct|i\s+made\s+an?\s+"
    r"(?:mistake|error)|my\s+(?:mistake|bad)|i\s+(?:missed|forgot|overlooked|miscounted|"
    r"miscalculated|misread)|the\s+correct(?:ed)?\s+(?:answer|"
    r"total|result|amount)|"
    r"attendez|attends|en\s+fait|je\s+corrige|espera|en\s+realidad|corrijo|perdón|"
    r"warte|eigentlich|korrektur|espere|na\s+verdade|corrigindo|me\s+equivoqué|"
    r"je\s+me\s+suis\s+tromp[ée]e?|ich\s+habe\s+mich\s+(?:geirrt|verrechnet)|"
    r"(?:eu\s+)?errei|me\s+enganei)\b"
    r"|\b(?:no|non|nein|нет|hayır|err+|erm)\s*(?:[,:]|[—–]|-\s)|\b(?:update|edit|erratum)\s*:"
    r"|\b(?:moment|chwila|bekle|tunggu|подожди(?:те)?|ой|khoan\s+đã)\s*[,!—–]"
    r"|\b(?:это\s+неверно|bu\s+yanlış|sai\s+rồi|itu\s+salah|to\s+nie\s+jest\s+dobrze)\b"
    r"|(?:あっ?、\s*)?違(?:います|いました)|ちょっと待って|रुकिए|रुको|यह\s+गलत\s+है"
    r"|等一下|等等|不对|不對|不(?=[，,])|更正|其实|其實|算错|算錯|我错了|我錯了|訂正|정정|"
    r"\b(?:исправление|поправка|wacht|aspetta|correzione|düzeltme|poprawka)\b",
    re.IGNORECASE,
)
"""Words that withdraw what was said before and introduce its replacement: English ("wait",
"actually", "correction", "no,", "no:", "I forgot", "Update:", "the correct answer"...), French
(attendez, en fait, non,, correction, je corrige), Spanish (espera, en realidad, corrijo,
perdón, me equivoqué), German (warte, eigentlich, Korrektur, nein,, ich habe mich verrechnet),
Portuguese (espere, na verdade, corrigindo, errei), Chinese (等一下, 等等, 不对, 不，, 更正,
其实, 算错), and the words for "correction" or "wait" in Japanese, Korean, Russian, Dutch,
Italian, Turkish and Polish (訂正, 정정, исправление, wacht, aspetta, düzeltme, poprawka)."""


@dataclass(frozen=True)
class Reading:
    """One reader's reading of one text: the value (None unless `status` is "read"), the
    reason when there is none, and which rule or role produced it."""

    status: ReadStatus
    value: Any = None
    reason: str | None = None
    by: str = ""
    candidates: tuple[Any, ...] = field(default=())

    @classmethod
    def of(cls, value: Any, by: str) -> Reading:
        return cls("read", value, None, by)

    @classmethod
    def unreadable(cls, reason: str, by: str = "") -> Reading:
        return cls("unreadable", None, reason, by)

    @classmethod
    def ambiguous(cls, reason: str, by: str = "", candidates: Sequence[Any] = ()) -> Reading:
        return cls("ambiguous", None, reason, by, tuple(candidates))

    @property
    def ok(self) -> bool:
        return self.status == "read"

    def payload(self) -> dict[str, Any]:
        """The reading as an event's JSON payload (`reading.*` keys of a `reading.made`)."""
        payload: dict[str, Any] = {"status": self.status, "value": self.value, "by": self.by}
        if self.reason is not None:
            payload["reason"] = self.reason
        if self.candidates:
            payload["candidates"] = list(self.candidates)
        return payload


def same_value(first: Any, second: Any) -> bool:
    """Two readers' values are the same value: numbers within 1e-6, anything else equal."""
    if isinstance(first, int | float) and isinstance(second, int | float):
        return math.isclose(float(first), float(second), rel_tol=1e-9, abs_tol=1e-6)
    return bool(first == second)


def agree(own: Reading, library: Reading, same: Callable[[Any, Any], bool] = same_value) -> Reading:
    """The reading of two independent readers (the project's grammar, `own`, and a library's,
    `library`): the value when both read it; one side's value when the other abstains
    (unreadable), marked as a single reader's; *ambiguous* when they read different values or
    either found the text ambiguous."""
    if own.ok and library.ok:
        if same(own.value, library.value):
            return Reading.of(own.value, f"{own.by}+{library.by}")
        return Reading.ambiguous(
            f"the readers disagree: {own.by} reads {own.value!r}, "
            f"{library.by} reads {library.value!r}",
            f"{own.by}|{library.by}",
            (own.value, library.value),
        )
    if own.status == "ambiguous" or library.status == "ambiguous":
        first = own if own.status == "ambiguous" else library
        return Reading.ambiguous(first.reason or "ambiguous", first.by, first.candidates)
    if own.ok or library.ok:
        single = own if own.ok else library
        other = library if own.ok else own
        return Reading.of(single.value, f"{single.by} (single reader; {other.by}: {other.reason})")
    return Reading.unreadable(own.reason or library.reason or "no value found", own.by)


def corrected(
    statements: Sequence[tuple[int, Any]],
    text: str,
    same: Callable[[Any, Any], bool] = same_value,
) -> Reading | None:
    """The shared self-correction rule over a text's statements (position, value), in order:
    None when there is no statement; the value when all agree; when they differ, the last run
    of equal statements wins if a correction marker stands between it and the statement
    before it (the earlier ones are withdrawn), else *ambiguous*. A value stated twice in a row
    ("Final Answer: \\boxed{18}") is one statement."""
    if not statements:
        return None
    runs: list[tuple[int, int, Any]] = []  # (first position, last position, value)
    for position, value in sorted(statements, key=lambda item: item[0]):
        if runs and same(runs[-1][2], value):
            runs[-1] = (runs[-1][0], position, runs[-1][2])
        else:
            runs.append((position, position, value))
    if len(runs) == 1:
        return Reading.of(runs[0][2], "")
    (_, before, _), (start, _, last) = runs[-2], runs[-1]
    if CORRECTION.search(text, before, start):
        return Reading.of(last, "corrected")
    values = tuple(dict.fromkeys(value for _, _, value in runs))
    shown = ", ".join(repr(value) for value in values)
    return Reading.ambiguous(f"it states different answers ({shown})", "", values)


def register_reader(name: str, independent: IndependentReader) -> IndependentReader:
    """Register the independent reader `personasim audit` uses for readings logged under
    `name` (`Simulation.record_reading`); a second, different function for one name is refused
    with both named (the one registry's rule, `READERS`)."""
    return READERS.register(name, independent)


def independent_reader(name: str) -> IndependentReader | None:
    """The independent reader registered for `name` (None: none is)."""
    return READERS.get(name)
