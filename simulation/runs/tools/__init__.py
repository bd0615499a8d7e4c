"""Tools over run directories, which they read as data: replay, events and agents as frames and
Parquet (`event_data`, `agent_data`, `typed_columns`; a sweep cell's labels: `sweep_labels`),
the run list, salvage, importers, retry, rescore, the reading audit of a finished run
(`audit_run`, `reader_role`), and `run --dry-run` with its token counts and price table
(`dry_run`, `token_counts`, `tiktoken_file`, `prices`; `data/` holds the price table and the
reader prompt pack)."""
