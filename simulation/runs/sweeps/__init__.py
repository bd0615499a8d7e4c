"""Sweeps: one scenario over several models and parameter values, each cell an ordinary run.
Planning and running the cells (`sweep`, `sweep_cells`; on Ray, `ray_sweep`), the combined
table (`sweep_table`); each cell's labels in a sweep's frames are `tools/sweep_labels`."""
