"""`run --dry-run --tokenizer FILE.tiktoken`: OpenAI models' prompt tokens counted by tiktoken
from a file the user downloaded once, with no network call (simulation/runs/tools/tiktoken_file.py,
token_counts.py).

A real encoding file is 2 to 4 MB and cannot be downloaded here, so the tests write a small
one in tiktoken's format (the 256 single bytes and a few merges) and check the counts against
a `tiktoken.Encoding` built by tiktoken's own o200k_base constructor from the same ranks. The
verified path (a file must have the sha256 tiktoken expects) is exercised by declaring the
small file's digest to be o200k_base's (or cl100k_base's, for a wrong file).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import tiktoken
from tiktoken_ext import openai_public

from personasim.simulation import SQLiteEventStore
from personasim.simulation.cli.main import main
from personasim.simulation.runs.lifecycle.run_dir import RunError
from personasim.simulation.runs.tools import tiktoken_file
from personasim.simulation.runs.tools.dry_run import DryRun, adry_run
from personasim.simulation.runs.tools.tiktoken_file import EncodingFile, load_encoding
from personasim.simulation.runs.tools.token_counts import role_counters, tiktoken_counter

MERGES = [b"th", b"he", b"the", b" t", b" the", b"in", b"er", b"an", b"ing", b" a", b"ou", b"re"]
TEXTS = [
    "The other player decides how much to return; the transfer is tripled.",
    "Finally, I will give 6 dollars.\n\nBELIEF: strangers are mostly fair",
    "spelled <|endoftext|> as text, and émigré, 日本語, 1234567",
    "",
]


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every connection and name lookup fails, as on a machine with no network."""

    def refuse(*_: Any, **__: Any) -> Any:
        raise OSError("network blocked by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture
def bpe_file(tmp_path: Path) -> Path:
    """A small valid BPE file in tiktoken's format: base64 token, a space, its rank a line."""
    tokens = [bytes([b]) for b in range(256)] + MERGES
    path = tmp_path / "small.tiktoken"
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(tokens)))
    return path


def ranks_of(path: Path) -> dict[bytes, int]:
    """The file's ranks, read by the test itself."""
    pairs = (line.split() for line in path.read_bytes().splitlines() if line)
    return {base64.b64decode(token): int(rank) for token, rank in pairs}


def reference(path: Path, monkeypatch: pytest.MonkeyPatch) -> tiktoken.Encoding:
    """o200k_base's encoding as tiktoken's own constructor builds it, from the file's ranks."""
    with monkeypatch.context() as patch:
        patch.setattr(openai_public, "load_tiktoken_bpe", lambda *_, **__: ranks_of(path))
        return tiktoken.Encoding(**openai_public.o200k_base())


def cookbook_count(messages: list[Mapping[str, str]], encoding: tiktoken.Encoding) -> int:
    """OpenAI's cookbook, "How to count tokens with tiktoken" (`num_tokens_from_messages`)."""
    total = 3  # every reply is primed with <|start|>assistant<|message|>
    for message in messages:
        total += 3 + sum(len(encoding.encode_ordinary(v)) for v in message.values())
        total += 1 if "name" in message else 0
    return total


def logged_prompts(run_dir: Path) -> list[list[dict[str, str]]]:
    """The messages of each request the scripted run logged."""
    with SQLiteEventStore(run_dir / "events.sqlite") as store:
        return [e.payload["messages"] for e in store.read(kinds=("llm.call",))]


def declare(monkeypatch: pytest.MonkeyPatch, path: Path, *names: str) -> None:
    """Take `path` for the file tiktoken expects for `names` (its sha256 theirs)."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    files = dict(tiktoken_file.expected_files())
    for name in names:
        files[name] = EncodingFile(files[name].url, digest)
    monkeypatch.setattr(tiktoken_file, "expected_files", lambda: files)


def test_tiktokens_known_files_are_learnt_without_a_download(
    no_network: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = tiktoken_file.expected_files.__wrapped__()
    assert files["o200k_base"].url.endswith("/o200k_base.tiktoken")
    assert files["o200k_harmony"] == files["o200k_base"]  # the same file, more special tokens
    assert files["cl100k_base"].file_name == "cl100k_base.tiktoken"
    assert all(len(f.sha256) == 64 for f in files.values())
    assert "gpt2" not in files  # two other files, not one .tiktoken
    assert openai_public.load_tiktoken_bpe is tiktoken.load.load_tiktoken_bpe  # restored
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # the fixture does block: a download fails
    with pytest.raises(Exception, match="network blocked by the test"):
        tiktoken.load.load_tiktoken_bpe(files["r50k_base"].url, files["r50k_base"].sha256)


def test_a_ranks_file_counts_as_tiktoken_does(
    bpe_file: Path, no_network: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`verify=False` (a file that is not OpenAI's): the file's ranks with o200k_base's pattern
    and special tokens, the same tokens as tiktoken's own constructor gives from them."""
    ours = load_encoding(bpe_file, "o200k_base", verify=False)
    theirs = reference(bpe_file, monkeypatch)
    assert ours.name == "o200k_base" and ours.special_tokens_set == theirs.special_tokens_set
    for text in TEXTS:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    assert len(ours.encode_ordinary(" the")) == 1  # the merges are used
    counter = tiktoken_counter(ours)
    messages = [{"role": "system", "content": TEXTS[0]}, {"role": "user", "content": TEXTS[2]}]
    assert counter.prompt(messages) == cookbook_count(messages, theirs)
    named = [{"role": "user", "name": "alice", "content": TEXTS[1]}]
    assert counter.prompt(named) == cookbook_count(named, theirs)


def test_a_ranks_file_is_verified_unless_told_not_to(bpe_file: Path, no_network: None) -> None:
    with pytest.raises(RunError, match="is not one of tiktoken's encoding files; the model co"):
        load_encoding(bpe_file, "o200k_base")
    with pytest.raises(RunError, match="no tiktoken encoding 'o300k'"):
        load_encoding(bpe_file, "o300k", verify=False)
    bad = bpe_file.with_name("bad.tiktoken")
    bad.write_text("not base64 at all\n")
    with pytest.raises(RunError, match=r"not a \.tiktoken file tiktoken reads"):
        load_encoding(bad, "o200k_base", verify=False)


def test_dry_run_counts_an_openai_model_with_its_encoding_offline(
    bpe_file: Path, tmp_path: Path, no_network: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The verified path: the file is o200k_base's (declared so), gpt-4o-mini's encoding; the
    prompt tokens are the cookbook's count of every logged request, and nothing is cached."""
    declare(monkeypatch, bpe_file, "o200k_base", "o200k_harmony")
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    out = tmp_path / "run"
    estimate = asyncio.run(
        adry_run(
            "trust-population",
            {"n_personas": 4, "max_repairs": 0},
            model="openai:gpt-4o-mini",
            out=out,
            tokenizer=bpe_file,
        )
    )
    (role,) = estimate.roles
    encoding = reference(bpe_file, monkeypatch)
    calls = logged_prompts(out)
    assert role.prompt_tokens.point == sum(cookbook_count(m, encoding) for m in calls)
    assert role.tokens.startswith(f"counted with o200k_base from {bpe_file} (tiktoken), 3 tokens")
    assert "TIKTOKEN_CACHE_DIR" not in os.environ  # set only while the file is read
    assert set(bpe_file.parent.iterdir()) == {bpe_file, out}


def test_cli_tokenizer_tiktoken_writes_nothing(
    bpe_file: Path,
    tmp_path: Path,
    clean_tmp: Path,
    no_network: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    declare(monkeypatch, bpe_file, "o200k_base")
    monkeypatch.chdir(tmp_path)
    args = ["run", "trust-population", "--dry-run", "--n-personas", "3", "--max-repairs", "0"]
    code = main([*args, "--model", "openai:gpt-4o-mini", "--tokenizer", str(bpe_file)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert f"  prompt tokens: counted with o200k_base from {bpe_file} (tiktoken)" in printed
    assert "an estimate is" not in printed  # every role counted
    assert list(clean_tmp.iterdir()) == []


@pytest.mark.parametrize(
    ("declared", "said"),
    [
        ((), "is not one of tiktoken's encoding files; openai:gpt-4o-mini counts with o200k_base"),
        (("cl100k_base",), "is cl100k_base's file; openai:gpt-4o-mini counts with o200k_base"),
    ],
)
def test_a_file_of_another_encoding_names_the_one_needed(
    declared: tuple[str, ...],
    said: str,
    bpe_file: Path,
    no_network: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    declare(monkeypatch, bpe_file, *declared)
    args = ["run", "trust-population", "--dry-run", "--model", "openai:gpt-4o-mini"]
    assert main([*args, "--tokenizer", str(bpe_file)]) == 2
    err = capsys.readouterr().err
    assert f"--tokenizer {bpe_file} {said}: give o200k_base.tiktoken (download it once from " in err
    assert "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken)" in err


def test_a_tiktoken_file_without_an_openai_model_is_an_error(
    bpe_file: Path, no_network: None, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "trust-population", "--dry-run", "--base-url", "http://127.0.0.1:8080/v1"]
    assert main([*args, "--model", "openai:smollm2", "--tokenizer", str(bpe_file)]) == 2
    assert (
        "no model of this run is one (openai:smollm2); for a model a llama.cpp server serves"
        in (capsys.readouterr().err)
    )


def test_an_encoding_counts_the_roles_whose_models_use_it(bpe_file: Path, no_network: None) -> None:
    """An encoding built with `load_encoding(..., verify=False)` is passed as it is; a role
    played by another model is estimated, naming the file that would count it."""
    encoding = load_encoding(bpe_file, "cl100k_base", verify=False)
    counters = role_counters(
        {"persona": ("openai:gpt-4",), "judge": ("openai:gpt-4o",), "other": ("scripted",)},
        encoding,
    )
    assert counters["persona"].exact and "cl100k_base" in counters["persona"].label
    assert counters["judge"].label == (
        "estimate (SmolLM2's ratio; give --tokenizer o200k_base.tiktoken for exact counts)"
    )
    assert counters["other"].label == "estimate (SmolLM2's ratio)"
    with pytest.raises(RunError, match="encoding cl100k_base: no model of this run uses it"):
        role_counters({"persona": ("openai:gpt-4o",)}, encoding)


@pytest.mark.parametrize(
    ("model", "hint"),
    [
        ("openai:gpt-4o-mini", "give --tokenizer o200k_base.tiktoken for exact counts"),
        ("openai:gpt-4.1-nano", "give --tokenizer o200k_base.tiktoken for exact counts"),
        ("openai:gpt-4", "give --tokenizer cl100k_base.tiktoken for exact counts"),
        ("openai:smollm2", "give --tokenizer MODEL.gguf, the file its server serves, for exact"),
    ],
)
def test_an_estimate_names_the_file_that_would_count_it(model: str, hint: str) -> None:
    (counter,) = role_counters({"persona": (model,)}).values()
    assert not counter.exact
    assert counter.label.startswith(f"estimate (SmolLM2's ratio; {hint}")


def test_dry_run_report_says_how_each_role_was_counted(
    bpe_file: Path, no_network: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    declare(monkeypatch, bpe_file, "o200k_base")
    estimate: DryRun = asyncio.run(
        adry_run(
            "trust-population",
            {"n_personas": 2},
            model="openai:gpt-4o",
            tokenizer=bpe_file,
        )
    )
    text = "\n".join(estimate.lines())
    assert f"  prompt tokens: counted with o200k_base from {bpe_file}" in text
    assert "tokens: a re-ask resends the conversation plus a reminder of about 50 tokens\n" in text
