"""The text of a Trust Game answer as a reader sees it: markup removed, the decision sentences
found, and the words that open asides or hedge an amount (docs/trust-population.md, "Reading
the amount", rules 1, 2, 4 and 6). `transfer` reads the amount from what this module finds."""

from __future__ import annotations

import re
from dataclasses import dataclass

from text_to_num import alpha2digit

from personasim.environments.trust_game.closing_variants import (
    labelled_amounts,
    verb_last_decisions,
)
from personasim.environments.trust_game.markup import plain
from personasim.simulation import CORRECTION

__all__ = [
    "ASIDE_OPENER",
    "BLANK",
    "BOUND",
    "BRACKETS",
    "HEDGE",
    "NOT",
    "SEGMENT_END",
    "Clause",
    "decision_clauses",
    "dollars",
    "english",
    "foreign_clauses",
    "later_clauses",
    "plain",
    "quoted",
]

# --- the decision sentence --------------------------------------------------------------------

_ING = r"(?:giv|send|transferr|offer|pass|invest)ing"
_VERB = rf"(?:give|send|transfer|offer|pass|invest|contribute|allocate|entrust|{_ING})"
_MODAL = (
    r"(?:will|shall|would(?:\s+(?:like|prefer)\s+to|\s+rather)?|want\s+to|prefer\s+to|wish\s+to|plan\s+to|intend\s+to"
    r"|(?:am|['’]m)(?:\s+not)?\s+going\s+to"
    r"|(?:have\s+)?(?:choose|chosen|choosing|decide|decided|opt|opted)\s+to"
    r"|['’](?:ll|d(?:\s+(?:like|prefer)\s+to|\s+rather)?)|['’]ve\s+(?:decided|chosen)\s+to"
    r"|won['’]t|do\s+not|don['’]t|(?:am|['’]m)(?:\s+not)?(?=\s+\w+ing\b))"
)
_ADVERB = r"(?:not|\w+ly|therefore|thus|now|then|just|only|still|also|maybe|perhaps|hereby)"
_OPINION = r"(?:think|guess|believe|suppose|reckon|figure|feel\s+(?:like|that))"
"""'Finally, I think I will give 7': a first-person opinion verb before the decision."""
_FIRST_PERSON = (
    rf"\bI\s*(?:{_OPINION}\s+(?:that\s+)?I\s*)?(?P<modal>{_MODAL})?"
    rf"(?P<adverbs>(?:\s*,?\s+{_ADVERB}\b,?)*)\s+(?P<verb>{_VERB})\b"
)
_DECISION = re.compile(
    rf"\bfinally\b[\s,:;.\-—]*(?:[^\n.!?;:\d]{{1,60}}?,\s*)?{_FIRST_PERSON}", re.IGNORECASE
)
"""'Finally, I will give', 'Finally, after some thought, I think I'll give'."""
_LAST_DECISION = re.compile(
    r"(?:in\s+the\s+end|ultimately|in\s+conclusion|to\s+conclude|so|therefore|thus|hence"
    r"|overall|all\s+in\s+all|in\s+short|in\s+summary|(?:my\s+)?(?:final\s+)?(?:decision"
    r"|answer|choice)(?:\s+is)?)?\s*[,:\-—]?\s*"
    rf"{_FIRST_PERSON}",
    re.IGNORECASE,
)
"""A last sentence that decides, with another closing word ('In the end, I would like to give
6') or none ('I will send 7 dollars.'): a variant of the closing; not the last, it is none."""
_NEGATED = re.compile(r"\bnot\b|n['’]t\b", re.IGNORECASE)
_ECHO = re.compile(
    r"\b(?:end|finish|conclude|close|closing)\w*\s+(?:\w+\s+){0,3}with\s*[:'\"‘“]*\s*$"
    r"|\b(?:format|template|instructions?)\s*(?:is|says|:)\s*[:'\"‘“]*\s*$",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(
    r"\n|[!?;。！？；]|\.{2,}(?=\s*(?:[A-Z\n]|$))"
    r"|(?<!\.)(?<![^\W\d_]\.[^\W\d_])(?<!\bvs)(?<!\bapprox)\.(?![\d.]|[^\W\d_])"
)
"""A line break, '!', '?', ';', or a '.' not inside a number nor an abbreviation ('i.e.',
'e.g.', 'vs.'); an ellipsis ends the sentence only before a capital letter or the end ('6
dollars... or maybe 4' is one sentence)."""
_ALTERNATIVE = re.compile(
    r"or\b|(?:maybe|perhaps|possibly)\s*,?\s*(?:US\s?\$|\$)?\s*(?:\d|(?:zero|one|two|three|four"
    r"|five|six|seven|eight|nine|ten)\b)|(?:US\s?\$|\$)?\s*\d+(?:\s*(?:dollars?|bucks?))?\s+"
    r"(?:might|could|would|may)\s+(?:also\s+)?(?:be\s+)?(?:better|fine|good|okay|ok|right|reasonable"
    r"|an\s+option|work)\b",
    re.IGNORECASE,
)
"""A following part that offers another amount ('6 dollars. Or maybe 4.', '... Maybe 4.', '7
might be better')."""
_GIVES_AGAIN = re.compile(
    rf"\b{_VERB}\b|\bmake\s+(?:it|that)\b|\binstead\b|\bI\s+meant\b|\b(?:donne\w*|dar[éeáò]\w*"
    r"|daría|gebe|dou|darei|plutôt|mejor|lieber|eher|melhor|piuttosto)\b|给|給|还是|還是",
    re.IGNORECASE,
)
_AMOUNT_NEXT = re.compile(
    r"(?:[\s,:;.\-—]+(?:no|non|nein|não|wait|actually|sorry|I\s+mean|rather|make\s+(?:it|that)"
    r"|plutôt|mejor|lieber|eher|melhor|piuttosto))*"
    r"[\s,:;.\-—]*(?:US\s?\$|USD|\$)?\s*"
    r"(?:\d|(?:zero|one|two|three|four|five|six|seven|eight|nine|ten)\b)",
    re.IGNORECASE,
)
"""A correction that goes straight to its amount ('Actually, no, 4 dollars.')."""
BLANK = re.compile(r"_{2,}|(?<![\w$])[NX](?![\w])|\[(?:amount|number|N|X)\]", re.IGNORECASE)


@dataclass(frozen=True)
class Clause:
    """One decision sentence: where it starts, its words up to the verb, what follows the verb
    (to the end of the sentence and any correction joined to it), and whether it is negated."""

    start: int
    head: str
    body: str
    negated: bool
    end: int = 0


def decision_clauses(text: str) -> list[Clause]:
    """The decision sentences of `text` (already `plain`), in order, echoes left out: the
    English 'Finally, I will give' sentences and their equivalents in French, Spanish,
    Portuguese, Italian, German, Dutch and Chinese (`foreign_clauses`); without any, the
    reply's last sentence when another closing word opens a decision to give ('In the end,
    I would like to give 6 dollars.')."""
    clauses = [_clause(text, match) for match in _DECISION.finditer(text) if not _echo(text, match)]
    clauses += foreign_clauses(text)
    if not clauses and (last := _last_sentence(text)) is not None:
        clauses.append(last)
    if not clauses:
        clauses = [Clause(*found) for found in labelled_amounts(text)]
    return sorted(clauses, key=lambda clause: clause.start)


def _echo(text: str, match: re.Match[str]) -> bool:
    line_start = text.rfind("\n", 0, match.start()) + 1
    return bool(_ECHO.search(text, line_start, match.start()))


def _clause(text: str, match: re.Match[str]) -> Clause:
    negated = bool(_NEGATED.search(f"{match['modal'] or ''} {match['adverbs']}"))
    end = _clause_end(text, match.end())
    return Clause(match.start(), match.group(0), text[match.end() : end], negated, end)


def later_clauses(text: str, after: int) -> list[Clause]:
    """The first-person decisions to give after position `after` ('I'd rather give 4.'), with
    or without 'Finally': what the reply says after its closing sentence."""
    pattern = re.compile(_FIRST_PERSON, re.IGNORECASE)
    return [_clause(text, match) for match in pattern.finditer(text, after)]


def _last_sentence(text: str) -> Clause | None:
    """The reply's last sentence as its decision, when a closing word opens it ('My decision:
    I will give 2 dollars.')."""
    stripped = text.rstrip(" \t\n.!?\"'*)»”’")
    start = max((m.end() for m in _SENTENCE_END.finditer(stripped)), default=0)
    lead = re.match(r"[\s\-*>#\"'“‘(]*", stripped[start:])
    match = _LAST_DECISION.match(stripped, start + (lead.end() if lead else 0))
    if match is None or _echo(text, match):
        return None
    return _clause(text, match)


def _clause_end(text: str, start: int) -> int:
    """Where the decision sentence starting before `start` ends: its sentence's end, moved on
    past each following part that opens with a correction marker and gives again."""
    end = _sentence_end(text, start)
    while end < len(text):
        rest = text[end + 1 :]
        opening = re.match(r"[\s\-—:,.]*", rest)
        marker = CORRECTION.match(rest, opening.end()) if opening else None
        if marker is None:  # after fillers: 'Hmm, on second thought'
            opening = _OPENING.match(rest)
            marker = CORRECTION.match(rest, opening.end()) if opening else None
        if marker is None and opening and _ALTERNATIVE.match(rest, opening.end()):
            end = _sentence_end(text, end + 1 + opening.end())
            continue  # 'Finally, I will give 6 dollars. Or maybe 4.': one (ambiguous) decision
        if marker is None:
            return end
        following = _sentence_end(text, end + 1 + opening.end())
        gives_again = _GIVES_AGAIN.search(text, end + 1, following)
        if text[end] != ";" and not gives_again and not _AMOUNT_NEXT.match(rest, marker.end()):
            return end
        end = following
    return end


_OPENING = re.compile(r"(?:[\s\-—:,.]|\b(?:hmm+|oh|uh|um+|ah|well|okay|ok|no)\b)*", re.IGNORECASE)
"""What may open a following part before its correction marker ("Hmm, on second thought")."""


def _sentence_end(text: str, start: int) -> int:
    found = _SENTENCE_END.search(text, start)
    return found.start() if found else len(text)


# --- asides, hedges, bounds -------------------------------------------------------------------

BRACKETS = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
ASIDE_OPENER = re.compile(
    r"(?:\s*—|\s--?)\s*(?!(?:" + CORRECTION.pattern + r"))(?=[^\W\d])"
    r"|\b(?:which|that|who|whom|whose|(?<!\bor\s)so(?!\s+(?:much|many))|since|because"
    r"|as(?!\s+(?:much|many|little|few)\s+as)|given|considering|leaving|keeping|meaning"
    r"|hoping|expecting|knowing"
    r"|believing|trusting|thinking|assuming|while|whereas|although|though|if|unless|when|once"
    r"|after|before|with|for|in\s+(?:the\s+)?hopes?|in\s+return|to\s+(?:be|see|show|test|build"
    r"|signal|encourage|get|make|keep|maximi[sz]e|ensure|balance|demonstrate|express|start"
    r"|foster|establish|gauge|reward)|out\s+of|(?:of|from)\s+(?:my|the|our|his|her|their)"
    r"|and\s+(?:keep|leave|hold|save|retain|I|expect|hope|see)|but|thus|hence|then|i\.e|e\.g"
    r"|tripl\w*|doubl\w*|multipl\w*|totall?ing|resulting|making|rather\s+than|instead\s+of"
    r"|as\s+opposed\s+to|compared\s+(?:to|with)|(?<=,\s)not(?=\s+(?:US\s?\$|\$)?\s*\d))\b",
    re.IGNORECASE,
)
SEGMENT_END = re.compile(r"[,;:]")
HEDGE = re.compile(
    r"~|≈|\b(?:about|around|approx(?:imately|\.)?|roughly|nearly|almost|circa|probably|likely"
    r"|possibly|maybe|perhaps|somewhere|something\s+like|or\s+so|give\s+or\s+take"
    r"|more\s+or\s+less|in\s+the\s+(?:range|region|ballpark|neighbou?rhood)\s+of|close\s+to"
    r"|estimated?)\b|\d\s*-?\s*ish\b|\bish\b",
    re.IGNORECASE,
)
BOUND = re.compile(
    r"\b(?:up\s*to|at\s+(?:most|least)|no\s+(?:more|less|fewer)\s+than|not\s+(?:more|less)\s+than"
    r"|(?:more|less|fewer)\s+than|a\s+(?:maximum|minimum)\s+of"
    r"|(?<!\bthe\s)(?<!\bmy\s)max(?:imum)?|min(?:imum)?"
    r"|as\s+(?:much|many|little|few)\s+as|upwards\s+of|if\s+not\s+(?:more|less)"
    r"|or\s+(?:more|less|fewer|under|over"
    r"|above|below|higher|lower)|(?:over|under|above|below)(?=\s+\$?\d))\b|\d\s*\+(?!\s*\$?\d)",
    re.IGNORECASE,
)
NOT = re.compile(r"\bnot\b|n['’]t\b", re.IGNORECASE)


def dollars(amount: float) -> str:
    return f"${amount:g}" if amount >= 0 else f"-${-amount:g}"


def quoted(sentence: str) -> str:
    said = " ".join(sentence.split())
    return f"'...{said[:60]}'" if said else "nothing after the verb"


# --- decision sentences in other languages ----------------------------------------------------

_FINALLY = {
    "fr": r"finalement|enfin|au\s+final|en\s+fin\s+de\s+compte|pour\s+finir|en\s+conclusion",
    "es": r"finalmente|al\s+final|por\s+último|en\s+conclusión|en\s+definitiva|para\s+terminar",
    "pt": r"finalmente|por\s+fim|no\s+final|enfim|em\s+conclusão|para\s+terminar",
    "it": r"infine|alla\s+fine|finalmente|in\s+conclusione|per\s+concludere",
    "de": r"schlie(?:ß|ss)lich|letztendlich|letztlich|abschlie(?:ß|ss)end|zum\s+schluss|am\s+ende",
    "nl": r"uiteindelijk|ten\s+slotte|tenslotte|tot\s+slot",
}
_GIVING = {
    "fr": r"(?:je\s+(?:ne\s+|n['’])?(?:lui\s+|leur\s+)?|j['’])(?:(?:vais|veux|voudrais|décide\s+de"
    r"|choisis\s+de|ai\s+décidé\s+de)\s+(?:pas\s+)?(?:lui\s+|leur\s+)?)?"
    r"(?:donn\w*|envo\w+|enverr\w*|transf[èée]r\w*|offr\w*|confi\w*)",
    "es": r"(?:yo\s+)?(?:no\s+)?(?:(?:le|les)\s+)?(?:(?:voy\s+a|quiero|decido|he\s+decidido"
    r"|elijo)\s+)?(?:dar(?:é|ía|le|les)?|doy|envi\w+|transfer\w+|transfiero|ofrec\w+|ofrezco"
    r"|entreg\w+)",
    "pt": r"(?:eu\s+)?(?:não\s+)?(?:lhe\s+)?(?:(?:vou|quero|decido|decidi|escolho)\s+)?"
    r"(?:dar(?:ei|ia)?|dou|envi\w+|transfer\w+|transfiro|ofere\w+|entreg\w+)",
    "it": r"(?:io\s+)?(?:non\s+)?(?:(?:gli|le)\s+)?(?:(?:ho\s+deciso|decido|scelgo|voglio|vorrei)"
    r"\s+(?:di\s+)?)?(?:(?:gli|le)\s+)?(?:dar(?:ò|ei|e|gli)|do|invi\w+|mand\w+|trasferi\w+"
    r"|offr\w+|regal\w+)",
    "de": r"(?:ich\s+)?(?:gebe|sende|schicke|überweise|investiere|überlasse|werde|würde|möchte"
    r"|will)(?:\s+ich)?",
    "nl": r"(?:ik\s+)?(?:geef|stuur|investeer|zal|ga|wil|zou)(?:\s+ik)?",
}
_INFINITIVE = {
    "de": r"\b(?:zu\s+)?(?:geben|abgeben|senden|schicken|überweisen|investieren|überlassen)\b",
    "nl": r"\b(?:te\s+)?(?:geven|sturen|overmaken|investeren)\b",
}
"""German and Dutch put the verb last after an auxiliary ('werde ich 5 Dollar geben'): the
sentence gives only when it ends with one of these, and its amount stands before it."""
_AUXILIARY = re.compile(r"\b(?:werde|würde|möchte|will|zal|ga|wil|zou)\b", re.IGNORECASE)
_FOREIGN = [
    (lang, re.compile(rf"\b(?:{_FINALLY[lang]})\b[\s,:]*{_GIVING[lang]}\b", re.IGNORECASE))
    for lang in _FINALLY
]
_CHINESE = re.compile(
    r"(?:最后|最後|最终|最終|总之|總之|综上|綜上)[，,：:\s]*我\s*(?:最终|决定|決定|会|會|将|將|要|愿意|願意"
    r"|打算|想|准备|準備|还是|還是|什么也|什么都|什麼也|什麼都|一分钱也|一分钱都|一分也|不)*\s*"
    r"(?:给|給|送|转给|轉給|转|轉|投资|投資|拿出|投)"
)
_FOREIGN_NEGATION = re.compile(r"\b(?:ne|n['’]|pas|no|não|non|nicht|niet)\b|不", re.IGNORECASE)

_ONE_WORDS = r"une?|uno|una|um|uma|ein(?:e[nmrs]?)?|een|één"
_UNIT_WORDS = r"dollars?|dólar(?:es)?|dollar[oi]?|centimes?|cents?|céntimos?|centavos?|centesimi"
_TERMS: tuple[tuple[str, dict[str, str]], ...] = (
    (" dollars ", {"*": r"d[óo]lar(?:es)?|dollar[oisn]?|dollars|美元|美金|块钱|塊錢|块|塊|元"}),
    (" cents ", {"*": r"centimes?|céntimos?|centavos?|centesimi|cents?"}),
    (" percent ", {"*": r"pour\s*cent|por\s+ciento|por\s+cento|per\s+cento|prozent|procent"}),
    (" money ", {"*": r"argent|dinero|dinheiro|soldi|denaro|geld(?:es)?"}),
    (" endowment ", {"*": r"dotation|dotación|dotação|dotazione|ausstattung|startkapital"}),
    (
        " player ",
        {
            "*": r"joueur|jugador|jogador|giocatore|spieler|speler|participante?|"
            r"partecipante|teilnehmer|deelnemer|玩家"
        },
    ),
    (
        " half ",
        {
            "fr": r"la\s+moitié|moitié",
            "es": r"la\s+mitad|mitad",
            "pt": r"a\s+metade|metade",
            "it": r"la\s+metà|metà",
            "de": r"die\s+hälfte|hälfte",
            "nl": r"de\s+helft|helft",
            "zh": r"一半",
        },
    ),
    (
        " all ",
        {
            "fr": r"tout|la\s+totalité|tous",
            "es": r"todo|todos|la\s+totalidad",
            "pt": r"tudo|todo|todos",
            "it": r"tutto|tutti",
            "de": r"alles|alle",
            "nl": r"alles|alle",
            "zh": r"全部|所有",
        },
    ),
    (
        " nothing ",
        {
            "fr": r"rien|aucun\w*(?:\s+(?:dollar|argent)\w*)?",
            "es": r"nada|ningún\s+dólar",
            "pt": r"nada|nenhum\s+dólar",
            "it": r"niente|nulla|nessun\s+dollaro",
            "de": r"nichts|kein(?:e[nmrs]?)?\s+(?:einzigen\s+)?(?:dollar|cent|geld)",
            "nl": r"niets|niks|geen\s+(?:enkele\s+)?(?:dollar|cent|geld)",
            "zh": r"一分钱也不|一分也不|什么也不|什么都不",
        },
    ),
    (
        " about ",
        {
            "fr": r"environ|à\s+peu\s+près|presque|peut[-\s]être|plus\s+ou\s+moins|quelque",
            "es": r"unos|unas|alrededor\s+de|aproximadamente|casi|quizás?|tal\s+vez"
            r"|más\s+o\s+menos|cerca\s+de|probablemente",
            "pt": r"uns|umas|cerca\s+de|aproximadamente|quase|talvez|mais\s+ou\s+menos"
            r"|provavelmente",
            "it": r"circa|più\s+o\s+meno|quasi|forse|all['’]incirca|pressappoco|probabilmente",
            "de": r"etwa|ungefähr|circa|ca\.|fast|vielleicht|rund|knapp|wahrscheinlich",
            "nl": r"ongeveer|bijna|misschien|circa|rond|waarschijnlijk",
            "zh": r"大约|大概|左右|差不多|约|可能|也许|或许|估计",
        },
    ),
    (
        " at most ",
        {
            "fr": r"au\s+moins|au\s+plus|au\s+maximum|jusqu['’]à|pas\s+plus\s+de|plus\s+de"
            r"|moins\s+de",
            "es": r"al\s+menos|por\s+lo\s+menos|como\s+mucho|como\s+máximo|hasta|más\s+de"
            r"|menos\s+de",
            "pt": r"pelo\s+menos|no\s+máximo|no\s+mínimo|até|mais\s+de|menos\s+de",
            "it": r"almeno|al\s+massimo|fino\s+a|più\s+di|meno\s+di",
            "de": r"mindestens|höchstens|maximal|bis\s+zu|mehr\s+als|weniger\s+als"
            r"|wenigstens",
            "nl": r"minstens|hoogstens|maximaal|tot|meer\s+dan|minder\s+dan",
            "zh": r"至少|最多|不超过|不少于|以上|以下|上限",
        },
    ),
    (
        " or ",
        {
            "fr": r"ou",
            "es": r"o|u",
            "pt": r"ou",
            "it": r"o|oppure",
            "de": r"oder",
            "nl": r"of",
            "zh": r"或者|或",
        },
    ),
    (
        " nein, ",  # a correction marker ('No, mejor 6') no later term turns into 'not'
        {
            "zh": r"不对[，,]?|不[，,]",
            "es": r"no(?=\s*,)",
            "pt": r"não(?=\s*,)",
            "it": r"no(?=\s*,)",
        },
    ),
    (
        " not ",
        {
            "fr": r"pas|ne|n['’]",
            "es": r"no",
            "pt": r"não",
            "it": r"non",
            "de": r"nicht|kein\w*",
            "nl": r"niet|geen",
            "zh": r"不|没",
        },
    ),
    (" times ", {"*": r"fois|veces|vezes|volte|mal|keer|倍"}),
    (
        " of my ",
        {
            "fr": r"de\s+(?:mon|ma|mes)|sur\s+(?:mes|les)",
            "es": r"de\s+(?:mis?|los)",
            "pt": r"d[oa]s?\s+(?:meus?|minhas?)|de\s+(?:meus?|minhas?)",
            "it": r"de(?:i|l|lla)\s+mi\w+|di\s+mi\w+",
            "de": r"von\s+(?:meinen|meinem|den)",
            "nl": r"van\s+(?:mijn|de)",
        },
    ),
    (
        " because ",
        {
            "fr": r"parce\s+que|car|puisque|afin|pour|en\s+espérant|ce\s+qui|qui|que"
            r"|en\s+gardant|et\s+(?:je\s+)?gard\w*|mais|comme|si|quand|donc",
            "es": r"porque|ya\s+que|pues|para|esperando|lo\s+que|que|quedándome"
            r"|y\s+(?:me\s+)?qued\w*|pero|como|si|cuando|así",
            "pt": r"porque|pois|já\s+que|para|esperando|o\s+que|que|ficando|e\s+fic\w*"
            r"|mas|como|se|quando|então",
            "it": r"perché|poiché|dato\s+che|per|sperando|il\s+che|che|tenendo"
            r"|e\s+ten\w*|ma|come|se|quando|quindi",
            "de": r"weil|da|denn|um|damit|was|wobei|in\s+der\s+hoffnung|und\s+behalte"
            r"|aber|wenn|also|sodass|so\s+dass",
            "nl": r"omdat|want|om|wat|zodat|in\s+de\s+hoop|en\s+hou\w*|maar|als|dus",
            "zh": r"因为|因為|所以|希望|但是|但|如果|这样|這樣|留下|自己留",
        },
    ),
)
_CHINESE_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5,
                   "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip


def foreign_clauses(text: str) -> list[Clause]:
    """The decision sentences written in another language ('Finalement, je donnerai 5
    dollars', 'Schließlich werde ich 5 Dollar geben', '最后，我会给对方五美元'), each body
    put into the English the amount rules read (`english`)."""
    clauses = []
    found = [(lang, m) for lang, pattern in _FOREIGN for m in pattern.finditer(text)]
    found += [("zh", m) for m in _CHINESE.finditer(text)]
    taken: set[int] = set()
    for lang, match in sorted(found, key=lambda item: item[1].start()):
        if match.start() in taken:
            continue
        taken.add(match.start())
        end = _clause_end(text, match.end())
        body = text[match.end() : end]
        if lang in _INFINITIVE and _AUXILIARY.search(match[0]):
            verbs = list(re.finditer(_INFINITIVE[lang], body, re.IGNORECASE))
            if not verbs:
                continue  # 'werde ich 5 Dollar behalten': not a decision to give
            body = body[: verbs[-1].start()]
        negated = bool(_FOREIGN_NEGATION.search(match[0]))
        if lang == "fr" and (only := re.match(r"\s*qu(?:e\b|['’])", body)):
            negated, body = False, body[only.end() :]  # 'je ne donnerai que 3 dollars': only
        clauses.append(Clause(match.start(), match[0], english(body, lang), negated, end))
    for start, head, body, negated, after in verb_last_decisions(text):
        end = _clause_end(text, after)
        clauses.append(Clause(start, head, english(body, "zh"), negated, end))
    return clauses


def english(body: str, lang: str) -> str:
    """A foreign decision's body in the words the English rules read: number words as digits
    (text2num's `alpha2digit`; Chinese numerals by a small table), units, shares, hedges,
    bounds, 'or', negations and aside openers as their English equivalents. Words without an
    equivalent are left as they are and read as nothing."""
    if lang == "zh":
        body = re.sub(
            r"[零一二两兩三四五六七八九十]+", _chinese_number, body.replace("一半", " half ")
        )
    else:
        if lang in ("it", "fr"):  # 'all'altro', 'à l'autre': a preposition, not 'all'
            body = re.sub(r"\b(?:all['’]|alla|allo|agli|alle|ai|al)\b", " to ", body, flags=re.I)
        one = rf"\b(?:{_ONE_WORDS})\b"
        unit = rf"(?=\s+(?:{_UNIT_WORDS})\b)"
        body = re.sub(rf"{one}{unit}", " 1 ", body, flags=re.IGNORECASE)  # 'einen Dollar'
        body = re.sub(rf"{one}(?!\s*\d)", " a ", body, flags=re.IGNORECASE)  # an article
        body = re.sub(r"\b(?:unos|unas|uns|umas)\b", " about ", body, flags=re.IGNORECASE)
        body = alpha2digit(body, lang, threshold=0)
    for english_word, by_language in _TERMS:
        words = by_language.get(lang) or by_language.get("*")
        if words:
            pattern = rf"(?:{words})" if lang == "zh" else rf"\b(?:{words})\b"
            body = re.sub(pattern, english_word, body, flags=re.IGNORECASE)
    if lang == "zh":
        body = re.sub(r"[\u3400-\u9fff\u3000-\u30ff\uac00-\ud7af\uff00-\uffef]+", " ", body)
    return " ".join(body.split())


def _chinese_number(match: re.Match[str]) -> str:
    """一 → 1, 十 → 10, 十五 → 15, 二十 → 20, 二十五 → 25 (up to 99); others as they are."""
    said = match[0]
    if "十" not in said:
        return f" {_CHINESE_DIGITS[said]} " if len(said) == 1 else said
    tens, _, ones = said.partition("十")
    if len(tens) > 1 or len(ones) > 1:
        return said
    value = _CHINESE_DIGITS.get(tens, 1) * 10 + _CHINESE_DIGITS.get(ones, 0)
    return f" {value} "
