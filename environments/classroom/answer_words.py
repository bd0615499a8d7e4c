"""Numbers written in words that text2num does not read, and numbers that are no quantity, for
the classroom's answer reader (`answer_numbers.with_digits`, `answer_clauses.prepared`).

- **Fractions in words**: "three eighths", "trois huitièmes", "tres octavos", "drei Achtel",
  "três oitavos", "八分之三" are 3/8; "three and a half" is 3 1/2. Only a numerator in words
  counts ("2 quarters" are coins, "the third day" an ordinal), "a quarter" only when "of"
  follows (25 cents otherwise), and the Spanish and Portuguese "cuartos"/"quartos" only before
  "de" (they are rooms too).
- **Chinese numerals** that count something ("七张", "二十六个") or end the clause
  ("答案是二十六。"); a lone 一 is left alone (一共 "altogether", 一半 "half"), as are
  weekdays (星期二) and ordinals (第三).
- **Years** are labels, not quantities: "2024年", "Umsatz 2024 beträgt", "in 2024" are left
  out of a clause's numbers.
"""

from __future__ import annotations

import re

__all__ = ["chinese_digits", "fraction_digits", "without_years"]

# --- fractions in words -------------------------------------------------------------------------

_NUMERATORS = {
    "en": {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "seven": 7, "eight": 8, "nine": 9, "ten": 10},
    "fr": {"un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6,
           "sept": 7, "huit": 8, "neuf": 9, "dix": 10},
    "es": {"un": 1, "una": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5,
           "seis": 6, "siete": 7, "ocho": 8, "nueve": 9, "diez": 10},
    "de": {"ein": 1, "eine": 1, "einen": 1, "einem": 1, "zwei": 2, "drei": 3, "vier": 4,
           "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10},
    "pt": {"um": 1, "uma": 1, "dois": 2, "duas": 2, "três": 3, "quatro": 4, "cinco": 5,
           "seis": 6, "sete": 7, "oito": 8, "nove": 9, "dez": 10},
}  # fmt: skip
_DENOMINATORS = {
    "en": {"half": 2, "halves": 2, "third": 3, "quarter": 4, "fourth": 4, "fifth": 5,
           "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "twelfth": 12},
    "fr": {"demi": 2, "demie": 2, "tiers": 3, "quart": 4, "cinquième": 5, "sixième": 6,
           "septième": 7, "huitième": 8, "neuvième": 9, "dixième": 10},
    "es": {"medio": 2, "tercio": 3, "cuarto": 4, "quinto": 5, "sexto": 6, "séptimo": 7,
           "octavo": 8, "noveno": 9, "décimo": 10},
    "de": {"drittel": 3, "viertel": 4, "fünftel": 5, "sechstel": 6, "siebtel": 7,
           "achtel": 8, "neuntel": 9, "zehntel": 10},
    "pt": {"meio": 2, "terço": 3, "quarto": 4, "quinto": 5, "sexto": 6, "sétimo": 7,
           "oitavo": 8, "nono": 9, "décimo": 10},
}  # fmt: skip
_AND = {"en": "and", "fr": "et", "es": "y", "de": "und", "pt": "e"}


def _alternatives(words: dict[str, int]) -> str:
    return "|".join(sorted(map(re.escape, words), key=len, reverse=True))


def _fraction_pattern(language: str) -> re.Pattern[str]:
    numerators, denominators = _NUMERATORS[language], _DENOMINATORS[language]
    numerator = rf"(?:{_alternatives(numerators)}|\d+)"
    return re.compile(
        rf"\b(?:(?P<whole>{numerator})\s+{_AND[language]}\s+)?(?P<top>{_alternatives(numerators)})"
        rf"[\s-]+(?P<bottom>{_alternatives(denominators)})(?:s|es)?\b(?P<of>\s+(?:of|de|d['’]))?",
        re.IGNORECASE,
    )


_FRACTIONS = {language: _fraction_pattern(language) for language in _NUMERATORS}
_CHINESE_FRACTION = re.compile(
    r"(?P<bottom>\d+|[二两三四五六七八九十]+)分之(?P<top>\d+|[一二两三四五六七八九十]+)"
)


def fraction_digits(clause: str, language: str | None) -> str:
    """Fractions in words as digits ("three eighths" → " 3/8", "three and a half" → " 3 1/2"),
    in the reply's language, or in each language the module knows where that is unknown."""
    if language == "zh":
        return _CHINESE_FRACTION.sub(_chinese_fraction, clause)
    for known in _FRACTIONS if language is None else (language,):
        if (pattern := _FRACTIONS.get(known)) is not None:
            clause = pattern.sub(lambda match, known=known: _spelled(match, known), clause)
    return clause


def _spelled(match: re.Match[str], language: str) -> str:
    numerators = _NUMERATORS[language]
    top_word, bottom_word = match["top"].lower(), match["bottom"].lower()
    bottom = _DENOMINATORS[language][bottom_word]
    if bottom == 4 and not match["of"]:
        if language == "en" and top_word in ("a", "an"):
            return match[0]  # "a quarter": 25 cents, or a quarter of something
        if language in ("es", "pt"):
            return match[0]  # "tres cuartos", "três quartos": three rooms
    fraction = f"{numerators[top_word]}/{bottom}"
    whole = match["whole"]
    if whole:
        whole_value = numerators.get(whole.lower(), whole)
        fraction = f"{whole_value} {fraction}"
    return f" {fraction}{match['of'] or ''}"


def _chinese_fraction(match: re.Match[str]) -> str:
    top, bottom = _chinese_or_digits(match["top"]), _chinese_or_digits(match["bottom"])
    return match[0] if top is None or bottom is None else f" {top}/{bottom} "


def _chinese_or_digits(said: str) -> int | None:
    return int(said) if said.isdigit() else chinese_value(said)


# --- Chinese numerals ---------------------------------------------------------------------------

_CHINESE_NUMERAL = re.compile(
    r"(?<![期拜第周週礼分])(?P<numeral>[零一二两兩三四五六七八九十百千]{2,}|[二两兩三四五六七八九十])"
    r"(?=个|個|张|張|只|本|元|块|塊|人|天|年|小时|小時|分钟|分鐘|米|公里|辆|輛|颗|顆|次|岁|歲|美元|"
    r"欧元|件|盒|杯|条|條|位|名|页|頁|份|瓶|箱|袋|双|雙|英里|磅|升|朵|棵|匹|头|頭|片|支|篇|场|場|"
    r"\s*[。．！!，,；;]|\s*$)"
)
_GROUP_TOTALLED = re.compile(r"[\u4e00-\u9fff]{1,4}?(?:一共|总共|總共|合计|合計|一起)")
"""A numeral naming the group whose total follows ("三人一共花了14美元", "两个农场一共有700英亩"):
the subject, not a quantity."""
_CHINESE_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5,
                   "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip
_CHINESE_UNITS = {"十": 10, "百": 100, "千": 1000}


def chinese_value(numeral: str) -> int | None:
    """二十六 → 26, 一百零五 → 105, 十二 → 12, 三千 → 3000; None where it is not one numeral."""
    total, digit = 0, None
    for char in numeral:
        if char in _CHINESE_DIGITS:
            if digit is not None and digit != 0:
                return None  # two digits in a row ("二三"): not one numeral
            digit = _CHINESE_DIGITS[char]
        elif char in _CHINESE_UNITS:
            total += (1 if digit is None else digit) * _CHINESE_UNITS[char]
            digit = None
        else:
            return None
    return total + (digit or 0)


def chinese_digits(clause: str) -> str:
    """Chinese numerals that count something, as digits ("七张" → " 7 张")."""

    def spelled(match: re.Match[str]) -> str:
        value = chinese_value(match["numeral"])
        if value is None or _GROUP_TOTALLED.match(clause, match.end()):
            return match[0]
        return f" {value} "

    return _CHINESE_NUMERAL.sub(spelled, clause)


# --- years --------------------------------------------------------------------------------------

_YEAR = re.compile(
    r"(?<![\d$€£.,])(?:19|20)\d{2}(?=\s*年(?!龄|齡|纪|紀))"
    r"|(?<=[^\W\d_] )(?:19|20)\d{2}(?=\s+(?:is|was|were|will|est|était|sera|es|fue|son|será|"
    r"ist|war|beträgt|betrug|lag|é|foi|era|são)\b)"
    r"|(?<=\b(?:in|en|im|em) )(?:19|20)\d{2}\b(?![\d,.]\d|\s*(?:[$€£%]|dollars?|euros?))",
    re.IGNORECASE,
)
"""A year: before 年, between a noun and its verb ("Umsatz 2024 beträgt"), after "in"."""


def without_years(clause: str) -> str:
    """The clause with its years left out ("Le chiffre d'affaires 2024 est de 4,2 millions")."""
    return _YEAR.sub(" ", clause)
