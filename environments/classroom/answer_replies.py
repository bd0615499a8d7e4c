"""Where a classroom reply proper ends: end-of-text tokens removed, and a reply that goes on to
write a new question ("Question 2:" on its own line or after a sentence, "### Follow-up
Question 1", "Now, let's consider a more difficult question:") is read up to it
(docs/classroom.md, "Reading answers")."""

from __future__ import annotations

import re

__all__ = ["reply_proper"]

_NEW_QUESTION = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*)?(?:(?:follow[- ]?up|new|next|another|additional|bonus|"
    r"similar|harder|more\s+difficult)[ \t]+)?(?:question|problem|instruction|exercise|task|"
    r"your[ \t]+task)(?:[ \t]+\d+)?[ \t]*(?:\*\*)?[ \t]*(?::.*)?$"
    r"|^[ \t]*(?:now,?[ \t]+)?let(?:'s|’s|[ \t]+us)[ \t]+(?:consider|try|look[ \t]+at|solve)[ \t]+"
    r"(?:a|an|another|the[ \t]+next)[ \t]+(?:[\w-]+[ \t]+){0,3}?(?:question|problem|exercise)\b.*$",
    re.IGNORECASE | re.MULTILINE,
)
"""A new question the reply goes on to write ("Question 2: ...", "### Follow-up Question 1",
"Now, let's consider a more difficult question:")."""
_INLINE_QUESTION = re.compile(
    r"(?<=[.!?])\s(?:\*\*)?(?:follow[- ]?up\s+|new\s+|next\s+)?(?:question|problem|exercise)\s+\d+"
    r"(?:\*\*)?\s*[:.]",
    re.IGNORECASE,
)
"""A new numbered question written inside a paragraph ("... $18. Question 2: ...")."""
_END_TOKENS = re.compile(r"</s>|<\|(?:im_end|eot_id|endoftext|end)\|>|<eos>|<end_of_turn>")


def reply_proper(text: str) -> tuple[str, str | None]:
    """The reply without end-of-text tokens; and the same cut before a new question it goes on
    to write (None: it writes none). The caller reads the cut text where it states an answer."""
    text = _END_TOKENS.sub("", text)
    found = [m.start() for m in _NEW_QUESTION.finditer(text)]
    found += [m.start() + 1 for m in _INLINE_QUESTION.finditer(text)]
    for start in sorted(found):
        if text[:start].strip():
            return text, text[:start]
    return text, None
