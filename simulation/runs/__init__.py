"""Runs, in five sub-packages and one module, bottom to top (each imports only those below
it; tests/test_source_tree.py checks): `lifecycle` (a run's parts, from its options to its
finished directory), `workers` (`--workers N`'s decision processes), `runner` (one run: checks
its inputs, plays its rounds in this process or in the workers), `tools` (what reads, re-runs or
imports a run directory: replay, export, salvage, import, retry, rescore, audit, dry-run),
`sweeps` (many runs into one table, locally or on Ray) and `viewer` (`personasim view`)."""
