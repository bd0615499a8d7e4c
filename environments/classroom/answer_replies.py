"""Where a classroom reply proper ends (docs/classroom.md, "Reading answers"):

- after its thinking (`<think>…</think>`), where an answer follows it; none where it is cut
  off while thinking;
- at a new turn it writes after its own, a chat template leaked into the text ("…20
  votes.<|eot_id|><|start_header_id|>user…");
- without end-of-text tokens;
- up to a new question it goes on to write ("Question 2:" on its own line or after a
  sentence, "### Follow-up Question 1", "Now, let's consider a more difficult question:").

`cut_off_loop` finds a degenerate loop: a sentence said three times in a reply cut off;
`cut_off_result` a reply cut off inside its last result ("… = 20 + 8 + 20 = 4", for 48).
"""

from __future__ import annotations

import ast
import operator
import re

__all__ = ["cut_off_loop", "cut_off_result", "reply_proper"]

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
_THINKING = re.compile(r"<think>", re.IGNORECASE)
_NEW_TURN = re.compile(
    r"(?:</s>|<\|(?:im_end|eot_id|endoftext|end|eom_id)\|>|<eos>|<end_of_turn>|<\|im_start\|>|"
    r"<\|start_header_id\|>|<start_of_turn>|<\|(?:user|assistant|system)\|>|\[INST\])\s*\S"
)
"""A turn the model goes on to write after its own ends (a chat template leaked into the
text: "…20 votes.<|eot_id|><|start_header_id|>user…"): not its reply."""


def reply_proper(text: str) -> tuple[str, str | None]:
    """The reply without end-of-text tokens; and the same cut before a new question it goes on
    to write (None: it writes none). The caller reads the cut text where it states an answer."""
    thought = text.rfind("</think>")
    if thought != -1 and text[thought + len("</think>") :].strip():
        text = text[thought + len("</think>") :]  # the answer after the thinking
    elif _THINKING.search(text) and thought == -1:
        text = ""  # cut off while thinking: no answer given
    turn = _NEW_TURN.search(text)
    if turn is not None and text[: turn.start()].strip():
        text = text[: turn.start()]
    text = _END_TOKENS.sub("", text)
    found = [m.start() for m in _NEW_QUESTION.finditer(text)]
    found += [m.start() + 1 for m in _INLINE_QUESTION.finditer(text)]
    for start in sorted(found):
        if text[:start].strip():
            return text, text[:start]
    return text, None


_ENDED = re.compile(r"[.!?。！？)\]}>`*$\d\u4e00-\u9fff]\s*$|^\s*$")
_LOOP_SENTENCE = re.compile(r"[^.!?\n]{20,}[.!?]")


def cut_off_loop(text: str) -> str | None:
    """A sentence the reply says three times or more, in a reply cut off mid-sentence: a
    degenerate loop, whose statements each withdraw the one before (None: no such loop)."""
    text = _END_TOKENS_OR_SPACE.sub("", text)
    if _ENDED.search(text):
        return None
    seen: dict[str, int] = {}
    for match in _LOOP_SENTENCE.finditer(text):
        sentence = " ".join(match[0].split())
        seen[sentence] = seen.get(sentence, 0) + 1
        if seen[sentence] >= 3:
            return sentence
    return None


_END_TOKENS_OR_SPACE = re.compile(r"(?:</s>|<\|[a-z_]+\|>|<eos>|<end_of_turn>|\s)+$")


_LAST_EQUATION = re.compile(
    r"(?<![\d.,])(?P<expression>[(\d][\d\s.,+×x*÷/()−-]*?)\s*=\s*[$€£]?\s*(?P<result>\d+)[ \t]*$"
)
_OPERATORS = str.maketrans({"×": "*", "x": "*", "÷": "/", "−": "-"})


def cut_off_result(text: str) -> str | None:
    """A reply cut off inside its last result ("Total legs = 20 + 8 + 20 = 4", for 48): the
    digits it ends on begin the whole number its own arithmetic gives, and nothing follows
    them (a result rounded or floored, "50 ÷ 3 = 16", is no cut)."""
    found = _LAST_EQUATION.search(text.rstrip())
    if found is None or not re.search(r"\d\s*[+×x*÷/−-]", found["expression"]):
        return None
    if re.search(r"\d,\d{1,2}\b|\d\.\d{3}\b", found["expression"]):
        return None  # a decimal comma or a grouping dot: not plain arithmetic
    expression = found["expression"].replace(",", "").translate(_OPERATORS)
    try:
        value = _evaluated(ast.parse(expression.strip(), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError):
        return None
    if not float(value).is_integer():
        return None  # "50 ÷ 3 = 16": a rounded or floored result, not a cut
    whole, result = str(abs(int(value))), found["result"]
    if whole != result and whole.startswith(result):
        return f"{found[0].strip()!r} where its arithmetic gives {whole}"
    return None


def _evaluated(node: ast.expr) -> float:
    """Plain arithmetic only: numbers, + − × ÷ and brackets."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluated(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        return _ARITHMETIC[type(node.op)](_evaluated(node.left), _evaluated(node.right))
    raise ValueError("not plain arithmetic")


_ARITHMETIC = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
