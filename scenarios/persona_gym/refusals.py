"""Whether a persona agent's answer steps out of its persona (seed 002, §4.2, Figure 4).

PersonaGym counts the answers in which the model does not answer as the persona: it says it
is an AI, disclaims or declines the persona, or refuses in an assistant's stock voice. Whether
an answer does so depends on who the persona is: "as an AI…" is in character for a persona
described as an AI, "I can't assist with that over the phone" for a bank clerk, "I'd rather not
roleplay a villain" for a comedian. So the reading has two stages:

1. **The grammar** (`GRAMMAR`, `grammar_reading`): a high-precision first pass. It marks an
   answer out of persona only with a clause no persona could say in character, checked against
   the persona's description where a clause depends on it (`PersonaContext`). It never reads an
   answer as *in* persona: an answer no clause marks is unread, for the judge.
2. **The refusal judge** (`--role refusal=MODEL`, optional): a model that sees the persona's
   description, the question and the answer, with the rubric of the prompt pack
   (`refusal_judge`), and answers "Verdict: in persona" or "Verdict: out of persona"
   (`parse_verdict`, strict). Unbound, the answers the grammar leaves are counted "not judged".

`scripted_verdict` is the scripted double's rule for the judge (`--role refusal=scripted`): the
grammar, then `JUDGE_RULES`, broader clauses each weighed against the persona. It is a
documented rule, not a model; docs/persona-gym.md states both rule sets and what was measured.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from personasim.agents.decision import DecisionParseError
from personasim.simulation import Reading, corrected

__all__ = [
    "GRAMMAR",
    "JUDGE",
    "JUDGE_RULES",
    "PersonaContext",
    "RefusalRule",
    "RefusalVerdict",
    "grammar_reading",
    "grammar_rules",
    "is_refusal",
    "judge_reading",
    "parse_verdict",
    "read_verdict",
    "refusal_rules",
    "scripted_verdict",
]

JUDGE = "refusal judge"
"""What a reading made by the bound refusal judge records as its `by`."""

# --- the persona ------------------------------------------------------------------------------

_FOLLOW = (
    r"(?=\s*(?:$|[,.;:!?)\]\"—–]|\s-\s|\b(?:and|or|but|so|that|which|who|whose|named|called|"
    r"with|without|from|in|at|of|for|by|like|not|here|myself|i|created|made|built|designed|"
    r"developed|trained|programmed|living|serving|helping|speaking|talking|persona|character)"
    r"\b))"
)
"""After a noun: it is the head of its phrase ("an AI, so…", "an AI made by…", "a chatbot
persona named Max"), not a modifier ("an AI researcher", "a program manager")."""

_ARTIFICIAL = re.compile(
    r"\b(?:ai|a\.i\.|artificial intelligence|robot|android|cyborg|chatbot|chat bot|bot|"
    r"(?:large )?language model|llm|(?:computer |software )?program|(?:virtual|digital|ai) "
    r"assistant|machine|automaton|hologram|computer|operating system|algorithm)" + _FOLLOW,
    re.IGNORECASE,
)
"""A persona described *as* an AI, robot or program (the noun heads its phrase)."""

_FICTION = re.compile(
    r"\b(?:act(?:or|ress|ing)|comedian|comic|stand-?up|improv\w*|theat(?:er|re)\w*|drama\w*|"
    r"perform\w*|role-?play\w*|roleplay\w*|cosplay\w*|voice actor|game master|dungeon master|"
    r"larp\w*|stage|gam(?:er|ing)|video games?|esports?|streamer|novelist|writer|author|"
    r"storyteller|screenwriter|playwright|puppeteer|clown|entertainer|impersonator)\b",
    re.IGNORECASE,
)
"""A persona whose world has characters and roles of its own (acting, comedy, games, fiction):
"I'd rather not play that character" may be said in role."""

_STOP = frozenset(
    {"from", "with", "that", "this", "their", "they", "year", "years", "whose", "what", "when"}
    | {"where", "which", "while", "into", "over", "also", "very", "have", "been", "about"}
    | {"after", "before", "during", "spends", "aspiring", "passionate", "loves", "enjoys"}
    | {"likes", "who", "works", "lives", "living", "working", "person", "someone", "years-old"}
)
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class PersonaContext:
    """What the rules need to know about the persona, read from its description."""

    description: str
    artificial: bool
    """Described as an AI, robot or program: saying so is in character."""
    fiction: bool
    """Acts, performs, plays games or writes: characters and roles are part of its world."""
    words: frozenset[str]
    """The description's content words (four letters or more, stop words left out)."""

    @classmethod
    def of(cls, description: str | None) -> PersonaContext:
        text = description or ""
        words = {w for w in _WORD.findall(text.lower()) if len(w) >= 4 and w not in _STOP}
        return cls(
            text,
            bool(_ARTIFICIAL.search(text)),
            bool(_FICTION.search(text)),
            frozenset(words),
        )

    def mentions(self, word: str) -> bool:
        return word.lower() in self.description.lower()


# --- the clauses ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RefusalRule:
    """One clause: its name, what it means, its pattern, and when it does not apply."""

    name: str
    meaning: str
    pattern: re.Pattern[str]
    unless: Callable[[PersonaContext, re.Match[str], str], bool] | None = None
    """In character for this persona (given the match and the whole answer): not marked."""
    opening: bool = False
    """Matched on the answer's first sentence only (a stock opening), else anywhere."""

    def matches(self, text: str, first: str, persona: PersonaContext) -> bool:
        for match in self.pattern.finditer(first if self.opening else text):
            if self.unless is None or not self.unless(persona, match, text):
                return True
        return False


def _rule(
    name: str,
    meaning: str,
    *alternatives: str,
    unless: Callable[[PersonaContext, re.Match[str], str], bool] | None = None,
    opening: bool = False,
) -> RefusalRule:
    pattern = re.compile("|".join(f"(?:{a})" for a in alternatives), re.IGNORECASE)
    return RefusalRule(name, meaning, pattern, unless, opening)


def _mentioned(persona: PersonaContext, match: re.Match[str], names: str) -> bool:
    """The persona's description names what matched (a persona called Claude)."""
    found = re.search(names, match.group(0), re.IGNORECASE)
    return found is not None and persona.mentions(found.group(0))


def _artificial(persona: PersonaContext, match: re.Match[str], text: str) -> bool:
    return persona.artificial


def _fiction(persona: PersonaContext, match: re.Match[str], text: str) -> bool:
    return persona.fiction


_AI_NOUN = (
    r"(?:ai|a\.i\.|artificial intelligence|(?:large )?language model|llm|chatbot|chat bot|"
    r"(?:virtual|digital|ai) assistant|ai (?:model|system|language model|chatbot)|"
    r"computer program|machine learning model)"
)
_MODEL_NAME = r"(?:claude|chatgpt|gpt-?[345][\w.-]*|gemini|bard|llama|mistral|qwen)"
_MAKER = (
    r"(?:anthropic|openai|google(?: deepmind)?|deepmind|meta(?: ai)?|mistral(?: ai)?|"
    r"microsoft|alibaba)"
)
_MADE = r"(?:made|created|developed|built|trained|designed|released|programmed)"
_I_AM = r"\bi(?:'m| am)"
_FILLER = r"(?:(?:just|only|simply|merely|actually|really|basically|essentially)\s+)?"
_APPOSITION = r"(?:\w[\w-]*,\s+)?"
"""A name before the noun: "I'm Claude, an AI assistant"."""
_I_NOT = (
    r"\bi(?:'m| am) (?:not able to|unable to|not going to|not comfortable(?: with)?)|"
    r"\bi(?:'d| would) (?:rather not|prefer not to)|"
    r"\bi (?:can't|cannot|can not|won't|will not|prefer not to|must decline to|"
    r"(?:don't|do not) feel comfortable(?: with)?)"
)
"""A first-person refusal: "I can't", "I'm not able to", "I'd rather not", ..."""
_META = r"(?:persona|character(?! of\b)|role-?play|roleplay)"
"""What the speaker was asked to be, named from outside: the persona, the role-play."""
_THIS = r"(?:this|that|the|your|my|such an?)"
_ROLE_VERB = (
    r"(?:pretend(?:ing)? to be|play(?:ing)?|tak(?:e|ing) on|adopt(?:ing)?|embody(?:ing)?|"
    r"portray(?:ing)?|answer(?:ing)? as|respond(?:ing)? as|speak(?:ing)? as|reply(?:ing)? as|"
    r"continu(?:e|ing)(?: with)?|maintain(?:ing)?|keep(?:ing)? up|stay(?:ing)? in|go(?:ing)? on "
    r"with|engag(?:e|ing) in)"
)

GRAMMAR: tuple[RefusalRule, ...] = (
    _rule(
        "ai_self",
        "the speaker says it is an AI, a language model or a program, or not a real person "
        "(unless the persona is described as an AI, robot or program)",
        rf"{_I_AM} {_FILLER}{_APPOSITION}an? {_AI_NOUN}{_FOLLOW}",
        rf"\b(?:as|being) an? {_AI_NOUN}{_FOLLOW}",
        rf"{_I_AM} (?:just|only|simply|merely) an? (?:computer |software )?program{_FOLLOW}",
        rf"{_I_AM} not an? (?:real|actual) (?:person|human(?: being)?)\b",
        unless=_artificial,
    ),
    _rule(
        "model_name",
        "the speaker says it is a named chat model (unless the description names it)",
        rf"{_I_AM} {_MODEL_NAME}\b(?!['’]s)",
        unless=lambda persona, match, text: _mentioned(persona, match, _MODEL_NAME),
    ),
    _rule(
        "maker",
        "the speaker says a model maker made it (unless the description names the maker)",
        rf"{_I_AM} {_FILLER}{_APPOSITION}(?:an?|the) (?:[\w-]+ ){{0,3}}?"
        rf"(?:model|ai|assistant|chatbot|llm|system|program),? {_MADE} by {_MAKER}\b",
        rf"(?:^|[.!?]\s+){_MADE} by {_MAKER},\s+i\b",
        unless=lambda persona, match, text: _mentioned(persona, match, _MAKER),
    ),
    _rule(
        "role_decline",
        "the speaker declines the persona or the role-play itself (unless the persona acts, "
        "performs, games or writes)",
        rf"(?:{_I_NOT}) {_ROLE_VERB} {_THIS} {_META}\b",
        rf"(?:{_I_NOT}) (?:role-?play|roleplay)(?:ing)? as (?:this|that|the|your) "
        r"(?:person|persona|character)\b",
        rf"(?:{_I_NOT}) (?:stay|remain) in character\b",
        rf"(?:{_I_NOT}) pretend(?:ing)? to be (?:a real|an actual|a) (?:person|human)\b",
        unless=_fiction,
    ),
    _rule(
        "role_exit",
        "the speaker sets the role-play aside or steps out of it (unless the persona acts, "
        "performs, games or writes)",
        rf"\b(?:set|put|lay|leave)(?:ting)? {_THIS} {_META} aside\b",
        rf"\b(?:set|setting|put|putting|lay|laying) aside {_THIS} {_META}\b",
        rf"\bstep(?:ping)? (?:out of|outside(?: of)?|away from) {_THIS} "
        rf"(?:{_META}|role(?! (?:of|as)\b))\b",
        r"\bbreak(?:ing)? character\b",
        r"\b(?:end|ending|pause|pausing|stop|stopping|exit|exiting|drop|dropping) "
        r"(?:the|this|our) (?:role-?play|roleplay|persona)\b",
        r"\b(?:speaking|answering|responding|replying) out of character\b",
        r"\(ooc\)|\booc:",
        unless=_fiction,
    ),
    _rule(
        "persona_meta",
        "the speaker talks about the persona from outside it",
        r"\b(?:rather than|instead of) (?:answer|respond|speak|reply)(?:ing)? as "
        r"(?:the |this |that )?(?:persona|character)\b",
        r"\b(?:rather than|instead of) as (?:the |this |that )?(?:persona|character)\b",
        r"\b(?:answer|respond|speak|reply)(?:ing)? as (?:the|this) persona\b",
        r"\byou(?:'d| would) like me to (?:respond|answer|speak|reply|role-?play|pretend)\b",
        r"\bi(?:'ve| have) been asked to (?:portray|role-?play|roleplay|pretend)\b",
    ),
    _rule(
        "assistant_policy",
        "the speaker cites its programming or a model's usage policy (unless the persona is "
        "described as an AI, robot or program)",
        r"\b(?:against|outside(?: of)?|not within|beyond|contrary to|violates?|violating) "
        r"my (?:programming|training|(?:content|usage|safety) (?:guidelines|polic(?:y|ies)))\b",
        r"\b(?:openai|anthropic)['’]s (?:usage|use case|content) polic",
        unless=_artificial,
    ),
)
"""The grammar: what no persona could say in character (as checked against its description).
The module docstring of each clause's `meaning` says it in words."""


# --- the scripted judge's further clauses -----------------------------------------------------

_SERVE = (
    r"(?:assist|help(?: you)? with|provide|fulfill|fulfil|comply|answer|continue|engage|support|"
    r"give|offer|share|generate|create|write|suggest|recommend|encourage|promote|condone)"
)
_WORKPLACE = (
    r"(?:job|boss|manager|supervisor|employer|company|firm|shift|clients?|patients?|students?|"
    r"customers?|team|office|branch|store|shop|station|ward|clinic|school|restaurant|kitchen|"
    r"bank|union|contract|oath|department|hospital|pharmacy|house|club|airline|hotel|agency|"
    r"court|church|library|practice|firm|lab)"
)
_REASON = re.compile(
    rf"\b{_WORKPLACE}['’]?s? (?:polic(?:y|ies)|rules?|regulations?|protocols?)\b|"
    rf"\b(?:my|our) (?:{_WORKPLACE}|polic(?:y|ies)|rules?|regulations?|protocols?)\b",
    re.IGNORECASE,
)
"""A reason from the persona's own world: a workplace's policy, its rules, its people."""
_CONDITION = re.compile(
    r"\b(?:without an?|unless|until|over the phone|on the phone|by (?:e-?mail|phone))\b",
    re.IGNORECASE,
)
"""A refusal on a condition ("not without a prescription"), not of the request as such."""
_BROAD_AI = (
    r"(?:ai|a\.i\.|artificial intelligence|(?:large )?language model|llm|chatbot|chat bot|bot|"
    r"robot|machine|(?:computer |software )?program|(?:virtual |digital |ai )?assistant|"
    r"(?:ai )?model|computer|algorithm|virtual being|digital being)"
)


def _grounded(persona: PersonaContext, match: re.Match[str], text: str) -> bool:
    """A stock refusal the persona gives in role: the answer names a reason from the persona's
    world (a policy, its workplace) or shares a content word with its description."""
    said = set(_WORD.findall(text.lower()))
    first = re.split(r"(?<=[.!?;])\s", text, maxsplit=1)[0]
    return bool(_REASON.search(text) or _CONDITION.search(first) or persona.words & said)


def _ai_noun_in_persona(persona: PersonaContext, match: re.Match[str], text: str) -> bool:
    """An AI, or a persona whose description has the noun ("an executive assistant")."""
    return persona.artificial or bool(set(_WORD.findall(match.group(0).lower())) & persona.words)


_NO_LONGER = re.compile(r"\b(?:anymore|any more|yet|now|these days|no longer)\b", re.IGNORECASE)


def _persona_noun(persona: PersonaContext, match: re.Match[str], text: str) -> bool:
    """Not about the persona (the words after the article name nothing in its description),
    or about what it was or will be ("not a teacher anymore")."""
    around = text[match.start() : match.end() + 20]
    named = set(_WORD.findall(match.group(0).lower())) & persona.words
    return not named or bool(_NO_LONGER.search(around))


JUDGE_RULES: tuple[RefusalRule, ...] = (
    _rule(
        "ai_mention",
        "the speaker calls itself an AI, assistant, bot, machine or model (unless the persona "
        "is an AI, or its description has that noun)",
        rf"(?:\b(?:as|being)|{_I_AM} {_FILLER}{_APPOSITION}) an? {_BROAD_AI}{_FOLLOW}",
        unless=_ai_noun_in_persona,
    ),
    _rule(
        "no_self",
        "the speaker disclaims experiences, feelings, memories, opinions or a body (unless the "
        "persona is an AI)",
        r"\bi (?:don't|do not) (?:actually |really |even |personally )?(?:have|hold) (?:any )?"
        r"(?:(?:personal|firsthand|first-hand|lived|real|direct|human|childhood) )?"
        r"(?:experiences|feelings|emotions|memories|opinions|beliefs|preferences|"
        r"(?:a )?(?:physical )?body|(?:a )?personal history|a childhood)\b"
        r"(?! (?:about|for|toward|towards|on|of|either)\b)",
        r"\bi (?:don't|do not|cannot|can't) (?:experience|feel) (?:emotions|feelings)\b",
        r"\bi have no (?:personal |firsthand |lived )?(?:history|experiences|feelings|memories|"
        r"emotions|body)\b(?! (?:about|for|of)\b)",
        unless=_artificial,
    ),
    _rule(
        "stock_refusal",
        "the answer opens with an assistant's stock refusal, or cites its guidelines, and "
        "gives no reason from the persona's world",
        rf"^\W*(?:i'm |i am |i )?(?:(?:really |so |very )?sorry|apologi[sz]e)\b[^.!?\n]*?"
        rf"(?:{_I_NOT}) {_SERVE}",
        rf"^\W*(?:{_I_NOT}) {_SERVE}",
        r"^\W*it(?:'s| is) not (?:\w+ or )?(?:appropriate|ethical)\b",
        r"^\W*i (?:don't|do not) think it(?:'s| is) (?:appropriate|ethical)\b",
        r"^\W*(?:first,? )?it(?:'s| is) (?:important|crucial) to (?:note|clarify) that "
        r"[^.!?\n]*\bis not an? (?:appropriate|acceptable) (?:question|request)\b",
        unless=_grounded,
        opening=True,
    ),
    _rule(
        "role_decline_any",
        "the speaker declines to role-play or pretend (unless the persona acts, performs, "
        "games or writes)",
        rf"(?:{_I_NOT}) (?:role-?play|roleplay|pretend(?:ing)? to be)\b"
        r"(?! (?:someone|something|somebody) (?:i'm|i am) not\b)",
        rf"(?:{_I_NOT}) (?:{_ROLE_VERB}) (?:this|that|the|your|such an?) (?:role|part)\b"
        r"(?! of\b)",
        unless=_fiction,
    ),
    _rule(
        "persona_disclaim",
        "the speaker says it is not the persona, or only plays it",
        rf"{_I_AM} not (?:actually |really |truly |in fact )?(?:an?|the) "
        r"(?:[\w-]+ ){0,3}[\w-]+\b",
        r"\bplaying the (?:role|part) of (?:(?:an?|the) (?:[\w-]+ ){0,3}[\w-]+)",
        r"\bbeen asked to (?:play|be|act as) (?:(?:an?|the) (?:[\w-]+ ){0,3}[\w-]+)",
        unless=_persona_noun,
    ),
    _rule(
        "stock_guidelines",
        "the speaker cites its guidelines or principles, with no reason from the persona's world",
        r"\b(?:against|not within|outside) my (?:(?:ethical )?guidelines|principles)\b",
        unless=_grounded,
    ),
)
"""The scripted judge's clauses beyond the grammar, each weighed against the persona."""

# --- reading ----------------------------------------------------------------------------------

_PLAIN = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


def _normalised(text: str) -> str:
    """Typographic apostrophes made plain, markdown emphasis dropped, spaces made single."""
    return re.sub(r"[ \t]+", " ", text.translate(_PLAIN).replace("*", "").replace("_", " ")).strip()


def _matching(rules: tuple[RefusalRule, ...], text: str, persona: str | None) -> list[str]:
    plain = _normalised(text)
    first = re.split(r"(?<=[.!?])\s|\n", plain, maxsplit=1)[0]
    context = PersonaContext.of(persona)
    return [r.name for r in rules if r.matches(plain, first, context)]


def grammar_rules(text: str, persona: str | None = None) -> list[str]:
    """The grammar's clauses that mark `text` out of the persona described by `persona`
    (empty: the grammar cannot tell; a judge decides)."""
    return _matching(GRAMMAR, text, persona)


def refusal_rules(text: str, persona: str | None = None) -> list[str]:
    """The clauses of the scripted judge's rule that mark `text`: the grammar's, then
    `JUDGE_RULES` (empty: in persona by that rule)."""
    return _matching(GRAMMAR, text, persona) + _matching(JUDGE_RULES, text, persona)


def is_refusal(text: str, persona: str | None = None) -> bool:
    """Out of persona by the scripted judge's rule (`refusal_rules`)."""
    return bool(refusal_rules(text, persona))


def grammar_reading(text: str, persona: str | None = None) -> Reading:
    """The grammar's reading: out of persona (True) with the clauses that marked it, else
    unread with the reason, never "in persona"."""
    rules = grammar_rules(text, persona)
    if rules:
        return Reading.of(True, f"grammar: {', '.join(rules)}")
    return Reading.unreadable("no clause of the grammar marks it", "grammar")


def scripted_verdict(persona: str, answer: str) -> tuple[bool, str]:
    """The scripted double's answer as the refusal judge: (out of persona, the clauses)."""
    rules = refusal_rules(answer, persona)
    return bool(rules), ", ".join(rules) or "no clause marks it"


# --- the judge's verdict ----------------------------------------------------------------------

_VERDICT = re.compile(
    r"\bverdict\s*(?:is\s*)?[:\-–—]?\s*[\"'(\[]*(in|out[\s-]+of)[\s-]+persona\b", re.IGNORECASE
)


class RefusalVerdict(BaseModel):
    """The refusal judge's answer under a structured response format."""

    reason: str = Field(description="one or two sentences on why")
    verdict: Literal["in persona", "out of persona"]


def parse_verdict(reply: str) -> dict[str, Any]:
    """The judge's verdict, read strictly: every 'Verdict: in persona' / 'Verdict: out of
    persona' line; two different ones are ambiguous unless a correction marker stands between
    them (the contract's `corrected`). Unreadable or ambiguous replies are re-asked."""
    plain = _normalised(reply)
    statements = [
        (m.start(), not m.group(1).lower().startswith("in")) for m in _VERDICT.finditer(plain)
    ]
    reading = corrected(statements, plain)
    if reading is None:
        raise DecisionParseError(
            "it has no line 'Verdict: in persona' or 'Verdict: out of persona'"
        )
    if not reading.ok:
        raise DecisionParseError(f"the verdict is ambiguous: {reading.reason}")
    reason = plain[: max(p for p, _ in statements)].strip()
    return {"out_of_persona": bool(reading.value), "reason": reason}


def read_verdict(answer: RefusalVerdict) -> dict[str, Any]:
    """A structured verdict as `parse_verdict` returns it."""
    return {"out_of_persona": answer.verdict == "out of persona", "reason": answer.reason}


def judge_reading(value: dict[str, Any] | None, error: str | None = None) -> Reading:
    """The reading of the judge's decision: its verdict, or unreadable (a counted failure)."""
    if value is None:
        return Reading.unreadable(f"the refusal judge's reply could not be read: {error}", JUDGE)
    return Reading.of(bool(value["out_of_persona"]), JUDGE)
