"""Closings of the classroom's answer reader: the closing sentence, what follows the final
statement and a concluding box (docs/classroom.md, "Reading answers").

- **Closing sentence** (`closing_statement`): a reply with no final statement at all is read by
  its last sentence, or a last labelled line ("**Total: $75**"), asides in brackets removed,
  when that sentence states exactly one quantity (an equation by its result; a number after a
  definite article, "the three cities", refers to a group and is no quantity), is no question,
  condition, check or step of the working, and its value is not an operand the working used
  (a restated intermediate step) unless it is the working's last result.
- **Hedges** (`hedge_after`): after the final statement, an alternative ("or 13, if ...",
  "Ou bien 12 ans", "Wenn man ..., sind es 140"), "both answers are possible", a concluding
  "So ..." none of whose numbers is the answer, or a correction ("Actually, scratch that")
  followed by no value and no restatement of the answer: the statement is not the answer.
- **Concluding box** (`concluding_box`): of several different `\\boxed{}` values, the last is
  read where its sentence computes it from every earlier boxed value ("$80 + $150 =
  \\boxed{$230}").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from personasim.environments.classroom.answer_chains import (
    EQUATION,
    TOTAL,
    chained,
    names_their_total,
    question_givens,
    restated_operand,
)
from personasim.environments.classroom.answer_clauses import (
    ASIDE,
    BECAUSE,
    CONCLUDING_BREAK,
    FRACTION_WORDS,
    HEDGED,
    LISTED,
    SEVERAL,
    UNSURE,
    Context,
    Statement,
    clause_value,
    prepared,
    without_asides,
)
from personasim.environments.classroom.answer_durations import (
    restated_duration,
    without_approximate_restatement,
)
from personasim.environments.classroom.answer_numbers import numbers_in, through_value, with_digits
from personasim.environments.classroom.answer_units import asked_bound

__all__ = [
    "BACKGROUND",
    "CHECK",
    "CONCLUDING_LABEL",
    "PROCEDURE",
    "REFERENCE",
    "closing_statement",
    "concluding_box",
    "hedge_after",
    "sentences",
]

TOLERANCE = 1e-6

_SENTENCE_BREAK = re.compile(
    r"[ \t]*\n\s*|(?<=[.!?])(?<!\bMio\.)(?<!\bMrd\.)(?<!\bTsd\.)(?<!\bBio\.)"
    r"(?<!\b[iI]\.e\.)(?<!\b[eE]\.g\.)(?<!\bvs\.)(?<!\bd\.h\.)(?<!\bz\.B\.)\s+|(?<=[。！？])\s*"
)
"""Where a sentence ends; not after a multiplier's abbreviation ("5,7 Mio. $") nor "i.e."."""
_MARKUP = " \t*_#>`|"
_TRAILER = re.compile(r"(?:\s|```|\*\*|__)+$")
_ALTERNATIVE = re.compile(
    r"^(?:or|ou(?:\s+bien|\s+então)?|oder|o|alternatively|otherwise|sinon|sonst|"
    r"de\s+lo\s+contrario|senão|or\s+else|either|или|либо|atau|lub|albo|veya|ya\s+da|"
    r"hoặc|eller|maybe|perhaps|possibly|a\s+może|może|belki|có\s+thể\s+là|vielleicht|"
    r"peut-être|quizás?|tal\s+vez|talvez|forse)\b|^(?:或者|或|否则|也可能|または|もしくは|또는|아니면|या|أو)",
    re.IGNORECASE,
)
"""Words that open an alternative to the answer just given."""
_OTHER_CASE = re.compile(
    r"^[$€£]?\d[\d.,]*\s*(?:[^\W\d_]+\s+){0,2}?(?:with|without|if|including|excluding|counting|"
    r"when|avec|sans|si|en\s+comptant|con|sin|contando|mit|ohne|wenn|com|sem|se)\b",
    re.IGNORECASE,
)
"""An aside giving the value in another case ("20 cups (26 with breakfast)")."""
_IF = r"(?:if|unless|si|wenn|falls|se|sofern)\b"
"""The words that open a condition, in the languages the readers know."""
_CONDITIONAL = re.compile(rf"^{_IF}|^(?:如果|假如|若)", re.IGNORECASE)
_MAYBE = re.compile(
    r"\b(?:could|might|may)\s+(?:also\s+)?be\b|\b(?:some|others?)\s+(?:would|might|may|could)\b|"
    r"\b(?:pourrait|könnte|podría|poderia)\b",
    re.IGNORECASE,
)
"""Another value offered as possible ("it could also be 13", "some would say 13")."""
_CONDITION_WORD = re.compile(rf"(?:^|\b){_IF}|如果|假如|若是", re.IGNORECASE)
_BOTH = re.compile(
    r"\b(?:both\s+(?:answers|values|readings)\s+(?:are|could\s+be)|beide\s+Antworten|"
    r"les\s+deux\s+réponses|ambas\s+(?:respuestas|respostas)|either\s+answer)\b|两个答案都",
    re.IGNORECASE,
)
_CONCLUSION = re.compile(
    r"^(?:so|therefore|thus|hence|in\s+total|donc|ainsi|also|daher|então|portanto|entonces|"
    r"por\s+lo\s+tanto|así\s+que|quindi|dunque|итак|значит|таким\s+образом|отже|тож|dus|"
    r"daarom|więc|zatem|zatím|tedy|takže|yani|dolayısıyla|jadi|maka|sehingga|vậy|do\s+đó|"
    r"vì\s+vậy|alltså|så|altså|siis|eli|deci|prin\s+urmare|άρα|επομένως|לכן|إذن|لذلك|"
    r"इसलिए|तो|따라서|그래서|즉)(?!\w)|^(?:所以|因此|因而|于是|つまり|したがって|よって|だから)",
    re.IGNORECASE,
)
"""A sentence that opens on a conclusion, in the readers' languages ("So …", "Итак, …")."""
CHECK = re.compile(
    r"\b(?:check(?:ing)?|verif(?:y|ication)|proof|note|hint|vérification|prüfung|probe|"
    r"comprobación|verificação|verifica)\b|验证|检查|✓|✔",
    re.IGNORECASE,
)
PROCEDURE = re.compile(
    r"^(?:let(?:'s|’s|\s+me|\s+us)|to\s+[^\W\d_]+|"
    r"(?:we\s+(?:need|can|will|have|must|should|now|then|first)|I\s+(?:will|need|can|would|"
    r"have\s+to)|you\s+(?:need|can|should|must))(?!\s+[$€£]?\d)|"
    r"(?:now|next|first|then|finally),?\s+(?:we|I|you|let)|divide|multiply|add|subtract|"
    r"calculate|compute|convert|find|step\s*\d|\d+[.)]\s)",
    re.IGNORECASE,
)
"""A sentence of the working, not its conclusion: "Let's ...", "Next, we ...", "Step 3"; not
"You need 3 cups" (a number right after the verb concludes)."""
_STEP_THEN_RESULT = re.compile(
    r",?\s+and\s+(?P<result>(?:you|we)\s+(?:get|have|end\s+up\s+with)|that['’]s|that\s+is|"
    r"that\s+(?:gives|makes)|the\s+(?:total|answer|result)\s+is)\b",
    re.IGNORECASE,
)
"""A step said as an instruction, then its result ("Add them up and you get 110 miles")."""
_PURPOSE = re.compile(
    r"^(?:to|in\s+order\s+to)\s+(?:[^,\n]|,(?=\d)){1,80}?,\s+(?=(?:the|a|an|he|she|they|it|his|"
    r"her|their|its|each|this|that|there|we|I|you)\s)",
    re.IGNORECASE,
)
"""A leading purpose ("To make a $2,000 profit, the chickens cost $7,000"): it sets the
scene; the rest of the sentence is read (and is working if it is a step: "To find ..., we
add")."""
_TAKEN_BACK = re.compile(
    r"\b(?:wait|actually|scratch\s+that|correction|oops|on\s+(?:second\s+thought|reflection)|"
    r"let\s+me\s+(?:correct|recompute|redo|recheck|recalculate)|i\s+made\s+a\s+mistake|attendez|"
    r"en\s+fait|je\s+corrige|espera|en\s+realidad|corrijo|warte|korrektur|espere|na\s+verdade|"
    r"corrigindo|me\s+equivoqué|je\s+me\s+suis\s+tromp[ée]e?|ich\s+habe\s+mich\s+(?:geirrt|"
    r"verrechnet)|errei|me\s+enganei|I\s+(?:missed|forgot|overlooked|miscounted|miscalculated|"
    r"misread)|I\s+made\s+an?\s+error|my\s+mistake)\b|等一下|等等|不对|不對|更正|算错|我错了",
    re.IGNORECASE,
)
"""The correction markers that take an answer back (`CORRECTION` without its courtesies,
"sorry", "rather", "I mean", and fillers, "eigentlich", "其实")."""
_OPERAND_AFTER = re.compile(r"\s*(?:[+×*÷/−]|-\s)")
"""A number an operator follows: an operand of the working, not the answer restated."""
_CONFIRMED = re.compile(r"\b(?:right|correct|checks\s+out|confirmed|yes)\b|✓|✔", re.IGNORECASE)
_INTERJECTION = re.compile(
    r"(?:\b(?:hmm+|h?m+|oh|uh|um+|ah|oops|no|hold\s+on|ok(?:ay)?)\b[\s,.!…—–-]*)+$", re.IGNORECASE
)
"""Fillers before a correction marker ("Hmm, wait"): the marker still opens the part."""
_OPENS_A_PART = (".", "!", "?", "\n", "。", "！", "？", "—", "–", ":", ";", "；", ",", "，", "…")
_QUOTED = re.compile(r"“[^”\n]*”|\"[^\"\n]*\"|«[^»\n]*»|„[^“”\n]*[“”]|「[^」\n]*」")
"""Words quoted (a phrase of the question): not the reply's own statement."""
_APPROXIMATE = re.compile(
    r"\b(?:roughly|about|around|approximately|approx|nearly|almost|at\s+(?:most|least)|"
    r"(?<!\badds\s)(?<!\badd\s)(?<!\badded\s)up\s+to|"
    r"more\s+than|less\s+than|fewer\s+than|give\s+or\s+take|somewhere|or\s+so|environ|presque|"
    r"etwa|ungefähr|höchstens|mindestens|aproximadamente|cerca\s+de|quase|unos|unas)\b|[~≈]|"
    r"约|大约|左右|至少|最多",
    re.IGNORECASE,
)
"""An approximation or a bound ("roughly $64", "at most 2"): not an exact answer."""
_VARYING = re.compile(
    r"\b(?:depend(?:s|ing)?|var(?:y|ies)|in\s+general|generally|typically|usually|"
    r"dépend|hängt|depende)\b",
    re.IGNORECASE,
)
"""A closing line that says its value varies ("in general", "depending on"): no one answer."""
_CJK = re.compile(r"[\u4e00-\u9fff]")
_LABELLED = re.compile(r"^(?P<label>[^\d:：=]{1,60}?)\s*[:：]\s*(?P<rest>\S.*)$", re.DOTALL)
_VALUE_LINE = re.compile(r"^[\s*_]*[$€£¥₹]?\s*-?\d[\d,.]*\s*(?:[$€£¥₹%]|[^\W\d_]+)?[\s*_]*$")
_EQUATION_LINE = re.compile(
    r"^[\s*_]*(?:[$€£]?\s*-?\d[\d,.]*\s*[$€£%]?\s*[+×*÷/x-]\s*)+[$€£]?\s*-?\d[\d,.]*\s*[$€£%]?"
    r"\s*=\s*[$€£]?\s*-?\d[\d,.]*\s*(?:[$€£%]|[^\W\d_]+)?[\s*_]*$"
)
"""A labelled last line whose value stands alone ("Total: $18"), or, under a label that
concludes, ends an equation of numbers alone ("Total: 8 + 16 + 6 = 30 years"): complete
without a full stop. Another label's equation line ("- Milk: 2 × 4 = 8") may be a list cut
off at a step of the working."""
CONCLUDING_LABEL = re.compile(
    r"\b(?:total|in\s+all|altogether|sum|result|profit|loss|net|remaining|left|overall|"
    r"gesamt\w*|insgesamt|summe|ergebnis|gewinn|verlust|résultat|bénéfice|perte|resultado|"
    r"ganancia|beneficio|pérdida|lucro|prejuízo|totale|risultato|guadagno)\b|合计|总计|总共|一共|利润|結果|合計",
    re.IGNORECASE,
)
_COMMA = re.compile(r",\s+|，|、")
BACKGROUND = re.compile(
    r"^(?:at|with|after|since|because|given|from|by|in|on|for|as|once|when|if|à|avec|après|"
    r"comme|mit|nach|da|con|después|com|depois|como|em|no|na)\b",
    re.IGNORECASE,
)
"""A leading phrase that sets the scene ("At $2 each, ...", "Since each rose needs 1 pound,
..."), not a quantity stated beside the answer."""
_IF = re.compile(r"\b(?:if|unless|wenn|falls|sofern)\b|如果|假如", re.IGNORECASE)
_WORKING = re.compile(r"\d\s*[=×*÷/+−-]\s*[$€£]?\d")
"""Arithmetic in an aside: the working behind a value, not a second quantity."""
_CUT_SHORT = re.compile(r"[+×*÷/=−-]\s*$")
_CHECK_OPENS = re.compile(
    r"^[ \t*_#>-]*(?:let(?:'s|’s|\s+me|\s+us)\s+(?:double[- ]?)?(?:check|verify)|(?:double[- ])?"
    r"check(?:ing)?\s*[:：]|verification\s*[:：]|vérification|verificación|comprobación|"
    r"verificação|probe\s*[:：]|überprüfung|验证|检查)",
    re.IGNORECASE | re.MULTILINE,
)
"""A check the reply opens after its answer ("Let me verify:"): cut off inside it, its last
sentence concludes nothing (a check does not change the answer)."""
_CODE_END = re.compile(r"```[ \t]*\s*$")
_DOUBT = re.compile(
    r"\b(?:not\s+(?:sure|certain)|unsure|uncertain|hold\s+on|hmm+|clarif(?:y|ication)|ambiguous|"
    r"unclear|I\s+think|I\s+guess|I\s+believe|probably|maybe|perhaps|might\s+be|could\s+be|"
    r"my\s+guess|estimate[ds]?|pas\s+sûr|peut-être|probablement|ambigu[eë]?|préciser|"
    r"no\s+estoy\s+segur[oa]|quizás?|tal\s+vez|probablemente|ambiguo|nicht\s+sicher|vielleicht|"
    r"wahrscheinlich|unklar|mehrdeutig|não\s+tenho\s+certeza|talvez|provavelmente|ambígu[oa])\b|"
    rf"不确定|也许|不清楚|含糊|澄清|{UNSURE}",
    re.IGNORECASE,
)
"""Doubt anywhere in a reply with no final statement: its closing sentence is no answer."""
_SUBORDINATE = re.compile(
    r"^(?:which|who|that|where|because|since|as|while|although|but|compared|plus|including|"
    r"excluding|except|for|from|per|than|with|without|instead|rather|if|when|qui|que|dont|"
    r"car|mais|weil|aber|porque|pero|mas)\b",
    re.IGNORECASE,
)
_BECAUSE = re.compile(rf"^(?:(?:{BECAUSE}|da)\b|因为|由于)", re.IGNORECASE)
"""A part that explains the value before it ("..., because 9 × 2 = 18"): not a second one."""
_NEGATED = re.compile(r"\b(?:not|never)\s+(?:the\s+|a\s+|an\s+)?[$€£]?\s?\d+", re.IGNORECASE)
_LEAD = re.compile(r"^(?:and|so|et|und|y|e|also|et\s+donc)\s+", re.IGNORECASE)
REFERENCE = re.compile(
    r"\b(?P<article>the|all|both|as|os|les|die|der|den|los|las|el|gli|todos\s+os|todas\s+as)"
    r"\s+\d+(?=\s+[^\W\d_])",
    re.IGNORECASE,
)
"""A number after a definite article ("the three cities"): a group referred to."""


def sentences(text: str) -> list[tuple[int, str]]:
    """(position, sentence) of each non-empty sentence of `text`."""
    found, start = [], 0
    for match in _SENTENCE_BREAK.finditer(text):
        found.append((start, text[start : match.start()]))
        start = match.end()
    found.append((start, text[start:]))
    return [(p, s) for p, s in found if s.strip(_MARKUP + ".")]


def closing_statement(
    context: Context, text: str | None = None, position: int = 0, complete: bool = False
) -> Statement | None:
    """The closing sentence's statement of `text` (the reply's, by default; found at
    `position`), or None where the last sentence is no closing statement. `complete`: the
    text is whole (a JSON field), not possibly cut off, and its last part may be an equation
    alone."""
    text = context.text if text is None else text
    if _CODE_END.search(text) or _DOUBT.search(text):
        return None  # code never run, or a reply that doubts its result
    text = _TRAILER.sub("", text)
    line_start = text.rfind("\n") + 1
    plain = without_asides(text[line_start:])
    found = sentences(plain)
    if not found:
        return None
    offset, raw = found[-1]
    sentence = _QUOTED.sub(" ", raw.strip(_MARKUP)).rstrip(".!。！ *_")
    ended = raw.rstrip(" *_").endswith((".", "!", "。", "！")) or raw.lstrip().startswith("**")
    labelled = _LABELLED.match(sentence)
    ended = ended or bool(
        labelled
        and (
            _VALUE_LINE.match(labelled["rest"])
            or (
                CONCLUDING_LABEL.search(labelled["label"])
                and _EQUATION_LINE.match(labelled["rest"])
            )
        )
    )
    if not (ended or complete) or sentence.endswith(("?", "？")) or CHECK.search(sentence):
        return None  # cut off mid-sentence, a question, a check
    clause = (labelled["rest"] if labelled else sentence).strip(_MARKUP)
    where = position + line_start + offset
    words = len(re.findall(r"[^\W\d_]{2,}", clause))
    worked = len(found) == 1 and any(
        _WORKING.search(aside[0]) for aside in ASIDE.finditer(text[line_start:])
    )  # "5 hours (60 ÷ 12)": a value and its working
    if not (complete or labelled or words >= 2 or worked or _CJK.search(clause)):
        return None  # a number alone ("(5). 6.") is no sentence
    clause = without_approximate_restatement(clause, context)  # "79 miles, i.e. about 127 km"
    approximate = _APPROXIMATE.search(clause) or HEDGED.search(clause) or _VARYING.search(plain)
    if approximate is not None and not asked_bound(approximate[0], context.question):
        body = prepared(clause, context.language, context.decimal_mark)
        stated = tuple(
            n.value for n in numbers_in(body, context.decimal_mark) if n.value is not None
        )
        reason = f"its closing sentence gives an approximation or a bound ({approximate[0]!r})"
        return Statement(where, "closing", None, stated, reason) if stated else None
    piece, several = _closing_piece(clause, context.language, question_givens(context))
    concluding = CONCLUDING_BREAK.split(clause)[-1]
    if several and (once := restated_duration(concluding, context.question)) is not None:
        piece, several = once, ()  # "280 minutes, or 4 hours 40 minutes": one quantity
    if several:
        return Statement(where, "closing", None, several, LISTED)
    if piece is None:
        return None
    value, candidates, problem = _single_quantity(context, piece)
    if value is None and not candidates:
        return None
    for aside in ASIDE.finditer(text[line_start:]):
        inner = aside[0].strip()[1:-1].strip()
        if (_ALTERNATIVE.match(inner) or _CONDITIONAL.match(inner)) and _differs(
            context, inner, value
        ):
            reason = "its closing sentence offers an alternative"
            return Statement(where, "closing", None, (), reason)
    computed = value is not None and _computes(context, piece, value)
    working = text[:line_start] + plain[:offset]
    if not computed and value is not None and restated_operand(context, working, value):
        return None
    passage = through_value(piece, value, context.decimal_mark)
    return Statement(where, "closing", value, candidates, problem, len(text), passage)


def _closing_piece(
    clause: str, language: str | None, givens: tuple[float, ...] = ()
) -> tuple[str | None, tuple[float, ...]]:
    """The closing clause's concluding part (after "so", ";", ", making") that states a
    number, and the numbers of parallel parts that state quantities too ("Seattle has 20,
    Charleston 80, and Toulouse 160": a list, no one answer); None where the part is a step of
    the working, a condition or a subordinate clause."""
    clause = _PURPOSE.sub("", clause)
    if PROCEDURE.match(clause) and (result := _STEP_THEN_RESULT.search(clause)) is not None:
        clause = clause[result.start("result") :]  # "Add them up and you get 110 miles"
    if PROCEDURE.match(clause) or _CONDITIONAL.match(clause) or _IF.search(clause):
        return None, ()
    concluding = CONCLUDING_BREAK.split(clause)[-1].strip()
    pieces = [p.strip() for p in _COMMA.split(concluding) if p and p.strip()]
    stating = [p for p in pieces if re.search(r"\d", with_digits(p, language))]
    stating = [p for p in stating if not _BECAUSE.match(p)] or stating
    negated = len(_NEGATED.findall(stating[-1])) if stating else 0
    if negated and negated == len(re.findall(r"\d+", stating[-1])):
        return None, ()  # "… — not the $500 he collects": a contrast, no statement
    if not stating:
        return None, ()
    piece = _LEAD.sub("", stating[-1])
    parallel = [p for p in stating[:-1] if not BACKGROUND.match(p)]
    totalled = names_their_total(parallel, piece)
    parallel = [] if totalled else chained(parallel, piece, givens)
    if parallel:
        numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", " ".join(stating))]
        return None, tuple(dict.fromkeys(numbers))
    subordinate = _SUBORDINATE.match(piece)
    if subordinate and not totalled and not (language == "pt" and subordinate[0].lower() == "as"):
        return None, ()  # Portuguese "as" is an article ("as três cidades")
    return (None if PROCEDURE.match(piece) else piece), ()


def _single_quantity(
    context: Context, piece: str
) -> tuple[float | None, tuple[float, ...], str | None]:
    """One quantity stated, or an equation's result; several quantities are ambiguous."""
    body = REFERENCE.sub(r"\g<article>", prepared(piece, context.language, context.decimal_mark))
    if FRACTION_WORDS.search(body):
        return None, (), "it writes a fraction in words"
    numbers = numbers_in(body, context.decimal_mark)
    if len(numbers) > 1 and "=" not in body:
        values = tuple(dict.fromkeys(n.value for n in numbers if n.value is not None))
        return None, values, SEVERAL
    return clause_value(body, context.decimal_mark, context.language)


def _computes(context: Context, piece: str, value: float) -> bool:
    """The closing piece computes its value itself ("the tank holds 30 + 60 = 90 liters"): a
    result, not an operand of the working restated."""
    results = EQUATION.findall(piece)
    last = numbers_in(results[-1], context.decimal_mark) if results else []
    return bool(last) and last[0].value is not None and abs(last[0].value - value) <= TOLERANCE


def _differs(context: Context, clause: str, value: float | None) -> bool:
    """The clause states a value other than `value` (or two)."""
    clause = _ALTERNATIVE.sub("", clause.strip(_MARKUP)).strip(" ,")
    stated, candidates, _ = clause_value(clause, context.decimal_mark, context.language)
    if stated is not None:
        return value is None or abs(stated - value) > TOLERANCE
    return any(value is None or abs(c - value) > TOLERANCE for c in candidates)


def _sentence_end(text: str, position: int) -> int:
    match = re.compile(r"\n|(?<!\d)[.!?;](?!\d)|[.!?](?=\s|$)|[。！？]").search(text, position)
    return len(text) if match is None else match.end()


def hedge_after(context: Context, statement: Statement, value: float) -> str | None:
    """Why the final statement is not the answer, if something after it says so: an
    alternative, a conditional other value, "both answers", a concluding sentence ("So ...",
    "... in total") none of whose numbers is the answer, a closing sentence with another value
    after an emphasised one (bold, answer-first), or a correction followed by no value."""
    text = context.text
    end = statement.end if statement.end is not None else _sentence_end(text, statement.position)
    for aside in ASIDE.finditer(text[statement.position : end]):
        inner = aside[0].strip()[1:-1].strip()
        if (_ALTERNATIVE.match(inner) or _OTHER_CASE.match(inner)) and _differs(
            context, inner, value
        ):
            return f"an alternative follows its answer ({inner[:40]!r})"
    rest = text[end:]
    if (both := _BOTH.search(rest)) is not None:
        return f"it says two answers are possible ({both[0]!r})"
    after = [s.strip(_MARKUP).lstrip("—–-,;: ([").rstrip(")]") for _, s in sentences(rest)]
    for sentence in after:
        if (_ALTERNATIVE.match(sentence) or _MAYBE.search(sentence)) and _differs(
            context, sentence, value
        ):
            return f"an alternative follows its answer ({sentence[:40]!r})"
        main = _conditional_main(without_asides(sentence))
        if main is not None and _differs(context, main, value):
            return f"a condition gives another answer ({sentence[:40]!r})"
    checked = _CHECK_OPENS.search(rest) is not None
    concluding = (
        after
        and not (checked and _CUT_SHORT.search(after[-1]))  # a check cut off: "Sum: 20 +"
        and (_CONCLUSION.match(after[-1]) or TOTAL.search(after[-1]))
    )
    if concluding and _excludes(context, after[-1], value):
        return f"its closing sentence concludes otherwise ({after[-1][:40]!r})"
    if (
        statement.rule in ("bold", "answer-first")
        and (closing := closing_statement(context)) is not None
    ):
        other = closing.value if closing.value is not None else None
        if closing.position >= end and other is not None and abs(other - value) > TOLERANCE:
            return f"its closing sentence gives another value ({other:g})"
    return _withdrawn_by_correction(context, end, value)


def _conditional_main(sentence: str) -> str | None:
    """A conditional sentence's main clause, the condition taken out ("Wenn man ... rechnet,
    sind es 140 Tassen" → "sind es 140 Tassen"; "It would be 13 if you count ..." → "It would
    be 13"); None where the sentence has no condition."""
    condition = _CONDITION_WORD.search(sentence)
    if condition is None:
        return None
    comma = re.search(r",\s+|，", sentence[condition.end() :])
    end = len(sentence) if comma is None else condition.end() + comma.end()
    return f"{sentence[: condition.start()]} {sentence[end:]}"


def _excludes(context: Context, sentence: str, value: float) -> bool:
    body = prepared(sentence, context.language, context.decimal_mark)
    values = [n.value for n in numbers_in(body, context.decimal_mark) if n.value is not None]
    return bool(values) and all(abs(v - value) > TOLERANCE for v in values)


def _withdrawn_by_correction(context: Context, end: int, value: float) -> str | None:
    """A correction ("Actually, scratch that") opening a sentence after the final statement,
    after which the answer is neither replaced (the caller saw no later statement) nor
    restated."""
    text = context.text
    for match in _TAKEN_BACK.finditer(text, end):
        before = _INTERJECTION.sub("", text[: match.start()]).rstrip(_MARKUP)
        if before and not before.endswith(_OPENS_A_PART):
            continue
        after = with_digits(text[match.end() :], context.language)
        confirmed = _CONFIRMED.search(after) is not None  # "58 + 40 = 98, so that's right"
        restated = [
            n.value
            for n in numbers_in(after, context.decimal_mark)
            if confirmed or not _OPERAND_AFTER.match(after[n.end :])  # "= 99 − 72 = 27": not 99
        ]
        if not any(v is not None and abs(v - value) <= TOLERANCE for v in restated):
            return f"a correction follows its answer ({match[0]!r}) and gives no value"
    return None


def concluding_box(statements: Sequence[Statement], context: Context) -> Statement | None:
    """Of several different boxed values, the last one where its sentence computes it from
    every earlier boxed value, or calls it the total and it is their sum, else None."""
    valued = [s for s in statements if s.value is not None]
    if len(valued) < 2 or any(s.rule != "boxed" for s in valued):
        return None
    last, earlier = valued[-1], {s.value for s in valued[:-1]}
    text = context.text
    start = max(text.rfind("\n", 0, last.position), text.rfind(". ", 0, last.position)) + 1
    span = text[start : last.position]
    operands = span.replace("/", " / ")  # "88/4 = \\boxed{22}": 88 divided, not a fraction
    used = [n.value for n in numbers_in(operands, context.decimal_mark) if n.value is not None]
    computed = re.search(r"[+×*÷/−-]|\bplus\b|\\(?:frac|div|times|cdot)", span) and all(
        any(abs(u - e) <= TOLERANCE for u in used) for e in earlier if e is not None
    )
    summed = TOTAL.search(span) and abs(sum(v for v in earlier if v) - (last.value or 0)) <= 1e-6
    if not (computed or summed):
        return None
    passage = text[start : _sentence_end(text, last.position)]
    return Statement(last.position, "boxed, concluding", last.value, end=last.end, passage=passage)
