"""Token counts for `run --dry-run`: the model's own tokenizer where one is at hand offline,
else an estimate that says so.

A dry run makes no network call, so a tokenizer that downloads its vocabulary on first use
(tiktoken's encodings, Hugging Face tokenizers) is not used. What is at hand offline is a GGUF
file, the model a llama.cpp server serves: `--tokenizer FILE.gguf` reads its vocabulary and chat
template with llama-cpp-python (`vocab_only`, no weights), and counts a prompt as the server
does (the template applied, special tokens included).

The estimate was measured against SmolLM2-135M-Instruct's tokenizer and chat template
(`benchmarks/bench_token_estimate.py`, docs/dry-run.md): a prompt is its characters / 3.75 plus 28
tokens for the chat template (SmolLM2's adds a default system prompt); a reply is its
characters / 3.8.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from personasim.simulation.runs.run_dir import RunError

__all__ = [
    "PROMPT_CHARS_PER_TOKEN",
    "REPLY_CHARS_PER_TOKEN",
    "TEMPLATE_TOKENS",
    "TokenCounter",
    "estimated_counter",
    "gguf_counter",
]

PROMPT_CHARS_PER_TOKEN = 3.75
"""Characters per token of a prompt's texts (SmolLM2: 3.1 in the trust prompts to 4.4 in the
classroom's); with the template below, the one factor that keeps every built-in scenario's
prompts within about 16 % (docs/dry-run.md)."""
TEMPLATE_TOKENS = 28
"""Tokens a chat template adds to a request (role markers; SmolLM2's default system prompt)."""
REPLY_CHARS_PER_TOKEN = 3.8
"""Characters per token of a reply (SmolLM2's 239 labelled replies in tests/data: 3.82)."""


@dataclass(frozen=True)
class TokenCounter:
    """Counts a request's prompt and a reply's tokens; `label` says how, for the dry run's
    report (`exact`: the model's tokenizer, else an estimate)."""

    label: str
    exact: bool
    prompt: Callable[[list[Mapping[str, Any]]], int]
    reply: Callable[[str], int]


def estimated_counter() -> TokenCounter:
    def prompt(messages: list[Mapping[str, Any]]) -> int:
        return _chars([m.get("content") for m in messages], PROMPT_CHARS_PER_TOKEN) + (
            TEMPLATE_TOKENS if messages else 0
        )

    return TokenCounter(
        label=(
            f"an estimate: no tokenizer given (--tokenizer FILE.gguf); prompts are characters / "
            f"{PROMPT_CHARS_PER_TOKEN:g} + {TEMPLATE_TOKENS} for the chat template, replies "
            f"characters / {REPLY_CHARS_PER_TOKEN:g}, measured on SmolLM2's tokenizer "
            "(docs/dry-run.md gives its error)"
        ),
        exact=False,
        prompt=prompt,
        reply=lambda text: _chars([text], REPLY_CHARS_PER_TOKEN),
    )


def gguf_counter(path: str | Path) -> TokenCounter:
    """The tokenizer and chat template of a GGUF model file, read without its weights."""
    if not Path(path).is_file():
        raise RunError(f"--tokenizer {path}: no such file")
    try:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    except ImportError:
        raise RunError(
            f"--tokenizer {path}: reading a GGUF file needs llama-cpp-python "
            "(pip install llama-cpp-python, or the realmodel extra)"
        ) from None
    try:
        model = Llama(model_path=str(path), vocab_only=True, verbose=False)
    except (ValueError, RuntimeError) as exc:
        raise RunError(
            f"--tokenizer {path}: not a GGUF model file llama.cpp reads ({exc})"
        ) from None
    template = model.metadata.get("tokenizer.chat_template")
    if not template:
        raise RunError(f"--tokenizer {path}: the file holds no chat template to count a prompt")
    token_text = model.tokenizer().decode  # the template names the model's own bos/eos
    formatter = Jinja2ChatFormatter(
        template=template,
        eos_token=token_text([model.token_eos()]),
        bos_token=token_text([model.token_bos()]),
    )

    def count(text: str, bos: bool = False) -> int:
        return len(model.tokenize(text.encode(), add_bos=bos, special=True))

    def prompt(messages: list[Mapping[str, Any]]) -> int:
        """As llama.cpp's server counts it: the template applied, then tokenized with special
        tokens and the model's BOS where its vocabulary asks for one."""
        chat = [{"role": m["role"], "content": m.get("content") or ""} for m in messages]
        return count(formatter(messages=chat).prompt, bos=True)

    return TokenCounter(
        label=f"counted with the tokenizer and chat template of {Path(path).name}",
        exact=True,
        prompt=prompt,
        reply=lambda text: count(text) if text else 0,
    )


def _chars(texts: Iterable[Any], per_token: float) -> int:
    return math.ceil(sum(len(t) for t in texts if isinstance(t, str)) / per_token)
