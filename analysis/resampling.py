"""Resampling helpers: stratified bootstrap weights, and spreading independent seeded items
(resampling cells) over processes when the work is large."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

import numpy as np

__all__ = ["PARALLEL_WORK", "in_processes", "resampled_ranks", "stratified_bootstrap_weights"]


def stratified_bootstrap_weights(
    labels: np.ndarray, n: int, rng: np.random.Generator
) -> np.ndarray:
    """`n` resamples as multinomial counts (n × units): the units resampled with replacement
    within their group (`labels`), so every group keeps its size in every resample."""
    weights = np.zeros((n, len(labels)))
    rows = np.arange(n)[:, None]
    for g in np.unique(labels):
        members = np.flatnonzero(labels == g)
        draws = rng.integers(0, len(members), size=(n, len(members)))
        np.add.at(weights, (rows, members[draws]), 1.0)
    return weights


def resampled_ranks(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`scipy.stats.rankdata(values[rows], axis=1)` (average ranks of each resample, ties
    included), computed by counting instead of sorting: a resample holds only the original
    values, so each value's rank is how many of the resample's values are smaller plus half of
    its ties (and a half). The same numbers as rankdata, about three times faster; a NaN
    value (whose resamples rankdata makes all NaN) goes to rankdata itself."""
    from scipy.stats import rankdata

    if np.isnan(values).any():
        return rankdata(values[rows], axis=1)
    codes = rankdata(values, method="dense").astype(np.int64) - 1
    k = int(codes.max()) + 1 if codes.size else 1
    picked = codes[rows]
    offsets = np.arange(rows.shape[0])[:, None] * k
    counts = np.bincount((picked + offsets).ravel(), minlength=rows.shape[0] * k)
    counts = counts.reshape(rows.shape[0], k)
    below = np.cumsum(counts, axis=1) - counts
    ties = np.take_along_axis(counts, picked, axis=1)
    return np.take_along_axis(below, picked, axis=1) + (ties + 1) / 2


PARALLEL_WORK = 200_000
"""Users × resamples above which `in_processes` spreads its items over processes."""

T = TypeVar("T")
R = TypeVar("R")


def in_processes(
    fn: Callable[[T], R],
    items: Sequence[T],
    work: int,
    done: Callable[[T], None] | None = None,
    workers: int | None = None,
) -> list[R]:
    """`[fn(item) for item in items]`, over one forked process per usable core when `work`
    (users × resamples) is large. Each item carries its own seed, so the numbers do not depend
    on where it runs; forking imports nothing again; small batches stay in this process.
    `done(item)` is called as each result arrives, in order (progress)."""
    cores = workers or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    methods = multiprocessing.get_all_start_methods()
    if cores < 2 or len(items) < 2 or work < PARALLEL_WORK or "fork" not in methods:
        return [_noted(fn(item), item, done) for item in items]
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=min(cores, len(items)), mp_context=context) as pool:
        return [
            _noted(result, item, done)
            for item, result in zip(items, pool.map(fn, items), strict=True)
        ]


def _noted(result: R, item: T, done: Callable[[T], None] | None) -> R:
    if done is not None:
        done(item)
    return result
