"""How large a run may be: a count that sizes a run (personas, users) is refused before anything
is written when it is over its maximum, with about how much memory it would have needed.

A run keeps its agents and, for the metrics, its events in memory. Each scenario states the
memory one persona takes (measured with the scripted model: peak resident memory of a small and
a large run); the maximum is `MAX_PERSONAS`, or fewer where they would not fit in
`MEMORY_BUDGET`. `--n-personas 1000000000` is then one line, not a machine out of memory later.
"""

from __future__ import annotations

__all__ = ["MAX_PERSONAS", "MAX_RESAMPLES", "MEMORY_BUDGET", "check_run_size", "memory_text"]

MAX_PERSONAS = 1_000_000
"""The most personas (or users) a run takes, however little each needs."""
MEMORY_BUDGET = 8 * 10**9
"""Bytes a run may need by its estimate: a count that needs more is refused, so the maximum of a
scenario that keeps much per persona is lower than `MAX_PERSONAS`."""
MAX_RESAMPLES = 100_000
"""Bootstrap resamples, permutations and random pairings a metric draws: each is a pass over
the run's data in the metrics step, so 100 times the usual 1,000 is already hours on a large
run."""


def check_run_size(flag: str, count: int, bytes_each: int, unit: str = "persona") -> None:
    """A ValueError when `count` units of `bytes_each` are over the maximum (`MAX_PERSONAS`, or
    fewer when they would not fit in `MEMORY_BUDGET`): `--n-personas 1000000000 would need
    about 6,700 GB of memory (about 6.7 KB a persona); the maximum is 1,000,000`."""
    fits = _two_digits(MEMORY_BUDGET // max(bytes_each, 1))
    maximum = min(MAX_PERSONAS, fits)
    if count <= maximum:
        return
    why = f" (what fits in {memory_text(MEMORY_BUDGET)})" if fits < MAX_PERSONAS else ""
    raise ValueError(
        f"{flag} {count} would need about {memory_text(count * bytes_each)} of memory (about "
        f"{memory_text(bytes_each)} a {unit}); the maximum is {maximum:,}{why}"
    )


def _two_digits(n: int) -> int:
    """`n` rounded down to two significant digits: 29,629 → 29,000."""
    scale = 10 ** max(len(str(n)) - 2, 0)
    return n // scale * scale


def memory_text(n_bytes: int) -> str:
    """`5.6 KB`, `120 KB`, `5,600 GB`: two significant digits, decimal units."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n_bytes >= scale:
            value = float(f"{n_bytes / scale:.2g}")
            decimals = 1 if value < 10 and not value.is_integer() else 0
            return f"{value:,.{decimals}f} {unit}"
    return f"{n_bytes} bytes"
