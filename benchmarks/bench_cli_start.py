"""Start-up time of the command line: `personasim --help`, `personasim list` and a one-persona
offline run of `trust-population`, each `--repeats` times in fresh processes, interleaved so all
see the same load; prints min and median seconds and the load average before and after (a
script, not a test). For the run it prints its whole time and its start-up: from launching the
process to the run's first event (`run.started`), i.e. imports, arguments and the run directory.

    python benchmarks/bench_cli_start.py              # 10 runs of each
    python benchmarks/bench_cli_start.py --repeats 20
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = {
    "--help": ["--help"],
    "list": ["list"],
    "list trust-population": ["list", "trust-population"],
}


RUN = ["run", "trust-population", "--n-personas", "1", "--no-cache"]


def timed(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True, env=env)
    return time.perf_counter() - started


def timed_run(command: str, env: dict[str, str], out: str) -> tuple[float, float]:
    """The one-persona run's (start-up, whole) seconds: launch to `run.started`, launch to exit."""
    launched = time.time()
    whole = timed([command, *RUN, "--out", out], env)
    with sqlite3.connect(os.path.join(out, "events.sqlite")) as events:
        (first,) = events.execute("SELECT ts FROM events WHERE kind = 'run.started'").fetchone()
    return first - launched, whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    repeats = parser.parse_args().repeats
    command = shutil.which("personasim") or sys.exit("personasim is not installed")
    with tempfile.TemporaryDirectory() as cache:  # the cards' cache starts empty
        env = {**os.environ, "XDG_CACHE_HOME": cache}
        subprocess.run([command, "list"], check=True, stdout=subprocess.DEVNULL, env=env)
        load = os.getloadavg()[0]
        names = [*COMMANDS, "run … --n-personas 1", "  its start-up"]
        times: dict[str, list[float]] = {name: [] for name in names}
        for repeat in range(repeats):
            for name, args in COMMANDS.items():
                times[name].append(timed([command, *args], env))
            start_up, whole = timed_run(command, env, os.path.join(cache, f"run{repeat}"))
            times[names[-2]].append(whole)
            times[names[-1]].append(start_up)
    print(f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after; {os.cpu_count()} CPUs")
    print(f"{'command':<44}{'min s':>8}{'median s':>10}")
    for name, values in times.items():
        shown = name if name.startswith(" ") else f"personasim {name}"
        print(f"{shown:<44}{min(values):>8.3f}{statistics.median(values):>10.3f}")


if __name__ == "__main__":
    main()
