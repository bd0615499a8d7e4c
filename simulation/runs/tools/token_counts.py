"""Token counts for `run --dry-run`: the model's own tokenizer where one is at hand offline,
else an estimate that says so, and which file would make it a count.

A dry run makes no network call, so a tokenizer that downloads its vocabulary on first use is
never asked to. What is at hand offline:

- a GGUF file, the model a llama.cpp server serves: `--tokenizer FILE.gguf` reads its vocabulary
  and chat template with llama-cpp-python (`vocab_only`, no weights), and counts a prompt as the
  server does (the template applied, special tokens included); it counts every role;
- an OpenAI encoding's file, downloaded once: `--tokenizer o200k_base.tiktoken` is verified
  and read by tiktoken (`tiktoken_file.py`) and counts the roles whose model uses that encoding
  (tiktoken's model table: gpt-4o, gpt-4.1, o1... use o200k_base, gpt-4 and gpt-3.5 cl100k_base),
  as OpenAI counts a chat request (`TOKENS_PER_MESSAGE`).

The estimate was measured against SmolLM2-135M-Instruct's tokenizer and chat template
(`benchmarks/bench_token_estimate.py`, docs/dry-run.md): a prompt is its characters / 3.75 plus 28
tokens for the chat template (SmolLM2's adds a default system prompt); a reply is its
characters / 3.8.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from personasim.simulation.llm.backend_kind import ModelSpecError
from personasim.simulation.llm.model_spec import parse_model_spec
from personasim.simulation.llm.roles import is_scripted
from personasim.simulation.runs.lifecycle.run_dir import RunError

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "PROMPT_CHARS_PER_TOKEN",
    "REPLY_CHARS_PER_TOKEN",
    "REPLY_PRIMING_TOKENS",
    "TEMPLATE_TOKENS",
    "TOKENS_PER_MESSAGE",
    "TOKENS_PER_NAME",
    "TokenCounter",
    "estimated_counter",
    "gguf_counter",
    "role_counters",
    "tiktoken_counter",
]

PROMPT_CHARS_PER_TOKEN = 3.75
"""Characters per token of a prompt's texts (SmolLM2: 3.1 in the trust prompts to 4.4 in the
classroom's); with the template below, the one factor that keeps every built-in scenario's
prompts within about 16 % (docs/dry-run.md)."""
TEMPLATE_TOKENS = 28
"""Tokens a chat template adds to a request (role markers; SmolLM2's default system prompt)."""
REPLY_CHARS_PER_TOKEN = 3.8
"""Characters per token of a reply (SmolLM2's 239 labelled replies in tests/data: 3.82)."""

# How OpenAI's chat models count a request beyond the tokens of its texts, from OpenAI's
# cookbook "How to count tokens with tiktoken" (examples/How_to_count_tokens_with_tiktoken.ipynb,
# `num_tokens_from_messages`, for gpt-3.5-turbo-0613 and every later chat model, gpt-4o and
# gpt-4o-mini included): each message is wrapped as <|start|>{role}<|message|>{content}<|end|>,
# and the reply is primed with <|start|>assistant<|message|>.
TOKENS_PER_MESSAGE = 3
"""Tokens each message adds besides its role's and content's own."""
TOKENS_PER_NAME = 1
"""Tokens a message's `name` adds besides its own."""
REPLY_PRIMING_TOKENS = 3
"""Tokens every request adds for the reply's start (<|start|>assistant<|message|>)."""


@dataclass(frozen=True)
class TokenCounter:
    """Counts a request's prompt and a reply's tokens; `label` says how, for the dry run's
    report (`exact`: the model's tokenizer, else an estimate)."""

    label: str
    exact: bool
    prompt: Callable[[list[Mapping[str, Any]]], int]
    reply: Callable[[str], int]


def estimated_counter(hint: str | None = None) -> TokenCounter:
    """The estimate measured on SmolLM2; `hint` says which `--tokenizer` would make it exact."""

    def prompt(messages: list[Mapping[str, Any]]) -> int:
        return _chars([m.get("content") for m in messages], PROMPT_CHARS_PER_TOKEN) + (
            TEMPLATE_TOKENS if messages else 0
        )

    return TokenCounter(
        label=f"estimate (SmolLM2's ratio{f'; {hint}' if hint else ''})",
        exact=False,
        prompt=prompt,
        reply=lambda text: _chars([text], REPLY_CHARS_PER_TOKEN),
    )


def tiktoken_counter(encoding: tiktoken.Encoding, source: str | None = None) -> TokenCounter:
    """An OpenAI model's count: its tiktoken encoding, and the chat format's tokens a message
    and a request (`TOKENS_PER_MESSAGE`), as OpenAI's cookbook counts them. Every text is
    encoded as ordinary text: a prompt that spells `<|endoftext|>` is not a special token."""

    def count(text: str) -> int:
        return len(encoding.encode_ordinary(text)) if text else 0

    def prompt(messages: list[Mapping[str, Any]]) -> int:
        total = REPLY_PRIMING_TOKENS
        for message in messages:
            total += TOKENS_PER_MESSAGE + (TOKENS_PER_NAME if "name" in message else 0)
            total += sum(count(value) for value in message.values() if isinstance(value, str))
        return total

    where = f" from {source}" if source else ""
    return TokenCounter(
        label=(
            f"counted with {encoding.name}{where} (tiktoken), {TOKENS_PER_MESSAGE} tokens a "
            f"message and {REPLY_PRIMING_TOKENS} a request as OpenAI counts a chat"
        ),
        exact=True,
        prompt=prompt,
        reply=count,
    )


def role_counters(
    models: Mapping[str, Sequence[str]],
    tokenizer: str | Path | tiktoken.Encoding | None = None,
) -> dict[str, TokenCounter]:
    """Each role's counter. A GGUF file counts every role; a `.tiktoken` file (or an encoding
    built with `tiktoken_file.load_encoding`) the roles whose models all use its encoding, and
    is an error where no role does or where the file is not the encoding they need; every other
    role is estimated, with the file that would count it named."""
    needs = {role: _encodings(specs) for role, specs in models.items()}
    if tokenizer is None:
        counters: dict[str, TokenCounter] = {}
    elif isinstance(tokenizer, str | Path) and not Path(tokenizer).is_file():
        raise RunError(f"--tokenizer {tokenizer}: no such file")
    elif isinstance(tokenizer, str | Path) and not _is_tiktoken(tokenizer):
        counter = gguf_counter(tokenizer)
        return {role: counter for role in models}
    else:
        counters = _openai_counters(tokenizer, models, needs)
    return {role: counters.get(role) or estimated_counter(_hint(needs[role])) for role in models}


def _openai_counters(
    tokenizer: str | Path | tiktoken.Encoding,
    models: Mapping[str, Sequence[str]],
    needs: Mapping[str, frozenset[str | None]],
) -> dict[str, TokenCounter]:
    """The roles a `.tiktoken` file (or an encoding) counts: those whose models all use it."""
    from personasim.simulation.runs.tools.tiktoken_file import file_encodings, load_encoding

    wanted = {name for names in needs.values() for name in names if name is not None}
    if not wanted:
        played = ", ".join(sorted({s for specs in models.values() for s in specs}))
        raise RunError(
            f"--tokenizer {_shown(tokenizer)}: an OpenAI encoding counts OpenAI models' tokens, "
            f"and no model of this run is one ({played}); for a model a llama.cpp server "
            "serves, give its GGUF file"
        )
    if isinstance(tokenizer, str | Path):
        usable = sorted(wanted & set(file_encodings(tokenizer)))
        if not usable:
            raise RunError(_wrong_file(tokenizer, models))
        encodings = {name: load_encoding(tokenizer, name) for name in usable}
    else:
        encodings = {tokenizer.name: tokenizer} if tokenizer.name in wanted else {}
        if not encodings:
            raise RunError(f"encoding {tokenizer.name}: no model of this run uses it")
    source = str(tokenizer) if isinstance(tokenizer, str | Path) else None
    counters = {name: tiktoken_counter(e, source) for name, e in encodings.items()}
    return {
        role: counters[name]
        for role, names in needs.items()
        if len(names) == 1 and (name := next(iter(names))) in counters
    }


def _wrong_file(path: str | Path, models: Mapping[str, Sequence[str]]) -> str:
    """Which encoding file `path` is, and which file each of the run's OpenAI models needs."""
    from personasim.simulation.runs.tools.tiktoken_file import expected_files, file_encodings

    found = file_encodings(path)
    said = f"is {found[0]}'s file" if found else "is not one of tiktoken's encoding files"
    wants: dict[str, str] = {}
    for spec in (s for specs in models.values() for s in specs if not is_scripted(s)):
        if (name := _encoding(spec)) in expected_files():
            wants.setdefault(name, spec)
    needed = [
        f"{spec} counts with {name}: give {expected_files()[name].file_name} (download it "
        f"once from {expected_files()[name].url})"
        for name, spec in wants.items()
    ]
    return f"--tokenizer {path} {said}; {'; '.join(needed)}"


def _hint(names: frozenset[str | None]) -> str | None:
    """Which `--tokenizer` file would count a role played by models with these encodings
    (None: a model without one, such as a local server's)."""
    from personasim.simulation.runs.tools.tiktoken_file import expected_files

    files = sorted({expected_files()[n].file_name for n in names if n in expected_files()})
    if None in names or (names and not files):
        files.append("MODEL.gguf, the file its server serves,")
    if not files:
        return None
    return f"give --tokenizer {' or '.join(files)} for exact counts"


def _encodings(specs: Sequence[str]) -> frozenset[str | None]:
    """The tiktoken encodings of a role's language models (None for one tiktoken does not
    know); empty for the scripted double, which has no tokenizer."""
    return frozenset(_encoding(spec) for spec in specs if not is_scripted(spec))


def _encoding(spec: str) -> str | None:
    from personasim.simulation.runs.tools.tiktoken_file import model_encoding

    try:
        parsed = parse_model_spec(spec)
    except ModelSpecError:
        return None
    return model_encoding(str(parsed.option_dict.get("model") or parsed.name))


def _is_tiktoken(path: str | Path) -> bool:
    from personasim.simulation.runs.tools.tiktoken_file import TIKTOKEN_SUFFIX

    return Path(path).suffix == TIKTOKEN_SUFFIX


def _shown(tokenizer: str | Path | tiktoken.Encoding) -> str:
    return str(tokenizer) if isinstance(tokenizer, str | Path) else f"encoding {tokenizer.name}"


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
