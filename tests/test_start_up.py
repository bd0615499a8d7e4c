"""Running one built-in scenario imports that scenario, not the other papers' ones, and none of
the libraries only reports or real endpoints need (benchmarks/bench_cli_start.py times it)."""

from __future__ import annotations

import json
import subprocess
import sys

from personasim.simulation.core.scenario import SCENARIOS, get_scenario, list_scenarios

LATE = ("matplotlib", "scipy.stats", "aiohttp", "openai", "langchain_core.output_parsers")
"""Imported when a report is drawn, a statistic computed or an endpoint asked, not before."""


def imported_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code`."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_looking_up_a_scenario_imports_only_its_paper() -> None:
    modules = imported_after(
        "from personasim.simulation.core.scenario import get_scenario\n"
        "get_scenario('trust-population')"
    )
    assert "personasim.scenarios.trust.population" in modules
    others = ("career_chat", "classroom", "persona_gym", "persona_journey")
    assert [
        m for m in modules if m.startswith(tuple(f"personasim.scenarios.{o}" for o in others))
    ] == []
    assert "personasim.scenarios.trust.forecast" not in modules
    assert [m for m in modules if m.startswith(LATE)] == []


def test_every_builtin_scenario_is_in_the_module_its_entry_point_names() -> None:
    """The built-in papers register through the entry-point group, as outside packages do."""
    named = {n: m for n, m in SCENARIOS.entry_points().items() if m.startswith("personasim.")}
    builtin = {n: c for n, c in list_scenarios().items() if c.__module__.startswith("personasim.")}
    assert set(builtin) == set(named) and len(named) >= 8
    for name, module in named.items():
        assert get_scenario(name).__module__ == module
