"""ℓ1 consistency: the vectorised divide and conquer against the former heap slope trick (kept in
tests/support/l1_heap_reference.py as the reference oracle), against the trellis, and on the least-optimum
tie rule."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from l1_heap_reference import heap_l1

from dpgui.core import consistency
from dpgui.core.consistency import consistency_objective, consistent_l1, trellis_consistency

ATOL = 1e-9


# ----------------------------------------------------------------------------------------------
# inputs
# ----------------------------------------------------------------------------------------------


def noisy_cdf(rng: np.random.Generator, k: int, n: int, kind: str) -> np.ndarray:
    """Cumulative counts of n records in k bins plus noise of one of several shapes."""
    true = np.cumsum(rng.multinomial(n, rng.dirichlet(np.ones(k)))).astype(np.float64)
    scale = float(rng.uniform(0.3, 30.0))
    if kind == "iid":  # noise on each cumulative count (many violations)
        return true + rng.laplace(0.0, scale, size=k)
    if kind == "walk":  # noise on each bin, accumulated
        return true + np.cumsum(rng.laplace(0.0, scale, size=k))
    if kind == "integer":
        return np.round(true + rng.laplace(0.0, scale, size=k))
    if kind == "half":  # half-integers: the threshold costs tie exactly
        return np.round(2.0 * (true + rng.laplace(0.0, scale, size=k))) / 2.0
    if kind == "junk":
        return rng.uniform(-0.2 * n - 5.0, 1.2 * n + 5.0, size=k)
    raise AssertionError(kind)


KINDS = ("iid", "walk", "integer", "half", "junk")


def assert_same_optimum(x: np.ndarray, ref: np.ndarray, y: np.ndarray, n: int, w: np.ndarray | None) -> None:
    assert x.dtype == np.int64 and x.shape == y.shape and x[-1] == n
    assert np.all(np.diff(x) >= 0) and x[0] >= 0
    got = consistency_objective(x, y, "l1", w)
    want = consistency_objective(ref, y, "l1", w)
    tol = ATOL + 1e-12 * abs(want)
    assert got <= want + tol  # never worse than the former solver ...
    assert abs(got - want) <= tol  # ... and the same optimum value
    assert np.array_equal(x, ref)  # both return the least optimum


# ----------------------------------------------------------------------------------------------
# tests
# ----------------------------------------------------------------------------------------------


def test_heap_oracle_matches_trellis():
    rng = np.random.default_rng(170)
    for i in range(1_000):
        k, n = int(rng.integers(1, 12)), int(rng.integers(0, 15))
        y = noisy_cdf(rng, k, n, KINDS[i % len(KINDS)])
        w = rng.uniform(0.1, 5.0, size=k) if i % 2 else None
        _, opt = trellis_consistency(y, n, "l1", weights=w)
        assert consistency_objective(heap_l1(y, n, w), y, "l1", w) == pytest.approx(opt, abs=ATOL)


@pytest.mark.slow
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_heap_oracle_medium(weighted):
    rng = np.random.default_rng(171 + weighted)
    for i in range(2_000):
        k = int(rng.integers(1, 300))
        n = int(rng.integers(0, 200)) if i % 4 else int(rng.integers(0, 10**6))  # also N > 4K
        y = noisy_cdf(rng, k, n, KINDS[i % len(KINDS)])
        w = rng.uniform(0.1, 5.0, size=k) if weighted else None
        assert_same_optimum(consistent_l1(y, n, w), heap_l1(y, n, w), y, n, w)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_heap_oracle_large(kind, weighted):
    rng = np.random.default_rng(1740 + 2 * KINDS.index(kind) + weighted)
    k, n = 2**17, 100_000
    y = noisy_cdf(rng, k, n, kind)
    w = rng.uniform(0.1, 5.0, size=k) if weighted else None
    assert_same_optimum(consistent_l1(y, n, w), heap_l1(y, n, w), y, n, w)


def test_returns_the_least_optimum():
    """Of all optimal sequences (by enumeration) the result is the componentwise least."""
    rng = np.random.default_rng(173)
    for i in range(300):
        k, n = int(rng.integers(2, 6)), int(rng.integers(0, 7))
        y = noisy_cdf(rng, k, n, KINDS[i % len(KINDS)])
        w = rng.integers(1, 4, size=k).astype(np.float64) if i % 2 else None  # integer weights: exact ties
        seqs = [np.array((*c, n)) for c in itertools.combinations_with_replacement(range(n + 1), k - 1)]
        costs = np.array([consistency_objective(s, y, "l1", w) for s in seqs])
        optima = np.array([s for s, c in zip(seqs, costs) if c <= costs.min() + ATOL])
        assert consistent_l1(y, n, w).tolist() == optima.min(axis=0).tolist()


def test_edge_cases():
    assert consistent_l1(np.array([5.0, -3.0, 7.0]), 0).tolist() == [0, 0, 0]
    assert consistent_l1(np.array([9.5, 12.0, 1e300, 0.0]), 4).tolist() == [4, 4, 4, 4]
    assert consistent_l1(np.array([-1e300, -2.0, -0.5, 3.0]), 4).tolist() == [0, 0, 0, 4]
    # one element and its total: x_1 is the lower median of {⌊y⌋ (1-θ), ⌊y⌋+1 (θ)}
    assert consistent_l1(np.array([2.5, 9.0]), 9).tolist() == [2, 9]
    assert consistent_l1(np.array([2.51, 9.0]), 9).tolist() == [3, 9]
    # a huge total (N > 4K: candidates by sorting) with integer data far apart
    y = np.array([2.0**52, 3.0, 2.0**52 + 2.0, 0.0])
    x = consistent_l1(y, 2**53)
    assert x.tolist() == [3, 3, 2**52 + 2, 2**53]  # the least of the optima (m, m, 2^52 + 2), 3 <= m <= 2^52
    assert x.tolist() == heap_l1(y, 2**53).tolist()
    assert consistency_objective(x, y, "l1") == 2.0**52 - 3.0


def test_int64_keys_give_the_same_result(monkeypatch):
    """Beyond 2^27 bins the keys are int64; force that path on small inputs."""
    rng = np.random.default_rng(175)
    cases = [(noisy_cdf(rng, 500, 400, kind), 400) for kind in KINDS]
    before = [consistent_l1(y, n) for y, n in cases]
    monkeypatch.setattr(consistency, "_L1_INT32_MAX_K", 0)
    for (y, n), x in zip(cases, before):
        assert np.array_equal(consistent_l1(y, n), x)
        assert np.array_equal(x, heap_l1(y, n))
