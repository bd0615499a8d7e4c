"""The Spearman bootstraps' cost, ranking each resample by sorting (scipy's `rankdata`, as
before) and by counting (`resampled_ranks`, now): milliseconds per call and whether the two give
the same numbers (a script, not a test).

The calls are the ones a run makes: persona-journey's BCa interval (`bootstrap_spearman`,
1,000 resamples and a jackknife) and PersonaGym's Fisher-z interval (`bootstrap_correlation`,
10,000 resamples), at 30 and 200 personas.

    python benchmarks/bench_bootstrap.py [--repeats 20]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from unittest import mock

import numpy as np

from personasim.analysis import agreement
from personasim.analysis.agreement import bootstrap_correlation, correlations_by_row
from personasim.scenarios.persona_journey import metrics as journey
from personasim.scenarios.persona_journey.metrics import bootstrap_spearman


def sorted_ranks(xs: np.ndarray, ys: np.ndarray, rows: np.ndarray, method: str) -> np.ndarray:
    """The previous path: the resamples materialised, then ranked by scipy."""
    return correlations_by_row(xs[rows], ys[rows], method)  # type: ignore[arg-type]


def calls(n: int) -> dict[str, Callable[[], object]]:
    rng = np.random.default_rng(n)
    x = rng.normal(size=n)
    y = 0.5 * x + rng.normal(size=n)
    return {
        f"journey BCa, n={n}, 1,000 resamples": lambda: bootstrap_spearman(
            x.tolist(), y.tolist(), 1000, 1
        ),
        f"PersonaGym Fisher-z, n={n}, 10,000 resamples": lambda: bootstrap_correlation(
            x, y, "spearman", n_resamples=10_000, seed=1
        ),
    }


def per_call(call: Callable[[], object], repeats: int) -> tuple[float, object]:
    result = call()  # warm: imports and caches
    started = time.perf_counter()
    for _ in range(repeats):
        call()
    return (time.perf_counter() - started) / repeats * 1000, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20, help="calls timed per row")
    repeats = parser.parse_args().repeats
    print(f"{'call':<46} {'sorting ms':>10} {'counting ms':>11} {'speed-up':>8}  same")
    for n in (30, 200):
        for name, call in calls(n).items():
            with (
                mock.patch.object(agreement, "resampled_correlations", sorted_ranks),
                mock.patch.object(journey, "resampled_correlations", sorted_ranks),
            ):
                before, old = per_call(call, repeats)
            after, new = per_call(call, repeats)
            speed_up = before / after
            print(f"{name:<46} {before:>10.1f} {after:>11.1f} {speed_up:>7.1f}x  {old == new}")


if __name__ == "__main__":
    main()
