"""Variants of the Trust Game closing sentence a careful reader still takes as the decision
(docs/trust-population.md, "Reading the amount", rule 2): an amount a label or a JSON field
names when the reply has no decision sentence, and the Japanese and Korean closings, whose
amount stands before the verb. `decision_text` makes decision clauses of what is found here."""

from __future__ import annotations

import re

__all__ = ["labelled_amounts", "verb_last_decisions"]

_LABEL = (
    r"(?:(?:my|our)\s+)?(?:final\s+)?(?:transfer(?:\s+amount)?|amount(?:\s+(?:to\s+)?(?:send|give"
    r"|transfer)|\s+(?:sent|given|transferred))?|decision|answer|offer)"
)
_LABELLED_LINE = re.compile(
    rf"^[ \t#>\-]*{_LABEL}[ \t]*(?:[:：=][ \t]*|\n[ \t]*)(?P<body>[^\n]*\S)[ \t]*$", re.IGNORECASE
)
"""A reply whose last line labels its amount ('Transfer: seven dollars.'), or whose heading
names it and whose last line is the amount ('### Final decision\n$7')."""
_AMOUNT_FIELD = re.compile(
    r"\"(?:(?:final|my)_?)?(?:amount|transfer|transfer_?amount|amount_?(?:to_?)?(?:send|give"
    r"|transfer)|amount_?(?:sent|given|transferred)|send|give|sent|given|decision|offer)\"\s*:\s*"
    r"(?:\"(?P<text>[^\"\n]*)\"|(?P<number>-?\d+(?:\.\d+)?))",
    re.IGNORECASE,
)
"""A JSON field that holds the amount ('"amount": 4', '"transfer": "6 dollars"'); other
fields ('"expected_return": 6') are not the decision."""

_JAPANESE = re.compile(
    r"(?:最後に|最終的に|結論として|結局)[、，,：:\s]*(?:(?:私|わたし|僕|俺)(?:は|が)[、，,\s]*)?"
    r"(?P<body>[^。\n！？!?]{1,40}?)\s*を?\s*(?P<verb>(?:渡|送|あげ|贈|託|投資)[^\s。！？!?、]{0,6})"
)
"""'最後に、私は7ドルを渡します': the amount stands before the verb, which ends the sentence."""
_KOREAN = re.compile(
    r"(?:마지막으로|최종적으로|결론적으로)[,，\s]*(?:(?:나는|저는|제가|내가)\s*)?"
    r"(?P<body>[^.。\n!?]{1,40}?)\s*(?:를|을)?\s*(?P<verb>(?:주|드리|보내|건네|송금하)[^\s.。!?,]{0,6})"
)
"""'마지막으로, 나는 5달러를 주겠습니다': Korean, the amount before the verb too."""
_JAPANESE_WORDS = (
    ("ドル", "美元"), ("全額", "全部"), ("半分", "一半"), ("何も", "什么也不"), ("約", "大约"),
    ("くらい", "左右"), ("ぐらい", "左右"), ("ほど", "左右"), ("程度", "左右"),
    ("달러", "美元"), ("전부", "全部"), ("절반", "一半"), ("약", "大约"),
)  # fmt: skip
"""Japanese words as the Chinese ones `english` reads (the numerals are the same)."""


def verb_last_decisions(text: str) -> list[tuple[int, str, str, bool, int]]:
    """The Japanese and Korean closings ('最後に、私は7ドルを渡します', '마지막으로, 나는 5달러를
    주겠습니다'), each as (start, head, body in Chinese words, negated, where the verb ends)."""
    found = []
    for match in [*_JAPANESE.finditer(text), *_KOREAN.finditer(text)]:
        body = match["body"]
        for word, chinese in _JAPANESE_WORDS:
            body = body.replace(word, chinese)
        negated = bool(re.search(r"ません|ない|ず|않", match["verb"]))
        found.append((match.start(), match[0], body, negated, match.end()))
    return found


def labelled_amounts(text: str) -> list[tuple[int, str, str, bool, int]]:
    """A reply with no decision sentence: its amount fields (JSON), else its last line when a
    label names it the amount ('Transfer: seven dollars.', '### Final decision' over '$7'); each
    as (start, head, body, negated, end), the fields of a decision clause."""
    fields = [
        (m.start(), m[0], m["text"] if m["text"] is not None else m["number"], False, m.end())
        for m in _AMOUNT_FIELD.finditer(text)
    ]
    if fields:
        return fields
    stripped = text.rstrip()
    lines = [line for line in stripped.split("\n") if line.strip()]
    tail = "\n".join(lines[-2:])
    for candidate in (lines[-1:] and lines[-1], tail if len(lines) >= 2 else ""):
        match = _LABELLED_LINE.match(candidate) if candidate else None
        if match is not None and ("\n" not in candidate or re.match(r"\s*#", candidate)):
            start = len(stripped) - len(candidate) + match.start("body")
            return [(start, candidate[: match.start("body")], match["body"], False, len(text))]
    return []
