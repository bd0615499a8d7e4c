"""The shared agreement statistics (analysis.reliability, analysis.agreement): checked against
published worked examples, the `krippendorff` package, brute-force two-way ANOVA and a
brute-force weighted κ, and at their edge cases (missing, constant, n < 2, one category)."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable

import krippendorff
import numpy as np
import pytest

from personasim.analysis.agreement import judge_agreement, percentile_interval
from personasim.analysis.paired_resamples import (
    MAX_ORDINAL_VALUES,
    resampled_alpha,
    resampled_icc,
    resampled_kappa,
    resampled_rate,
)
from personasim.analysis.reliability import (
    ICC_FORMS,
    exact_agreement,
    icc,
    icc3k,
    krippendorff_alpha,
    quadratic_kappa,
    within_agreement,
)
from personasim.analysis.undefined import CONSTANT, NO_VALUES, Statistic, Undefined

NAN = math.nan

# K. Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", Annenberg School for
# Communication, University of Pennsylvania, section C: 4 observers x 12 units, nominal data
# with missing values. Published: alpha nominal 0.743, ordinal 0.815, interval 0.849 (the same
# numbers the `krippendorff` package's own tests use).
KRIPPENDORFF_2011 = [  # observers x units
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]

# P. E. Shrout & J. L. Fleiss (1979), "Intraclass correlations: uses in assessing rater
# reliability", Psychological Bulletin 86(2), Table 2 (6 targets x 4 judges) and Table 4.
SHROUT_FLEISS = [
    [9, 2, 5, 8],
    [6, 1, 3, 2],
    [8, 4, 6, 8],
    [7, 1, 2, 6],
    [10, 5, 6, 9],
    [6, 2, 4, 7],
]
SHROUT_FLEISS_PUBLISHED = {
    "ICC(1,1)": 0.17,
    "ICC(2,1)": 0.29,
    "ICC(3,1)": 0.71,
    "ICC(1,k)": 0.44,
    "ICC(2,k)": 0.62,
    "ICC(3,k)": 0.91,
}


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_alpha_matches_krippendorffs_worked_example(level: str, published: float) -> None:
    units_by_raters = np.array(KRIPPENDORFF_2011).T
    alpha = krippendorff_alpha(units_by_raters, level)  # type: ignore[arg-type]
    assert round(alpha, 3) == published
    reference = krippendorff.alpha(reliability_data=KRIPPENDORFF_2011, level_of_measurement=level)
    assert alpha == pytest.approx(reference, abs=1e-12)


@pytest.mark.parametrize("step", [1.0, 0.5])  # 0.5: means of two raters, as human means are
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_matches_the_krippendorff_package_on_random_data_with_missing(
    level: str, step: float
) -> None:
    rng = np.random.default_rng(7)
    for trial in range(15):
        units, raters = int(rng.integers(5, 40)), int(rng.integers(2, 5))
        truth = rng.integers(1, 6, size=units)
        data = np.clip(truth[:, None] + rng.integers(-1, 2, size=(units, raters)), 1, 5)
        data = data.astype(float) * step
        data[rng.random(data.shape) < 0.25] = np.nan  # missing ratings, ties everywhere
        with np.errstate(invalid="ignore", divide="ignore"):
            expected = krippendorff.alpha(reliability_data=data.T, level_of_measurement=level)
        got = krippendorff_alpha(data.tolist(), level)  # type: ignore[arg-type]
        if math.isnan(expected):  # no unit pairable, or every pairable value the same
            assert isinstance(got, Undefined), trial
        else:
            assert got == pytest.approx(expected, abs=1e-10), trial


def test_alpha_with_none_as_missing_and_edge_cases() -> None:
    with_none = [[None if v != v else v for v in row] for row in np.array(KRIPPENDORFF_2011).T]
    assert round(krippendorff_alpha(with_none, "nominal"), 3) == 0.743
    assert krippendorff_alpha([[None, None], [NAN, None]]) == Undefined(NO_VALUES)
    assert krippendorff_alpha([[1, None], [None, 2]]) == Undefined("no unit rated by 2 raters")
    assert krippendorff_alpha([[1, 2], [3, None]]) == Undefined(
        "fewer than 2 units rated by 2 raters"
    )
    # one category throughout: no expected disagreement
    for level in ("nominal", "ordinal", "interval"):
        assert krippendorff_alpha([[3, 3], [3, 3], [3, None]], level) == Undefined(CONSTANT)  # type: ignore[arg-type]
    assert krippendorff_alpha([[1, 1], [2, 2], [3, 3]]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="level must be one of"):
        krippendorff_alpha([[1, 2]], "ratio")  # type: ignore[arg-type]


def _anova_by_least_squares(x: np.ndarray) -> tuple[float, float, float]:
    """BMS, JMS, EMS from residual sums of squares of nested dummy regressions (no formulas
    shared with the code under test)."""
    n, k = x.shape
    y = x.ravel()
    target = np.kron(np.eye(n), np.ones((k, 1)))
    judge = np.kron(np.ones((n, 1)), np.eye(k))
    one = np.ones((n * k, 1))

    def rss(design: np.ndarray) -> float:
        fitted = design @ np.linalg.lstsq(design, y, rcond=None)[0]
        return float(((y - fitted) ** 2).sum())

    full = rss(np.hstack([one, target[:, 1:], judge[:, 1:]]))
    bss = rss(np.hstack([one, judge[:, 1:]])) - full
    jss = rss(np.hstack([one, target[:, 1:]])) - full
    return bss / (n - 1), jss / (k - 1), full / ((n - 1) * (k - 1))


def _brute_icc(x: np.ndarray, form: str) -> float:
    n, k = x.shape
    bms, jms, ems = _anova_by_least_squares(x)
    wms = (jms * (k - 1) + ems * (n - 1) * (k - 1)) / (n * (k - 1))
    return {  # McGraw & Wong (1996), Table 4; Shrout & Fleiss (1979), equations 1-6
        "ICC(1,1)": (bms - wms) / (bms + (k - 1) * wms),
        "ICC(1,k)": (bms - wms) / bms,
        "ICC(2,1)": (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n),
        "ICC(2,k)": (bms - ems) / (bms + (jms - ems) / n),
        "ICC(3,1)": (bms - ems) / (bms + (k - 1) * ems),
        "ICC(3,k)": (bms - ems) / bms,
    }[form]


@pytest.mark.parametrize("form", ICC_FORMS)
def test_icc_matches_shrout_fleiss_table_4_and_brute_force_anova(form: str) -> None:
    value = icc(SHROUT_FLEISS, form)  # type: ignore[arg-type]
    assert round(value, 2) == SHROUT_FLEISS_PUBLISHED[form]
    assert value == pytest.approx(_brute_icc(np.array(SHROUT_FLEISS, float), form), abs=1e-10)
    rng = np.random.default_rng(3)
    for _ in range(10):
        x = rng.integers(1, 8, size=(int(rng.integers(3, 15)), int(rng.integers(2, 5))))
        x = x.astype(float)
        assert icc(x, form) == pytest.approx(_brute_icc(x, form), abs=1e-9)  # type: ignore[arg-type]


def test_icc3k_is_the_icc3k_form_and_icc_edge_cases() -> None:
    assert icc3k(SHROUT_FLEISS) == icc(SHROUT_FLEISS, "ICC(3,k)")
    assert icc3k([[1, 1], [1, 1]]) == Undefined("no variance between targets")
    assert icc3k([[1, 2]]) == Undefined("fewer than 2 targets")
    assert icc([[1, 2], [2, None], [3, 4]], "ICC(2,1)") == icc([[1, 2], [3, 4]], "ICC(2,1)")
    assert icc([[1, None], [None, 2]]) == Undefined("fewer than 2 targets rated by every rater")
    assert icc([[None, None]]) == Undefined(NO_VALUES)
    assert icc([[1], [2]]) == Undefined("fewer than 2 raters")
    assert icc([[2, 4], [4, 2]]) == Undefined("no variance between targets")
    with pytest.raises(ValueError, match="form must be one of"):
        icc(SHROUT_FLEISS, "ICC(4,1)")  # type: ignore[arg-type]


def _brute_quadratic_kappa(a: list[int], b: list[int]) -> float:
    """Cohen (1968) as scikit-learn computes it: confusion matrix over the sorted labels,
    weights (i - j)^2 by label index, expected = outer product of the marginals / n."""
    labels = sorted(set(a) | set(b))
    index = {v: i for i, v in enumerate(labels)}
    observed = np.zeros((len(labels), len(labels)))
    for x, y in zip(a, b, strict=True):
        observed[index[x], index[y]] += 1
    weights = np.array([[(i - j) ** 2 for j in range(len(labels))] for i in range(len(labels))])
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    return 1 - float((weights * observed).sum() / (weights * expected).sum())


def test_quadratic_kappa_matches_a_brute_force_weighted_kappa() -> None:
    rng = np.random.default_rng(11)
    for _ in range(20):
        n = int(rng.integers(5, 60))
        a = rng.integers(1, 6, size=n)
        b = np.clip(a + rng.integers(-2, 3, size=n), 1, 5)
        a[0], b[1] = 1, 5  # every level of the 1-5 scale is used, so index = value - 1
        a[2], b[3], a[4] = 2, 3, 4
        expected = _brute_quadratic_kappa(a.tolist(), b.tolist())
        assert quadratic_kappa(a.tolist(), b.tolist()) == pytest.approx(expected, abs=1e-12)
    assert quadratic_kappa([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    assert quadratic_kappa([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


def test_kappa_and_rates_edge_cases() -> None:
    assert quadratic_kappa([], []) == Undefined(NO_VALUES)
    assert quadratic_kappa([2, None], [3, 4]) == Undefined("fewer than 2 pairs")
    assert quadratic_kappa([3, 3, 3], [3, 3, 3]) == Undefined(CONSTANT)
    # one side constant: defined, and no better than chance
    assert quadratic_kappa([3, 3, 3], [2, 3, 4]) == pytest.approx(0.0)
    assert exact_agreement([1, 2, None, 4], [1, 3, 3, 4]) == pytest.approx(2 / 3)
    assert within_agreement([1, 2, None, 4], [1, 4, 3, 5]) == pytest.approx(2 / 3)
    assert exact_agreement([None], [1]) == Undefined(NO_VALUES)
    with pytest.raises(ValueError, match="same items"):
        exact_agreement([1, 2], [1])


def _scalar_draws(
    statistic: Callable[[np.ndarray], Statistic], table: np.ndarray, rows: np.ndarray
) -> np.ndarray:
    values = [statistic(table[r]) for r in rows]
    return np.array([math.nan if isinstance(v, Undefined) else v for v in values])


@pytest.mark.parametrize(
    ("n", "jitter"),
    [(3, 0.0), (25, 0.0), (40, 0.3)],  # 3 items: many constant resamples; 40 x 0.3: > 40 values
)
def test_resampled_statistics_equal_the_reliability_functions_on_each_resample(
    n: int, jitter: float
) -> None:
    rng = np.random.default_rng(n)
    a = rng.integers(1, 4, size=n).astype(float)
    table = np.column_stack([a, np.clip(a + rng.integers(-1, 2, size=n), 1, 3)])
    table[0] = [2.0, 2.0]
    table += np.round(rng.random(table.shape) * jitter, 3)
    assert jitter == 0 or len(np.unique(table)) > MAX_ORDINAL_VALUES
    rows = np.random.default_rng(9).integers(0, n, size=(60, n))
    weights = np.zeros((60, n))
    np.add.at(weights, (np.arange(60)[:, None], rows), 1.0)
    checks = [
        *[
            (resampled_alpha(table, weights, level), lambda x, lv=level: krippendorff_alpha(x, lv))
            for level in ("nominal", "ordinal", "interval")
        ],
        *[(resampled_icc(table, weights, f), lambda x, f=f: icc(x, f)) for f in ICC_FORMS],
        (resampled_kappa(table, weights), lambda x: quadratic_kappa(*x.T)),
        (resampled_rate(table, weights, 0.0), lambda x: exact_agreement(*x.T)),
        (resampled_rate(table, weights, 1.0), lambda x: within_agreement(*x.T, 1.0)),
    ]
    for batched, statistic in checks:
        expected = _scalar_draws(statistic, table, rows)
        np.testing.assert_allclose(batched, expected, rtol=1e-9, atol=1e-9)
    if n == 3:
        assert np.isnan(checks[0][0]).any()  # the constant resamples were met


def test_percentile_interval_and_judge_agreement_resample_items_as_documented() -> None:
    table = np.array([[1, 1], [2, 3], [3, 3], [4, 2], [5, 5], [2, 2]], float)
    record = judge_agreement(*table.T, seed=5, n_boot=400)["statistics"]["exact_agreement"]
    rows = np.random.default_rng(5).integers(0, 6, size=(400, 6))
    draws = [float(np.mean(table[r, 0] == table[r, 1])) for r in rows]
    low, high = np.percentile(draws, [2.5, 97.5])
    assert (record["low"], record["high"]) == (round(low, 6), round(high, 6))
    assert record["resamples"] == 400 and record["low"] <= 4 / 6 <= record["high"]
    mostly_undefined = np.array([0.5] * 10 + [math.nan] * 11)
    assert percentile_interval(mostly_undefined, 21)[0] == Undefined(
        "defined in only 10 of 21 bootstrap resamples"
    )
    assert percentile_interval(np.zeros(0), 1)[2] == 0


def test_judge_agreement_of_a_judge_with_itself_and_with_a_noisy_one() -> None:
    rng = np.random.default_rng(0)
    first = rng.integers(1, 6, size=40).astype(float).tolist()
    same = judge_agreement(first, first, items=[f"q{i}" for i in range(40)], n_boot=200)
    stats = same["statistics"]
    assert list(stats) == [
        "krippendorff_alpha",
        "ICC(2,1)",
        "ICC(2,k)",
        "quadratic_kappa",
        "exact_agreement",
        "within_1_agreement",
    ]
    for record in stats.values():
        assert record["value"] == pytest.approx(1.0) and record["n"] == 40
    assert same["most_different"] == []
    noisy: list[float | None] = [
        (v + 2 if v <= 3 else v - 2) if i % 4 == 0 else v for i, v in enumerate(first)
    ]
    noisy[5] = None
    other = judge_agreement(
        first, noisy, items=[f"q{i}" for i in range(40)], level="interval", icc_form="ICC(3,k)"
    )
    assert other["n_rated_by_both"] == 39 and other["n_missing"] == {"first": 0, "second": 1}
    assert list(other["statistics"])[1] == "ICC(3,k)"
    alpha = other["statistics"]["krippendorff_alpha"]
    assert alpha["low"] <= alpha["value"] <= alpha["high"] < 1.0
    assert other["statistics"]["krippendorff_alpha"]["label"] == "Krippendorff's alpha (interval)"
    biggest = other["most_different"][0]
    assert abs(biggest["difference"]) == 2.0 and biggest["item"] == "q0"  # ties keep item order
    assert [d["item"] for d in other["most_different"]] == [f"q{i}" for i in range(0, 40, 4)]
    assert all(abs(d["difference"]) > 0 for d in other["most_different"])
    assert len(other["most_different"]) <= 10
    assert json.loads(json.dumps(other)) == other  # plain JSON
    from_arrays = judge_agreement(np.array(first), np.array(noisy, float), items=np.arange(40))
    assert from_arrays["most_different"][0]["item"] == 0
    assert json.loads(json.dumps(from_arrays)) == from_arrays


def test_judge_agreement_is_seeded_and_says_why_a_value_is_missing() -> None:
    a, b = [1, 2, 3, 4, 5, 3], [1, 3, 3, 5, 4, 3]
    assert judge_agreement(a, b, seed=4, n_boot=100) == judge_agreement(a, b, seed=4, n_boot=100)
    assert judge_agreement(a, b, seed=4, n_boot=100) != judge_agreement(a, b, seed=5, n_boot=100)
    constant = judge_agreement([3, 3, 3], [3, 3, 3], n_boot=50)["statistics"]
    assert constant["krippendorff_alpha"]["value_undefined"] == CONSTANT
    assert constant["ICC(2,1)"]["value_undefined"] == "no variance between targets"
    assert constant["exact_agreement"]["value"] == 1.0
    nothing = judge_agreement([None, 2], [1, None], n_boot=50)
    assert nothing["n_rated_by_both"] == 0
    for key, record in nothing["statistics"].items():
        assert record["value"] is None and record["value_undefined"], key
        assert record["low_undefined"] and record["high_undefined"], key
    with pytest.raises(ValueError, match="ordinal or interval"):
        judge_agreement(a, b, level="nominal")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="same items"):
        judge_agreement(a, b[:3])


def test_every_pair_of_forms_orders_as_theory_says() -> None:
    """The mean of k raters is at least as reliable as one (k forms >= 1 forms when positive)."""
    for single, mean in itertools.product(["ICC(2,1)", "ICC(3,1)"], ["ICC(2,k)", "ICC(3,k)"]):
        if single[4] == mean[4]:
            assert icc(SHROUT_FLEISS, mean) >= icc(SHROUT_FLEISS, single)  # type: ignore[arg-type]
