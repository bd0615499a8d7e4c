"""A run's lifecycle: its options (`RunConfig`), its start and end (`run_context`,
`run_start`, `run_signals`), the run directory and its one writer (`run_dir`,
`run_lock`, `atomic_files`, `tables`), resume and its fingerprint (`resume`, `fingerprint`,
`input_files`), scenario files, model clients, progress, and the run's validity with its reading
audit (`validity`, `reading_audit`). Everything else under `runs/` builds on these;
`runs/runner.py` puts them together."""
