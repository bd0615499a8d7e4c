"""Draw the documentation's figures from small offline runs of the shipped scenarios.

    python docs/gen_figures.py            # then: mkdocs build --strict (or mkdocs serve)

Each figure a page embeds comes from a run made here, on the scripted behaviour model (the
documented test double, docs/scripted.md — not a language model), small enough to take seconds:
the PNGs a run writes into its `reports/` (a sweep: into its directory) are copied into
`docs/figures/<name>/`, which is not committed. The pages' captions name the command, so a
figure is never older than the code that draws it. Runs go into a temporary directory, two at a
time, without the response cache; the whole takes about a minute on 2 cores.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures"
PERSONAGYM_PERSONAS = ROOT / "tests" / "data" / "public" / "personagym" / "personas.json"


@dataclass(frozen=True)
class FigureRun:
    """One command of the `personasim` CLI and the figures it leaves in `docs/figures/<name>/`."""

    name: str
    args: tuple[str, ...]
    figures: tuple[str, ...]
    sweep: bool = False  # a sweep writes its figures in its own directory, not in reports/


RUNS = (
    FigureRun(
        "trust-population",
        ("run", "trust-population", "--n-personas", "100"),
        ("population_eta_squared.png", "population_amount_sent.png"),
    ),
    FigureRun(
        "trust-forecast",
        ("run", "trust-forecast", "--design", "horizons", "--n-personas", "20"),
        ("mae_by_horizon.png",),
    ),
    FigureRun(
        "classroom",
        (
            "run", "classroom", "--n-questions", "12", "--repetitions", "3",
            "--strategies", "none,zero-shot",
        ),
        ("figure3_race_effect.png", "counterfactual.png"),
    ),
    FigureRun(
        "persona-gym",
        (
            "run", "persona-gym", "--persona-file", str(PERSONAGYM_PERSONAS),
            "--n-personas", "20", "--environments", "authors", "--questions-per-task", "2",
            "--role", "refusal=scripted",
        ),
        ("figure3_settings.png", "figure4_refusals.png", "figure5_generator_evaluator.png"),
    ),
    FigureRun(
        "persona-gym-sweep",
        (
            "sweep", "persona-gym", "--models", "scripted,scripted:drift=0.15",
            "--vary", "scripted_fidelity=0.3,0.9", "--n-personas", "3",
            "--questions-per-task", "2", "--role", "refusal=scripted",
        ),
        ("figure4_refusals_by_model.png",),
        sweep=True,
    ),
    FigureRun(
        "career-chat",
        (
            "run", "career-chat", "--n-users", "24", "--judge-samples", "1",
            "--bootstrap", "200", "--permutations", "200", "--emd-repeats", "20",
        ),
        ("figure5_age.png", "figure5_age_null.png"),
    ),
    FigureRun("persona-journey", ("run", "persona-journey"), ("journey_agreement.png",)),
    FigureRun(
        "counterfactual",
        (
            "counterfactual", "trust-population", "--attribute", "Agreeableness",
            "--levels", "Low,Medium,High", "--by", "Sex", "--n-personas", "20",
        ),
        ("counterfactual.png",),
    ),
)  # fmt: skip


def make(run: FigureRun, work: Path) -> tuple[FigureRun, float, str | None]:
    """Run one command in `work`; copy its figures. Returns the run, its seconds, an error."""
    out = work / run.name
    command = [sys.executable, "-m", "personasim.simulation.cli.main", *run.args]
    command += ["--no-cache", "--out", str(out)]
    env = {**os.environ, "MPLBACKEND": "Agg", "PERSONASIM_CACHE_DIR": str(work / "cache")}
    started = time.monotonic()
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        shown = "personasim " + " ".join(command[3:])
        return run, seconds, f"{shown} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    source = out if run.sweep else out / "reports"
    target = FIGURES / run.name.removesuffix("-sweep")
    target.mkdir(parents=True, exist_ok=True)
    for figure in run.figures:
        if not (source / figure).is_file():
            return run, seconds, f"{run.name}: no {figure} in {source}"
        shutil.copyfile(source / figure, target / figure)
    return run, seconds, None


def main() -> int:
    started = time.monotonic()
    shutil.rmtree(FIGURES, ignore_errors=True)  # no figure outlives the code that drew it
    failed = False
    with tempfile.TemporaryDirectory(prefix="personasim-figures-") as tmp:
        workers = max(1, min(2, os.cpu_count() or 1))
        with ThreadPoolExecutor(workers) as pool:
            for run, seconds, error in pool.map(lambda run: make(run, Path(tmp)), RUNS):
                print(f"{run.name:<18} {seconds:5.1f} s  {', '.join(run.figures)}")
                if error:
                    print(error, file=sys.stderr)
                    failed = True
    count = sum(1 for _ in FIGURES.rglob("*.png"))
    print(f"{count} figures in {FIGURES.relative_to(ROOT)}/ in {time.monotonic() - started:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
