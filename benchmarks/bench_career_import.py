"""Benchmark: `personasim import career-chat` of the paper's released answers (issue 25).

Why: the import recomputes every group distance with its bootstrap intervals and permutation
p-values (1,000 of each by default, over 2 formats × 5 groupings); on 200 users it took
15 min 48 s before the resampling was vectorised and spread over processes. Target: under
2 minutes on 2 cores with the default resampling counts.

Inputs are the authors' files (FerdinandZhong/model_behavior_adaption, MIT):
`values_results/DeepSeek-V3/vsm/direct_questions/first_200.jsonl`,
`.../dialogue_questions/first_200.jsonl`, and the seed CSV (`recruitment_data.csv`, the
Kaggle recruitment file; also in Hitha-ts/Employee-Data-analysis). Nothing is downloaded.

    python benchmarks/bench_career_import.py --profile-answers P --dialogue-answers D \\
        --profiles recruitment_data.csv [--bootstrap 1000 --permutations 1000]

Prints each stage's time, the wall time, the CPU time of this process and its workers, the
usable cores and the load average (on a shared machine the wall time includes waiting).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

from personasim.simulation import import_run
from personasim.simulation.core.stages import stage_listener


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile-answers", type=Path, required=True)
    parser.add_argument("--dialogue-answers", type=Path, required=True)
    parser.add_argument("--profiles", type=Path, required=True)
    parser.add_argument("--bootstrap", default="1000")
    parser.add_argument("--permutations", default="1000")
    args = parser.parse_args(argv)
    files = {
        "profile-answers": args.profile_answers,
        "dialogue-answers": args.dialogue_answers,
        "profiles": args.profiles,
    }
    missing = [str(path) for path in files.values() if not path.is_file()]
    if missing:
        print(f"error: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    options = {
        "model-name": "DeepSeek-V3",
        "bootstrap": args.bootstrap,
        "permutations": args.permutations,
    }
    stages: list[tuple[float, str]] = []
    start, cpu = time.perf_counter(), _cpu_seconds()
    with (
        tempfile.TemporaryDirectory() as tmp,
        stage_listener(lambda text: stages.append((time.perf_counter() - start, text))),
    ):
        result = import_run(
            "career-chat", "model-behavior-adaption", files, options, Path(tmp) / "run"
        )
    wall, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"career-chat import: {result.metrics['metrics']['n_users']} users, "
        f"bootstrap {args.bootstrap}, permutations {args.permutations}"
    )
    for at, text in stages:
        print(f"  {at:7.1f} s  {text}")
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(
        f"wall {wall:.1f} s; CPU {cpu:.1f} s (this process and its workers); "
        f"{cores} usable cores; load average {load[0]:.1f} "
        f"({platform.python_implementation()} {platform.python_version()})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
