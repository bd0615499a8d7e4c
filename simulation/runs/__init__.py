"""Runs: the runner, resume and its fingerprint, the run lock, salvage, sweeps (local and on
Ray), validity, the import API, replay, tables, event frames and the viewer."""
