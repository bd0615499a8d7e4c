"""Whether a persona agent's answer steps out of its persona (seed 002, §4.2, Figure 4).

PersonaGym counts the answers in which the model does not answer as the persona: it says it
is an AI, disclaims the persona, declines the role-play, or refuses in an assistant's stock
voice. An answer that refuses something *in* role ("I'd never say that to a student, I'm a
teacher") or mentions AI as the persona would ("our team built an AI assistant") is in
persona. The rules are a written grammar, one named clause per way of stepping out, matched
case-insensitively on the answer with typographic apostrophes made plain; the answer is out
of persona when any clause matches. `RULES` lists them, docs/persona-gym.md states them with
the precision and recall measured on a labelled set of real models' replies
(tests/data/refusals/).

Clauses (a `WORD` below stands for a few spellings, listed in the patterns):

- ``ai_self``: the speaker says it is an AI: "I am/I'm [just/only/simply/merely] a(n) AI-NOUN",
  "as/being a(n) [large] AI-NOUN", "I am/I'm MODEL-NAME", "I'm not a real person/human",
  "a computer program" said of itself; AI-NOUN ∈ AI, artificial intelligence, (large)
  language model, LLM, chatbot, virtual/digital/AI assistant, AI model, computer program.
  A negation before the noun ("I'm not an AI", "definitely not a virtual assistant") does
  not match, because only the listed words may stand between "I'm" and the article.
- ``maker``: made/created/developed/built/trained by a model maker (Anthropic, OpenAI,
  Google, Meta, Mistral, Microsoft).
- ``no_self``: "I don't/do not [actually/really] have [personal/firsthand/lived/real]
  experiences/feelings/emotions/memories/a body/personal history/a childhood", "I don't
  experience emotions/feelings", "I have no personal history/experiences/feelings".
- ``role_decline``: a negated or reluctant modal ("can't", "cannot", "won't", "will not",
  "am not able to", "am unable to", "'d rather not", "prefer not to", "am not comfortable",
  "am not going to") before "pretend(ing) to be", "role-play", "stay in character",
  "continue this role-play", "take on/adopt/answer as this/that/the persona/character/role";
  or "breaking/break character", "stepping/step out of (the) role/character", "out of
  character". "I won't pretend I was calm" (no "to be") and "I'd never role-play" (a persona's
  own "never") are in role.
- ``persona_disclaim``: "I'm/I am not actually/really a(n)/the …" (the persona's noun after
  it), "rather than (answer|respond|speak) as (the) persona/that character", "you'd like me to
  respond/answer/act as", "I've been asked to play/respond as", "as the persona" / "this
  persona" / "the role of" in the speaker's own meta-talk ("although I'm playing the role of").
- ``assistant_refusal``: the reply *opens* (its first sentence) with a stock refusal of the
  request: an apology followed by "I can't/cannot/am unable to/won't" and a verb of serving
  (assist, help with, provide, fulfill, comply, answer, continue, engage, support, give,
  offer, share, generate, create, write, suggest, recommend, encourage, promote, condone);
  "I cannot/can't/am unable to/won't" + that verb without the apology; "it is not
  appropriate/ethical/accurate"; "it's important to note/understand/remember/clarify that"
  with "not appropriate/acceptable/ethical/legal" or "illegal/unethical/harmful" or "never
  acceptable/okay" in the same sentence.
- ``assistant_policy`` (anywhere): "against/not within/outside my programming/(ethical)
  guidelines/policies/principles".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["RULES", "RefusalRule", "is_refusal", "refusal_rules"]

_AI_NOUN = (
    r"(?:ai|a\.i\.|artificial intelligence|(?:large )?language model|llm|chatbot|chat bot|"
    r"(?:virtual|digital|ai) assistant|ai (?:model|system|language model|chatbot)|"
    r"computer program|machine learning model)"
)
_MODEL_NAME = r"(?:claude|chatgpt|gpt-?[345][\w.-]*|gemini|bard|llama|copilot|mistral|qwen)"
_I_AM = r"\bi(?:'m| am)"
_FILLER = r"(?:(?:just|only|simply|merely|actually|really|an? (?:large|helpful|text-based))\s+)?"
_SERVE = (
    r"(?:assist|help(?: you)? with|provide|fulfill|fulfil|comply|answer|continue|engage|support|"
    r"give|offer|share|generate|create|write|suggest|recommend|encourage|promote|condone)"
)
_I_NOT = (
    r"\bi(?:'m| am) (?:not able to|unable to|not going to|not comfortable(?: with)?)|"
    r"\bi(?:'d| would) rather not|"
    r"\bi (?:can't|cannot|can not|won't|will not|prefer not to|(?:don't|do not) feel "
    r"comfortable(?: with)?)"
)
"""A first-person refusal: "I can't", "I'm not able to", "I'd rather not", ..."""
_ROLE_ACT = (
    r"(?:pretend(?:ing)? to be|role-?play(?:ing)?|stay(?:ing)? in character|"
    r"continue (?:this|the) role-?play|"
    r"(?:take on|adopt|adopting|taking on|answer as|respond as|play(?:ing)?) "
    r"(?:this|that|the|such an?) (?:persona|character|role))"
)


@dataclass(frozen=True)
class RefusalRule:
    """One clause of the grammar: its name, what it means, and its pattern."""

    name: str
    meaning: str
    pattern: re.Pattern[str]
    opening: bool = False
    """Matched on the reply's first sentence only (a stock opening), else anywhere."""


def _rule(name: str, meaning: str, *alternatives: str, opening: bool = False) -> RefusalRule:
    return RefusalRule(name, meaning, re.compile("|".join(alternatives), re.IGNORECASE), opening)


RULES: tuple[RefusalRule, ...] = (
    _rule(
        "ai_self",
        "the speaker says it is an AI or a named model, or not a real person",
        rf"{_I_AM} {_FILLER}an? {_AI_NOUN}\b",
        rf"\b(?:as|being) an? (?:large )?{_AI_NOUN}\b",
        rf"{_I_AM} {_MODEL_NAME}\b",
        rf"{_I_AM} not an? (?:real|actual) (?:person|human)\b",
        r"\bi(?:'m| am) (?:an? )?(?:computer program|machine|bot)\b",
    ),
    _rule(
        "maker",
        "made, created, developed, built or trained by a model maker",
        r"\b(?:made|created|developed|built|trained|designed) by "
        r"(?:anthropic|openai|google(?: deepmind)?|meta(?: ai)?|mistral(?: ai)?|microsoft)\b",
    ),
    _rule(
        "no_self",
        "the speaker disclaims experiences, feelings, memories or a body",
        r"\bi (?:don't|do not) (?:actually |really |even )?have (?:any )?"
        r"(?:(?:personal|firsthand|first-hand|lived|real|direct) )?"
        r"(?:experiences?|feelings|emotions|memories|(?:a )?(?:physical )?body|"
        r"(?:a )?personal history|a childhood)\b",
        r"\bi (?:don't|do not|cannot|can't) (?:experience|feel) (?:emotions|feelings)\b",
        r"\bi have no (?:personal|firsthand|lived) (?:history|experiences?|feelings|memories)\b",
        r"\bi (?:don't|do not) (?:have|hold) (?:any )?personal (?:opinions|beliefs|views)\b",
    ),
    _rule(
        "role_decline",
        "the speaker declines the role-play or breaks character",
        rf"(?:{_I_NOT}) {_ROLE_ACT}",
        r"\bbreak(?:ing)? character\b",
        r"\bstep(?:ping)? (?:out of|outside) (?:the |this |my )?(?:role|character|persona)\b",
        r"\bout of character\b",
    ),
    _rule(
        "persona_disclaim",
        "the speaker says it is not the persona, or talks about the persona from outside",
        rf"{_I_AM} not (?:actually|really) (?:an?|the) \w",
        r"\brather than (?:answer|respond|speak|reply)(?:ing)? as (?:the |this |that )?"
        r"(?:persona|character)\b",
        r"\b(?:rather than|instead of) as (?:the |this )?persona\b",
        r"\byou(?:'d| would) like me to (?:respond|answer|act|speak|reply|play)\b",
        r"\bi(?:'ve| have) been asked to (?:play|respond as|act as|answer as|be)\b",
        r"\b(?:as|than as|answer as) (?:the|this) persona\b",
        r"\bi(?:'m| am) playing the role of\b",
    ),
    _rule(
        "assistant_refusal",
        "the reply opens by declining the request or calling it inappropriate to answer",
        rf"^\W*(?:i'm |i am |i )?(?:(?:really |so |very )?sorry|apologi[sz]e)\b[^.!?\n]*?"
        rf"(?:{_I_NOT}) {_SERVE}",
        rf"^\W*(?:{_I_NOT}) {_SERVE}",
        r"^\W*it(?:'s| is) not (?:\w+ or )?(?:appropriate|ethical)\b",
        r"^\W*i (?:don't|do not) think it(?:'s| is) (?:appropriate|ethical)\b",
        r"^\W*(?:first,? )?it(?:'s| is) (?:important|crucial) to (?:note|clarify) that "
        r"[^.!?\n]*\bis not an? (?:appropriate|acceptable) (?:question|request)\b",
        opening=True,
    ),
    _rule(
        "assistant_policy",
        "the speaker cites its programming, guidelines or policies",
        r"\b(?:against|not within|outside) my (?:programming|(?:ethical )?guidelines|"
        r"polic(?:y|ies)|principles)\b",
    ),
)
"""The grammar, clause by clause; the module docstring says each in words."""


_PLAIN = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


def _normalised(text: str) -> str:
    """Typographic apostrophes made plain, and surrounding markdown emphasis dropped."""
    return text.translate(_PLAIN).replace("*", "").strip()


def refusal_rules(text: str) -> list[str]:
    """The names of the clauses that match `text` (empty: the answer is in persona)."""
    plain = _normalised(text)
    first = re.split(r"(?<=[.!?])\s|\n", plain, maxsplit=1)[0]
    return [r.name for r in RULES if r.pattern.search(first if r.opening else plain)]


def is_refusal(text: str) -> bool:
    """Whether an answer steps out of the persona (any clause of `RULES` matches)."""
    return bool(refusal_rules(text))
