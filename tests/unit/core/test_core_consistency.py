"""Tests for dpgui.core.consistency: fast exact methods against the paper's trellis oracle."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpgui.core.consistency import (
    consistency_objective, consistent_l1, consistent_l2, make_consistent, trellis_consistency,
)
from dpgui.errors import ParameterError

ATOL = 1e-9


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------


def _true_cdf(rng: np.random.Generator, k: int, n: int) -> np.ndarray:
    counts = rng.multinomial(n, rng.dirichlet(np.ones(k)))
    return np.cumsum(counts).astype(np.float64)


def random_instance(rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """A small random instance: K in 1..8, N in 0..12, y from one of several families."""
    k = int(rng.integers(1, 9))
    n = int(rng.integers(0, 13))
    kind = int(rng.integers(0, 6))
    if kind == 0:  # true CDF + Laplace noise of random scale on each cumulative count
        y = _true_cdf(rng, k, n) + rng.laplace(0.0, rng.uniform(0.3, 10.0), size=k)
    elif kind == 1:  # true CDF + cumulative Laplace noise on the bins
        y = _true_cdf(rng, k, n) + np.cumsum(rng.laplace(0.0, rng.uniform(0.3, 10.0), size=k))
    elif kind == 2:  # uniform junk
        y = rng.uniform(-5.0, n + 5.0, size=k)
    elif kind == 3:  # integer-valued, noisy CDF
        y = np.round(_true_cdf(rng, k, n) + rng.laplace(0.0, rng.uniform(0.3, 5.0), size=k))
    elif kind == 4:  # integer-valued junk
        y = rng.integers(-5, n + 6, size=k).astype(np.float64)
    else:  # half-integers: exercises exact rounding ties
        y = np.round(2.0 * rng.uniform(-5.0, n + 5.0, size=k)) / 2.0
    return y, n


def assert_feasible(x: np.ndarray, k: int, n: int) -> None:
    assert x.shape == (k,)
    assert np.issubdtype(x.dtype, np.integer)
    assert x[-1] == n
    assert np.all(x >= 0) and np.all(x <= n)
    assert np.all(np.diff(x) >= 0)


def brute_force(y: np.ndarray, n: int, loss, weights=None) -> float:
    k = y.size
    best = np.inf
    for comb in itertools.combinations_with_replacement(range(n + 1), k - 1):
        x = np.array(comb + (n,), dtype=np.int64)  # sorted tuples = nondecreasing sequences
        best = min(best, consistency_objective(x, y, loss, weights))
    return best


# ----------------------------------------------------------------------------------------------
# fast methods vs trellis oracle
# ----------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("loss", "fast", "seed"), [("l2", consistent_l2, 20240901), ("l1", consistent_l1, 20240902)]
)
def test_fast_matches_trellis_unweighted(loss, fast, seed):
    rng = np.random.default_rng(seed)
    trials = 10_000
    for _ in range(trials):
        y, n = random_instance(rng)
        x = fast(y, n)
        assert_feasible(x, y.size, n)
        x_ref, opt = trellis_consistency(y, n, loss)
        got = consistency_objective(x, y, loss)
        assert abs(got - opt) <= ATOL, (loss, y.tolist(), n, x.tolist(), x_ref.tolist(), got, opt)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("loss", "fast", "seed"), [("l2", consistent_l2, 7001), ("l1", consistent_l1, 7002)]
)
def test_fast_matches_trellis_weighted(loss, fast, seed):
    rng = np.random.default_rng(seed)
    for _ in range(10_000):
        y, n = random_instance(rng)
        w = rng.uniform(0.1, 5.0, size=y.size)
        x = fast(y, n, weights=w)
        assert_feasible(x, y.size, n)
        _, opt = trellis_consistency(y, n, loss, weights=w)
        got = consistency_objective(x, y, loss, weights=w)
        assert abs(got - opt) <= ATOL, (loss, y.tolist(), w.tolist(), n, x.tolist(), got, opt)


def test_l1_counterexample_rounding_continuous_fit_is_not_optimal():
    y = np.array([4.26, 2.48, 4.0])
    n = 4
    # continuous L1 isotonic fit of [4.26, 2.48]: one block at its (lower) median 2.48 -> rounds to 2
    rounded = np.array([2, 2, 4])
    assert consistency_objective(rounded, y, "l1") == pytest.approx(2.74, abs=1e-12)
    x = consistent_l1(y, n)
    assert x.tolist() == [3, 3, 4]
    assert consistency_objective(x, y, "l1") == pytest.approx(1.78, abs=1e-12)
    _, opt = trellis_consistency(y, n, "l1")
    assert opt == pytest.approx(1.78, abs=1e-12)


# ----------------------------------------------------------------------------------------------
# the oracle itself
# ----------------------------------------------------------------------------------------------


def _capped_abs(r):  # non-convex loss: the trellis must handle any additive metric
    return np.minimum(np.abs(r), 1.5)


def _sqrt_abs(r):
    return np.sqrt(np.abs(r))


@pytest.mark.parametrize("loss", ["l2", "l1", _capped_abs, _sqrt_abs])
def test_trellis_matches_brute_force(loss):
    rng = np.random.default_rng(99)
    for _ in range(400):
        k = int(rng.integers(1, 5))
        n = int(rng.integers(0, 6))
        y = rng.uniform(-3.0, n + 3.0, size=k)
        if rng.random() < 0.3:
            y = np.round(y)
        w = rng.uniform(0.1, 5.0, size=k) if rng.random() < 0.5 else None
        x, opt = trellis_consistency(y, n, loss, weights=w)
        assert_feasible(x, k, n)
        assert consistency_objective(x, y, loss, w) == pytest.approx(opt, abs=ATOL)
        assert opt == pytest.approx(brute_force(y, n, loss, w), abs=ATOL)


def test_k_equals_one_returns_total():
    y = np.array([3.7])
    for f in (consistent_l2, consistent_l1):
        assert f(y, 5).tolist() == [5]
    x, obj = trellis_consistency(y, 5)
    assert x.tolist() == [5] and obj == 0.0
    assert make_consistent(y, 5, "none").tolist() == [5.0]


def test_make_consistent_dispatch():
    y = np.array([-1.2, 3.4, 2.2, 9.9])
    assert np.array_equal(make_consistent(y, 5, "l2"), consistent_l2(y, 5))
    assert np.array_equal(make_consistent(y, 5, "l1"), consistent_l1(y, 5))
    none = make_consistent(y, 5, "none")
    assert none.dtype == np.float64
    assert none.tolist() == [-1.2, 3.4, 2.2, 5.0]
    assert y[-1] == 9.9  # input not modified


def test_integer_input_dtype_accepted():
    y = np.array([0, 3, 2, 7], dtype=np.int64)
    # PAVA([0, 3, 2]) = [0, 2.5, 2.5]; round half up -> [0, 3, 3]
    assert consistent_l2(y, 6).tolist() == [0, 3, 3, 6]
    assert consistency_objective(consistent_l1(y, 6), y, "l1") == pytest.approx(1.0)


# ----------------------------------------------------------------------------------------------
# scale
# ----------------------------------------------------------------------------------------------


def test_large_k_smoke_l2():
    rng = np.random.default_rng(5)
    k = 2**20
    n = 10**6
    true = np.cumsum(rng.multinomial(n, np.full(k, 1.0 / k))).astype(np.float64)
    y = true + np.cumsum(rng.laplace(0.0, 20.0, size=k))
    x = consistent_l2(y, n)
    assert_feasible(x, k, n)


# ----------------------------------------------------------------------------------------------
# bad inputs
# ----------------------------------------------------------------------------------------------

_GOOD_Y = np.array([0.5, 1.5, 2.0])


@pytest.mark.parametrize(
    "y",
    [
        np.array([0.5, np.nan, 2.0]),
        np.array([0.5, np.inf, 2.0]),
        np.array([-np.inf, 1.0]),
        np.array([]),
        np.zeros((2, 2)),
        np.array(["a", "b"]),
        np.array([True, False]),
        np.array([1 + 2j, 3j]),
        5.0,
    ],
)
def test_bad_y_raises(y):
    for call in (
        lambda: consistent_l2(y, 3),
        lambda: consistent_l1(y, 3),
        lambda: trellis_consistency(y, 3),
        lambda: make_consistent(y, 3, "l2"),
        lambda: make_consistent(y, 3, "none"),
    ):
        with pytest.raises(ParameterError):
            call()


@pytest.mark.parametrize("total", [-1, 2.5, 3.0, "3", None, True, np.float64(3.0)])
def test_bad_total_raises(total):
    for f in (consistent_l2, consistent_l1, trellis_consistency):
        with pytest.raises(ParameterError):
            f(_GOOD_Y, total)
    with pytest.raises(ParameterError):
        make_consistent(_GOOD_Y, total, "none")


def test_huge_totals_rejected():
    with pytest.raises(ParameterError):
        consistent_l2(_GOOD_Y, 2**53 + 1)
    with pytest.raises(ParameterError):
        trellis_consistency(_GOOD_Y, 10**6)  # (N+1)^2 cells would not fit in memory
    assert consistent_l2(_GOOD_Y, 10**6)[-1] == 10**6


def test_numpy_integer_total_accepted():
    assert consistent_l2(_GOOD_Y, np.int64(3))[-1] == 3
    assert consistent_l1(_GOOD_Y, np.int32(3))[-1] == 3


@pytest.mark.parametrize(
    "weights",
    [np.array([1.0, 0.0, 1.0]), np.array([1.0, -1.0, 1.0]), np.array([1.0, 1.0]),
     np.array([1.0, np.nan, 1.0]), np.ones((3, 1))],
)
def test_bad_weights_raise(weights):
    for f in (consistent_l2, consistent_l1, trellis_consistency):
        with pytest.raises(ParameterError):
            f(_GOOD_Y, 3, weights=weights)


def test_unknown_method_and_loss_raise():
    with pytest.raises(ParameterError):
        make_consistent(_GOOD_Y, 3, "l3")
    with pytest.raises(ParameterError):
        trellis_consistency(_GOOD_Y, 3, "linf")
    with pytest.raises(ParameterError):
        consistency_objective(np.array([0, 1, 3]), _GOOD_Y, "hamming")
    with pytest.raises(ParameterError):
        consistency_objective(np.array([0, 3]), _GOOD_Y, "l2")
