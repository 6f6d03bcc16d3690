"""Tests for dpgui.core.counting_trees and counting_trees_accuracy (Ghazi, Kamath, Kumar, Manurangsi & Wu 2023,
"On Differentially Private Counting on Trees").

Privacy figures are checked by independent computations: the discrete truncated Laplace's δ by
enumerating its pmf on neighbouring inputs, the sparse vector's ε by the exact output distribution of
AboveThreshold with discrete Laplace noise, the per-primitive ε by OpenDP's privacy map, the
composition by re-deriving the round budgets from the paper's formulas. Statistical tests use fixed
seeds and tolerances from binomial / Monte Carlo standard errors.
"""

from __future__ import annotations

import dataclasses
import decimal
import math
from fractions import Fraction

import numpy as np
import pytest

from dpgui.core.accounting import cdp_delta
from dpgui.core.counting_trees import (
    MultiplicativeParams, group_privacy, multiplicative_intervals, multiplicative_params, multiplicative_privacy,
    per_record_budget, release_multiplicative, sample_truncated_discrete_laplace, truncated_laplace_delta,
    truncation_bound,
)
from dpgui.core.counting_trees_accuracy import (
    alpha_mrmse, alpha_rmse, gaussian_alpha_rmse, gaussian_baseline_sigma2, projected_alpha_mrmse,
    recommend_alpha_mechanism, release_gaussian_baseline, simulate_alpha_mrmse,
)
from dpgui.core.noise import SeededRandom, sample_discrete_gaussian
from dpgui.core.noise_moments import discrete_gaussian_variance
from dpgui.core.plan import PrivacySpec
from dpgui.errors import DataError, ParameterError

# ----------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------


def make_tree(fanouts: list[int], seed: int, decades: float = 6.0, zero_share: float = 0.2):
    """A complete tree with the given fan-outs; leaf counts 10^U(0, decades) (floored), some zeros.
    Returns (parents, levels root first)."""
    rng = np.random.default_rng(seed)
    parents, sizes = [], [1]
    for f in fanouts:
        parents.append(np.repeat(np.arange(sizes[-1], dtype=np.int64), f))
        sizes.append(sizes[-1] * f)
    leaves = np.floor(10 ** rng.uniform(0, decades, sizes[-1])).astype(np.int64)
    leaves[rng.random(sizes[-1]) < zero_share] = 0
    levels = [leaves]
    for p, n in zip(parents[::-1], sizes[-2::-1]):
        levels.append(np.bincount(p, weights=levels[-1], minlength=n).astype(np.int64))
    return parents, levels[::-1]


def dlap_pmf_table(scale: float, half: int) -> tuple[np.ndarray, np.ndarray]:
    """Support −half..half and the discrete Laplace pmf, normalised by summation (not the module's formula)."""
    z = np.arange(-half, half + 1)
    w = np.exp(-np.abs(z) / scale)
    return z, w / w.sum()


def hockey_stick(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    return float(np.maximum(p - math.exp(eps) * q, 0.0).sum())


# ----------------------------------------------------------------------------------------
# Definition 1.4
# ----------------------------------------------------------------------------------------


def test_alpha_rmse_by_hand():
    truth = np.array([0, 10, 100])
    est = np.array([[3, 10, 130], [-1, 16, 100]])
    # excess: node 0: 3, 1; node 1: 0, max(6 − 5, 0) = 1; node 2: max(30 − 50, 0) = 0, 0  (α = 0.5)
    per = alpha_rmse(est, truth, 0.5)
    assert np.allclose(per, [math.sqrt((9 + 1) / 2), math.sqrt(1 / 2), 0.0])
    assert alpha_mrmse(est, truth, 0.5) == pytest.approx(math.sqrt(5))
    # α = 0 is the ordinary RMSE
    assert alpha_mrmse(est, truth, 0.0) == pytest.approx(math.sqrt((30**2 + 0) / 2))
    with pytest.raises(ParameterError):
        alpha_mrmse(est, truth[:2], 0.5)


# ----------------------------------------------------------------------------------------
# Discrete truncated Laplace: δ by enumeration, sampler vs pmf
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("scale,bound", [(1.0, 0), (0.7, 3), (3.0, 5), (16.0, 40), (250.0, 2000)])
def test_truncated_laplace_delta_by_enumeration(scale, bound):
    # Output distributions of x + Z on x = 0 and x' = 1 over the union of supports.
    _, pmf = dlap_pmf_table(scale, bound)
    p = np.concatenate([pmf, [0.0]])  # outputs −R..R+1 on input 0
    q = np.concatenate([[0.0], pmf])  # the same outputs on input 1
    eps = 1.0 / scale
    common = (p > 0) & (q > 0)
    if common.any():
        assert np.max(np.abs(np.log(p[common] / q[common]))) <= eps * (1 + 1e-12)
    delta_enum = max(hockey_stick(p, q, eps), hockey_stick(q, p, eps))
    assert truncated_laplace_delta(scale, bound) == pytest.approx(delta_enum, rel=1e-9)


@pytest.mark.parametrize("scale,delta", [(2.0, 1e-3), (16.0, 1e-6), (512.0, 1e-9)])
def test_truncation_bound_is_the_least(scale, delta):
    R = truncation_bound(scale, delta)
    assert truncated_laplace_delta(scale, R) <= delta
    if R > 0:
        assert truncated_laplace_delta(scale, R - 1) > delta * (1 - 1e-6)


def test_truncated_sampler_matches_pmf():
    scale, bound, n = Fraction(3), 5, 200_000
    draws = sample_truncated_discrete_laplace(SeededRandom(11), scale, bound, n)
    assert draws.min() >= -bound and draws.max() <= bound
    z, pmf = dlap_pmf_table(3.0, bound)
    freq = np.bincount(draws + bound, minlength=z.size) / n
    se = np.sqrt(pmf * (1 - pmf) / n)
    assert np.all(np.abs(freq - pmf) <= 4 * se)


def test_group_privacy_bounds_the_k_shift_by_enumeration():
    # A sensitivity-k query under TDLap(t, R): the exact δ at kε is below Fact 2.2's group bound.
    scale, bound = 4.0, 30
    eps, delta = 1 / scale, truncated_laplace_delta(scale, bound)
    _, pmf = dlap_pmf_table(scale, bound)
    for k in (2, 3, 6):
        p = np.concatenate([pmf, np.zeros(k)])
        q = np.concatenate([np.zeros(k), pmf])
        g_eps, g_delta = group_privacy(eps, delta, k)
        assert g_eps == pytest.approx(k * eps)
        assert max(hockey_stick(p, q, g_eps), hockey_stick(q, p, g_eps)) <= g_delta * (1 + 1e-12)


def test_per_record_budget_inverts_group_privacy():
    for nb, L in (("change", 1), ("change", 3), ("addremove", 1), ("addremove", 4)):
        spec = PrivacySpec(1.3, nb, L, 1e-7)
        eps0, delta0, k = per_record_budget(spec)
        assert k == spec.level_sensitivity
        e, d = group_privacy(eps0, delta0, k)
        assert e == pytest.approx(1.3) and d == pytest.approx(1e-7)


# ----------------------------------------------------------------------------------------
# Sparse vector with discrete Laplace: exact output distribution on neighbours
# ----------------------------------------------------------------------------------------


def _above_threshold_dist(f: list[int], tau: int, t_rho: float, t_nu: float) -> np.ndarray:
    """Exact P(first ⊤ at query k) for k = 1..m and P(all ⊥) (last entry) of AboveThreshold:
    ρ ~ DLap(t_rho), ν_j ~ DLap(t_nu), answer ⊤ iff f_j + ν_j − ρ ≥ τ."""
    half = 60 * int(max(t_rho, t_nu)) + 60
    r, pr = dlap_pmf_table(t_rho, half)
    v, pv = dlap_pmf_table(t_nu, 2 * half)
    cdf = np.cumsum(pv)  # P(ν ≤ v[i])

    def p_below(m: np.ndarray) -> np.ndarray:  # P(ν < m) = P(ν ≤ m − 1)
        idx = np.clip(m - 1 - v[0], -1, v.size - 1)
        return np.where(idx < 0, 0.0, cdf[np.maximum(idx, 0)])

    out = []
    stay = np.ones_like(pr)
    for fj in f:
        below = p_below(tau + r - fj)
        out.append(float(np.dot(pr, stay * (1 - below))))
        stay = stay * below
    out.append(float(np.dot(pr, stay)))
    return np.array(out)


@pytest.mark.parametrize("fx,fy", [([3, 5, 4, 6], [4, 4, 5, 5]), ([0, 0, 9], [1, 1, 8]), ([7, 2, 7], [6, 3, 8])])
def test_sparse_vector_epsilon_by_exact_distribution(fx, fy):
    t_rho, t_nu, tau = 2.0, 4.0, 6
    claimed = 1 / t_rho + 2 / t_nu  # the module docstring's cost of one AboveThreshold instance
    p = _above_threshold_dist(fx, tau, t_rho, t_nu)
    q = _above_threshold_dist(fy, tau, t_rho, t_nu)
    assert p.sum() == pytest.approx(1.0) and q.sum() == pytest.approx(1.0)
    assert np.max(np.abs(np.log(p / q))) <= claimed + 1e-9


# ----------------------------------------------------------------------------------------
# Composition: recomputed from the paper's formulas, OpenDP for the Laplace maps
# ----------------------------------------------------------------------------------------


def _top_mass(scale: float, bound: int) -> float:
    """P(Z = R) of the discrete Laplace truncated to |z| ≤ R: by summing the pmf where that is
    feasible (R ≤ 200,000), else the normaliser 1 + 2 Σ_{k=1..R} q^k in 60-digit decimal arithmetic."""
    if bound <= 200_000:
        _, pmf = dlap_pmf_table(scale, bound)
        return float(pmf[-1])
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        q = (decimal.Decimal(-1) / decimal.Decimal(scale)).exp()
        qR = q ** bound
        norm = 1 + 2 * q * (1 - qR) / (1 - q)
        return float(qR / norm)


@pytest.mark.parametrize("nb,L,eps,delta,alpha", [
    ("change", 1, 1.0, 1e-6, 0.5), ("addremove", 1, 1.0, 1e-6, 0.5),
    ("addremove", 3, 2.0, 1e-9, 0.3), ("change", 2, 0.5, 1e-5, 0.8),
])
def test_multiplicative_privacy_independent_recomputation(nb, L, eps, delta, alpha):
    spec = PrivacySpec(eps, nb, L, delta)
    params = multiplicative_params((1, 8, 64, 512), spec, alpha, 0.05)
    # Per-record budget (group privacy over k add/removes, Fact 2.2), written out again.
    k = (2 if nb == "change" else 1) * L
    eps0 = eps / k
    delta0 = delta * (math.exp(eps0) - 1) / (math.exp(eps) - 1)
    eps_red, delta_red = (eps0, delta0) if nb == "change" else (eps0 / 2, delta0 / 2)
    beta = alpha / (6 + 5 * alpha)
    rho = (1 + beta) / ((1 + alpha) * (1 - beta))
    C = sum(i * rho ** (i - 1) for i in range(1, 10_000))  # Σ i ρ^{i−1}, the corrected normaliser
    c = 2
    total_eps = Fraction(0)
    total_delta = 0.0
    for i in range(1, params.rounds + 1):
        eps_i = eps_red * i * rho ** (i - 1) / C
        delta_i = delta_red * i * rho ** (i - 1) / C
        tr, tn, tc, R = (params.threshold_scales[i - 1], params.query_scales[i - 1],
                         params.count_scales[i - 1], params.count_bounds[i - 1])
        assert float(tr) >= 4 * c / eps_i * (1 - 1e-12) and float(tn) >= 8 * c / eps_i * (1 - 1e-12)
        assert float(tc) >= 2 * c / eps_i * (1 - 1e-12)
        total_eps += c * (1 / tr + 2 / tn + 1 / tc)
        d_round = _top_mass(float(tc), R)
        assert d_round <= delta_i / c * (1 + 1e-9)
        total_delta += c * d_round
    if nb == "addremove":
        assert params.root_scale is not None and params.root_bound is not None
        total_eps += 1 / params.root_scale
        total_delta += _top_mass(float(params.root_scale), params.root_bound)
    else:
        assert params.root_scale is None
    g_eps = k * float(total_eps)
    g_delta = total_delta * (math.exp(k * float(total_eps)) - 1) / (math.exp(float(total_eps)) - 1) if k > 1 else total_delta
    spent = multiplicative_privacy(params)
    assert spent[0] == pytest.approx(g_eps, rel=1e-12)
    assert spent[1] == pytest.approx(g_delta, rel=1e-6)
    assert spent[0] <= eps * (1 + 1e-12) and spent[1] <= delta
    assert spent[0] >= 0.99 * eps  # the budget is used, not wasted


def test_discrete_laplace_maps_agree_with_opendp():
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    params = multiplicative_params((1, 4, 16), PrivacySpec(1.0, "addremove", 1, 1e-6), 0.5)
    for scale in (params.threshold_scales[0], params.query_scales[3], params.count_scales[-1], params.root_scale):
        assert scale is not None
        meas = dp.m.make_laplace(dp.atom_domain(T=int), dp.absolute_distance(T=int), float(scale))
        assert meas.map(1) == pytest.approx(float(1 / scale), rel=1e-9)
        assert meas.map(2) == pytest.approx(float(2 / scale), rel=1e-9)


def test_tau_min_meets_the_per_round_conditions_and_beats_the_closed_form():
    params = multiplicative_params((1, 10, 100, 1000), PrivacySpec(1.0, "change", 1, 1e-6), 0.5, 0.05)
    b = params.beta
    for tau, margin, R in zip(params.thresholds, params.margins, params.count_bounds):
        assert margin + 2 * R <= b * tau  # Lemma 4.3's proof: Δ + 2R ≤ β τ_i
    for i, (tau, bucket) in enumerate(zip(params.thresholds, params.buckets), start=1):
        # Lemma 4.6's (4)–(6): M_{i−1} ≥ (1+β) τ_i, (1−β) τ_i ≤ M_i ≤ (1+α)(1−β) τ_i
        prev = params.bucket_zero if i == 1 else params.buckets[i - 2]
        assert prev >= (1 + b) * tau * (1 - 1e-12)
        assert (1 - b) * tau <= bucket <= (1 + params.alpha) * (1 - b) * tau * (1 + 1e-12)
    assert params.buckets[-1] >= 2.0**40
    assert params.tau_min < params.tau_min_paper


# ----------------------------------------------------------------------------------------
# The (α, η) guarantee, empirically (Problem 3.1 with τ_u = τ_min)
# ----------------------------------------------------------------------------------------

ACCURACY_TREES = {  # levels d = len(fanouts) + 1
    4: [3, 3, 3],
    6: [2, 3, 2, 3, 2],
    9: [2] * 8,
    12: [2] * 11,
}


def _failure_counts(parents, levels, params, trials, seed):
    rng = SeededRandom(seed)
    truth = np.concatenate(levels).astype(np.float64)
    tol = params.alpha * np.maximum(truth, params.tau_min)
    fails = np.zeros(truth.size, dtype=np.int64)
    exact_bucket_hits = np.zeros(truth.size, dtype=np.int64)
    misses = np.zeros(truth.size, dtype=np.int64)  # true count outside multiplicative_intervals
    for _ in range(trials):
        released = release_multiplicative(parents, levels, params, rng)
        lower, upper = multiplicative_intervals(released, params)
        out = np.concatenate(released).astype(np.float64)
        assert np.all(out >= 0) and np.all(out == np.floor(out))
        fails += np.abs(out - truth) > tol
        exact_bucket_hits += out == _expected_bucket(truth, params)
        misses += (truth < np.concatenate(lower)) | (truth > np.concatenate(upper))
    return truth, fails, exact_bucket_hits, misses


def _expected_bucket(truth: np.ndarray, params: MultiplicativeParams) -> np.ndarray:
    """Where a node must land when it is far from every threshold: w ∈ [(1+β)τ_i, (1−β)τ_{i+1}) is
    ⊤ in round i and ⊥ in round i + 1, so it is released as ⌊M_i⌋; w < (1−β)τ_1 gets ⌊M_0⌋. NaN elsewhere."""
    b = params.beta
    out = np.full(truth.size, np.nan)
    out[truth < (1 - b) * params.thresholds[0]] = math.floor(params.bucket_zero)
    for i in range(len(params.thresholds) - 1):
        lo, hi = (1 + b) * params.thresholds[i], (1 - b) * params.thresholds[i + 1]
        out[(truth >= lo) & (truth < hi)] = math.floor(params.buckets[i])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("depth", sorted(ACCURACY_TREES))
def test_alpha_eta_guarantee_holds_empirically(depth):
    eta, alpha, trials = 0.05, 0.5, 25
    parents, levels = make_tree(ACCURACY_TREES[depth], seed=depth, decades=7.0)
    spec = PrivacySpec(2.0, "addremove", 1, 1e-6)
    params = multiplicative_params([v.size for v in levels], spec, alpha, eta)
    truth, fails, hits, misses = _failure_counts(parents, levels, params, trials, seed=100 + depth)
    # Counts span many orders of magnitude, on both sides of τ_min.
    assert truth.max() > 100 * params.tau_min and (truth < params.tau_min).sum() > 0
    # Per node: failure frequency ≤ η + 3 binomial SEs; over all nodes ≤ η + 3 SEs (pooled).
    per_node_tol = eta + 3 * math.sqrt(eta * (1 - eta) / trials)
    assert np.all(fails / trials <= per_node_tol)
    pooled = fails.sum() / (trials * truth.size)
    assert pooled <= eta + 3 * math.sqrt(eta * (1 - eta) / (trials * truth.size))
    # The intervals cover with probability ≥ 1 − η per node, too.
    assert np.all(misses / trials <= per_node_tol)
    # Nodes far from the thresholds land in their exact bucket (with probability ≥ 1 − η each).
    far = ~np.isnan(_expected_bucket(truth, params))
    assert far.sum() > truth.size // 3
    assert hits[far].sum() / (trials * far.sum()) >= 1 - eta - 3 * math.sqrt(eta * (1 - eta) / (trials * far.sum()))


@pytest.mark.slow
def test_guarantee_check_has_power_against_an_off_by_one_bucket():
    # The check above must fail a plausible bug: releasing the next bucket up (⌊M_{i+1}⌋ for ⊤ in round i).
    # (The (α, η) bound itself has a large slack: noise 30 times too large still meets it on this tree,
    # which is why the privacy accounting is tested separately and exactly.)
    parents, levels = make_tree([2] * 8, seed=9, decades=7.0)
    spec = PrivacySpec(2.0, "addremove", 1, 1e-6)
    params = multiplicative_params([v.size for v in levels], spec, 0.5, 0.05)
    shifted = dataclasses.replace(params, bucket_zero=params.buckets[0],
                                  buckets=params.buckets[1:] + (params.buckets[-1] * params.ratio,))
    truth, fails, _, _ = _failure_counts(parents, levels, shifted, 10, seed=5)
    assert fails.sum() / (10 * truth.size) > 0.05 + 3 * math.sqrt(0.05 * 0.95 / (10 * truth.size))


# ----------------------------------------------------------------------------------------
# Release contract
# ----------------------------------------------------------------------------------------


def test_release_contract_root_and_integers():
    parents, levels = make_tree([5, 4, 20], seed=3, decades=6.0)
    sizes = [v.size for v in levels]
    pc = multiplicative_params(sizes, PrivacySpec(1.0, "change", 1, 1e-6), 0.5)
    out = release_multiplicative(parents, levels, pc, SeededRandom(1))
    assert [o.size for o in out] == sizes and all(o.dtype == np.int64 for o in out)
    assert out[0][0] == levels[0][0]  # change: N is public and exact
    assert all(np.all(o >= 0) for o in out)
    pa = multiplicative_params(sizes, PrivacySpec(1.0, "addremove", 1, 1e-6), 0.5)
    out_a = release_multiplicative(parents, levels, pa, SeededRandom(2))
    assert abs(out_a[0][0] - levels[0][0]) <= pa.alpha * max(levels[0][0], pa.tau_min)
    with pytest.raises(DataError):
        release_multiplicative(parents, levels[:-1], pc, SeededRandom(1))
    with pytest.raises(DataError):
        release_multiplicative(parents[:1], levels[:2], pc, SeededRandom(1))


def test_bad_parameters_have_clear_messages():
    spec = PrivacySpec(1.0, "change", 1, 1e-6)
    with pytest.raises(ParameterError, match="δ > 0"):
        multiplicative_params((1, 3), PrivacySpec(1.0), 0.5)
    with pytest.raises(ParameterError, match="α must be in"):
        multiplicative_params((1, 3), spec, 1.5)
    with pytest.raises(ParameterError, match="η must be in"):
        multiplicative_params((1, 3), spec, 0.5, 0.7)
    with pytest.raises(ParameterError, match="level sizes"):
        multiplicative_params((2, 3), spec, 0.5)
    with pytest.raises(ParameterError, match="unknown mechanism"):
        projected_alpha_mrmse((1, 3), spec, 0.5, "laplace")


def test_params_json_round_trip():
    params = multiplicative_params((1, 3, 9), PrivacySpec(0.7, "addremove", 2, 1e-8), 0.4, 0.1)
    again = MultiplicativeParams.from_json(params.to_json())
    assert again == params
    assert multiplicative_privacy(again) == multiplicative_privacy(params)
    with pytest.raises(ParameterError):
        MultiplicativeParams.from_json({"alpha": 0.5})


# ----------------------------------------------------------------------------------------
# Gaussian baseline and projections
# ----------------------------------------------------------------------------------------


def test_gaussian_baseline_privacy_independent():
    for nb, L in (("change", 1), ("addremove", 2)):
        spec = PrivacySpec(1.0, nb, L, 1e-6)
        sig = gaussian_baseline_sigma2((1, 10, 100, 1000), spec)
        assert (sig[0] is None) == (nb == "change")
        d2 = (2 if nb == "change" else 1) * L * L
        rho = sum(d2 / (2 * float(s)) for s in sig if s is not None)  # CKS Thm 14 per level, summed
        assert rho <= spec.rho * (1 + 1e-12)
        assert cdp_delta(rho, 1.0) <= 1e-6 * (1 + 1e-9)


def test_gaussian_alpha_rmse_matches_monte_carlo():
    spec = PrivacySpec(1.0, "addremove", 1, 1e-6)
    levels = [np.array([40]), np.array([0, 5, 35])]
    sig = gaussian_baseline_sigma2((1, 3), spec)
    trials = 20_000
    rng = SeededRandom(7)
    once = release_gaussian_baseline(levels, spec, rng)
    assert [o.dtype for o in once] == [np.int64, np.int64]
    truth = np.concatenate(levels)
    noise = np.column_stack([sample_discrete_gaussian(rng, sig[0], trials)] +
                            [sample_discrete_gaussian(rng, sig[1], trials) for _ in range(3)])
    draws = truth[None, :] + noise
    ex = np.maximum(np.abs(draws - truth) - 0.3 * truth, 0.0) ** 2
    exact = np.concatenate([gaussian_alpha_rmse(levels[0], float(sig[0]), 0.3),
                            gaussian_alpha_rmse(levels[1], float(sig[1]), 0.3)]) ** 2
    se = ex.std(axis=0) / math.sqrt(trials)
    assert np.all(np.abs(ex.mean(axis=0) - exact) <= 3 * se + 1e-12)
    # at count 0 the α-RMSE is the standard deviation
    assert gaussian_alpha_rmse(np.array([0]), float(sig[1]), 0.3)[0] == pytest.approx(
        math.sqrt(float(discrete_gaussian_variance(float(sig[1])))), rel=1e-9)


def test_multiplicative_projection_matches_simulation_on_a_prior_tree():
    parents, levels = make_tree([4, 4, 8], seed=21, decades=6.5)
    spec = PrivacySpec(1.0, "change", 1, 1e-6)
    proj = projected_alpha_mrmse([v.size for v in levels], spec, 0.5, "multiplicative", levels)
    sim = simulate_alpha_mrmse(parents, levels, spec, 0.5, "multiplicative", trials=8, seed=3)
    for a, b in zip(proj.levels, sim.levels):
        assert a.alpha_rmse == pytest.approx(b.alpha_rmse, abs=1e-6)
    worst = projected_alpha_mrmse([v.size for v in levels], spec, 0.5, "multiplicative")
    assert worst.alpha_mrmse == math.floor(worst.params.bucket_zero)  # an empty node: ⌊α τ_min⌋


def test_projection_is_honest_gaussian_wins_on_realistic_trees():
    sizes = (1, 10, 100, 1000, 100_000)
    spec = PrivacySpec(1.0, "change", 1, 1e-6)
    best, g, m = recommend_alpha_mechanism(sizes, spec, 0.5)
    assert best == "gaussian"
    assert m.params is not None and m.params.tau_min > 1e4
    assert m.alpha_mrmse > 1000 * g.alpha_mrmse
    assert [f.level for f in g.levels] == [0, 1, 2, 3, 4] and g.levels[0].alpha_rmse == 0.0


# ----------------------------------------------------------------------------------------
# Algorithm 1 end to end on a two-leaf tree: exact output distribution, its privacy, and the code
# ----------------------------------------------------------------------------------------

T_RHO, T_NU, T_CNT, BOUND, TAU, MARGIN, CUTOFF = 2.0, 4.0, 2.0, 3, 10.0, 4.0, 2


def _classification_distribution(a: int, b: int) -> dict[tuple[bool, bool, bool], float]:
    """Exact P(labels of (root, leaf a, leaf b)) of Algorithm 1 (as the module implements it) on the
    tree root → {a, b}: level 1 is queried first (f = max(a, b)), then the root if still undecided."""
    root = a + b
    half = 200
    r, pr = dlap_pmf_table(T_RHO, half)
    v, pv = dlap_pmf_table(T_NU, 2 * half)
    tail = np.cumsum(pv[::-1])[::-1]  # P(ν ≥ v[i])

    def p_at_least(m: np.ndarray) -> np.ndarray:
        idx = np.clip(m - v[0], 0, v.size)
        return np.where(idx >= v.size, 0.0, tail[np.minimum(idx, v.size - 1)])

    zt, pt = dlap_pmf_table(T_CNT, BOUND)
    keep = math.ceil(TAU - MARGIN - BOUND)

    def p_raise(w: int) -> float:
        return float(pt[w + zt >= keep].sum())

    tau = math.ceil(TAU)
    top1 = p_at_least(tau - max(a, b) + r)  # per ρ0 value
    root_q0 = p_at_least(tau - root + r)  # root asked with the same ρ0 (no top yet)
    root_q1 = float(np.dot(pr, p_at_least(tau - root + r)))  # root asked with a fresh ρ1 after one top
    pa, pb, proot = p_raise(a), p_raise(b), p_raise(root)
    out: dict[tuple[bool, bool, bool], float] = {}

    def add(key: tuple[bool, bool, bool], p: float) -> None:
        out[key] = out.get(key, 0.0) + p

    no_top = float(np.dot(pr, (1 - top1) * root_q0))  # level 1 ⊥, root query ⊤
    all_bottom = float(np.dot(pr, (1 - top1) * (1 - root_q0)))
    add((True, False, False), no_top * proot)
    add((False, False, False), no_top * (1 - proot) + all_bottom)
    t1 = float(np.dot(pr, top1))
    for ra in (True, False):
        for rb in (True, False):
            p_leaves = (pa if ra else 1 - pa) * (pb if rb else 1 - pb)
            if ra or rb:
                add((True, ra, rb), t1 * p_leaves)
            else:  # both leaves ⊥: the root is asked against a fresh threshold (one top used, c = 2)
                add((True, False, False), t1 * p_leaves * root_q1 * proot)
                add((False, False, False), t1 * p_leaves * (1 - root_q1 * proot))
    return out


@pytest.mark.slow
def test_classification_exact_distribution_is_private_and_matches_the_code():
    from dpgui.core.counting_trees import _classify

    claimed_eps = CUTOFF * (1 / T_RHO + 2 / T_NU + 1 / T_CNT)
    claimed_delta = CUTOFF * truncated_laplace_delta(T_CNT, BOUND)
    keys = [(r, x, y) for r in (True, False) for x in (True, False) for y in (True, False)]
    for (a, b), (a2, b2) in (((6, 5), (7, 5)), ((3, 9), (3, 8)), ((0, 0), (1, 0)), ((8, 8), (8, 9))):
        p = _classification_distribution(a, b)
        q = _classification_distribution(a2, b2)
        pv = np.array([p.get(k, 0.0) for k in keys])
        qv = np.array([q.get(k, 0.0) for k in keys])
        assert pv.sum() == pytest.approx(1.0) and qv.sum() == pytest.approx(1.0)
        assert max(hockey_stick(pv, qv, claimed_eps), hockey_stick(qv, pv, claimed_eps)) <= claimed_delta + 1e-12
    # The implementation draws from this distribution: a forest of n copies of the tree in one call.
    n, (a, b) = 40_000, (6, 5)
    pars = [np.repeat(np.arange(n, dtype=np.int64), 2)]
    w = [np.full(n, a + b, dtype=np.int64), np.tile(np.array([a, b], dtype=np.int64), n)]
    active = [np.ones(n, dtype=bool), np.ones(2 * n, dtype=bool)]
    top = _classify(pars, w, active, TAU, MARGIN, Fraction(2), Fraction(4), Fraction(2), BOUND, CUTOFF,
                    SeededRandom(17))
    labels = list(zip(top[0], top[1][0::2], top[1][1::2]))
    p = _classification_distribution(a, b)
    for k in keys:
        freq = sum(1 for lab in labels if lab == k) / n
        expected = p.get(k, 0.0)
        assert abs(freq - expected) <= 4 * math.sqrt(expected * (1 - expected) / n) + 1e-12, (k, freq, expected)
