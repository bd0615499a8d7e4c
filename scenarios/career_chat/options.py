"""The survey's options (seed 003, VSM 2013): five ordered options per item, and a reply's
distribution over them read from the top-k logprobs at the option id's token (Appendix G), or
one-hot on the selected option."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["N_OPTIONS", "one_hot", "option_distribution"]

N_OPTIONS = 5
"""Every survey item has five ordered options (VSM 2013)."""

_OPTION_KEY = re.compile(r'"?option_id"?\s*:\s*"?\s*(\d)')
_TOKEN_TRIM = " \t\n\"'`:,{}"


def _option_of(token: str, n_options: int) -> int | None:
    """The option a token names ("3", " 3", "\\"3", "3,"), or None for anything else."""
    text = token.strip(_TOKEN_TRIM)
    if len(text) == 1 and text.isdigit() and 1 <= int(text) <= n_options:
        return int(text)
    return None


def option_distribution(
    logprobs: Sequence[Mapping[str, Any]] | None, n_options: int = N_OPTIONS
) -> list[float] | None:
    """Normalised probabilities of options 1..n at the token that emits `option_id`'s value.

    `logprobs` are the response's tokens as logged (`{token, logprob, top}`). The option's
    token is found by aligning the tokens with the text they spell; its top-k alternatives
    that name an option contribute exp(logprob) (an option outside the top k gets 0), and the
    result is renormalised over the options (Appendix G). None when there are no logprobs,
    the value's token cannot be found, it comes without top alternatives, or no alternative
    names an option: the caller falls
    back to a one-hot distribution and flags it.
    """
    if not logprobs:
        return None
    tokens = [str(t.get("token", "")) for t in logprobs]
    match = _OPTION_KEY.search("".join(tokens))
    if match is None:
        return None
    position, offset = 0, 0
    for position, token in enumerate(tokens):  # noqa: B007 - the position is the result
        if offset + len(token) > match.start(1):
            break
        offset += len(token)
    entry = logprobs[position]
    alternatives = dict(entry.get("top") or {})
    if not alternatives:  # the chosen token alone is no distribution: a fallback, counted
        return None
    mass = [0.0] * n_options
    for token, logprob in alternatives.items():
        option = _option_of(token, n_options)
        if option is not None:
            mass[option - 1] += math.exp(float(logprob))
    total = sum(mass)
    return [m / total for m in mass] if total > 0 else None


def one_hot(option: int, n_options: int = N_OPTIONS) -> list[float]:
    """The fallback distribution for an answer without logprobs."""
    return [1.0 if k == option else 0.0 for k in range(1, n_options + 1)]
