"""The hierarchy's tree, plan, release, projections and intervals (dpgui.core.hierarchy)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpgui.core import hierarchy as hmod
from dpgui.core.hierarchy import tree as hierarchy_tree
from dpgui.core.hierarchy import (
    Hierarchy, HierarchyPlan, clamped_discrete_laplace_moments, downstream_allocation, plan_hierarchy,
    project_hierarchy, release_hierarchy, simulate_hierarchy,
)
from dpgui.core.noise import SecureRandom, SeededRandom, laplace_scale
from dpgui.core.plan import PrivacySpec
from dpgui.errors import DataError, ParameterError

PATHS = [("OR", "OR/Portland", "OR/Portland/A"), ("OR", "OR/Portland", "OR/Portland/B"), ("WA", "WA/Seattle", "WA/Seattle/C"),
         ("OR", "OR/Salem", "OR/Salem/D"), ("CA", "CA/LA", "CA/LA/E"), ("CA", "CA/LA", "CA/LA/F"), ("CA", "CA/SF", "CA/SF/G")]


def make_tree(rng: np.random.Generator, depth: int, max_fan: int = 6) -> Hierarchy:
    """A random tree as paths of labels (fan-out 1..max_fan per node)."""
    paths: list[tuple[str, ...]] = [()]
    for level in range(depth):
        paths = [p + (f"{'/'.join(p)}/{level}.{k}",) for p in paths for k in range(int(rng.integers(1, max_fan + 1)))]
    return Hierarchy.from_paths([f"c{i}" for i in range(depth)], paths)


# ----------------------------------------------------------------------------------------------
# the tree
# ----------------------------------------------------------------------------------------------


def test_nodes_are_ordered_by_parent_then_label_with_contiguous_children():
    h = Hierarchy.from_paths(["state", "city", "school"], PATHS)
    assert h.level_sizes == (1, 3, 5, 7) and h.n_nodes == 16 and h.n_levels == 3
    assert h.labels[0] == ("CA", "OR", "WA")
    assert h.labels[1] == ("CA/LA", "CA/SF", "OR/Portland", "OR/Salem", "WA/Seattle")
    assert list(h.parents[1]) == [0, 0, 1, 1, 2]
    assert list(h.parents[0]) == [0, 0, 0]
    starts, ends = h.child_ranges(1)  # states → cities
    assert list(starts) == [0, 2, 4] and list(ends) == [2, 4, 5]
    starts, ends = h.child_ranges(2)  # cities → schools
    assert list(starts) == [0, 2, 3, 5, 6] and list(ends) == [2, 3, 5, 6, 7]
    starts, ends = h.child_ranges(0)
    assert list(starts) == [0] and list(ends) == [3]
    for level in range(h.n_levels):
        starts, ends = h.child_ranges(level)
        assert np.all(starts < ends) and starts[0] == 0 and ends[-1] == h.level_sizes[level + 1]
        assert np.array_equal(starts[1:], ends[:-1])
    assert h.path(3, 0) == ("CA", "CA/LA", "CA/LA/E")
    assert h.path(0, 0) == ()
    idx = h.leaf_index([("OR", "OR/Salem", "OR/Salem/D"), ("CA", "CA/SF", "CA/SF/G")])
    assert [h.labels[2][i] for i in idx] == ["OR/Salem/D", "CA/SF/G"]


def test_aggregate_sums_up_the_tree_exactly():
    rng = np.random.default_rng(5)
    h = make_tree(rng, 4)
    leaves = rng.integers(0, 10**12, size=h.level_sizes[-1])
    levels = h.aggregate(leaves)
    assert [a.size for a in levels] == list(h.level_sizes)
    assert all(a.dtype == np.int64 for a in levels)
    for ell in range(h.n_levels):
        # independent check: a Python sum over each parent's children
        by_parent: dict[int, int] = {}
        for i, p in enumerate(h.parents[ell]):
            by_parent[int(p)] = by_parent.get(int(p), 0) + int(levels[ell + 1][i])
        assert [by_parent[i] for i in range(h.level_sizes[ell])] == [int(v) for v in levels[ell]]


@pytest.mark.parametrize(("paths", "names", "match", "fix"), [
    ([("OR", "Portland"), ("ME", "Portland")], ["state", "city"],
     "a value of level 'city' appears under two parents of level 'state'", "prefix each with its parent \\('PARENT/VALUE'\\)"),
    ([("OR", "")], ["state", "city"], "empty value", "fill in or drop"),
    ([("OR", "  ")], ["state", "city"], "empty value", "fill in or drop"),
    ([("OR", None)], ["state", "city"], "missing", "fill in or drop"),
    ([("OR", float("nan"))], ["state", "city"], "missing", "fill in or drop"),
    ([("OR",)], ["state"], "at least 2 level columns", "choose 2 to 4"),
    ([("a", "b", "c", "d", "e")], list("vwxyz"), "at most 4 level columns", "choose 2 to 4"),
    ([("OR", "x", "y")], ["state", "city"], "3 values for 2 levels", "one value per level"),
    ([], ["state", "city"], "no rows", "at least one row"),
])
def test_bad_trees_get_one_line_messages_with_the_fix(paths, names, match, fix):
    with pytest.raises((DataError, ParameterError)) as info:
        Hierarchy.from_paths(names, paths)
    message = str(info.value)
    assert "\n" not in message
    import re
    assert re.search(match, message) and re.search(fix, message), message


def test_too_many_values_on_a_level_is_refused(monkeypatch):
    monkeypatch.setattr(hierarchy_tree, "MAX_NODES_PER_LEVEL", 5)
    with pytest.raises(ParameterError, match=r"6 distinct values, more than 5.*coarser column"):
        Hierarchy.from_paths(["a", "b"], [("x", f"x{i}") for i in range(6)])


def test_numeric_labels_become_text_and_unknown_paths_are_counted_not_named():
    h = Hierarchy.from_paths(["zip3", "zip5"], [(970, 97001), (970, 97002), (981, 98101)])
    assert h.labels == (("970", "981"), ("97001", "97002", "98101"))
    with pytest.raises(DataError, match=r"1 path\(s\) of the data are not in the hierarchy's tree.*add them to the "
                                        r"prior") as err:
        h.leaf_index([("970", "97001"), ("970", "97009")])
    assert "97009" not in str(err.value)  # a path of the data is confidential: never quoted


def test_leaf_counts_are_checked():
    h = Hierarchy.from_paths(["a", "b"], [("x", "x1"), ("x", "x2")])
    with pytest.raises(DataError, match="3 leaf counts for 2 leaves"):
        h.aggregate([1, 2, 3])
    with pytest.raises(DataError, match="≥ 0"):
        h.aggregate([1, -2])
    with pytest.raises(DataError, match="whole numbers"):
        h.aggregate([1.5, 2])


# ----------------------------------------------------------------------------------------------
# the plan
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("neighbours", ["change", "addremove"])
def test_plans_round_trip_through_json_and_charge_the_ledger_correctly(neighbours):
    prior = make_tree(np.random.default_rng(1), 3).aggregate
    h = make_tree(np.random.default_rng(1), 3)
    levels = prior(np.arange(h.level_sizes[-1]) % 7)
    for noise, delta in [("laplace", 0.0), ("gaussian", 1e-7)]:
        privacy = PrivacySpec(0.8, neighbours, 2, delta)
        plan = plan_hierarchy(h.level_sizes, privacy, noise=noise, allocation="optimal", prior_levels=levels,
                              consistency="gls", weights=[1, 1, 2, 3])
        data = json.loads(json.dumps(plan.to_json()))
        assert HierarchyPlan.from_json(data) == plan
        eps, d, rho = plan.ledger_charge()
        assert eps == 0.8
        if noise == "laplace":
            assert (d, rho) == (0.0, pytest.approx(0.32))
            assert math.fsum(plan.level_budgets) == pytest.approx(0.8, rel=1e-12)
            # the scales: t_ℓ ≥ Δ/ε_ℓ, with Δ = 2L (change) or L (add/remove), independently computed
            sens = 4 if neighbours == "change" else 2
            for b, t in zip(plan.level_budgets, plan.level_scales()):
                assert (t is None) == (b == 0)
                if t is not None:
                    assert float(t) >= sens / b and float(t) <= sens / b * (1 + 1e-4)
        else:
            assert d == 1e-7 and rho == pytest.approx(privacy.rho)
            assert math.fsum(plan.level_budgets) == pytest.approx(privacy.rho, rel=1e-12)
            l2sq = 8 if neighbours == "change" else 4
            for b, s2 in zip(plan.level_budgets, plan.level_scales()):
                if s2 is not None:
                    assert float(s2) >= l2sq / (2 * b)
        assert (plan.level_budgets[0] == 0) == (neighbours == "change")


def test_bad_plans_are_refused():
    privacy = PrivacySpec(1.0)
    with pytest.raises(ParameterError, match="root count is public"):
        HierarchyPlan((1, 2, 3), privacy, "laplace", (0.2, 0.4, 0.4), (1, 1, 1), "uniform", "none")
    with pytest.raises(ParameterError, match="sum to ε"):
        HierarchyPlan((1, 2, 3), privacy, "laplace", (0.0, 0.4, 0.4), (1, 1, 1), "uniform", "none")
    with pytest.raises(ParameterError, match="level 1 has no budget"):
        HierarchyPlan((1, 2, 3), privacy, "laplace", (0.0, 0.0, 1.0), (1, 1, 1), "uniform", "none")
    with pytest.raises(ParameterError, match="needs δ > 0"):
        plan_hierarchy((1, 2, 3), privacy, noise="gaussian")
    with pytest.raises(ParameterError, match="unknown consistency"):
        plan_hierarchy((1, 2, 3), privacy, consistency="magic")
    with pytest.raises(ParameterError, match="needs α"):
        plan_hierarchy((1, 2, 3), PrivacySpec(1.0, delta=1e-6), noise="multiplicative")
    with pytest.raises(ParameterError, match="void its"):
        plan_hierarchy((1, 2, 3), PrivacySpec(1.0, delta=1e-6), noise="multiplicative", alpha=0.5, consistency="topdown")
    with pytest.raises(ParameterError, match="2 ≤ L ≤ 4"):
        plan_hierarchy((1, 2), privacy)
    with pytest.raises(ParameterError, match="malformed"):
        HierarchyPlan.from_json({"level_sizes": [1, 2, 3]})


def test_auto_choices_are_explained_in_the_notes():
    rng = np.random.default_rng(8)
    h = make_tree(rng, 3)
    prior = h.aggregate(rng.integers(0, 50, size=h.level_sizes[-1]))
    plan = plan_hierarchy(h.level_sizes, PrivacySpec(1.0, delta=1e-8), allocation="optimal", prior_levels=prior,
                          hierarchy=h, trials=20)
    assert plan.noise in ("laplace", "gaussian") and plan.consistency in ("topdown", "gls")
    text = " ".join(plan.notes)
    assert "noise:" in text and "consistency:" in text and "no α given" in text
    bare = plan_hierarchy(h.level_sizes, PrivacySpec(1.0))
    assert bare.consistency == "topdown" and any("by default" in n for n in bare.notes)
    # the consistency chosen is the one with the lower projected weighted MSE, on the same seed
    scores = {m: project_hierarchy(plan_hierarchy(h.level_sizes, plan.privacy, noise=plan.noise, allocation="optimal",
                                                  prior_levels=prior, consistency=m), prior, trials=20, hierarchy=h).weighted_mse
              for m in ("topdown", "gls")}
    assert plan.consistency == min(scores, key=scores.__getitem__)


def test_multiplicative_plans_release_and_cover():
    rng = np.random.default_rng(9)
    h = make_tree(rng, 3, max_fan=3)
    leaves = rng.integers(0, 5, size=h.level_sizes[-1])
    privacy = PrivacySpec(1.0, "addremove", delta=1e-6)
    plan = plan_hierarchy(h.level_sizes, privacy, noise="multiplicative", alpha=0.5)
    assert plan.noise == "multiplicative" and plan.level_budgets == () and plan.consistency == "none"
    assert plan.ledger_charge() == (1.0, 1e-6, None)
    assert HierarchyPlan.from_json(json.loads(json.dumps(plan.to_json()))) == plan
    release = release_hierarchy(h, leaves, plan, SeededRandom(3))
    truth = h.aggregate(leaves)
    for c, lo, hi, n in zip(release.counts, release.lower, release.upper, truth):
        assert np.all(c >= 0) and np.all(lo <= n) and np.all(n <= hi)
    auto = plan_hierarchy(h.level_sizes, privacy, alpha=0.5)
    assert auto.noise in ("laplace", "gaussian") and any("multiplicative not chosen" in n for n in auto.notes)


# ----------------------------------------------------------------------------------------------
# releases
# ----------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("consistency", ["none", "topdown", "gls"])
@pytest.mark.parametrize(("noise", "neighbours"), [("laplace", "change"), ("gaussian", "addremove")])
def test_releases_are_non_negative_integers_and_consistent(consistency, noise, neighbours):
    rng = np.random.default_rng(10)
    for _ in range(5):
        h = make_tree(rng, int(rng.integers(2, 5)))
        leaves = rng.integers(0, 4, size=h.level_sizes[-1]) * rng.integers(0, 2, size=h.level_sizes[-1])
        plan = plan_hierarchy(h.level_sizes, PrivacySpec(0.5, neighbours, 1, 1e-6), noise=noise, consistency=consistency)
        release = release_hierarchy(h, leaves, plan, SecureRandom())
        truth = h.aggregate(leaves)
        for ell, c in enumerate(release.counts):
            assert c.dtype == np.int64 and c.size == h.level_sizes[ell] and np.all(c >= 0)
            assert np.all(release.lower[ell] <= c) and np.all(c <= release.upper[ell]) and np.all(release.lower[ell] >= 0)
        if neighbours == "change":
            assert release.counts[0][0] == truth[0][0]
        if consistency != "none":
            for ell in range(h.n_levels):
                sums = np.bincount(h.parents[ell], weights=release.counts[ell + 1], minlength=h.level_sizes[ell])
                assert np.array_equal(sums.astype(np.int64), release.counts[ell])


def test_the_none_release_clamps_the_noisy_count():
    """With a SeededRandom, the release equals max(0, n + Z) for the same noise drawn level by level."""
    from dpgui.core.noise import sample_discrete_laplace_levels

    h = Hierarchy.from_paths(["state", "city", "school"], PATHS)
    leaves = np.array([0, 3, 1, 0, 2, 9, 0])
    plan = plan_hierarchy(h.level_sizes, PrivacySpec(1.0), noise="laplace", consistency="none")
    release = release_hierarchy(h, leaves, plan, SeededRandom(42))
    noise = sample_discrete_laplace_levels(SeededRandom(42), [s for s in plan.level_scales() if s is not None], h.level_sizes[1:])
    truth = h.aggregate(leaves)
    assert release.counts[0][0] == 15
    for ell in range(1, 4):
        assert np.array_equal(release.counts[ell], np.maximum(truth[ell] + noise[ell - 1], 0))


def test_the_none_half_width_is_the_exact_noise_quantile():
    plan = plan_hierarchy((1, 2, 3), PrivacySpec(1.0), noise="laplace", consistency="none")
    for s in plan.level_scales()[1:]:
        assert s is not None
        q = plan.mechanism.half_width(s, 1.0 - hmod.INTERVAL_LEVEL)
        p = math.exp(-1 / float(s))
        outside = lambda m: 2 * p ** (m + 1) / (1 + p)  # noqa: E731  P(|Z| > m)
        assert outside(q) <= 0.05 < outside(q - 1)
    gplan = plan_hierarchy((1, 2, 3), PrivacySpec(1.0, delta=1e-6), noise="gaussian", consistency="none")
    from dpgui.core.noise_moments import discrete_gaussian_pmf

    for s in gplan.level_scales()[1:]:
        assert s is not None
        q = gplan.mechanism.half_width(s, 1.0 - hmod.INTERVAL_LEVEL)
        k = np.arange(-q, q + 1)
        inside = discrete_gaussian_pmf(k, float(s)).sum()
        inside_less = discrete_gaussian_pmf(k[1:-1], float(s)).sum()
        assert inside >= 0.95 > inside_less


@pytest.mark.slow
@pytest.mark.parametrize("consistency", ["none", "topdown", "gls"])
def test_intervals_cover_the_true_count(consistency):
    """Empirical coverage over releases: ≥ 95 % per node for 'none' (a guarantee), ≈ 95 % on average over
    a level's nodes for the bootstrap intervals of consistent releases (tolerance 3 binomial SEs + 2 %)."""
    rng = np.random.default_rng(20)
    h = make_tree(rng, 3, max_fan=5)
    leaves = rng.geometric(0.2, size=h.level_sizes[-1]) - 1
    truth = h.aggregate(leaves)
    plan = plan_hierarchy(h.level_sizes, PrivacySpec(1.0, "addremove"), noise="laplace", consistency=consistency)
    trials = 150
    src = SeededRandom(21)
    covered = [np.zeros(n) for n in h.level_sizes]
    for _ in range(trials):
        rel = release_hierarchy(h, leaves, plan, src)
        for ell in range(len(truth)):
            covered[ell] += (rel.lower[ell] <= truth[ell]) & (truth[ell] <= rel.upper[ell])
    for ell, n in enumerate(h.level_sizes):
        rate = covered[ell].sum() / (trials * n)
        se = math.sqrt(0.95 * 0.05 / (trials * n))
        if consistency == "none":
            assert rate >= 0.95 - 3 * se
            # per node too: every node is covered ≥ 95 % (3 SEs of 150 trials)
            assert np.all(covered[ell] / trials >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / trials))
        else:
            assert 0.95 - 3 * se - 0.02 <= rate <= 0.995, (ell, rate)


# ----------------------------------------------------------------------------------------------
# projections and simulations
# ----------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_closed_form_projection_matches_simulation(noise):
    """consistency none: the exact per-level bias², variance, MSE against 3,000 simulated releases."""
    rng = np.random.default_rng(30)
    h = make_tree(rng, 2, max_fan=6)
    leaves = rng.integers(0, 6, size=h.level_sizes[-1])
    prior = h.aggregate(leaves)
    plan = plan_hierarchy(h.level_sizes, PrivacySpec(1.0, "addremove", 1, 1e-6), noise=noise, consistency="none")
    projected = project_hierarchy(plan, prior)
    assert projected.method == "closed form"
    trials = 3000
    simulated = simulate_hierarchy(h, leaves, plan, trials=trials, seed=31)
    for p, s in zip(projected.levels, simulated.levels):
        # the summed MSE of n nodes: SE from the per-node MSE (≈ variance of squared error ≤ 6·MSE² for Laplace)
        se = math.sqrt(6.0 / trials) * p.mse / math.sqrt(p.nodes)
        assert abs(s.mse - p.mse) <= 3 * se + 1e-9, (p, s)
        assert abs(s.variance - p.variance) <= 3 * se + 1e-9
    assert projected.weighted_mse == pytest.approx(sum(p.mse for p in projected.levels))
    # and the level figures are sums of the per-node closed forms
    t = float(plan.level_scales()[1]) if noise == "laplace" else None
    if t is not None:
        b, v = clamped_discrete_laplace_moments(prior[1], t)
        assert projected.levels[1].bias2 == pytest.approx(float(np.sum(b * b)))
        assert projected.levels[1].variance == pytest.approx(float(np.sum(v)))


def test_consistent_projections_are_monte_carlo_and_reduce_error():
    rng = np.random.default_rng(40)
    h = make_tree(rng, 3, max_fan=5)
    prior = h.aggregate(rng.integers(0, 3, size=h.level_sizes[-1]))
    base = dict(noise="laplace", allocation="uniform")
    none = project_hierarchy(plan_hierarchy(h.level_sizes, PrivacySpec(1.0), consistency="none", **base), prior)
    top = project_hierarchy(plan_hierarchy(h.level_sizes, PrivacySpec(1.0), consistency="topdown", **base), prior,
                            trials=100, hierarchy=h)
    assert top.method.startswith("monte carlo (") and "simulated releases per level" in top.method
    assert top.levels[0].mse == 0.0  # the public root
    assert top.weighted_mse < none.weighted_mse  # consistency is a projection towards the truth's constraints
    with pytest.raises(ParameterError, match="needs the tree"):
        project_hierarchy(plan_hierarchy(h.level_sizes, PrivacySpec(1.0), consistency="gls"), prior)


def test_downstream_allocation_of_ko_ziani_fioretto_section_5():
    truth = np.array([10.0, 30.0, 60.0])
    exact = np.tile(truth, (50, 1))
    for w in ("log", "linear", "quadratic"):
        assert downstream_allocation(truth, exact, w) == pytest.approx((0.0, 0.0), abs=1e-20)
    rng = np.random.default_rng(50)
    noisy = np.maximum(0, truth + rng.laplace(0, 5.0, size=(4000, 3)))
    # independent computation: shares W(P_i)/Σ W(P_j) in %, P = counts / total (Ko, Ziani & Fioretto 2025, §5)
    for w, fn in (("log", np.log1p), ("linear", lambda p: p), ("quadratic", np.square)):
        p_true = truth / truth.sum()
        p_noisy = noisy / noisy.sum(axis=1, keepdims=True)
        s_true = 100 * fn(p_true) / fn(p_true).sum()
        s_noisy = 100 * fn(p_noisy) / fn(p_noisy).sum(axis=1, keepdims=True)
        bias2, var = downstream_allocation(truth, noisy, w)
        assert var == pytest.approx(float(s_noisy.var(axis=0).sum()))
        assert bias2 == pytest.approx(float(((s_noisy.mean(axis=0) - s_true) ** 2).sum()))
    # Jensen (Ko, Ziani & Fioretto 2025, §5): the log weights damp the noise, the quadratic ones amplify it
    assert downstream_allocation(truth, noisy, "log")[1] < downstream_allocation(truth, noisy, "linear")[1]
    assert downstream_allocation(truth, noisy, "quadratic")[1] > downstream_allocation(truth, noisy, "linear")[1]
    with pytest.raises(ParameterError, match="weight function"):
        downstream_allocation(truth, noisy, "cubic")


@pytest.mark.slow
def test_downstream_projection_prefers_the_optimal_allocation():
    """Ko, Ziani & Fioretto's §5 finding on a tree with many small blocks: with the budget of program (6) the
    misallocation among a node's children is smaller than with the uniform split."""
    from dpgui.core.hierarchy import downstream_projection

    rng = np.random.default_rng(51)
    h = make_tree(rng, 3, max_fan=8)
    leaves = rng.geometric(0.05, size=h.level_sizes[-1]) - 1
    prior = h.aggregate(leaves)
    privacy = PrivacySpec(0.5)
    uniform = plan_hierarchy(h.level_sizes, privacy, noise="laplace", consistency="topdown")
    optimal = plan_hierarchy(h.level_sizes, privacy, noise="laplace", allocation="optimal", prior_levels=prior,
                             consistency="topdown")
    node = int(np.argmax(np.diff(np.append(h.child_ranges(2)[0], h.level_sizes[3]))))  # the node with most children
    u = downstream_projection(h, leaves, uniform, level=2, node=node, trials=300, seed=1)
    o = downstream_projection(h, leaves, optimal, level=2, node=node, trials=300, seed=1)
    assert [f.weight for f in u] == ["log", "linear", "quadratic"]
    for fu, fo in zip(u, o):
        assert fo.bias2 + fo.variance < fu.bias2 + fu.variance


def test_release_refuses_a_plan_for_another_tree():
    h = Hierarchy.from_paths(["state", "city", "school"], PATHS)
    plan = plan_hierarchy((1, 2, 3, 4), PrivacySpec(1.0), noise="laplace", consistency="none")
    with pytest.raises(ParameterError, match="plan for this tree"):
        release_hierarchy(h, np.ones(7, dtype=int), plan, SeededRandom(0))
    assert laplace_scale(2, 1.0) == 2


@pytest.mark.slow
@pytest.mark.parametrize("neighbours", ["change", "addremove"])
@pytest.mark.parametrize("records", [1, 3])
def test_the_spent_budget_is_checked_independently(neighbours, records):
    """Privacy figures twice: the plan's scales give ε_spent = Σ Δ/t_ℓ ≤ ε (Laplace) and
    ρ_spent = Σ Δ₂²/(2σ_ℓ²) ≤ ρ (Gaussian), recomputed here from the sensitivities of the model
    (Δ = 2L or L, Δ₂² = 2L² or L²) and exact rationals; and OpenDP's discrete Laplace at t_ℓ on a
    count vector of L1 sensitivity Δ is Δ/t_ℓ-DP by its own privacy map."""
    from fractions import Fraction

    import opendp.prelude as dp

    rng = np.random.default_rng(60)
    h = make_tree(rng, 3)
    prior = h.aggregate(rng.integers(0, 30, size=h.level_sizes[-1]))
    delta1 = (2 if neighbours == "change" else 1) * records
    l2sq = (2 if neighbours == "change" else 1) * records**2
    for allocation in ("uniform", "optimal"):
        lap = plan_hierarchy(h.level_sizes, PrivacySpec(0.9, neighbours, records), noise="laplace",
                             allocation=allocation, prior_levels=prior, consistency="none")
        spent = sum((Fraction(delta1) / t for t in lap.level_scales() if t is not None), Fraction(0))
        assert spent <= Fraction(0.9)
        assert lap.epsilon_spent() >= float(spent) and lap.epsilon_spent() == pytest.approx(0.9, rel=1e-4)
        assert (lap.level_scales()[0] is None) == (neighbours == "change")
        dp.enable_features("contrib")
        for t in lap.level_scales():
            if t is None:
                continue
            meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=float(t))
            assert meas.map(delta1) == pytest.approx(delta1 / float(t), rel=1e-9)
        privacy = PrivacySpec(0.9, neighbours, records, delta=1e-7)
        gau = plan_hierarchy(h.level_sizes, privacy, noise="gaussian", allocation=allocation, prior_levels=prior,
                             consistency="none")
        rho = sum((Fraction(l2sq) / (2 * s) for s in gau.level_scales() if s is not None), Fraction(0))
        assert rho <= Fraction(privacy.rho) * (1 + Fraction(1, 10**12))
        assert gau.rho_spent() == pytest.approx(float(rho), rel=1e-12)
        assert gau.epsilon_spent() <= 0.9 * (1 + 1e-9)


def test_plan_inputs_are_checked_with_a_fix():
    privacy = PrivacySpec(1.0)
    with pytest.raises(DataError, match="same tree"):
        plan_hierarchy((1, 2, 3), privacy, allocation="optimal", prior_levels=(np.array([3]), np.array([1, 2]), np.array([1])))
    with pytest.raises(DataError, match="whole numbers ≥ 0"):
        plan_hierarchy((1, 1, 2), privacy, allocation="optimal",
                       prior_levels=(np.array([3]), np.array([3]), np.array([4, -1])))
    with pytest.raises(ParameterError, match="give 3 weights"):
        plan_hierarchy((1, 1, 2), privacy, weights=[1, 2])
    with pytest.raises(ParameterError, match="target:TAU"):
        plan_hierarchy((1, 1, 2), privacy, allocation="target", prior_levels=(np.array([3]), np.array([3]), np.array([1, 2])))
    with pytest.raises(ParameterError, match="plan for this tree"):
        plan_hierarchy((1, 2, 3), privacy, hierarchy=Hierarchy.from_paths(["a", "b"], [("x", "y")]))
    with pytest.raises(ParameterError, match="trials"):
        simulate_hierarchy(Hierarchy.from_paths(["a", "b"], [("x", "y")]), [1], plan_hierarchy((1, 1, 1), privacy), trials=1,
                           seed=0)


def test_simulated_bias2_does_not_count_the_variance_of_the_mean():
    """Counts of 10,000 are never clamped: the true bias² is 0 (consistency none). The plain squared mean
    error over R trials would be Σ variance/R (20 × one node's noise variance here); the estimate must be
    near 0 instead (its standard deviation is about 0.7 × one node's variance)."""
    paths = [(f"g{i // 20}", f"n{i}") for i in range(200)]
    tree = Hierarchy.from_paths(["group", "node"], paths)
    plan = plan_hierarchy(tree.level_sizes, PrivacySpec(1.0), noise="laplace", consistency="none")
    trials = 10
    result = simulate_hierarchy(tree, np.full(200, 10_000), plan, trials=trials, seed=5)
    leaf_variance = plan.level_noise_variances()[-1]
    leaves = result.levels[-1]
    assert leaves.bias2 < 5 * leaf_variance  # the old estimate: ≈ 200 · variance / 10 = 20 × variance
    assert leaves.mse == pytest.approx(leaves.bias2 + leaves.variance)
    assert leaves.mse == pytest.approx(200 * leaf_variance, rel=0.2)  # 2,000 draws: ±~7 % (1 SE)


def test_the_notes_say_which_counts_the_automatic_choices_were_projected_on():
    """The notes are published (manifest, PDF): choices made on the officer's opted-in confidential counts
    say so, and never that they were made "on the prior" (there is none); with a prior they say the prior."""
    from dpgui.vocabulary import PriorSource

    h = Hierarchy.from_paths(["state", "city", "school"], PATHS)
    counts = h.aggregate(np.arange(1, 8) * 10)
    privacy = PrivacySpec(1.0, delta=1e-6)
    opted = plan_hierarchy(h.level_sizes, privacy, noise="auto", prior_levels=counts, prior_source=PriorSource.CONFIDENTIAL,
                           hierarchy=h)
    prior = plan_hierarchy(h.level_sizes, privacy, noise="auto", prior_levels=counts, prior_source="prior file",
                           hierarchy=h)
    for plan, words in ((opted, "on the confidential counts (opted in)"), (prior, "on the prior")):
        chosen = [n for n in plan.notes if n.startswith(("noise: ", "consistency: "))]
        assert len(chosen) == 2 and all(words in n for n in chosen), plan.notes
    assert not any("prior" in n for n in opted.notes)
