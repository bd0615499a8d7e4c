"""Start-up time of the command line: `personasim --help` and `personasim list`, each run
`--repeats` times in fresh processes, interleaved so both see the same load; prints min and
median seconds and the load average before and after (a script, not a test).

    python benchmarks/bench_cli_start.py              # 10 runs of each
    python benchmarks/bench_cli_start.py --repeats 20
"""

from __future__ import annotations

import argparse
import os
import shutil
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


def timed(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    repeats = parser.parse_args().repeats
    command = shutil.which("personasim") or sys.exit("personasim is not installed")
    with tempfile.TemporaryDirectory() as cache:  # the cards' cache starts empty
        env = {**os.environ, "XDG_CACHE_HOME": cache}
        subprocess.run([command, "list"], check=True, stdout=subprocess.DEVNULL, env=env)
        load = os.getloadavg()[0]
        times: dict[str, list[float]] = {name: [] for name in COMMANDS}
        for _ in range(repeats):
            for name, args in COMMANDS.items():
                times[name].append(timed([command, *args], env))
    print(f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after; {os.cpu_count()} CPUs")
    print(f"{'command':<28}{'min s':>8}{'median s':>10}")
    for name, values in times.items():
        print(f"personasim {name:<17}{min(values):>8.3f}{statistics.median(values):>10.3f}")


if __name__ == "__main__":
    main()
