"""GLS with the padding leaves as known zeros (docs/engine.md "The estimator",
"Exact projections").

(a) the estimate and every exact projection (per prefix, span totals, intervals) against an
independent dense constrained BLUE: the padding columns eliminated, the public root as an exact
constraint (not a huge precision); (b) Monte Carlo against the exact projection within 4 standard
errors; (c) consistency, padding exactly 0; (d) unpadded shapes keep the unknown-padding formulas.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgui.core.estimators import gls_estimate, gls_leaves
from dpgui.core.mechanism import add_noise, estimate_cumulative
from dpgui.core.noise import SeededRandom
from dpgui.core.plan import Plan, PrivacySpec, budget_total, split_budget
from dpgui.core.projection import (
    gls_eigenvalues, gls_total_coefficients, has_padding, interval_variance, prefix_basis, prefix_variances,
    total_coefficients, total_from_coefficients, total_sq_error,
)
from dpgui.core.simulation import SimulationResult, simulate
from dpgui.core.synthetic import synthetic_counts
from dpgui.core.tree import TreeShape

REL = 1e-9

SHAPES = [
    TreeShape(5, (2, 3)),
    TreeShape(7, (3, 3)),
    TreeShape(9, (3, 3)),  # unpadded
    TreeShape(13, (4, 4)),
    TreeShape(10, (3, 4), missing_leaf=True),
    TreeShape(11, (3, 4), missing_leaf=True),  # unpadded with the missing leaf
    TreeShape(20, (3, 2, 4)),
    TreeShape(9, (2, 2, 3), missing_leaf=True),
    TreeShape(40, (4, 3, 4)),
    TreeShape(33, (4, 3, 4), missing_leaf=True),
    TreeShape(11, (2, 2, 2, 2)),
    TreeShape(17, (2, 2, 2, 3), missing_leaf=True),
    TreeShape(30, (2, 4, 4)),
]


def _plan(shape: TreeShape, neighbours: str, noise: str, variant: str) -> Plan:
    """A GLS plan with random level weights; ``variant`` "unreleased" gives level 1 (and, under
    add/remove, the root) no budget."""
    privacy = PrivacySpec(1.3, neighbours, 2, delta=1e-6 if noise == "gaussian" else 0.0)
    rng = np.random.default_rng([shape.bins, *shape.branching, len(neighbours), len(noise), len(variant)])
    count = shape.height + (0 if neighbours == "change" else 1)
    weights = rng.uniform(0.5, 2.0, count)
    if variant == "unreleased":
        weights[1 - privacy.first_noised_level()] = 0.0  # level 1, internal (every shape here has h ≥ 2)
        if neighbours == "addremove":
            weights[0] = 0.0
    return Plan(shape, privacy, split_budget(budget_total(privacy, noise), weights), "gls", noise)


def _dense(plan: Plan, known_zeros: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """(A over the real leaves only — over all K̄ leaves if not ``known_zeros`` —, node precisions,
    (level, node) of each row, root public)."""
    shape, v = plan.shape, plan.level_variances()
    s = shape.leaves_per_node
    rows, w, where = [], [], []
    for level in range(shape.height + 1):
        if np.isinf(v[level]) or v[level] == 0:
            continue
        for node in range(shape.nodes_at_level(level)):
            row = np.zeros(shape.padded_bins)
            row[node * s[level]:(node + 1) * s[level]] = 1.0
            rows.append(row[:shape.leaves] if known_zeros else row)  # known zeros: padding columns eliminated
            w.append(1.0 / v[level])
            where.append((level, node))
    return np.array(rows), np.array(w), np.array(where), bool(v[0] == 0)


def _dense_blue(plan: Plan, levels: list[np.ndarray | None] | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Covariance of the BLUE of the real leaves and, given released ``levels``, the estimate. The public
    root is the exact constraint 1ᵀx = N: x = x_0 + Z u over a null-space basis Z of 1ᵀ."""
    a, w, where, root_public = _dense(plan)
    real = plan.shape.leaves
    y = None if levels is None else np.array([levels[lvl][node] for lvl, node in where])  # type: ignore[index]
    if not root_public:
        info = a.T @ (w[:, None] * a)
        cov = np.linalg.inv(info)
        return cov, None if y is None else cov @ (a.T @ (w * y))
    # null space of 1ᵀ: columns e_i − e_{i+1}
    z = np.zeros((real, real - 1))
    z[np.arange(real - 1), np.arange(real - 1)] = 1.0
    z[np.arange(1, real), np.arange(real - 1)] = -1.0
    reduced = z.T @ (a.T @ (w[:, None] * a)) @ z
    cov = z @ np.linalg.solve(reduced, z.T)
    if y is None:
        return cov, None
    total = float(levels[0][0])  # type: ignore[index]
    x0 = np.full(real, total / real)
    u = np.linalg.solve(reduced, z.T @ (a.T @ (w * (y - a @ x0))))
    return cov, x0 + z @ u


def _prefix_matrix(real: int) -> np.ndarray:
    return np.tril(np.ones((real, real)))


def _noisy_levels(plan: Plan, rng: np.random.Generator) -> tuple[list[np.ndarray | None], np.ndarray]:
    """Released levels from random counts with float noise on every released node, padding included
    (its noise must be ignored); returns the levels and the true real leaf counts."""
    shape = plan.shape
    counts = rng.integers(0, 30, shape.bins)
    missing = int(rng.integers(0, 5)) if shape.missing_leaf else 0
    true = shape.level_counts(counts, missing)
    v = plan.level_variances()
    levels: list[np.ndarray | None] = []
    for level in range(shape.height + 1):
        if v[level] == 0:
            levels.append(true[level].astype(float))
        elif np.isinf(v[level]):
            levels.append(None)
        else:
            levels.append(true[level] + rng.normal(0.0, 4.0, true[level].size))
    return levels, true[-1][:shape.leaves]


CASES = [(shape, neighbours, noise, variant) for shape in SHAPES for neighbours in ("change", "addremove")
         for noise in ("laplace", "gaussian") for variant in ("all", "unreleased")
         if not (shape.missing_leaf and neighbours == "addremove")]  # the missing leaf exists under change only


def _models(shape: TreeShape) -> tuple[str, ...]:
    return ("change",) if shape.missing_leaf else ("change", "addremove")


def _id(case: tuple[TreeShape, str, str, str]) -> str:
    shape, neighbours, noise, variant = case
    return f"{shape.bins}-{shape.label}{'+m' if shape.missing_leaf else ''}-{neighbours}-{noise}-{variant}"


# ==================================================================== (a) dense constrained BLUE
@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=_id)
def test_estimate_and_projections_equal_the_dense_constrained_blue(case):
    shape, neighbours, noise, variant = case
    plan = _plan(shape, neighbours, noise, variant)
    if variant == "unreleased":
        assert not all(plan.released())
    real = shape.leaves
    cov, _ = _dense_blue(plan)
    q = _prefix_matrix(real)
    dense = np.einsum("ij,jk,ik->i", q, cov, q)
    if plan.privacy.root_public:
        dense[-1] = 0.0  # Ĉ at the last real leaf is N
    got = prefix_variances(plan)
    np.testing.assert_allclose(got, dense, rtol=REL, atol=1e-10 * dense.max())
    assert total_sq_error(plan) == pytest.approx(dense.sum(), rel=REL)
    # span totals: the closed form equals Σ of the per-prefix variances over every span
    rng = np.random.default_rng(real)
    spans = {(1, real), (1, 1), (real, real)} | {tuple(sorted(rng.integers(1, real + 1, 2))) for _ in range(12)}
    for first, last in sorted(spans):
        coefficients = total_coefficients(shape, "gls", plan.released(), plan.privacy.root_public, (first, last))
        assert (coefficients.known_zeros is not None) == has_padding(shape)
        value = total_from_coefficients(shape, "gls", coefficients, plan.level_variances())
        assert value == pytest.approx(dense[first - 1:last].sum(), rel=REL, abs=1e-10 * dense.max()), (first, last)
    # intervals Var(Ĉ_t − Ĉ_s), Ĉ_0 = 0
    for s, t in sorted({(0, real), (0, 1), (real - 1, real)} | {tuple(sorted(rng.choice(real + 1, 2, replace=False)))
                                                                for _ in range(12)}):
        d = np.zeros(real)
        d[s:t] = 1.0
        if plan.privacy.root_public and t == real:
            d = -q[s - 1] if s > 0 else np.zeros(real)
        assert interval_variance(plan, int(s), int(t)) == pytest.approx(float(d @ cov @ d), rel=REL, abs=1e-10), (s, t)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=_id)
def test_gls_leaves_equal_the_dense_constrained_blue(case):
    shape, neighbours, noise, variant = case
    plan = _plan(shape, neighbours, noise, variant)
    rng = np.random.default_rng([shape.bins, *shape.branching, 5])
    for _ in range(3):
        levels, _truth = _noisy_levels(plan, rng)
        _, expected = _dense_blue(plan, levels)
        got = gls_leaves(shape, levels, plan.level_variances())
        assert expected is not None
        np.testing.assert_allclose(got[:shape.leaves], expected, rtol=0, atol=1e-9 * max(1.0, np.abs(expected).max()))
        assert np.all(got[shape.leaves:] == 0.0)


# ==================================================================== (b) Monte Carlo
MC_CASES = [
    (TreeShape(40, (4, 4, 4)), "addremove"),  # 24 padding leaves, over three levels
    (TreeShape(40, (4, 4, 4)), "change"),
    (TreeShape(150, (16, 16), missing_leaf=True), "change"),  # 105 padding leaves
]


@pytest.mark.slow
@pytest.mark.parametrize("shape,neighbours", MC_CASES, ids=lambda x: getattr(x, "label", str(x)))
def test_monte_carlo_agrees_with_the_exact_projection(shape, neighbours):
    """Squared errors of Ĉ_j (before consistency) over seeded releases: their means per prefix and the
    mean total within 4 standard errors of the exact projection, and the unknown-padding projection
    (what GLS gave before) outside them: the test could tell the two apart."""
    privacy = PrivacySpec(1.0, neighbours)
    count = shape.height + (0 if neighbours == "change" else 1)
    plan = Plan(shape, privacy, split_budget(1.0, np.linspace(1.0, 2.0, count)), "gls")
    counts = synthetic_counts("normal", 2000, shape.bins, seed=shape.bins)
    missing = 7 if shape.missing_leaf else 0
    truth = np.cumsum(np.append(counts, missing) if shape.missing_leaf else counts).astype(float)
    true_levels = shape.level_counts(counts, missing)
    source = SeededRandom(20261125)
    trials = 4000
    squared = np.empty((trials, shape.leaves))
    for trial in range(trials):
        estimate = estimate_cumulative(plan, add_noise(plan, true_levels, source))
        squared[trial] = (estimate - truth) ** 2
    exact = prefix_variances(plan)
    mean, se = squared.mean(axis=0), squared.std(axis=0, ddof=1) / math.sqrt(trials)
    for j in (0, shape.leaves // 3, shape.leaves // 2, shape.leaves - 2):
        assert abs(mean[j] - exact[j]) <= 4 * se[j], (j, mean[j], exact[j], se[j])
    totals = squared.sum(axis=1)
    total_mean, total_se = totals.mean(), totals.std(ddof=1) / math.sqrt(trials)
    assert abs(total_mean - total_sq_error(plan)) <= 4 * total_se
    # without the known zeros: the Haar terms alone
    j = np.arange(1, shape.leaves + 1)
    lam, lam_c = gls_eigenvalues(shape, plan.level_variances())
    unknown = prefix_basis(shape, "gls", plan.released(), j) @ (1.0 / lam)
    if np.isfinite(lam_c):
        unknown += j.astype(float) ** 2 / (shape.padded_bins * lam_c)
    if privacy.root_public:
        unknown[-1] = 0.0
    assert unknown.sum() - total_mean > 4 * total_se
    # the same through the simulation module (its counts are the K value bins: under change the
    # missing leaf's prefix is N, exact)
    sim = SimulationResult.summary(simulate(plan, counts, 1500, "none", seed=7, n_missing=missing).counts)
    assert abs(sim["mean_sq_l2"] - total_sq_error(plan)) <= 4 * sim["se_sq_l2"]


# ==================================================================== (c) consistency
@pytest.mark.parametrize("shape", [s for s in SHAPES if has_padding(s)], ids=lambda s: s.label)
def test_estimate_is_consistent_and_padding_is_zero(shape):
    for neighbours in _models(shape):
        plan = _plan(shape, neighbours, "laplace", "all")
        levels, _ = _noisy_levels(plan, np.random.default_rng(shape.bins))
        leaves = gls_leaves(shape, levels, plan.level_variances())
        assert np.all(leaves[shape.leaves:] == 0.0)
        # every node of the tree, summed from the leaves, equals the top-down estimate at its level:
        # the sum over the root is N when it is public
        if plan.privacy.root_public:
            assert leaves.sum() == pytest.approx(float(levels[0][0]), rel=1e-12)  # type: ignore[index]
        cumulative = gls_estimate(shape, levels, plan.level_variances())
        np.testing.assert_allclose(cumulative, np.cumsum(leaves)[:shape.leaves], rtol=0, atol=1e-9)
        # an internal node wholly inside the padding is estimated 0 whatever its noisy count
        noisy = [None if lvl is None else lvl.copy() for lvl in levels]
        for level in range(1, shape.height):
            if noisy[level] is not None:
                size = shape.leaves_per_node[level]
                padding_nodes = np.arange(shape.nodes_at_level(level)) * size >= shape.leaves
                noisy[level][padding_nodes] += 1000.0  # type: ignore[index]
        np.testing.assert_allclose(gls_leaves(shape, noisy, plan.level_variances()), leaves, rtol=0, atol=1e-9)


# ==================================================================== (d) unpadded shapes unchanged
@pytest.mark.parametrize("shape", [TreeShape(9, (3, 3)), TreeShape(11, (3, 4), missing_leaf=True),
                                   TreeShape(16, (2, 2, 2, 2)), TreeShape(255, (16, 16), missing_leaf=True)],
                         ids=lambda s: s.label)
def test_unpadded_shapes_keep_the_haar_formulas(shape):
    assert not has_padding(shape)
    for neighbours in _models(shape):
        plan = _plan(shape, neighbours, "laplace", "all")
        v = plan.level_variances()
        lam, lam_c = gls_eigenvalues(shape, v)
        j = np.arange(1, shape.leaves + 1)
        haar_prefix = prefix_basis(shape, "gls", plan.released(), j) @ (1.0 / lam)
        if np.isfinite(lam_c):
            haar_prefix += j.astype(float) ** 2 / (shape.padded_bins * lam_c)
        if plan.privacy.root_public:
            haar_prefix[-1] = 0.0
        np.testing.assert_array_equal(prefix_variances(plan, j), np.maximum(haar_prefix, 0.0))
        coefficients = total_coefficients(shape, "gls", plan.released(), plan.privacy.root_public)
        assert coefficients.known_zeros is None
        a_m, a_c = gls_total_coefficients(shape, plan.privacy.root_public)
        haar = float(a_m @ (1.0 / lam) + (a_c / lam_c if np.isfinite(lam_c) else 0.0))
        assert total_from_coefficients(shape, "gls", coefficients, v) == haar


# ==================================================================== the planner
@pytest.mark.parametrize("estimator", ["gls", "covering"])
def test_level_one_nodes_wholly_in_the_padding_change_nothing(estimator):
    """21x13 and 20x13 over 257 leaves: the 21st level-1 node is all padding (known zeros), so every prefix's
    error is the same, and the planner keeps only the smaller tree."""
    from dpgui.core.planner import _distinct

    privacy = PrivacySpec(1.0)
    wide, narrow = TreeShape(256, (21, 13), True), TreeShape(256, (20, 13), True)
    budgets = (0.4, 0.6)
    np.testing.assert_allclose(prefix_variances(Plan(wide, privacy, budgets, estimator)),
                               prefix_variances(Plan(narrow, privacy, budgets, estimator)), rtol=1e-12)
    assert [s.branching for s in _distinct([wide, narrow, TreeShape(256, (13, 20), True)])] == [(20, 13), (13, 20)]


@pytest.mark.slow
@pytest.mark.parametrize("bins,neighbours", [(256, "change"), (4096, "change"), (256, "addremove"), (4096, "addremove")])
def test_auto_plan_beats_every_candidate_at_its_first_split(bins, neighbours):
    """The ranking finds the shape that is best at the covering sum's optimal split among all candidates (the
    winner is at least as good as it, up to the plan's rounding of noise scales), with padding as known zeros."""
    from dpgui.core.level_budgets import optimise_budgets
    from dpgui.core.planner import _distinct, _projected_total, auto_plan, candidate_shapes

    privacy = PrivacySpec(1.0, neighbours)
    plan = auto_plan(bins, privacy)
    best_first = min(_projected_total(s, privacy, "gls", optimise_budgets(s, privacy, "covering", "total"), "laplace")
                     for s in _distinct(candidate_shapes(bins, missing_leaf=privacy.missing_leaf)))
    assert total_sq_error(plan) <= best_first * (1 + 1e-4)


# ==================================================================== releases made before (padding unknown)
def _dense_unknown(plan: Plan, levels: list[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray]:
    """Covariance and estimate of the BLUE of all K̄ leaves with the padding unknown (what GLS did before)."""
    shape = plan.shape
    a, weights, where, root_public = _dense(plan, known_zeros=False)
    values = np.array([levels[lvl][node] for lvl, node in where])  # type: ignore[index]
    info = a.T @ (weights[:, None] * a)
    cov = np.linalg.inv(info)
    estimate = cov @ (a.T @ (weights * values))
    if root_public:  # 1ᵀx = N exactly
        one = np.ones(shape.padded_bins)
        u = cov @ one
        estimate = estimate - u * ((one @ estimate - float(levels[0][0])) / (one @ u))  # type: ignore[index]
        cov = cov - np.outer(u, u) / (one @ u)
    return cov, estimate


@pytest.mark.parametrize("shape", [TreeShape(13, (4, 4)), TreeShape(10, (3, 4), missing_leaf=True),
                                   TreeShape(20, (3, 2, 4))], ids=lambda s: s.label)
def test_padding_unknown_gives_the_estimate_of_before(shape):
    """``padding_known=False``: the unknown-padding BLUE and its variances, for releases made before."""
    from dpgui.core.mechanism import release_from_levels

    for neighbours in _models(shape):
        plan = _plan(shape, neighbours, "laplace", "all")
        levels, _ = _noisy_levels(plan, np.random.default_rng(shape.bins + 1))
        cov, expected = _dense_unknown(plan, levels)
        got = gls_leaves(shape, levels, plan.level_variances(), padding_known=False)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9 * max(1.0, np.abs(expected).max()))
        assert np.any(np.abs(got[:shape.leaves] - gls_leaves(shape, levels, plan.level_variances())[:shape.leaves]) > 1e-6)
        q = np.tril(np.ones((shape.leaves, shape.padded_bins)))
        dense = np.einsum("ij,jk,ik->i", q, cov, q)
        if plan.privacy.root_public:
            dense[-1] = 0.0
        np.testing.assert_allclose(prefix_variances(plan, padding_known=False), dense, rtol=REL,
                                   atol=1e-10 * dense.max())
        d = np.zeros(shape.padded_bins)
        d[2:shape.leaves - 1] = 1.0
        assert interval_variance(plan, 2, shape.leaves - 1, padding_known=False) == pytest.approx(float(d @ cov @ d),
                                                                                                  rel=REL)
        integer_levels = [None if lvl is None else np.rint(lvl).astype(np.int64) for lvl in levels]
        before = release_from_levels(plan, integer_levels, 0.0, 1.0, "none", False, padding_known=False)
        assert not before.padding_known
        np.testing.assert_allclose(before.std_error ** 2, prefix_variances(plan, padding_known=False)[:shape.bins])
