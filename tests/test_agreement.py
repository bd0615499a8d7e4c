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

from personasim.analysis.agreement import judge_agreement
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


def test_judge_agreement_intervals_are_jackknife_z_f_based_and_wilson() -> None:
    """α's and κ's intervals are the jackknife z intervals of the `reliability` functions on
    the ten leave-one-out tables (computed here one by one); the ICC's the F-based one
    (checked against R psych in test_small_sample_intervals.py); the rates' scipy's Wilson."""
    from scipy import stats

    from personasim.analysis.icc_intervals import icc_f_interval
    from personasim.analysis.intervals import jackknife_z_interval

    table = np.array(
        [[1, 1], [2, 3], [3, 3], [4, 2], [5, 5], [2, 2], [1, 2], [4, 4], [3, 5], [2, 1]]
    )
    record = judge_agreement(*table.T)["statistics"]
    coefficients = {
        "krippendorff_alpha": lambda x: krippendorff_alpha(x, "ordinal"),
        "quadratic_kappa": lambda x: quadratic_kappa(*x.T),
    }
    for key, statistic in coefficients.items():
        jack = [statistic(np.delete(table, i, axis=0)) for i in range(len(table))]
        expected = jackknife_z_interval(statistic(table), np.array(jack))
        assert record[key]["interval"] == "jackknife z"
        assert (record[key]["low"], record[key]["high"]) == pytest.approx(expected, abs=1e-6), key
    icc21 = record["ICC(2,1)"]
    assert icc21["interval"] == "F"
    expected_icc = icc_f_interval(table.astype(float), "ICC(2,1)")
    assert (icc21["low"], icc21["high"]) == pytest.approx(expected_icc, abs=1e-6)
    same = stats.binomtest(5, 10).proportion_ci(method="wilson")
    exact = record["exact_agreement"]
    assert exact["interval"] == "wilson" and exact["value"] == pytest.approx(5 / 10)
    assert (exact["low"], exact["high"]) == pytest.approx((same.low, same.high), abs=1e-6)


def test_a_rate_at_the_boundary_has_an_interval_of_nonzero_width() -> None:
    """20 of 20 within one point: Wilson [0.839, 1], where the percentile bootstrap gave
    "1.000 [1.000, 1.000]"; 0 of 20 exact: [0, 0.161]."""
    first = [1, 2, 3, 4, 5] * 4
    second = [v + 1 if v < 5 else v - 1 for v in first]
    stats = judge_agreement(first, second)["statistics"]
    within, exact = stats["within_1_agreement"], stats["exact_agreement"]
    assert within["value"] == 1.0 and within["high"] == 1.0
    assert within["low"] == pytest.approx(0.838875, abs=1e-6)
    assert exact["value"] == 0.0 and exact["low"] == 0.0
    assert exact["high"] == pytest.approx(0.161125, abs=1e-6)
    for record in stats.values():
        if record["value"] is not None and record["low"] is not None:
            assert record["low"] <= record["value"] <= record["high"]
            assert record["high"] > record["low"]


def test_a_constant_judge_has_no_coefficient_but_says_why() -> None:
    """One judge scores every item 2: the ICC and κ would be 0 by construction (the percentile
    bootstrap printed "0.000 [-0.000, 0.000]"), α whatever the other's spread makes it."""
    people = [1, 2, 3, 2, 3, 1, 2, 2, 3, 1]
    record = judge_agreement([2] * 10, people, raters=("judge", "people"))
    assert icc(np.column_stack([[2] * 10, people]), "ICC(2,1)") == pytest.approx(0.0, abs=1e-12)
    why = "one rater is constant (judge scores every item 2)"
    for key in ("krippendorff_alpha", "ICC(2,1)", "ICC(2,k)", "quadratic_kappa"):
        stat = record["statistics"][key]
        assert stat["value"] is None and stat["value_undefined"] == why, key
        assert stat["low_undefined"] == stat["high_undefined"] == why, key
    assert record["statistics"]["exact_agreement"]["value"] == pytest.approx(0.4)
    assert record["notes"] == []  # no α to compare


def test_a_judge_who_varies_on_one_item_has_no_jackknife_interval() -> None:
    """A judge who varies on one item only: leaving that item out makes the judge constant, so
    κ has no value there and the jackknife no interval (it needs every leave-one-out value);
    the ICC's F-based interval needs no leave-one-out samples."""
    judge = [3] * 9 + [1]
    people = [3, 2, 3, 3, 2, 3, 3, 3, 2, 1]
    stats = judge_agreement(judge, people)["statistics"]
    kappa = stats["quadratic_kappa"]
    assert kappa["value"] is not None and kappa["low"] is None
    assert "undefined in 1 of 10 leave-one-out samples" in kappa["low_undefined"]
    icc21 = stats["ICC(2,1)"]
    assert icc21["low"] <= icc21["value"] <= icc21["high"]


def test_a_large_gap_between_alpha_and_icc_is_explained_from_the_data() -> None:
    """A near-constant judge (145 of 160 items scored 5) beside people using the whole scale:
    ordinal α far below 0, the ICC and κ near 0 — the note names the judge and the cause."""
    rng = np.random.default_rng(1)
    people = rng.choice([1, 2, 3, 4, 5], 160, p=[0.1, 0.2, 0.3, 0.2, 0.2])
    judge = np.where(rng.random(160) < 0.9, 5, people)
    record = judge_agreement(judge.tolist(), people.tolist(), raters=("judge", "people"))
    stats = record["statistics"]
    alpha, kappa = stats["krippendorff_alpha"]["value"], stats["quadratic_kappa"]["value"]
    assert alpha < -0.2 and abs(kappa) < 0.2 and abs(stats["ICC(2,1)"]["value"]) < 0.2
    (note,) = record["notes"]
    assert note.startswith(f"Krippendorff's alpha (ordinal) {alpha:.3f} and ICC(2,1)")
    count = int((judge == 5).sum())
    assert f"judge gives {count} of 160 items the same score (5)" in note
    # judges that agree well: α, ICC and κ within 0.2 of each other, no note
    close = judge_agreement(people.tolist(), np.clip(people + rng.integers(-1, 2, 160), 1, 5))
    assert close["notes"] == []


def test_the_gap_note_names_skewed_scores_and_the_ordinal_metric() -> None:
    """Scores piled on 3 (84% of them) with a few disagreements next to it: ordinal α 0.160,
    ICC(2,1) 0.370; interval α closes the gap, so the note names the skew and the metric."""
    first = [3] * 15 + [4, 3, 1] + [3] * 6 + [4] + [3] * 13 + [2, 4]
    second = [3, 3, 2, 3, 3, 5, 4, 3, 3, 3, 2, 4] + [3] * 5 + [1] + [3] * 13 + [4, 3, 3, 4]
    second += [3] * 5
    record = judge_agreement(first, second)
    values = {k: v["value"] for k, v in record["statistics"].items()}
    assert values["krippendorff_alpha"] == pytest.approx(0.160, abs=5e-4)
    assert values["ICC(2,1)"] == pytest.approx(0.370, abs=5e-4)
    (note,) = record["notes"]
    assert "84% of all scores are 3" in note and "prevalence paradox" in note
    assert "with the interval metric alpha is 0.370: the ordinal metric makes the gap" in note
    assert "gives" not in note  # neither judge is near-constant (35 and 32 of 40 are 3)


def test_the_gap_note_names_the_ordinal_metric_on_an_uneven_scale() -> None:
    """On a 1-9 scale where 3 and 4 are common, 3 vs 4 disagreements are far apart for the
    ordinal metric and close for the interval one: the gap is the metric's."""
    table = np.array([[3, 3]] * 20 + [[3, 4]] * 6 + [[4, 3]] * 2 + [[1, 1]] * 3 + [[9, 9]] * 3)
    (note,) = judge_agreement(*table.T)["notes"]
    assert "the ordinal metric makes the gap" in note
    interval = judge_agreement(*table.T, level="interval")
    assert interval["notes"] == []  # interval α, the ICC and κ agree within 0.2
    assert (
        abs(
            interval["statistics"]["krippendorff_alpha"]["value"]
            - interval["statistics"]["ICC(2,1)"]["value"]
        )
        < 0.2
    )


def test_judge_agreement_of_a_judge_with_itself_and_with_a_noisy_one() -> None:
    rng = np.random.default_rng(0)
    first = rng.integers(1, 6, size=40).astype(float).tolist()
    same = judge_agreement(first, first, items=[f"q{i}" for i in range(40)])
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


def test_judge_agreement_says_why_a_value_is_missing() -> None:
    a, b = [1, 2, 3, 4, 5, 3], [1, 3, 3, 5, 4, 3]
    constant = judge_agreement([3, 3, 3], [3, 3, 3])["statistics"]
    assert constant["krippendorff_alpha"]["value_undefined"] == CONSTANT
    assert constant["ICC(2,1)"]["value_undefined"] == "no variance between targets"
    assert constant["exact_agreement"]["value"] == 1.0
    nothing = judge_agreement([None, 2], [1, None])
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


def test_a_gap_with_no_usual_cause_says_so() -> None:
    """8 items that disagree: α −0.451, ICC(2,1) −0.657, neither judge constant, nothing piled
    on one value, and the interval metric keeps the gap."""
    record = judge_agreement([1, 1, 2, 5, 3, 4, 2, 2], [4, 5, 1, 1, 4, 2, 3, 1])
    (note,) = record["notes"]
    assert note.startswith("Krippendorff's alpha (ordinal) -0.451 and ICC(2,1) -0.657")
    assert "no usual cause shows in the data" in note and "with 8 items" in note
