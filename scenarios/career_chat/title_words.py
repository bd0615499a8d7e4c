"""Word patterns over a job title's tokens: the matching machinery of the job-title rule
(`jobs.py` holds the rules themselves). A pattern is one or more tokens matched as a run of
whole tokens: `psycholog*` matches a token that starts so, `...` allows up to three tokens in
between, `^` and `$` anchor at the title's start and end."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = ["Rule", "rules", "title_key", "title_tokens", "word_set"]

_GAP = "..."
_MAX_GAP = 3


@dataclass(frozen=True)
class Rule:
    """A word pattern and the label it gives."""

    pattern: str
    label: str

    def matches(self, tokens: Sequence[str]) -> bool:
        return next(self.spans(tokens), None) is not None

    def spans(self, tokens: Sequence[str]) -> Iterator[tuple[int, int]]:
        """Every (start, end) where the pattern occurs in the tokens."""
        words, found = self.pattern.split(), list(tokens)
        for start in range(len(found) + 1):
            for end in _ends(words, found, start):
                yield start, end


def title_tokens(title: str) -> list[str]:
    """Lower-case word tokens; a possessive "'s" is dropped with its apostrophe."""
    return re.findall(r"[a-z0-9]+", re.sub(r"['’]s\b", "", title.lower()))


def title_key(title: str) -> str:
    """What two spellings of one title share (its words, case-folded): a bound classifier is
    asked once per key."""
    return " ".join(title.split()).casefold()


def _token_matches(pattern: str, token: str) -> bool:
    return token.startswith(pattern[:-1]) if pattern.endswith("*") else token == pattern


def _ends(pattern: list[str], tokens: list[str], at: int) -> Iterator[int]:
    """Where a match of `pattern` starting at token `at` ends (exclusive), each way it can."""
    if not pattern:
        yield at
        return
    head, rest = pattern[0], pattern[1:]
    if head == "^":
        if at == 0:
            yield from _ends(rest, tokens, at)
    elif head == "$":
        if at == len(tokens):
            yield from _ends(rest, tokens, at)
    elif head == _GAP:
        for skip in range(_MAX_GAP + 1):
            if at + skip <= len(tokens):
                yield from _ends(rest, tokens, at + skip)
    elif at < len(tokens) and _token_matches(head, tokens[at]):
        yield from _ends(rest, tokens, at + 1)


def word_set(words: str) -> frozenset[str]:
    """The words of a space-separated list."""
    return frozenset(words.split())


def rules(label: str, patterns: str) -> list[Rule]:
    """One rule per comma-separated pattern, all giving `label`."""
    return [Rule(p.strip(), label) for p in patterns.split(",") if p.strip()]
