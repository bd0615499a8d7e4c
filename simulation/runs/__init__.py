"""Runs, in five sub-packages: `lifecycle` (a run from its options to its finished directory),
`workers` (`--workers N`'s decision processes), `sweeps` (many runs into one table, locally or
on Ray), `tools` (what reads, re-runs or imports a run directory: replay, export, salvage,
import, retry, rescore, audit, dry-run) and `viewer` (`personasim view`)."""
