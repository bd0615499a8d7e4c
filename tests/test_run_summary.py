"""The summary `personasim run` prints at the end, for every built-in scenario on a small
scripted run: an undefined value says why in words, no tokens for the scripted double, no
ranking cut without saying how much is hidden, and it ends with where the reports are and the
`personasim view` command (README, after the quickstart; docs/scenarios.md, metrics)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from personasim.analysis.undefined import (
    CONSTANT,
    FEWER_THAN_2,
    NO_VALUES,
    SINGLE_LEVEL,
    ZERO_BASELINE,
    in_words,
    shown_stat,
    stat_fields,
)
from personasim.analysis.undefined import Undefined as U
from personasim.simulation import get_scenario
from personasim.simulation.cli.main import main
from personasim.simulation.core.catalog import builtin_cards


def smoke_args(name: str) -> list[str]:
    """The scenario's declared smoke parameters (`Scenario.smoke_params`) as command flags."""
    params = get_scenario(name).smoke_params or {}
    return [
        arg for key, value in params.items() for arg in (f"--{key.replace('_', '-')}", str(value))
    ]


SMALL = {name: smoke_args(name) for name in builtin_cards()}
"""The smallest runs that still print each scenario's summary (undefined values too), from the
registry: a new paper is covered by declaring its `smoke_params`, without editing this file."""
CODES = (NO_VALUES, FEWER_THAN_2, CONSTANT, SINGLE_LEVEL, ZERO_BASELINE, "not recorded")
UNDEFINED = re.compile(r"undefined(?P<after>.{0,200})")
WHY = re.compile(r"^(?:,[^:(]*)?(?: \((?P<paren>.+)\)|: (?P<colon>.+))")


def test_every_scenario_declares_its_smoke_parameters() -> None:
    undeclared = [name for name in builtin_cards() if get_scenario(name).smoke_params is None]
    assert not undeclared, f"declare smoke_params on {undeclared}"


def explained(line: str) -> list[str]:
    """The problems of one summary line: an undefined value without a reason of a few words,
    or a bare reason code where words were due."""
    problems = []
    for found in UNDEFINED.finditer(line):
        why = WHY.match(found["after"])
        reason = (why["paren"] or why["colon"]) if why else ""
        if len(reason.split()) < 3 or reason.strip(" ()") in CODES:
            problems.append(f"undefined without a reason in words: {line!r}")
    return problems


@pytest.mark.parametrize("scenario", sorted(SMALL))
def test_a_first_runs_summary(scenario: str, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run dir"  # a space: the view command must quote it
    code = main(["run", scenario, *SMALL[scenario], "--out", str(out), "--no-cache"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    lines = [line for line in printed.splitlines() if line.strip()]
    problems = [p for line in lines for p in explained(line)]
    assert not problems, "\n".join(problems)
    for line in lines:
        if "…" in line:  # a cut list says how much it hides
            assert re.search(r"…(?:\s*and)?\s*\(?\d+ more|…\s*\(\d+\)", line), line
    assert not any("token" in line for line in lines), printed  # the scripted double has none
    assert "scripted behaviour model, not a language model" in printed
    assert lines[-3:] == [
        f"run directory: {out}",
        f"reports (tables, figures): {out / 'reports'}",
        f"to look at it: personasim view {shlex.quote(str(out))}",
    ]


def test_the_checker_flags_a_bare_reason() -> None:
    """The rule above can fail: a bare code or a missing reason is flagged, words are not."""
    assert explained("SD undefined (constant input)")
    assert explained("  Age: eta² undefined, n = 0")
    assert not explained(f"SD {shown_stat(stat_fields('sd', U(CONSTANT)), 'sd')}")
    assert not explained(f"  Age: eta² undefined, n = 0: {in_words(NO_VALUES + ': no level')}")
