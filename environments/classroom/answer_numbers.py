"""Number formats of the classroom's answer reader: typography, numbers as written, the reply's
language and decimal mark, and number words (text2num).

A number is read as a careful grader reads it: full-width digits, vulgar fractions and LaTeX
read through, a minus sign (never a dash) attached to it, a currency, a mixed number, thousands
grouped by ",", ".", " " or "'", a fraction, a multiplier word ("1.5 million", "7万") and a
percent sign. Where one "," or "." before three digits may group thousands or mark decimals and
the reply does not say which (`decimal_mark`), the number has two readings and no value.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from babel import UnknownLocaleError
from babel.numbers import get_decimal_symbol
from py3langid.langid import MODEL_FILE, LanguageIdentifier
from text_to_num import alpha2digit

from personasim.environments.classroom.answer_numerals import cjk_compounds
from personasim.environments.classroom.answer_words import chinese_digits, fraction_digits

__all__ = [
    "DASHES",
    "GSM8K_HASHES",
    "NUMBER",
    "SIGN_WORD",
    "Number",
    "miles_named",
    "normalized",
    "number_of",
    "numbers_in",
    "read_number",
    "reply_decimal_mark",
    "reply_language",
    "through_value",
    "with_digits",
]

# --- typography ---------------------------------------------------------------------------------

_MINUS_SIGNS = str.maketrans(
    {"\u2212": "-", "\ufe63": "-", "\uff0d": "-", "\u0964": ".", "\u06d4": ".", "\u061f": "?"}
)
"""Minus signs (not dashes: — – ‒ are punctuation, never a minus); the Devanagari danda and
the Urdu full stop end a sentence as "." does, the Arabic question mark one as "?" does."""
_PICTOGRAPHS = re.compile(
    "[\U0001f000-\U0001faff\u2600-\u2704\u2706-\u2712\u2719-\u274b\u274d-\u2794"
    "\u2798-\u27bf\u2b00-\u2bff\u231a\u231b\u23e9-\u23fa\ufe0f\u200d]"
)
"""Emoji and pictographs ("Enjoy! 🎁"): decoration a grader reads past; emoji that end a
line after a word end its sentence ("Rough season at the North Pole 🎄"). Not the check and
cross marks (✓ ✔ ✅ ✗ ✘ ❌), which say a check passed or failed, nor the heavy operators
(✕ ✖ ➕ ➖ ➗)."""
_HALVES = [
    (re.compile(r"(\d+)\s*(个|個|時間|小时|小時)半"), r"\1 1/2\2"),
    (re.compile(r"(\d+)\s*(시간|개)\s*반"), r"\1 1/2\2"),
    (re.compile(r"(\d+)\s+с\s+половиной", re.IGNORECASE), r"\1 1/2"),
    (re.compile(r"(\d+)\s+(?:und\s+)?einhalb\b", re.IGNORECASE), r"\1 1/2"),
    (
        re.compile(r"(\d+)\s+([^\W\d_]+)\s+(?:y\s+media|e\s+meia|et\s+demie|e\s+mezza)\b", re.I),
        r"\1 1/2 \2",
    ),
]
"""A half in words after a number ("4个半小时", "4 с половиной", "4 horas y media"): a mixed
number, "4 1/2" (it was read 4)."""
_SUPERSCRIPT = re.compile(r"(?<=[\d)])[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
"""A power ("27 = 3³"): "3^3", not the digits side by side ("33")."""
_UNIT_POWER = re.compile(r"(?<=[^\W\d_])[²³]")
"""A unit's power ("25 m²", "8 ft³"): part of the unit, no number."""
_APOSTROPHE_GROUP = re.compile(r"(?<=\d)[’ʼ](?=\d{3}(?!\d))")
"""A typographic apostrophe grouping thousands ("7’300", Swiss): the ASCII one."""
_CENTS = re.compile(
    r"\b(?:centavos?|centesimi|centesimo|céntimos?|cêntimos?|centimes?|копе(?:ек|йки|йка))\b",
    re.IGNORECASE,
)
"""A cent in the reply's language ("90 centavos"): text2num reads the word as a fraction or an
ordinal ("1/100", "100º"), so it is written "cents"."""
_SURE = re.compile(
    r"\b(?:100|a\s+hundred)\s*(?:%|percent|per\s*cent)\s+(?=(?:sure|certain|confident|positive)\b)",
    re.IGNORECASE,
)
"""Certainty as a percentage ("I'm not 100% sure"): no quantity; "not sure" is doubt."""
_CLOSING_PICTOGRAPHS = re.compile(
    rf"(?<=[^\s.!?。！？:;,])[ \t]*(?:{_PICTOGRAPHS.pattern})+(?=[ \t]*(?:\n|$))"
)

DASHES = "\u2012\u2013\u2014\u2015"
_LATEX = [
    (re.compile(r"\$(?=[\d\\(])([^$\n]*?(?:\\[a-zA-Z]+|=)[^$\n]*?[\w})])\$(?!\d)"), r"\1"),
    (re.compile(r"\\[dt]?frac\s*\{\s*([^{}]+?)\s*\}\s*\{\s*([^{}]+?)\s*\}"), r" \1/\2"),
    (re.compile(r"\\text(?:bf|rm|normal)?\s*\{([^{}]*)\}"), r"\1"),
    (re.compile(r"\{,\}"), ","),
    (re.compile(r"\\[,;:! ]"), " "),
    (re.compile(r"\\(?:times|cdot)"), "×"),
    (re.compile(r"\\div"), "÷"),
    (re.compile(r"\\approx"), "≈"),
    (re.compile(r"\\(?:left|right)"), ""),
    (re.compile(r"\\([$%])"), r"\1"),
]
"""LaTeX a careful grader reads through: inline math ("$48 \\div 1.5 = 32$ recipes", not money),
fractions, text, spacing, operators, escaped $ and %."""


_STRUCK = re.compile(r"~~[^~\n]+~~")
"""Markdown strikethrough: text the reply crossed out."""


@lru_cache(maxsize=4096)
def normalized(text: str) -> str:
    """Compatibility forms (full-width digits and colons, no-break spaces), vulgar fractions as
    " a/b", minus signs as "-", LaTeX read through, struck-through text and emoji left out;
    dashes stay punctuation. Cached: several rules normalize the same reply."""
    text = _STRUCK.sub(" ", "".join(_vulgar(char) for char in text))
    text = _SUPERSCRIPT.sub(lambda match: "^" + match[0].translate(_SUPERSCRIPT_DIGITS), text)
    text = _UNIT_POWER.sub("", text)
    text = _APOSTROPHE_GROUP.sub("'", text)
    text = _PICTOGRAPHS.sub("", _CLOSING_PICTOGRAPHS.sub(".", text))
    text = _SURE.sub("", text)
    text = _CENTS.sub("cents", text)
    for pattern, replacement in _HALVES:
        text = pattern.sub(replacement, text)
    text = unicodedata.normalize("NFKC", text).translate(_MINUS_SIGNS)
    for pattern, replacement in _LATEX:
        text = pattern.sub(replacement, text)
    return cjk_compounds(text)


def _vulgar(char: str) -> str:
    if unicodedata.name(char, "").startswith("VULGAR FRACTION"):
        fraction = unicodedata.normalize("NFKC", char).replace("\u2044", "/")
        return f" {fraction}" if not fraction.startswith("0") else fraction
    return char


# --- numbers ------------------------------------------------------------------------------------

NUMBER = re.compile(
    r"(?P<sign>(?<![\w.,)\]])-)?(?P<currency>(?:US|R|C|A)?[$€£¥₹]\s?)?(?P<sign2>-)?"
    r"(?P<mixed>\d+\s+(?=\d+/\d))?"
    r"(?P<body>\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d+)?(?![\d,]|\.\d)"
    r"|\d{1,3}(?:(?P<sep>[,. '])\d{3})+(?:(?!(?P=sep))[.,]\d+)?(?![\d.,]\d)"
    r"|\d+(?:[.,]\d+)?(?![\d.,]\d)|(?<![\w.,])\.\d+)"
    r"(?:/(?P<denominator>\d+)(?![\d.,]\d))?"
    r"(?P<multiplier>\s*(?:thousand|million|billion|trillion|millions?|milliards?|Millionen|"
    r"Million|Milliarden?|mil(?:l[oó]n(?:es)?|h[õo]es|hão)?|millones|lakhs?|lacs?|crores?|"
    r"Tausend|mille|mila|тысяч[аи]?|тыс|миллион(?:а|ов)?|tysiąc|tysiące|tysięcy|bin|ribu|"
    r"duizend|nghìn|ngàn|grand(?!\s+(?:pianos?|prix|totals?|child\w*|sons?|daughters?|"
    r"canyons?|kids?|parents?|slams?|finals?|openings?|halls?|prizes?)))\b|"
    r"\s*(?:Mio|Mrd)\.?(?!\w)|"
    r"[kKM](?!\w)|bn\b|\s*[万萬亿億]|(?<=\d)[千만천억]|\s*(?:हज़ार|هزار|ألف))?"
    r"(?P<percent>\s?%|\s*(?:per\s*cent|percent|pour\s*cent|por\s*ciento|Prozent)\b)?"
)
"""A number as written: a sign attached to it, a currency, a mixed number's whole part, digits
with their grouping, a fraction, a multiplier word and a percent sign."""
_MULTIPLIERS = {
    "thousand": 1e3, "grand": 1e3, "mil": 1e3, "million": 1e6, "millions": 1e6,
    "millionen": 1e6, "millón": 1e6, "millon": 1e6, "millones": 1e6, "milhão": 1e6,
    "milhao": 1e6, "milhões": 1e6, "milhoes": 1e6, "billion": 1e9, "bn": 1e9, "milliard": 1e9,
    "milliards": 1e9, "milliarde": 1e9, "milliarden": 1e9, "trillion": 1e12,
    "lakh": 1e5, "lakhs": 1e5, "lac": 1e5, "lacs": 1e5, "crore": 1e7, "crores": 1e7,
    "mio": 1e6, "mrd": 1e9, "万": 1e4, "萬": 1e4, "亿": 1e8, "億": 1e8, "千": 1e3, "만": 1e4,
    "천": 1e3, "억": 1e8,
    **dict.fromkeys(("tausend", "mille", "mila", "тысяча", "тысячи", "тысяч", "тыс", "tysiąc",
                     "tysiące", "tysięcy", "bin", "ribu", "duizend", "nghìn", "ngàn", "हज़ार",
                     "هزار", "ألف"), 1e3),
    **dict.fromkeys(("миллион", "миллиона", "миллионов"), 1e6),
}  # fmt: skip
SIGN_WORD = re.compile(
    r"(?<![\d)]\s)(?<![\d)])\b(?:minus|negative|moins|menos|negativo|negativ)\s+(?=[$€£]?\d)",
    re.IGNORECASE,
)
""""minus 8", "negative 8" — a sign in words, unless a number stands before it (16 minus 8)."""


@dataclass(frozen=True)
class Number:
    """A number of a clause: its value (None: its grouping is ambiguous), where it is, and
    the two readings an ambiguous grouping allows."""

    value: float | None
    start: int
    end: int
    readings: tuple[float, ...] = ()


def number_of(match: re.Match[str], decimal_mark: str | None) -> Number:
    """The value of a `NUMBER` match under the reply's decimal mark (None: unknown)."""
    readings = _body_values(match["body"], decimal_mark)
    if len(readings) == 2 and _money(match):
        readings = readings[:1]  # money has cents, never three decimals: "$57,500" groups
    values = [_scaled(value, match) for value in readings]
    value = values[0] if len(values) == 1 else None
    return Number(value, match.start(), match.end(), tuple(values))


_CURRENCY_AFTER = re.compile(
    r"\s?(?:[$€£¥₹]|(?:US)?dollars?\b|euros?\b|Euro\b|dólares\b|USD\b|EUR\b|美元|元)",
    re.IGNORECASE,
)


def _money(match: re.Match[str]) -> bool:
    """The number is an amount of money: a currency sign before or after it."""
    return bool(match["currency"]) or _CURRENCY_AFTER.match(match.string, match.end()) is not None


def _scaled(value: float, match: re.Match[str]) -> float:
    if match["denominator"] and int(match["denominator"]):
        value /= int(match["denominator"])
    if match["mixed"]:
        value += int(match["mixed"])
    if match["multiplier"]:
        word = match["multiplier"].strip().rstrip(".")
        value *= {"M": 1e6, "k": 1e3, "K": 1e3}.get(word) or _MULTIPLIERS[word.lower()]
    return -value if (match["sign"] or match["sign2"]) else value


def _body_values(body: str, decimal_mark: str | None) -> list[float]:
    """The values the digits can mean: one, or two where a single "," or "." before three
    digits may group thousands or mark decimals and the reply does not say which."""
    if re.fullmatch(r"\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d+)?", body):
        return [float(body.replace(",", ""))]  # Indian grouping: 6,50,000
    grouped = re.fullmatch(r"(\d{1,3})([,. '])(\d{3})", body)
    if grouped and grouped[2] in ",." and not body.startswith("0"):
        as_grouping = float(grouped[1] + grouped[3])
        as_decimal = float(f"{grouped[1]}.{grouped[3]}")
        if decimal_mark is None:
            return [as_grouping, as_decimal]
        return [as_decimal if grouped[2] == decimal_mark else as_grouping]
    groups = re.fullmatch(r"(\d{1,3}(?:([,. '])\d{3})+)(?:[.,](\d+))?", body)
    if groups and (groups[3] is not None or body.count(groups[2]) > 1 or groups[2] in " '"):
        whole = re.sub(r"[,. ']", "", groups[1])
        return [float(f"{whole}.{groups[3]}" if groups[3] else whole)]
    return [float(body.replace(",", ".") if body.count(",") == 1 else body)]


GSM8K_HASHES = re.compile(r"^[ \t]*####[ \t]*(?=\S)", re.MULTILINE)
"""GSM8K's closing line `#### N`."""
_US = re.compile(r"\d,\d{3}(?:,\d{3})*\.\d|\d,\d{3},\d{3}|(?<![\d,.])\d+\.(?:\d{1,2}|\d{4,})\b")
_EU = re.compile(
    r"\d\.\d{3}(?:\.\d{3})*,\d|\d\.\d{3}\.\d{3}|(?<![\d,.])\d+,(?:\d{1,2}|\d{4,})\b(?!,\d)"
)
_LANGUAGE_WORDS = {
    "en": {
        "the",
        "is",
        "and",
        "of",
        "to",
        "she",
        "he",
        "they",
        "has",
        "each",
        "so",
        "answer",
        "are",
        "there",
    },
    "fr": {
        "le",
        "les",
        "est",
        "et",
        "des",
        "elle",
        "il",
        "donc",
        "chaque",
        "réponse",
        "ils",
        "ont",
        "au",
        "aux",
        "du",
        "une",
        "sont",
        "avec",
        "pour",
        "dans",
    },
    "es": {
        *("el", "los", "las", "es", "cada", "ella", "tiene", "entonces", "respuesta", "por"),
        *("del", "al", "su", "sus", "así", "una", "con", "hay", "hace", "quedan", "pero"),
    },
    "de": {
        "der",
        "die",
        "das",
        "ist",
        "und",
        "sie",
        "er",
        "hat",
        "jeder",
        "also",
        "antwort",
        "sind",
        "man",
        "ein",
        "eine",
        "pro",
        "mit",
    },
    "pt": {
        "os",
        "ela",
        "ele",
        "tem",
        "cada",
        "então",
        "resposta",
        "não",
        "por",
        "têm",
        "são",
        "uma",
        "dos",
        "para",
        "com",
        "e",
        "dias",
    },
    "it": {
        *("il", "ogni", "lei", "lui", "ha", "quindi", "risposta", "della", "degli", "sono"),
        *("gli", "che", "una", "delle", "anche"),
    },
}
"""A few frequent words per language: enough to tell the language of a reply's prose."""
_DECIMAL_COMMA = {"fr", "es", "de", "pt", "it"}
_MONEY_GROUPED = re.compile(r"[$€£]\s?\d{1,3}(?P<mark>[.,])\d{3}(?!\d|[.,]\d)")
"""An amount of money with three digits after its one mark ("$9.000"): the mark groups."""
_EITHER_WAY = re.compile(r"\d[.,]\d{3}(?![\d.,])")
"""A number whose one mark before three digits reads either way ("14.000"): only there does
the reply's language decide."""
_SURE_LANGUAGE = 0.9
"""py3langid's probability above which a reply's language names its decimal mark: on the
held-out replies our word lists leave without a language, every language it gave with that
probability was the labelled one."""


def reply_language(text: str) -> str | None:
    """The reply's language (by its frequent words; Chinese by its script), or None."""
    if re.search(r"[\u4e00-\u9fff]", text):
        return "zh"
    words = re.findall(r"[^\W\d_]+", text.lower())
    scores = {lang: sum(w in known for w in words) for lang, known in _LANGUAGE_WORDS.items()}
    best = max(scores, key=scores.__getitem__)
    runner_up = max(v for lang, v in scores.items() if lang != best)
    return best if scores[best] >= 1 and scores[best] > 1.5 * runner_up else None


def reply_decimal_mark(text: str, language: str | None) -> str | None:
    """The reply's decimal mark: from its unambiguous numbers ("1,234.50", "2.5" say ".";
    "1.234,50", "2,5" say ","), else, where a number reads either way and our word lists are
    not sure of the language, from the language py3langid tells (CLDR's mark for it), else
    from the language our word lists tell (English and Chinese ".", French, Spanish, German,
    Portuguese, Italian ","), else unknown."""
    us, eu = bool(_US.search(text)), bool(_EU.search(text))
    if us != eu:
        return "." if us else ","
    either_way = _EITHER_WAY.search(text) and not _plainly_in(text, language)
    detected = _detected_decimal_mark(text) if either_way else None
    if detected is not None:
        return detected
    if either_way and (money := _MONEY_GROUPED.search(text)) is not None:
        return "," if money["mark"] == "." else "."  # "$9.000": money has no third decimal
    if language is None:
        return "." if GSM8K_HASHES.search(text) else None
    return "," if language in _DECIMAL_COMMA else "."


def _plainly_in(text: str, language: str | None) -> bool:
    """Our word lists leave no doubt: the text is Chinese by its script, or holds five or more
    of its language's frequent words (a question, a reply in prose), so no model is asked."""
    if language is None:
        return False
    if language == "zh":
        return True
    known = _LANGUAGE_WORDS[language]
    return sum(word in known for word in re.findall(r"[^\W\d_]+", text.lower())) >= 5


def _detected_decimal_mark(text: str) -> str | None:
    """The decimal mark of the reply's language as py3langid tells it ("In week 4 produceert
    Boris … 14.000 repen", "답: 1,080kg"): its decimal symbol in CLDR (Babel); else unknown."""
    language = _detected_language(text)
    if language is None:
        return None
    try:
        symbol = get_decimal_symbol(language)
    except (UnknownLocaleError, ValueError):
        return None
    return symbol if symbol in (".", ",") else None


@lru_cache(maxsize=4096)
def _detected_language(text: str) -> str | None:
    """The reply's language as py3langid tells it with probability ≥ 0.9 (ISO 639-1), else
    None: the languages our word lists do not know, and a check on the ones they do."""
    words = " ".join(re.findall(r"[^\W\d_]+", text))  # digits and signs tell no language
    language, probability = _language_identifier().classify(words)
    return language if probability >= _SURE_LANGUAGE else None


@lru_cache(maxsize=1)
def _language_identifier() -> LanguageIdentifier:
    """py3langid's model, loaded once, giving probabilities."""
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


_BARE_MIL = re.compile(r"(?<=\d)(\s*)mil\b")
_MIL_IS_THOUSAND = ("es", "pt", "ca", "gl")


def miles_named(text: str, language: str | None, question: str | None = None) -> str:
    """The reply with a bare "mil" after a number written "mi" where it names miles, not a
    thousand: "240 mil dólares" is 240,000 in Spanish and Portuguese, "10 mil na godzinę" is 10
    miles an hour in Polish (Czech, Turkish, Indonesian and the Scandinavian languages use the
    word for a mile too). The language is our word lists', else py3langid's; where neither is
    sure, miles where the question speaks of miles ("Jadi, John berlari 10 mil per jam."),
    else a thousand, as before."""
    if language in _MIL_IS_THOUSAND or not _BARE_MIL.search(text):
        return text
    detected = language or _detected_language(text)
    if detected is None and not (question and _MILES.search(question)):
        return text
    return text if detected in _MIL_IS_THOUSAND else _BARE_MIL.sub(r"\1mi", text)


_MILES = re.compile(r"\bmiles?\b", re.IGNORECASE)


def numbers_in(clause: str, decimal_mark: str | None) -> list[Number]:
    """Every number written in `clause`, in order."""
    return [number_of(match, decimal_mark) for match in NUMBER.finditer(clause)]


def read_number(token: str, decimal_mark: str | None = ".") -> float | None:
    """The first number written in `token` (the module's typography), or None; None too
    where its grouping is ambiguous under `decimal_mark` (None: unknown)."""
    match = NUMBER.search(SIGN_WORD.sub("-", normalized(token)))
    return None if match is None else number_of(match, decimal_mark).value


@lru_cache(maxsize=8192)
def with_digits(clause: str, language: str | None) -> str:
    """Number words as digits (text2num, in the reply's language; fractions in words and Chinese
    numerals by `answer_words`); a clause that opens with a number word has it read even when
    small ("Final Answer: two"). Cached: text2num is slow."""
    clause = fraction_digits(clause, language)
    if language == "zh":
        return chinese_digits(clause)
    lang = language if language in ("en", "fr", "es", "de", "pt", "it") else "en"
    opens_with_word = re.match(r"[\s*_]*[^\W\d_]", clause) is not None
    try:
        converted = alpha2digit(clause, lang, threshold=0 if opens_with_word else 3)
    except (ValueError, IndexError):  # pragma: no cover - text2num refuses rare inputs
        return clause
    first = re.match(r"[\s*_]*[^\W\d_]+", clause)
    if opens_with_word and first and re.match(r"[\s*_]*\d", converted) is None:
        return alpha2digit(clause, lang)  # the first word is no number: words stay words
    return converted


def through_value(piece: str, value: float | None, decimal_mark: str | None) -> str:
    """The piece up to the number after the value's last mention, for a second reader: that
    number ("… = 6 books — though only 3 different titles", "45 minutes … all 90 shrimp") is
    not the piece's answer, and an unanchored reader takes the last number."""
    if value is None:
        return piece
    numbers = numbers_in(piece, decimal_mark)
    for number, following in reversed(list(pairwise(numbers))):
        if following.value is not None and abs(following.value - value) <= 1e-9:
            return piece  # the value's last mention ends the piece
        if number.value is not None and abs(number.value - value) <= 1e-9:
            if _COMPUTES_ON.search(piece[number.end : following.start]):
                return piece  # "= 120 new lines + 3 feet": the value is an operand
            return piece[: following.start].rstrip(" $€£")
    return piece


_COMPUTES_ON = re.compile(r"[+×*÷/=−-]|\b(?:plus|minus|times|divided)\b", re.IGNORECASE)
