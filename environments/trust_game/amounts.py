"""The quantities of a Trust Game decision sentence and their value in dollars: money, shares
of the endowment, "all (but N)", nothing, calculations, ranges, and the number formats
(docs/trust-population.md, "Reading the amount", rules 3, 4, 7 and 8)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from text_to_num import text2num

from personasim.environments.trust_game.decision_text import quoted

__all__ = ["Quantity", "quantities"]

# --- quantities -------------------------------------------------------------------------------

_WORD = (
    r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy"
    r"|eighty|ninety|hundred|thousand|million)"
)
_WORDS = rf"\b{_WORD}(?:[\s-]+(?:and[\s-]+)?{_WORD})*\b"
_DIGITS = r"(?<![\w.,])(?:\d+(?:[,.]\d+|\x20\d{3}(?!\d))*|\.\d+)(?!\d)"
_NUMBER = rf"(?:{_DIGITS}|{_WORDS})"
_UNIT = r"(?:\$(?!\s*\d)|US\s*dollars?\b|dollars?\b|bucks?\b|usd\b)"
_AMOUNT = rf"(?:(?:US\s?\$|USD\s*|\$\s*)?{_NUMBER}(?:\s*{_UNIT})*)"
_DENOMINATOR = (
    r"(?:half|halves|thirds?|quarters?|fourths?|fifths?|sixths?|sevenths?|eighths?|ninths?"
    r"|tenths?)"
)


def _endowment(named: str) -> str:
    """What a share or "all" may be of: the endowment, in words or as an amount (group
    `named`, which must then be the endowment)."""
    return (
        r"(?:it|that|this|them|everything|what\s+I\s+(?:have|got|was\s+given|received)"
        r"|(?:all\s+)?(?:my|the|our|this)\s+(?:(?:initial|starting|available|total|original)\s+)?"
        r"(?:money|endowment|amount|funds|budget|cash|dollars|sum|total|pot|stake)"
        rf"|(?:(?:all\s+)?(?:my|the|our)\s+)?(?P<{named}>{_AMOUNT})"
        r"(?:\s+(?:endowment|budget|stake))?)"
    )


_COMPOUND = rf"""
    (?P<between>\b(?:between|from)\s+{_AMOUNT}\s*(?:and|to|-)\s*{_AMOUNT})
    |(?P<sum>(?:{_AMOUNT}\s*%?\s*(?:[-+*/÷×]|\b(?:of|times|minus|plus|multiplied\s+by
        |divided\s+by)\b)\s*)+{_AMOUNT}\s*%?\s*(?:=|,?\s*(?:(?:so|which\s+is|that\s+is
        |that['’]s|equals?|makes?|making|giving)\b|i\.e\.?)))
    |(?P<range>{_AMOUNT}(?:(?<=[\d$\s])-|\s+-|\s*\b(?:to|through|thru)\b)\s*{_AMOUNT})
    """
_SINGLE = rf"""
     (?P<share>(?:
         (?P<top>{_NUMBER}|\ban?\b)[\s-]+(?P<bottom>{_DENOMINATOR})
        |(?P<half>\bhalf\b)
        |\$?(?P<ftop>{_DIGITS})\s*/\s*(?P<fbottom>{_DIGITS})
        |(?P<percent>{_NUMBER})\s*(?:%|\bper\s*cent\b)
       )(?P<of>(?:(?:\s+of)?\s+{_endowment("named")})?(?P<other_of>\s+of\b)?))
    |(?P<all>(?<!\bat\s)(?<!\bafter\s)\b(?:all|everything|every\s+(?:single\s+)?(?:dollar|cent)
        |(?:the|my)\s+(?:full|entire|whole|total)(?:\s+(?:amount|endowment|sum|money))?
        |(?:the|my)\s+max(?:imum)?(?:\s+(?:possible\s+)?(?:amount|endowment|sum|money
        |possible|allowed))?)\b
       (?P<all_of>(?:\s+of)?\s+{_endowment("all_named")})?
       (?:\s+(?:but|except(?:\s+for)?|minus|save|less|apart\s+from)\s+(?P<but>{_AMOUNT}))?)
    |(?P<nothing>\b(?:nothing(?!\s+(?:more|less|else))|none|nil|nada|zilch|naught
        |no\s+(?:money|dollars?|cash|funds)
        |not\s+(?:even\s+)?(?:a|one)\s+(?:single\s+)?(?:dollar|cent|penny|dime|thing)
        |not\s+any(?:thing|\s+money|\s+dollars?|\s+cash)?)\b)
    |(?P<any>\b(?:any(?:thing|\s+money|\s+dollars?|\s+cash|\s+amount)?
        |a\s+(?:single\s+)?(?:dollar|cent|penny|dime)|one\s+(?:single\s+)?(?:dollar|cent))\b)
    |(?P<a_dollar>\ba\s+(?:single\s+)?(?:dollar|buck)\b)
    |(?P<currency>(?:€|£|¥|₹|R\$)\s*{_NUMBER}|{_NUMBER}\s*(?:€|£|¥|₹|\b(?:euros?|pounds?|yen|yuan
        |rmb|renminbi|pesos?|rupees?|francs?|won|reais|real|rubles?|roubles?|lira|liras?)\b))
    |(?P<multiplied>(?:US\s?\$|\$\s*)?{_DIGITS}\s*(?:[kKM]\b|bn\b|(?:thousand|million|billion)\b))
    |(?P<mixed>(?<!player\s)(?<!participant\s)(?:US\s?\$|\$\s*)?(?P<whole>{_NUMBER})\s+(?:and\s+(?:a|one)\s+half
        |(?P<mtop>\d+)\s*/\s*(?P<mbottom>\d+))(?:\s*{_UNIT})*)
    |(?P<money>(?P<minus>-\s?)?(?P<pre>US\s?\$|USD\s*|\$\s*)?(?P<minus2>-\s?)?(?P<number>{_NUMBER})
       (?P<post>(?:\s*{_UNIT})*)
       (?P<cents>\s*(?:and\s+)?(?P<cent_count>{_NUMBER})\s*cents?\b)?
       (?P<only_cents>\s*cents?\b)?)
    """
_QUANTITY = re.compile(f"{_COMPOUND}|{_SINGLE}", re.IGNORECASE | re.VERBOSE)
_SIMPLE = re.compile(_SINGLE, re.IGNORECASE | re.VERBOSE)
"""The quantities that are not ranges or calculations, for a range that is no range."""
_LABEL_BEFORE = re.compile(
    r"(?:round|option|step|turn|game|group|level|archetype|number|no\.|#)\s*[#:]?\s*$",
    re.IGNORECASE,
)
_PLAYER_BEFORE = re.compile(r"(?:player|participant)\s*[#:]?\s*$", re.IGNORECASE)
"""'Player 2': a label; the game has two players, so 'the other player 5 of my 10 dollars'
gives 5."""
_OTHER_THING_AFTER = re.compile(
    r"\s*-?\s*(?:fold|times)\b|\s+(?:players?|people|persons?|participants?|times|rounds?"
    r"|years?|points?|tokens?|others?|of\s+(?:them|you|us))\b",
    re.IGNORECASE,
)
_NOT_A_NUMBER_ONE = re.compile(
    r"(?:\b(?:the|this|that|each|every|no|any|which)\s+$)", re.IGNORECASE
)
_ONE_FOLLOWED = re.compile(r"\s+(?:of|who|that|another|person|player|more)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Quantity:
    """One quantity in a decision clause: where it is, what kind, its value in dollars (None
    when it is no amount), and why it cannot be the amount when it cannot."""

    start: int
    end: int
    kind: str
    value: float | None = None
    problem: str | None = None


def quantities(body: str, endowment: int, negated: bool) -> list[Quantity]:
    """The quantities of a decision clause's `body`, each with its dollar value or problem;
    labels ("Player 2"), ordinals and counts of other things are left out. A range that is
    no range ('5 dollars to 2 players') is read again as its parts."""
    found: list[Quantity] = []
    position, simple_from = 0, -1
    while (match := _scan(body, position, simple_from)) is not None:
        groups = match.groupdict()
        kind = next(name for name in _KINDS if groups.get(name) is not None)
        quantity = _KINDS[kind](match, body, endowment, negated)
        if quantity is None and kind in ("range", "between") and simple_from < match.start():
            position = simple_from = match.start()
            continue
        if quantity is not None:
            found.append(quantity)
        position = max(match.end(), position + 1)
    return found


def _scan(body: str, position: int, simple_from: int) -> re.Match[str] | None:
    """The next quantity from `position`; at `simple_from`, not a range."""
    match = _QUANTITY.search(body, position)
    if match is not None and match.start() == simple_from and match.groupdict().get("range"):
        return _SIMPLE.match(body, match.start()) or _QUANTITY.search(body, match.start() + 1)
    return match


def _between(match: re.Match[str], body: str, endowment: int, negated: bool) -> Quantity:
    return _problem(match, "range", f"it gives a range ({quoted(match[0])}), not one amount")


def _range(match: re.Match[str], body: str, endowment: int, negated: bool) -> Quantity | None:
    if _is_label(body, match.start()) or _is_other_thing(body, match.end()):
        return None
    return _problem(match, "range", f"it gives a range ({quoted(match[0])}), not one amount")


def _sum(match: re.Match[str], body: str, endowment: int, negated: bool) -> Quantity:
    """The operands of a calculation: not the amount; its result follows the '='."""
    return Quantity(match.start(), match.end(), "operands")


def _share(match: re.Match[str], body: str, endowment: int, negated: bool) -> Quantity | None:
    if match["other_of"]:
        return _problem(match, "share", "it gives a share of something other than the endowment")
    if match["named"] and (named := _money_value(match["named"])) != endowment:
        if isinstance(named, str):
            return _problem(match, "share", named)
        return _problem(
            match, "share", f"it gives a share of ${named:g}, not of the ${endowment} endowment"
        )
    if match["half"]:
        return Quantity(match.start(), match.end(), "share", endowment / 2)
    if match["percent"]:
        percent = _number_value(match["percent"])
        if isinstance(percent, str):
            return _problem(match, "share", percent)
        return Quantity(match.start(), match.end(), "share", endowment * percent / 100)
    if match["ftop"]:
        top, bottom = _number_value(match["ftop"]), _number_value(match["fbottom"])
        if not match["of"] or isinstance(top, str) or isinstance(bottom, str) or bottom == 0:
            return _problem(match, "share", f"it gives a fraction ({quoted(match[0])})")
        return Quantity(match.start(), match.end(), "share", endowment * top / bottom)
    bottom = _DENOMINATOR_VALUES[match["bottom"].lower().rstrip("s")]
    top_word = match["top"].lower()
    top = 1.0 if top_word in ("a", "an") else _number_value(top_word)
    if isinstance(top, str):
        return _problem(match, "share", top)
    if bottom == 4 and top_word in ("a", "one") and not match["of"]:
        return _problem(match, "share", "'a quarter' may be 25 cents or a quarter of the money")
    return Quantity(match.start(), match.end(), "share", endowment * top / bottom)


_DENOMINATOR_VALUES = {
    "half": 2, "halve": 2, "third": 3, "quarter": 4, "fourth": 4, "fifth": 5, "sixth": 6,
    "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10,
}  # fmt: skip


def _all(match: re.Match[str], body: str, endowment: int, negated: bool) -> Quantity:
    if match["all_named"] and (named := _money_value(match["all_named"])) != endowment:
        shown = named if isinstance(named, str) else f"${named:g}"
        return _problem(match, "all", f"it says all of it but names {shown} of the ${endowment}")
    if match["but"]:
        kept = _money_value(match["but"])
        if isinstance(kept, str):
            return _problem(match, "all-but", kept)
        return Quantity(match.start(), match.end(), "all-but", endowment - kept)
    return Quantity(match.start(), match.end(), "all", float(endowment))


def _nothing(match: re.Match[str], body: str, endowment: int, negated: bool) -> Quantity:
    return Quantity(match.start(), match.end(), "nothing", 0.0)


def _any(match: re.Match[str], body: str, endowment: int, negated: bool) -> Quantity | None:
    """'any money', 'a single dollar': nothing under a negated verb; 'a dollar' is 1."""
    if negated:
        return Quantity(match.start(), match.end(), "nothing", 0.0)
    if re.match(r"(?:a|one)\s+(?:single\s+)?dollar", match[0], re.IGNORECASE):
        return Quantity(match.start(), match.end(), "money", 1.0)
    return None


def _a_dollar(match: re.Match[str], body: str, endowment: int, negated: bool) -> Quantity:
    return Quantity(match.start(), match.end(), "money", 1.0)


def _currency(match: re.Match[str], body: str, endowment: int, negated: bool) -> Quantity:
    return _problem(match, "currency", f"it names another currency ({quoted(match[0])})")


def _money(match: re.Match[str], body: str, endowment: int, negated: bool) -> Quantity | None:
    """A number, with its sign, units and cents: money when a unit names it, else a bare
    number; labels, ordinals, counts of other things and pronoun 'one' are left out."""
    number = match["number"]
    has_unit = bool(match["pre"] or match["post"].strip() or match["only_cents"])
    if not has_unit and (
        _is_label(body, match.start("number")) or _is_other_thing(body, match.end("number"))
    ):
        return None
    if number.lower() == "one" and not has_unit and _is_pronoun_one(body, match):
        return None
    value = _number_value(number)
    if isinstance(value, str):
        return _problem(match, "money", value)
    if match["only_cents"]:
        value /= 100
    elif match["cents"]:
        cents = _number_value(match["cent_count"])
        if isinstance(cents, str):
            return _problem(match, "money", cents)
        value += cents / 100
    if match["minus"] or match["minus2"]:
        value = -value
    return Quantity(match.start(), match.end(), "money" if has_unit else "number", value)


def _is_label(body: str, start: int) -> bool:
    if _LABEL_BEFORE.search(body, max(0, start - 24), start):
        return True
    player = _PLAYER_BEFORE.search(body, max(0, start - 24), start)
    return player is not None and re.match(r"[12AB](?!\d)", body[start:]) is not None


def _is_other_thing(body: str, end: int) -> bool:
    """The number counts something else ('2nd', '3x', '2 players') or runs into letters."""
    after = body[end : end + 16]
    if re.match(r"(?:st|nd|rd|th)\b|[^\W\d](?<!\$)", after, re.IGNORECASE):
        return not re.match(r"(?:dollar|buck|usd|cent|ish)", after, re.IGNORECASE)
    return bool(_OTHER_THING_AFTER.match(after))


def _is_pronoun_one(body: str, match: re.Match[str]) -> bool:
    before = body[max(0, match.start() - 12) : match.start()]
    return bool(_NOT_A_NUMBER_ONE.search(before) or _ONE_FOLLOWED.match(body, match.end()))


def _problem(match: re.Match[str], kind: str, problem: str) -> Quantity:
    return Quantity(match.start(), match.end(), kind, None, problem)


_KINDS = {
    "between": _between,
    "sum": _sum,
    "range": _range,
    "share": _share,
    "all": _all,
    "nothing": _nothing,
    "any": _any,
    "a_dollar": _a_dollar,
    "currency": _currency,
    "multiplied": lambda match, body, endowment, negated: _problem(
        match, "money", f"it writes a multiplier ({quoted(match[0])}): thousands or millions"
    ),
    "mixed": lambda match, body, endowment, negated: _mixed(match),
    "money": _money,
}


def _mixed(match: re.Match[str]) -> Quantity:
    """'five and a half dollars', '5 1/2 dollars': a whole number and a fraction."""
    whole = _number_value(match["whole"])
    if isinstance(whole, str):
        return _problem(match, "money", whole)
    top, bottom = (int(match["mtop"]), int(match["mbottom"])) if match["mtop"] else (1, 2)
    if bottom == 0:
        return _problem(match, "money", f"it gives a fraction ({quoted(match[0])})")
    return Quantity(match.start(), match.end(), "money", whole + top / bottom)


def _number_value(said: str) -> float | str:
    """The value of digits or number words; a str says why it has none ('1,000')."""
    said = said.strip()
    if re.fullmatch(_WORDS, said, re.IGNORECASE):
        try:
            return float(text2num(re.sub(r"\s+", " ", said.lower()), "en"))
        except ValueError:
            return f"'{said}' is not a number I can read"
    return _digits_value(said)


def _money_value(said: str) -> float | str:
    number = re.search(_NUMBER, said, re.IGNORECASE)
    return _number_value(number[0]) if number else f"'{said}' names no amount"


def _digits_value(said: str) -> float | str:
    """'7', '7.00', '2,5', '1 000', '1,000.00', '1.000.000'; '1,000' and '1.000' alone could
    be a thousand or one (a thousands separator, or a decimal comma or point): not read."""
    text = said.replace(" ", "_")
    separators = re.findall(r"[,._]", text)
    parts = re.split(r"[,._]", text)
    unreadable = f"'{said}' is not a number I can read"
    if not separators:
        return float(text)
    if len(separators) == 1 and separators[0] != "_":
        head, tail = parts
        if len(tail) == 3 and head not in ("", "0") and len(head) <= 3:
            return (
                f"'{said}' could be {int(head + tail)} or {float(head + '.' + tail):g} "
                "(a thousands separator, or a decimal comma or point); write the whole number "
                "of dollars without separators"
            )
        return float(f"{head or 0}.{tail}")
    decimal = separators[-1] if len(set(separators)) > 1 else ""
    grouping = separators[:-1] if decimal else separators
    groups = parts[1:-1] if decimal else parts[1:]
    if decimal == "_" or len(set(grouping)) != 1 or not 1 <= len(parts[0]) <= 3:
        return unreadable
    if any(len(group) != 3 for group in groups):
        return unreadable
    whole = "".join(parts[:-1] if decimal else parts)
    return float(f"{whole}.{parts[-1]}" if decimal else whole)
