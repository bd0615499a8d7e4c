"""What follows a reply's answer and does not change it: checks, notes, tips and asides
(docs/classroom.md, "Reading answers": "Checks, notes and verifications after it do not change
it").

A grader reads the answer where the reply concludes and passes over what comes after it to
confirm or comment: a paragraph or line that opens with a check or a note ("Check: 600 + 2,400
= 3,000 ✓", "(Note: ignoring interest ...)"), a closing aside in brackets, and, within the last
paragraph, a sentence that opens a check after a complete sentence ("He delivers 193
newspapers to District B. To double-check: 198 + 193 + 209 = 600.").
"""

from __future__ import annotations

import re

from personasim.environments.classroom.answer_closings import sentences

__all__ = ["before_afterwords"]

_CHECK_WORDS = (
    r"(?:(?:(?:as|for|just)\s+)?(?:a\s+)?(?:quick|sanity|double)[- ]?check|check(?:ing)?|"
    r"to\s+(?:double[- ]?)?(?:check|verify|"
    r"confirm)|verif(?:y|ication|ying)|let(?:'s|’s|\s+me|\s+us)\s+(?:double[- ]?)?(?:check|verify)|"
    r"proof|note|side\s+note|n\.?b\.?|p\.?s\.?|hint|tip|vérification|vérifions|remarque|"
    r"comprobación|verificación|comprobemos|nota|probe|prüfung|überprüfung|kontrolle|"
    r"verificação|verifica|controllo)\b|(?:验证|检查|檢查|確認|検算|검산|확인)"
)
"""The words that open a check or a note."""
_AFTERWORD = re.compile(
    rf"^[\s*_#>-]*(?:\(|\[)?[\s*_]*(?:{_CHECK_WORDS})|^[\s*_]*\(.*\)[\s*_]*$|[✓✔]\s*\**\s*$",
    re.IGNORECASE,
)
"""A paragraph after the answer that checks it or comments on it: it does not change it."""
_CHECK_SENTENCE = re.compile(rf"^[\s*_]*(?:{_CHECK_WORDS})", re.IGNORECASE)
"""A sentence that opens a check or a note after the answer, in the answer's own paragraph."""
_RULE = re.compile(r"\s*(?:-{3,}|\*{3,}|_{3,})\s*")
"""A horizontal rule in markdown: it separates, it states nothing."""
_CLOSING_ASIDE = re.compile(r"(?<=[.!。！])\s*\([^()]*\)\s*$")
_ENDED_SENTENCE = re.compile(r"[.!。！]\s*[*_]*\s*$")


def before_afterwords(text: str) -> str:
    """The reply up to the checks and notes that follow its answer: whole paragraphs that
    open with one, lines that are one at the end of the last paragraph, and a closing aside
    in brackets ("(That's roughly 9.7 yards ...)")."""
    text = _CLOSING_ASIDE.sub("", text)
    lines = text.rstrip().split("\n")
    while lines:
        if not lines[-1].strip() or _RULE.fullmatch(lines[-1]):
            lines.pop()
            continue
        kept = _before_check_sentence(lines[-1])
        if kept != lines[-1]:  # "So each gets 16. Quick check: 16 × 6 = 96 ✓"
            lines[-1] = kept
            break
        opening = _paragraph_start(lines)
        if _AFTERWORD.search(lines[opening]):
            del lines[opening:]
        elif _AFTERWORD.search(lines[-1]):
            lines.pop()
        else:
            break
    return _before_check_sentence("\n".join(lines))


def _before_check_sentence(text: str) -> str:
    """The text up to a sentence of its last line that opens a check or a note, where a
    complete sentence with a digit comes before it ("... 193 newspapers to District B. To
    double-check: 198 + 193 + 209 = 600.")."""
    start = text.rfind("\n") + 1
    for offset, sentence in sentences(text[start:])[1:]:
        if _CHECK_SENTENCE.match(sentence):
            kept = text[: start + offset].rstrip()
            if _ENDED_SENTENCE.search(kept) and re.search(r"\d", kept[kept.rfind("\n") + 1 :]):
                return kept
            break
    return text


def _paragraph_start(lines: list[str]) -> int:
    """The index of the first line of the paragraph `lines` ends with."""
    index = len(lines) - 1
    while index > 0 and lines[index - 1].strip():
        index -= 1
    return index
