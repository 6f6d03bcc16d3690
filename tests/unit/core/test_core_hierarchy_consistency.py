"""Tests for dpgui.core.hierarchy_consistency.

Independent references: brute-force enumeration for the integer projection, a dense GLS (KKT
system over every node with numpy) for the tree GLS and its covariance, and Monte Carlo for the
node variances.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pytest

from dpgui.core.hierarchy_consistency import (
    gls_consistent, gls_estimate, gls_node_variances, integer_simplex_projection, topdown_consistent,
)
from dpgui.errors import ParameterError

# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------


@cache
def _compositions(n: int, total: int) -> np.ndarray:
    """Every non-negative integer vector of length n summing to total, in lexicographic order."""
    rows = [v for v in itertools.product(range(total + 1), repeat=n) if sum(v) == total]
    return np.array(rows, dtype=np.int64).reshape(len(rows), n)


def _brute_force(y: np.ndarray, total: int) -> tuple[float, np.ndarray]:
    """Least cost and the lexicographically greatest minimiser, by enumeration."""
    comps = _compositions(y.size, total)
    cost = np.sum((comps - y[None, :]) ** 2, axis=1)
    best = cost.min()
    minimisers = comps[cost == best]  # exact: y on a dyadic grid, so costs are exact in float64
    return float(best), minimisers[-1]  # itertools.product order is lexicographic


def random_tree(
    rng: np.random.Generator, depth: int, max_fanout: int = 6
) -> tuple[list[np.ndarray], list[int]]:
    """Parents of a random tree with ``depth`` levels below the root, fan-outs 1..max_fanout."""
    parents: list[np.ndarray] = []
    sizes = [1]
    for _ in range(depth):
        fan = rng.integers(1, max_fanout + 1, size=sizes[-1])
        parents.append(np.repeat(np.arange(sizes[-1], dtype=np.int64), fan))
        sizes.append(int(fan.sum()))
    return parents, sizes


def aggregate(parents: list[np.ndarray], sizes: list[int], leaves: np.ndarray) -> list[np.ndarray]:
    levels = [np.asarray(leaves)]
    for level in range(len(parents) - 1, -1, -1):
        levels.insert(0, np.bincount(parents[level], weights=levels[0], minlength=sizes[level]))
    return levels


def random_noisy_levels(
    rng: np.random.Generator, parents: list[np.ndarray], sizes: list[int]
) -> tuple[list[np.ndarray], int]:
    """Noisy counts of one of several kinds (true + noise, junk, negative, huge) and a root."""
    truth = aggregate(parents, sizes, rng.poisson(rng.uniform(0, 30), size=sizes[-1]))
    kind = int(rng.integers(0, 5))
    if kind == 0:  # true counts + Laplace noise
        scale = rng.uniform(0.3, 10.0)
        noisy = [t + rng.laplace(0.0, scale, size=t.size) for t in truth]
    elif kind == 1:  # junk around zero
        noisy = [rng.uniform(-50, 50, size=t.size) for t in truth]
    elif kind == 2:  # all negative
        noisy = [-rng.exponential(20.0, size=t.size) for t in truth]
    elif kind == 3:  # huge values of both signs
        noisy = [rng.choice([-1.0, 1.0], size=t.size) * 10.0 ** rng.uniform(6, 15, size=t.size)
                 for t in truth]
    else:  # on the quarter grid (ties)
        noisy = [rng.integers(-20, 60, size=t.size) / 4.0 for t in truth]
    root = int(rng.choice([0, int(truth[0][0]), int(rng.integers(0, 10**int(rng.integers(1, 13))))]))
    return noisy, root


def check_consistent(parents: list[np.ndarray], sizes: list[int], out: tuple[np.ndarray, ...]) -> None:
    assert len(out) == len(sizes)
    for level, values in enumerate(out):
        assert values.dtype == np.int64
        assert values.shape == (sizes[level],)
        assert np.all(values >= 0)
    for level, parent in enumerate(parents):
        sums = np.zeros(sizes[level], dtype=np.int64)
        np.add.at(sums, parent, out[level + 1])
        assert np.array_equal(sums, out[level])


# ----------------------------------------------------------------------------------------------
# integer_simplex_projection against brute force
# ----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_projection_matches_brute_force_on_grid_values_with_ties() -> None:
    rng = np.random.default_rng(20261125)
    checked = 0
    for _ in range(4000):
        n = int(rng.integers(1, 5))
        total = int(rng.integers(0, 9))
        kind = int(rng.integers(0, 4))
        if kind == 0:
            y = rng.integers(-16, 48, size=n) / 4.0  # quarter grid: many exact ties
        elif kind == 1:
            y = rng.integers(-8, 20, size=n) / 2.0  # half grid: ties at the unit boundary
        elif kind == 2:
            y = -rng.integers(1, 40, size=n) / 4.0  # all negative
        else:
            y = np.full(n, rng.integers(-8, 20) / 4.0)  # all equal
        v = integer_simplex_projection(y, total)
        best_cost, lex_greatest = _brute_force(y, total)
        assert v.dtype == np.int64
        assert int(v.sum()) == total and np.all(v >= 0)
        assert float(np.sum((v - y) ** 2)) == best_cost
        assert np.array_equal(v, lex_greatest), (y, total, v, lex_greatest)
        checked += 1
    assert checked == 4000


@pytest.mark.slow
def test_projection_matches_brute_force_on_real_values() -> None:
    rng = np.random.default_rng(7)
    for _ in range(3000):
        n = int(rng.integers(1, 5))
        total = int(rng.integers(0, 9))
        y = rng.normal(rng.uniform(-4, 6), rng.uniform(0.1, 6), size=n)
        v = integer_simplex_projection(y, total)
        best_cost, _ = _brute_force(y, total)
        assert int(v.sum()) == total and np.all(v >= 0)
        assert float(np.sum((v - y) ** 2)) <= best_cost + 1e-9


def test_projection_tie_breaking_goes_to_lower_index() -> None:
    assert integer_simplex_projection(np.array([0.5, 0.5]), 1).tolist() == [1, 0]
    assert integer_simplex_projection(np.array([0.0, 0.0, 0.0]), 2).tolist() == [1, 1, 0]
    assert integer_simplex_projection(np.array([-1.0, -1.0, -1.0]), 4).tolist() == [2, 1, 1]
    assert integer_simplex_projection(np.array([2.0, 2.0]), 0).tolist() == [0, 0]


def test_projection_keeps_an_already_consistent_integer_vector() -> None:
    y = np.array([3.0, 0.0, 7.0, 1.0])
    assert integer_simplex_projection(y, 11).tolist() == [3, 0, 7, 1]


def _exchange_optimal(v: np.ndarray, y: np.ndarray) -> bool:
    """KKT of the separable convex integer problem: no single unit moved lowers the cost."""
    removable = v > 0
    if not np.any(removable):
        return True
    last = (v[removable] - 0.5) - y[removable]  # half the saving of removing the last unit
    nxt = (v + 0.5) - y  # half the cost of adding one more unit
    return bool(last.max() <= nxt.min() + 1e-9 * max(1.0, float(np.abs(y).max())))


def test_projection_large_instances_are_exchange_optimal() -> None:
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(1, 400))
        total = int(rng.integers(0, 10 ** int(rng.integers(1, 10))))
        y = rng.normal(total / n, rng.uniform(0.5, 3.0) * (1 + total / n), size=n)
        v = integer_simplex_projection(y, total)
        assert int(v.sum()) == total and np.all(v >= 0)
        assert _exchange_optimal(v, y)


def test_projection_huge_and_far_apart_values() -> None:
    y = np.array([4e15, -4e15, 3.0, 4e15 - 2.5])
    v = integer_simplex_projection(y, 5)
    assert v.tolist() == [4, 0, 0, 1]
    v = integer_simplex_projection(np.array([1e12, 1e12 + 0.5, 1e12 + 0.25]), 10**12 * 3)
    assert int(v.sum()) == 3 * 10**12 and _exchange_optimal(v, np.array([1e12, 1e12 + 0.5, 1e12 + 0.25]))


def test_projection_bad_input() -> None:
    with pytest.raises(ParameterError, match="total must be >= 0"):
        integer_simplex_projection(np.array([1.0]), -1)
    with pytest.raises(ParameterError, match="whole number"):
        integer_simplex_projection(np.array([1.0]), 1.5)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="NaN or infinity"):
        integer_simplex_projection(np.array([np.nan]), 1)
    with pytest.raises(ParameterError, match="empty"):
        integer_simplex_projection(np.array([]), 1)
    with pytest.raises(ParameterError, match="1-D array"):
        integer_simplex_projection(np.array([["a"]]), 1)


# ----------------------------------------------------------------------------------------------
# topdown_consistent
# ----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_topdown_consistent_on_10000_random_trees() -> None:
    """Acceptance: every parent equals the sum of its children exactly, all counts are
    non-negative integers, on 10,000 random trees (fan-outs 1..6, depths 2..4)."""
    rng = np.random.default_rng(15)
    for _ in range(10_000):
        depth = int(rng.integers(2, 5))
        parents, sizes = random_tree(rng, depth, max_fanout=6)
        noisy, root = random_noisy_levels(rng, parents, sizes)
        out = topdown_consistent(parents, noisy, root)
        assert int(out[0][0]) == root
        check_consistent(parents, sizes, out)


@pytest.mark.slow
def test_topdown_equals_per_parent_brute_force_optimum() -> None:
    """The segmented (vectorised) step equals, for every parent, the brute-force optimum of its
    children given the parent's released value."""
    rng = np.random.default_rng(151)
    parents_checked = 0
    for _ in range(400):
        parents, sizes = random_tree(rng, int(rng.integers(2, 4)), max_fanout=4)
        noisy = [rng.integers(-12, 24, size=s) / 4.0 for s in sizes]
        out = topdown_consistent(parents, noisy, int(rng.integers(0, 9)))
        for level, parent in enumerate(parents):
            for node in range(sizes[level]):
                children = parent == node
                total = int(out[level][node])
                if total > 12:  # keep the enumeration small
                    continue
                _, expected = _brute_force(noisy[level + 1][children], total)
                assert np.array_equal(out[level + 1][children], expected)
                parents_checked += 1
    assert parents_checked > 2000


@pytest.mark.slow
def test_topdown_segmented_equals_per_parent_projection_on_larger_trees() -> None:
    rng = np.random.default_rng(152)
    for _ in range(30):
        parents, sizes = random_tree(rng, 3, max_fanout=12)
        noisy, root = random_noisy_levels(rng, parents, sizes)
        out = topdown_consistent(parents, noisy, root)
        for level, parent in enumerate(parents):
            for node in range(sizes[level]):
                children = parent == node
                expected = integer_simplex_projection(noisy[level + 1][children], int(out[level][node]))
                assert np.array_equal(out[level + 1][children], expected)


def test_topdown_exact_counts_are_kept() -> None:
    rng = np.random.default_rng(4)
    parents, sizes = random_tree(rng, 4, max_fanout=5)
    truth = aggregate(parents, sizes, rng.poisson(7, size=sizes[-1]))
    out = topdown_consistent(parents, [t.astype(float) for t in truth], int(truth[0][0]))
    for released, true in zip(out, truth):
        assert np.array_equal(released, true.astype(np.int64))


def test_topdown_bad_input() -> None:
    parents = [np.zeros(2, dtype=np.int64), np.array([0, 1, 1])]
    good = [np.zeros(1), np.ones(2), np.ones(3)]
    with pytest.raises(ParameterError, match="2 levels of noisy counts"):
        topdown_consistent(parents, good[:2], 3)
    with pytest.raises(ParameterError, match="3 values but the level has 2 nodes"):
        topdown_consistent(parents, [good[0], good[2], good[2]], 3)
    with pytest.raises(ParameterError, match="not sorted, contiguous"):
        topdown_consistent([np.zeros(2, dtype=np.int64), np.array([1, 0, 1])], good, 3)
    with pytest.raises(ParameterError, match="not sorted, contiguous"):  # node 1 has no child
        topdown_consistent([np.zeros(2, dtype=np.int64), np.array([0, 0, 0])], good, 3)
    with pytest.raises(ParameterError, match="root must be >= 0"):
        topdown_consistent(parents, good, -2)
    with pytest.raises(ParameterError, match="NaN or infinity"):
        topdown_consistent(parents, [good[0], np.array([1.0, np.inf]), good[2]], 3)
    with pytest.raises(ParameterError, match="no level below the root"):
        topdown_consistent([], [np.zeros(1)], 3)


# ----------------------------------------------------------------------------------------------
# GLS against a dense solve
# ----------------------------------------------------------------------------------------------


def dense_gls(
    parents: list[np.ndarray],
    sizes: list[int],
    noisy: list[np.ndarray],
    variances: list[float],
    root_known: float | None,
) -> tuple[np.ndarray, np.ndarray]:
    """GLS over all node values with the consistency (and root) constraints, by a KKT solve.

    Returns the estimate (all nodes, levels concatenated) and its covariance."""
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    n = int(offsets[-1])
    precision = np.zeros(n)
    for level, var in enumerate(variances):
        if np.isfinite(var) and not (level == 0 and root_known is not None):
            precision[offsets[level] : offsets[level + 1]] = 1.0 / var
    rows = []
    rhs = []
    for level, parent in enumerate(parents):
        for node in range(sizes[level]):
            row = np.zeros(n)
            row[offsets[level] + node] = 1.0
            row[offsets[level + 1] + np.flatnonzero(parent == node)] = -1.0
            rows.append(row)
            rhs.append(0.0)
    if root_known is not None:
        row = np.zeros(n)
        row[0] = 1.0
        rows.append(row)
        rhs.append(float(root_known))
    C = np.array(rows)
    m = C.shape[0]
    kkt = np.block([[np.diag(precision), C.T], [C, np.zeros((m, m))]])
    inverse = np.linalg.inv(kkt)
    y = np.concatenate(noisy)
    estimate = inverse[:n, :n] @ (precision * y) + inverse[:n, n:] @ np.array(rhs)
    gain = inverse[:n, :n] * precision[None, :]
    noise_var = np.where(precision > 0, 1.0 / np.where(precision > 0, precision, 1.0), 0.0)
    covariance = gain @ np.diag(noise_var) @ gain.T
    return estimate, covariance


def _random_variances(rng: np.random.Generator, levels: int, leaves_measured: bool = True) -> list[float]:
    var = [float(v) for v in rng.uniform(0.2, 30.0, size=levels)]
    for level in range(levels - 1):
        if rng.random() < 0.3:
            var[level] = np.inf
    if not leaves_measured:
        var[-1] = np.inf
    return var


@pytest.mark.slow
@pytest.mark.parametrize("root_known", [True, False])
def test_gls_matches_dense_solve(root_known: bool) -> None:
    rng = np.random.default_rng(31 if root_known else 32)
    worst_estimate = 0.0
    worst_variance = 0.0
    for _ in range(150):
        parents, sizes = random_tree(rng, int(rng.integers(1, 4)), max_fanout=4)
        noisy, _ = random_noisy_levels(rng, parents, sizes)
        noisy = [np.clip(v, -1e4, 1e4) for v in noisy]
        var = _random_variances(rng, len(sizes))
        if not root_known and all(not np.isfinite(v) for v in var):
            continue
        root = float(rng.integers(0, 500)) if root_known else None
        estimate = np.concatenate(gls_estimate(parents, noisy, var, root))
        variances = np.concatenate(gls_node_variances(parents, var, root_known))
        expected, covariance = dense_gls(parents, sizes, noisy, var, root)
        scale = max(1.0, float(np.abs(expected).max()))
        worst_estimate = max(worst_estimate, float(np.abs(estimate - expected).max()) / scale)
        vscale = max(1.0, float(np.diag(covariance).max()))
        worst_variance = max(worst_variance, float(np.abs(variances - np.diag(covariance)).max()) / vscale)
    assert worst_estimate < 1e-9
    assert worst_variance < 1e-9


def test_gls_equal_variances_reduce_to_hay_closed_form() -> None:
    """Complete k-ary tree, equal variances, root measured: Hay et al. (2010) Theorem 3."""
    rng = np.random.default_rng(5)
    k, depth = 3, 3
    parents = [np.repeat(np.arange(k**d, dtype=np.int64), k) for d in range(depth)]
    noisy = [rng.normal(10.0, 3.0, size=k**d) for d in range(depth + 1)]
    ours = gls_estimate(parents, noisy, [1.0] * (depth + 1), None)
    z = [v.copy() for v in noisy]
    for d in range(depth - 1, -1, -1):  # height ℓ = depth - d + 1
        ell = depth - d + 1
        child_sum = z[d + 1].reshape(-1, k).sum(axis=1)
        z[d] = ((k**ell - k ** (ell - 1)) * noisy[d] + (k ** (ell - 1) - 1) * child_sum) / (k**ell - 1)
    hay = [z[0]]
    for d in range(depth):
        child_sum = z[d + 1].reshape(-1, k).sum(axis=1)
        hay.append(z[d + 1] + np.repeat((hay[d] - child_sum) / k, k))
    for a, b in zip(ours, hay):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)


@pytest.mark.parametrize("root_known", [True, False])
def test_gls_with_unmeasured_leaves_spreads_evenly(root_known: bool) -> None:
    """Leaves not released: the measured levels equal the dense GLS of the tree cut at the lowest
    measured level; below it the estimate is spread evenly over the leaves (minimum norm), and
    those nodes have infinite variance."""
    rng = np.random.default_rng(41)
    for _ in range(40):
        parents, sizes = random_tree(rng, 3, max_fanout=4)
        noisy, _ = random_noisy_levels(rng, parents, sizes)
        noisy = [np.clip(v, -1e4, 1e4) for v in noisy]
        var = [float(v) for v in rng.uniform(0.5, 10.0, size=4)]
        var[3] = np.inf
        root = float(rng.integers(0, 300)) if root_known else None
        ours = gls_estimate(parents, noisy, var, root)
        expected, covariance = dense_gls(parents[:2], sizes[:3], noisy[:3], var[:3], root)
        np.testing.assert_allclose(np.concatenate(ours[:3]), expected, atol=1e-9)
        node_var = gls_node_variances(parents, var, root_known)
        np.testing.assert_allclose(np.concatenate(node_var[:3]), np.diag(covariance), atol=1e-9)
        assert np.all(np.isinf(node_var[3]))
        fan = np.bincount(parents[2], minlength=sizes[2])
        np.testing.assert_allclose(ours[3], (ours[2] / fan)[parents[2]], atol=1e-9)


@pytest.mark.slow
def test_gls_node_variances_match_monte_carlo() -> None:
    rng = np.random.default_rng(99)
    parents = [np.zeros(3, dtype=np.int64), np.array([0, 0, 1, 2, 2, 2]),
               np.array([0, 0, 1, 2, 2, 3, 4, 4, 5])]
    sizes = [1, 3, 6, 9]
    truth = aggregate(parents, sizes, rng.poisson(20, size=9).astype(float))
    var = [4.0, np.inf, 9.0, 2.5]
    trials = 4000
    estimates = np.empty((trials, sum(sizes)))
    for r in range(trials):
        noisy = [t + rng.normal(0.0, np.sqrt(v) if np.isfinite(v) else 0.0, size=t.size)
                 for t, v in zip(truth, var)]
        estimates[r] = np.concatenate(gls_estimate(parents, noisy, var, None))
    predicted = np.concatenate(gls_node_variances(parents, var, False))
    empirical = estimates.var(axis=0, ddof=1)
    standard_error = predicted * np.sqrt(2.0 / (trials - 1))  # of a Gaussian sample variance
    assert np.all(np.abs(empirical - predicted) < 4 * standard_error)
    bias = estimates.mean(axis=0) - np.concatenate(truth)
    assert np.all(np.abs(bias) < 4 * np.sqrt(predicted / trials))  # unbiased


def test_gls_known_root_ignores_the_root_variance_and_accepts_integer_counts() -> None:
    parents = [np.zeros(3, dtype=np.int64), np.array([0, 0, 1, 2, 2])]
    noisy_int = [np.array([0]), np.array([4, -1, 7]), np.array([2, 3, 0, 5, 1])]
    noisy_float = [v.astype(float) for v in noisy_int]
    reference = gls_estimate(parents, noisy_float, [np.inf, 2.0, 3.0], 12.0)
    for root_variance in (0.0, 1.0, np.inf):
        ours = gls_estimate(parents, noisy_int, [root_variance, 2.0, 3.0], 12.0)
        for a, b in zip(ours, reference):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
        node_var = gls_node_variances(parents, [root_variance, 2.0, 3.0], True)
        assert node_var[0][0] == 0.0
    assert reference[0][0] == 12.0
    for level, parent in enumerate(parents):
        np.testing.assert_allclose(np.bincount(parent, weights=reference[level + 1]), reference[level], atol=1e-12)
    # a chain (fan-out 1) copies the parent's estimate and variance
    chain = [np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)]
    estimate = gls_estimate(chain, [np.array([5.0]), np.array([9.0]), np.array([1.0])], [1.0, 1.0, 1.0], None)
    assert estimate[0][0] == pytest.approx(5.0) and estimate[2][0] == pytest.approx(5.0)
    variances = gls_node_variances(chain, [1.0, 1.0, 1.0], False)
    assert [float(v[0]) for v in variances] == pytest.approx([1 / 3, 1 / 3, 1 / 3])


def test_gls_bad_input() -> None:
    parents = [np.zeros(2, dtype=np.int64)]
    noisy = [np.zeros(1), np.ones(2)]
    with pytest.raises(ParameterError, match="level variances must be > 0"):
        gls_estimate(parents, noisy, [1.0, 0.0], None)
    with pytest.raises(ParameterError, match="got 3 level variances"):
        gls_estimate(parents, noisy, [1.0, 1.0, 1.0], None)
    with pytest.raises(ParameterError, match="no level of the tree is measured"):
        gls_estimate(parents, noisy, [np.inf, np.inf], None)
    with pytest.raises(ParameterError, match="level variances must be > 0"):
        gls_node_variances(parents, [0.0, 1.0], False)  # the root's entry matters when it is measured
    with pytest.raises(ParameterError, match="must be numbers"):
        gls_node_variances(parents, ["a", 1.0], False)  # type: ignore[list-item]
    with pytest.raises(ParameterError, match="known root is not finite"):
        gls_estimate(parents, noisy, [1.0, 1.0], float("nan"))


# ----------------------------------------------------------------------------------------------
# gls_consistent
# ----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_gls_consistent_is_consistent_non_negative_integers() -> None:
    rng = np.random.default_rng(61)
    for _ in range(1000):
        parents, sizes = random_tree(rng, int(rng.integers(2, 5)), max_fanout=4)
        noisy, root = random_noisy_levels(rng, parents, sizes)
        noisy = [np.clip(v, -1e9, 1e9) for v in noisy]
        var = _random_variances(rng, len(sizes))
        known = rng.random() < 0.5
        if not known and not np.isfinite(var[0]):
            var[0] = 5.0
        out = gls_consistent(parents, noisy, var, root if known else None)
        check_consistent(parents, sizes, out)
        if known:
            assert int(out[0][0]) == root
        else:
            estimate = gls_estimate(parents, noisy, var, None)
            assert int(out[0][0]) == max(0, int(np.round(estimate[0][0])))


def test_gls_consistent_is_topdown_of_the_gls_estimate() -> None:
    rng = np.random.default_rng(62)
    parents, sizes = random_tree(rng, 3, max_fanout=6)
    truth = aggregate(parents, sizes, rng.poisson(12, size=sizes[-1]))
    noisy = [t + rng.laplace(0, 2.0, size=t.size) for t in truth]
    var = [8.0] * 4
    N = int(truth[0][0])
    estimate = gls_estimate(parents, noisy, var, N)
    expected = topdown_consistent(parents, list(estimate), N)
    for a, b in zip(gls_consistent(parents, noisy, var, N), expected):
        assert np.array_equal(a, b)


def test_gls_consistent_rejects_a_fractional_known_root() -> None:
    with pytest.raises(ParameterError, match="whole number"):
        gls_consistent([np.zeros(2, dtype=np.int64)], [np.zeros(1), np.ones(2)], [1.0, 1.0], 2.5)
