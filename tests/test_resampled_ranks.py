"""The bootstraps rank each resample by counting (`resampled_ranks`); these are scipy's ranks,
number for number, and so the correlations and intervals are the ones sorting gave."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import rankdata

from personasim.analysis.agreement import correlations_by_row, resampled_correlations
from personasim.analysis.resampling import resampled_ranks

VALUES = {
    "continuous": np.random.default_rng(1).normal(size=40),
    "many ties": np.random.default_rng(2).integers(1, 5, size=40).astype(float),
    "constant": np.full(12, 3.0),
    "one value": np.array([7.0]),
    "two values": np.array([2.0, -1.0]),
    "with NaN": np.array([1.0, np.nan, 3.0, 3.0, 0.5]),
    "negative and zero": np.array([-0.0, 0.0, -2.5, 1e-300, -1e300, 4.0]),
}


@pytest.mark.parametrize("name", VALUES)
def test_ranks_of_resamples_are_scipys(name: str) -> None:
    values = VALUES[name]
    rows = np.random.default_rng(len(name)).integers(0, len(values), size=(300, len(values)))
    expected = rankdata(values[rows], axis=1)
    assert np.array_equal(resampled_ranks(values, rows), expected, equal_nan=True)


def test_no_values_gives_empty_rows() -> None:
    rows = np.zeros((5, 0), dtype=np.int64)
    assert resampled_ranks(np.array([]), rows).shape == (5, 0)


@pytest.mark.parametrize("method", ["spearman", "pearson", "kendall"])
@pytest.mark.parametrize("name", ["continuous", "many ties", "constant"])
def test_correlations_of_resamples_are_the_sorted_ones(method: str, name: str) -> None:
    """Bit for bit: a run's intervals recompute to the same digits as before."""
    xs = VALUES[name]
    ys = VALUES["many ties"][: len(xs)] + VALUES["continuous"][: len(xs)]
    rows = np.random.default_rng(3).integers(0, len(xs), size=(500, len(xs)))
    expected = correlations_by_row(xs[rows], ys[rows], method)
    got = resampled_correlations(xs, ys, rows, method)
    assert np.array_equal(got, expected, equal_nan=True)
    assert np.isnan(got).all() == (name == "constant")
