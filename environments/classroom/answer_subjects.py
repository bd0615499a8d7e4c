"""What a closing sentence's quantities are about, beside what the question asks about
(docs/classroom.md, "Reading answers"): checks that keep a reading from a wrong quantity.

- **The clause that names the asked** (`by_asked_subject`): "Each player gets 3 oranges, and the
  coaches keep 12." for "How many oranges does each player get?" The concluding rule reads a
  sentence's one quantity the question did not give (12, since the question gives 3 coaches);
  where the one clause that names a word of the question's asking part (from its first
  "how"/"what" on, words compared by their Snowball stems; a word every clause names tells
  nothing) states another value, the sentence reads two ways: ambiguous. Taking that clause's
  value as the answer was tried in the twelfth round and dropped: it read one held-out reply
  wrong for nine more read.
- **Another name** (`another_subject`): "David found 9 insects." for "How many insects did Lily
  find?" is a step, not the answer.
  So is one member where the question asks a group's total ("So Jan has 18 pets." for "How
  many total pets do the three have?") and another thing by its place ("The first house needs
  50 cases." for "How many cases will the third house need?"; "last" and "final" may be any
  place, so they are not compared).
- **The others** (`the_others`): "So 24 penguins are no longer sunbathing." for "How many
  penguins are still sunbathing?" counts the rest.
- **Quantities listed side by side** (`listed_quantities`): "45 goats in Farm X and 25 goats in
  Farm Y" are parts, not an answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise, product

import snowballstemmer

from personasim.environments.classroom.answer_chains import question_givens
from personasim.environments.classroom.answer_clauses import (
    SENTENCE_RULES,
    WORKED,
    Context,
    Statement,
    prepared,
)
from personasim.environments.classroom.answer_numbers import numbers_in
from personasim.environments.classroom.answer_units import Candidate, asking_sentence, quantity_kind

__all__ = [
    "a_side_value",
    "another_subject",
    "asks_combined",
    "by_asked_subject",
    "listed_quantities",
    "the_others",
    "total_for_each",
]

_CONJUNCTION = re.compile(
    r",?\s+(?:and|but|while|whereas|plus|then)\s+|;\s*|\s+[—–]\s+", re.IGNORECASE
)
"""Where a sentence's clauses meet ("Seth is 16 and Brooke is 8")."""
_COMMA = re.compile(r",\s+")
"""A finer break, where the clauses are only listed ("6 yellow balloons, 26 balloons in all")."""
_ASKING = re.compile(r"\b(?:how|what|which|who|whom|whose|when|where)\b", re.IGNORECASE)
_WORKED = re.compile(rf"{WORKED.pattern}|=|\d\s*[−–-]\s*[$€£]?\d|\s[−–]\s*[$€£]?\d")
"""Arithmetic, a minus included ("52 – 51 = 1", "30 children – 5 children = 25 children")."""
_WORD = re.compile(r"[^\W\d_]{3,}")
_TOTAL = re.compile(
    r"\b(?:total|altogether|together|in\s+all|combined|overall|all\s+told|sum)\b", re.IGNORECASE
)
"""A total, which the question may ask for and a clause may give ("26 balloons in all")."""
_STOP = frozenset(
    re.findall(
        r"\w+",
        "the and for are was were will would can could should does did has have had that this "
        "with they their them there then than each every its his her she him you your our from "
        "into per all how many much what which who whom whose when where get gets got total "
        "altogether together more less",
    )
)
"""Words that name no one thing: the asking itself, pronouns, auxiliaries, "total"."""


def by_asked_subject(candidates: Sequence[Candidate], context: Context) -> Candidate | None:
    """The one quantity whose clause alone names a word of the question's asking part (module
    docstring); None where not exactly one does, or where the quantities do not stand in
    clauses of their own."""
    if not context.question or len(candidates) < 2:
        return None
    body = candidates[0][2]
    if any(other[2] != body for other in candidates[1:]) or _WORKED.search(body):
        return None  # a sentence that works things out: the closing rules read it
    asked = _asked_words(context.question)
    spans = _clauses(body, [number.start for _, number, _ in candidates])
    if not asked or spans is None:
        return None
    named = [_stems(body[start:end]) & asked for start, end in spans]
    alone = [
        index
        for index, words in enumerate(named)
        if words - set().union(*(other for j, other in enumerate(named) if j != index))
    ]
    if len(alone) != 1:
        return None
    index = alone[0]
    totals = [bool(_TOTAL.search(body[start:end])) for start, end in spans]
    if any(totals[:index] + totals[index + 1 :]) or (
        _TOTAL.search(asking_sentence(context.question)) and not totals[index]
    ):
        return None  # another clause gives a total, or the asked total is not this one's
    chosen, (_, end) = candidates[alone[0]], spans[alone[0]]
    if numbers_in(body[chosen[1].end : end], context.decimal_mark):
        return None  # another number ends its clause: "moved up 1 spot to finish in 6th place"
    return chosen


@lru_cache(maxsize=4096)
def _asked_words(question: str) -> frozenset[str]:
    """The stems of the words the question's asking part names ("how old is Jean?": old,
    jean)."""
    return _stems(_asking_part(question))


def _asking_part(question: str) -> str:
    """The question's asking sentence from its first "how"/"what"/… on ("If 20 people were
    heading to the third stop, how many got on?": "how many got on?")."""
    sentence = asking_sentence(question)
    opening = _ASKING.search(sentence)
    return sentence[opening.start() :] if opening else sentence


def _stems(text: str) -> frozenset[str]:
    words = [word.lower() for word in _WORD.findall(text)]
    return frozenset(_STEMMER.stemWords([word for word in words if word not in _STOP]))


_STEMMER = snowballstemmer.stemmer("english")


def _clauses(body: str, starts: list[int]) -> list[tuple[int, int]] | None:
    """Each quantity's clause of `body` (the quantities at `starts`) as a span, split where
    clauses meet, else also at commas; None where two quantities share one."""
    for pattern in (_CONJUNCTION, (_CONJUNCTION, _COMMA)):
        bounds = _breaks(body, pattern)
        pieces = [_piece(bounds, start) for start in starts]
        if len(set(pieces)) == len(pieces):
            return pieces
    return None


def _breaks(body: str, patterns: re.Pattern[str] | tuple[re.Pattern[str], ...]) -> list[int]:
    found = patterns if isinstance(patterns, tuple) else (patterns,)
    edges = sorted({edge for p in found for m in p.finditer(body) for edge in m.span()})
    return [0, *edges, len(body)]


def _piece(bounds: list[int], start: int) -> tuple[int, int]:
    """The stretch between two breaks that holds `start`."""
    for low, high in pairwise(bounds):
        if low <= start < high:
            return low, high
    return bounds[-2], bounds[-1]


def another_subject(context: Context, final: Statement, value: float | None) -> str | None:
    """Why a closing sentence's value answers about someone else: the question asks what a
    named one did or has ("How many insects did Lily find?") and the sentence's subject is
    another of the question's names, and no name of the asking sentence is in it ("David found
    9 insects."; "Darla has 27 marbles." answers "how many did Mazie give to Darla?"): it
    stopped at an intermediate step. Likewise one member where a group's total is asked ("So
    Jan has 18 pets." for "How many total pets do the three have?"), and another thing by its
    place ("The first house needs 50 cases." for "… will the third house need?"); English."""
    rules = (*SENTENCE_RULES, "answer-first", "bold")
    if value is None or final.rule not in rules or not context.question:
        return None
    names, asking = _names(context.question), asking_sentence(context.question)
    sentence = _sentence_around(context.text, final.position)
    english = context.language in (None, "en")
    if english and (other := _another_ordinal(asking, sentence)):
        return other
    subject = _SUBJECT.match(sentence)
    if subject is None or subject["name"] not in names:
        return None
    asked = _ASKED_SUBJECT.search(asking)
    if asked is None or not names & set(_CAPITALIZED.findall(asked[0])):
        return _one_of_the_group(asking, sentence, subject["name"]) if english else None
    wanted = names & set(_CAPITALIZED.findall(asking))  # "how many did Mazie give to Darla?"
    if wanted & set(re.findall(r"\w+", sentence)):
        return None
    return f"its last sentence is about {subject['name']}; the question asks about " + (
        " and ".join(sorted(wanted))
    )


def total_for_each(context: Context, final: Statement, value: float | None) -> str | None:
    """Why a closing sentence's value is a step: the question asks what each one gets ("How
    much did their mother give each one of them?") and the sentence gives a total, shared out
    nowhere ("So the total cost was 11 + 3 + 14 = $28."; English)."""
    rules = (*SENTENCE_RULES, "answer-first", "bold")
    if value is None or final.rule not in rules or not context.question:
        return None
    if context.language not in (None, "en"):
        return None
    part = _asking_part(context.question)
    if not _EACH_ASKED.search(part) or _TOTAL.search(part):
        return None
    sentence = _sentence_around(context.text, final.position)
    if _SHARED.search(sentence) or not (total := _TOTAL.search(sentence)):
        return None
    return f"its last sentence gives the {total[0]}; the question asks for each one's"


_EACH_ASKED = re.compile(
    r"\beach(?:\s*[?.]?$|\s+(?:one|of|person|child|kid|friend|student|guest|member|player|girl|"
    r"boy|sibling|brother|sister|grandchild|nephew|niece|team|family|worker|employee)s?\b)|"
    r"\bapiece\b|\bper\s+(?:person|student|child|friend|kid|guest|member|player)\b",
    re.IGNORECASE,
)
"""A question that asks for one's share: "… give each one of them?", "how much per person?"."""
_SHARED = re.compile(
    r"\b(?:each|per|apiece|every|a\s+piece|shares?|split|divid\w*)\b|/|÷", re.IGNORECASE
)
"""A sentence that shares the total out ("$28 split two ways", "$14 each")."""


def asks_combined(question: str | None, sentence: str) -> bool:
    """Whether the question's asking part asks one quantity of two named at once ("How many
    letters are in Indras and her sister's names?"), not their difference, and the sentence
    gives no total: its quantities are the parts, never combined."""
    if not question or _TOTAL.search(sentence):
        return False
    part = _asking_part(question)
    return bool(_TWO_NAMED.search(part)) and not _COMPARING.search(part)


_TWO_NAMED = re.compile(r"\b[A-Z][a-z]+(?:['’]s)?\s+and\s+(?:[A-Z][a-z]+|his|her|their)\b")
"""Two named at once in the asking part: "Indras and her sister", "Gabriel and Luri"."""
_COMPARING = re.compile(r"\b(?:difference|more|less|fewer|than)\b", re.IGNORECASE)
"""A comparison: asked ("how many more … than") or concluded ("so he made $40 more")."""


def a_side_value(context: Context, final: Statement, value: float | None) -> str | None:
    """Why a closing sentence reads two ways: it states a value, then a total or a remainder
    the question does not ask for (", making 75 altogether", ", bringing her two-day total to
    75", ", so only 1 slice was left") and the value read is that one (English)."""
    if value is None or final.rule not in SENTENCE_RULES or not context.question:
        return None
    if context.language not in (None, "en"):
        return None
    part = _asking_part(context.question)
    sentence = _sentence_around(context.text, final.position)
    givens = question_givens(context)
    sides = [
        side
        for pattern, asked in ((_SIDE_TOTAL, _TOTAL), (_SIDE_REST, _REST), (_SIDE_CLAUSE, _TOTAL))
        if not asked.search(part) and (side := pattern.search(sentence)) is not None
    ]
    so = _SO_CLAUSE.search(sentence) if not sides and value in givens else None
    if so is not None and not _COMPARING.search(so[0]):
        sides = [so]  # "… left with 17 stickers, so he gave away 9.": a given restated
    if not sides or _TWO_NAMED.search(part) or _WORKED.search(sentence):
        return None  # parts worked out to the value ("5 × 1 = 5 …, for 9 sweets altogether")
    side = sides[0]
    before = [
        n.value
        for n in numbers_in(sentence[: side.start()], context.decimal_mark)
        if n.value is not None and n.value not in givens
    ]
    after = [n.value for n in numbers_in(side[0], context.decimal_mark)]
    if value not in after or not before or value in before:
        return None  # "6 more apples fell, bringing his total to 11": the total is the result
    return f"its closing sentence adds a value the question does not ask ({side[0].strip()!r})"


_SIDE_TOTAL = re.compile(
    r",\s+(?:making|bringing|giving|for)\b[^.;!?]*?\b(?:total|altogether|in\s+all|combined|"
    r"overall|together)\b[^.;!?]*",
    re.IGNORECASE,
)
"""A total added after a value: ", making 75 altogether", ", bringing her total to 75"."""
_SIDE_CLAUSE = re.compile(r";\s*(?![^.;!?]*(?:[=+×÷*/−]|\s-\s))[^.;!?]*\d[^.;!?]*")
"""A clause of its own after ";", with no arithmetic: "Argo has 50 toys left; he gave away 150."."""
_SO_CLAUSE = re.compile(r",\s+so\b[^.;!?]*", re.IGNORECASE)
_SIDE_REST = re.compile(
    r",\s+(?:so|which\s+leaves|and)\b[^.;!?]*?\b(?:left(?:\s+over)?|remain(?:s|ed|ing)?|"
    r"to\s+spare)\b[^.;!?]*",
    re.IGNORECASE,
)
"""A remainder added after a value: ", so only 1 slice was left", ", and 1 remained"."""
_REST = re.compile(
    r"\b(?:left|remain\w*|rest|still|change|over|spare|short|more|less|fewer|than)\b", re.I
)
"""A question that asks a remainder or a difference ("How many are left?")."""


def _one_of_the_group(asking: str, sentence: str, name: str) -> str | None:
    """Why the sentence answers for one member: the question asks a group's total ("How many
    total pets do the three have?") and the sentence is about one of its names alone ("So Jan
    has 18 pets."), naming no total and no one else."""
    group = _GROUP.search(asking)
    if group is None or not _TOTAL.search(asking) or _TOTAL.search(sentence):
        return None
    if re.search(r"\b(?:and|&|(?:together|along)\s+with|both|each)\b", sentence, re.IGNORECASE):
        return None
    return f"its last sentence is about {name} alone; the question asks the total of {group[0]}"


_ORDINAL_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth")
_ORDINAL = re.compile(
    rf"\b(?P<ordinal>{'|'.join(_ORDINAL_WORDS)}|last|final|1st|2nd|3rd|4th|5th|6th)\s+"
    r"(?P<noun>[a-z]{3,})\b",
    re.IGNORECASE,
)
"""One of several things by its place ("the third house", "the 2nd week")."""


def _another_ordinal(asking: str, sentence: str) -> str | None:
    """Why the sentence answers for another of several things: the question asks about one by
    its place ("How many cases will the third house need?") and the sentence about another
    of the same kind, not naming the asked one ("The first house needs 50 cases.")."""
    opening = _ASKING.search(asking)
    asking = asking[opening.start() :] if opening else asking  # not "If … the third stop, how"
    asked, stated = _places(asking), _places(sentence)
    if not asked or not stated or asked & stated:
        return None
    for (ordinal, noun), (place, wanted) in product(sorted(stated), sorted(asked)):
        if noun == wanted and ordinal != place:
            return f"its last sentence is about the {ordinal}; the question asks the {place}"
    return None


def _places(text: str) -> set[tuple[str, str]]:
    """(place, noun stem) of each thing named by its place; "last" and "final" may be any
    numbered place ("the final test" is "the sixth test"), so they are left out."""
    return {
        (_PLACE_WORDS.get(ordinal, ordinal), _STEMMER.stemWord(match["noun"].lower()))
        for match in _ORDINAL.finditer(text)
        if (ordinal := match["ordinal"].lower()) not in ("last", "final")
    }


_PLACE_WORDS = dict(zip(("1st", "2nd", "3rd", "4th", "5th", "6th"), _ORDINAL_WORDS, strict=True))


_GROUP = re.compile(
    r"\b(?:they|them|all\s+of\s+them|the\s+(?:two|three|four|five|six|\d+)"
    r"(?!\s+(?:minute|hour|day|week|month|year)s))\b"
)
"""A group of people asked about: "do the three have", "do they" ("both of her feet" is none)."""
_CAPITALIZED = re.compile(r"\b[A-Z][a-z]+\b")
_NAME = r"[A-Z][a-z]+(?:['’]s)?"
_ASKED_SUBJECT = re.compile(
    rf"\b(?:did|does|do|will|would|is|was|are|were|has|have|had|can|could|should|must)\s+"
    rf"{_NAME}(?:\s+and\s+{_NAME})?"
)
"""Whom the question asks about: "did Lily", "is Jean", "was Betsy's", "did Pierson and Nikita"."""
_SUBJECT = re.compile(
    r"^[\s*_#>-]*(?:(?:so|therefore|thus|hence|then|now|that\s+means|this\s+means)\s*,?\s+)?"
    r"(?P<name>[A-Z][a-z]+)(?:['’]s)?\b",
    re.IGNORECASE,
)
"""The sentence's subject, where it opens with a name ("So PJ has 47 cards.", "Donovan's part")."""
_NOT_NAMES = frozenset(
    re.findall(
        r"\w+",
        "the a an if he she they it its his her their we you i each every how what which who "
        "when where there this that these those after before then on in at for of to by with "
        "from one two three four five six seven eight nine ten some all but and so as mr mrs "
        "ms dr also now today tomorrow yesterday during while since because however finally "
        "first second third last next half twice both many much most more less together",
    )
)
"""Capitalised words that start a sentence without naming anyone."""


@lru_cache(maxsize=4096)
def _names(question: str) -> frozenset[str]:
    """The question's names: capitalised words that are no common word at a sentence's start
    and never appear in lower case in it ("Lily", "Becca")."""
    lower = set(re.findall(r"\b[a-z]+\b", question))
    return frozenset(
        word
        for word in _CAPITALIZED.findall(question)
        if word.lower() not in _NOT_NAMES and word.lower() not in lower
    )


def _sentence_around(text: str, position: int) -> str:
    """The sentence of `text` that holds `position` (a bold value's sentence starts before it)."""
    line_start = text.rfind("\n", 0, position) + 1
    line_end = text.find("\n", position)
    line = text[line_start : len(text) if line_end < 0 else line_end]
    offset = 0
    for piece in re.split(r"(?<=[.!?])\s+", line):
        if line_start + offset + len(piece) >= position:
            return piece
        offset += len(piece) + 1
    return line


def listed_quantities(sentence: str, context: Context) -> bool:
    """Whether the sentence lists two quantities of one kind side by side, as parts rather
    than an answer ("45 goats left in Farm X and 25 goats left in Farm Y", "3 cheese pizzas and
    3 pepperoni pizzas"): joined by "and" or a comma, with no verb or change between them
    ("had 20 apples and has 12 apples left" is a change, not a list)."""
    body = prepared(sentence, context.language, context.decimal_mark)
    numbers = numbers_in(body, context.decimal_mark)
    for one, other in pairwise(numbers):
        kind = quantity_kind(body, one.start, one.end)
        gap = body[one.end : other.start]
        if kind is None or kind != quantity_kind(body, other.start, other.end):
            continue
        if _JOINED.search(gap) and not _CHANGE.search(gap):
            return True
    return False


_JOINED = re.compile(r"\band\b|,", re.IGNORECASE)
_CHANGE = re.compile(
    r"\b(?:has|have|had|is|are|was|were|now|then|gets?|got|ate|eats?|gave|gives?|sold|sells?|"
    r"bought|buys?|made|makes?|spent|spends?|paid|pays?|needs?|leaves?|keeps?|kept|uses?|used|"
    r"earns?|earned|loses?|lost|becomes?|became|remains?|adds?|added|takes?|took|receives?|"
    r"received|with|from|to|into|of|which|that|making|giving|for|costs?|so|therefore|thus|"
    r"hence|then|but|while|whereas)\b|[+=×÷*/−;]",
    re.IGNORECASE,
)
"""Words between two quantities that make them a change or a computation, not a list."""

_NO_LONGER = re.compile(
    r"\b(?:no\s+longer|not\s+(?:[^\W\d_]+\s+)?any\s?more)\s+(?:[^\W\d_]+\s+)?(?P<verb>[^\W\d_]+)",
    re.IGNORECASE,
)
_NEGATED = re.compile(r"\b(?:not|no|never|no\s+longer)\b|n['’]t\b", re.IGNORECASE)


def the_others(context: Context, final: Statement, value: float | None) -> str | None:
    """Why a closing sentence's value is no answer: it counts those that no longer do what the
    question asks about ("So 24 penguins are no longer sunbathing." for "How many penguins are
    still sunbathing?"), where the question's asking part negates nothing (English)."""
    rules = (*SENTENCE_RULES, "answer-first", "bold")
    if value is None or final.rule not in rules or not context.question:
        return None
    part = _asking_part(context.question)
    others = _NO_LONGER.search(_sentence_around(context.text, final.position))
    if others is None or _NEGATED.search(part) or not _stems(others["verb"]) & _stems(part):
        return None
    return f"its last sentence counts the others ({others[0]!r})"
