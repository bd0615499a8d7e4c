"""Divergences between probability distributions: the base-2 Jensen–Shannon divergence (and
row-wise over arrays), the Jensen–Shannon centroid of a set of distributions (Nielsen 2020),
and the earth mover's distance between two samples of ordered options."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Centroid", "emd_ordinal", "js_centroid", "js_rows", "jsd"]


def js_rows(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Base-2 JSD along the last axis (0·log 0 = 0), broadcasting."""
    m = (p + q) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(p > 0, p * np.log2(p / m), 0.0).sum(axis=-1)
        b = np.where(q > 0, q * np.log2(q / m), 0.0).sum(axis=-1)
    return np.maximum(0.0, (a + b) / 2)


def _kl2(p: np.ndarray, q: np.ndarray) -> float:
    mask = p > 0
    return float(np.sum(p[mask] * np.log2(p[mask] / q[mask])))


def _distribution(values: Sequence[float], name: str) -> np.ndarray:
    """A probability vector, or ValueError: an empty or massless vector has no divergence."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0 or np.any(array < 0) or array.sum() <= 0:
        raise ValueError(f"{name} is not a probability distribution: {values!r}")
    return array


def jsd(p: Sequence[float], q: Sequence[float]) -> float:
    """Base-2 Jensen–Shannon divergence (in [0, 1]); scipy's `jensenshannon` is its sqrt.

    Empty, negative or massless vectors, or vectors of different lengths, raise ValueError.
    """
    a, b = _distribution(p, "p"), _distribution(q, "q")
    if a.shape != b.shape:
        raise ValueError(f"distributions of different lengths: {a.size} and {b.size}")
    m = (a + b) / 2
    return max(0.0, 0.5 * _kl2(a, m) + 0.5 * _kl2(b, m))


@dataclass(frozen=True)
class Centroid:
    """A JS centroid, whether the optimiser converged, and Σ JSD(c ‖ P_i) at it."""

    distribution: np.ndarray
    converged: bool
    objective: float


def _objective(c: np.ndarray, points: np.ndarray) -> tuple[float, np.ndarray]:
    """Σ JSD(c ‖ P_i) and its gradient in c: ∂JSD/∂c_k = ½ log2(c_k / m_k)."""
    m = (c + points) / 2
    value = float(js_rows(c[None, :], points).sum())
    grad = 0.5 * np.log2(c / m).sum(axis=0)
    return value, grad


def js_centroid(distributions: Sequence[Sequence[float]], tol: float = 1e-7) -> Centroid:
    """arg min_c Σ_i JSD(c ‖ P_i) over the simplex (Nielsen 2020), from the mean.

    Options no distribution gives mass get 0 (any mass there only adds divergence); the rest
    are a softmax of free parameters minimised by L-BFGS with the analytic gradient.
    Convergence is checked by the optimiser's status and the projected gradient on the simplex.
    """
    from scipy.optimize import minimize

    if len(distributions) == 0:
        raise ValueError("the centroid of no distributions is undefined")
    points = np.asarray(distributions, dtype=float)
    mean = points.mean(axis=0)
    support = mean > 0
    if len(points) == 1 or support.sum() <= 1:
        return Centroid(mean, True, _objective_value(mean, points))
    sub = points[:, support]

    def fun(z: np.ndarray) -> tuple[float, np.ndarray]:
        c = _softmax(z)
        value, grad = _objective(c, sub)
        return value, c * (grad - np.dot(c, grad))

    start = np.log(mean[support])
    result = minimize(fun, start, jac=True, method="L-BFGS-B", options={"gtol": tol / 10})
    c = _softmax(result.x)
    _, grad = _objective(c, sub)
    projected = float(np.max(np.abs(c * (grad - np.dot(c, grad)))))
    full = np.zeros_like(mean)
    full[support] = c
    return Centroid(full, bool(result.success) or projected < tol, float(result.fun))


def _objective_value(c: np.ndarray, points: np.ndarray) -> float:
    return float(js_rows(c[None, :], points).sum())


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def emd_ordinal(selected_a: Sequence[int], selected_b: Sequence[int], n_options: int = 0) -> float:
    """EMD between two histograms of options 1..n on ordered unit-spaced bins:
    Σ_x |F_a(x) − F_b(x)| (scipy's `wasserstein_distance` of the two samples). `n_options`
    only pads the histograms (bins past the largest option seen add nothing).

    An empty side has no histogram: ValueError.
    """
    if len(selected_a) == 0 or len(selected_b) == 0:
        raise ValueError("EMD needs at least one answer on each side")
    bins = max(n_options, int(np.max(selected_a)), int(np.max(selected_b)))
    a = np.bincount(np.asarray(selected_a) - 1, minlength=bins) / len(selected_a)
    b = np.bincount(np.asarray(selected_b) - 1, minlength=bins) / len(selected_b)
    return float(np.abs(np.cumsum(a) - np.cumsum(b))[:-1].sum())
