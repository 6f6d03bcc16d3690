"""One stated error: the 95 % margin noise_margin(SE) = 2.2·SE + 1, for CDF and hierarchy plans.

* The margin rule bounds the exact one-sided 97.5 % point of a *single* discrete Laplace and of a single
  discrete Gaussian at the scales a hierarchy level uses (exact tails, not simulation).
* A hierarchy level's margin is computed from the SE of the count actually released (clamped or made
  consistent): the one-sided root-mean-square error. Clamped counts: exactly the noise's SD (checked
  against the closed-form variance); a plain RMSE would state a margin that holds less than 95 % of the
  time for empty categories (exact computation), the one-sided SE does not.
* Coverage of the stated margin by seeded simulation, with a tolerance from the binomial standard error.
* A CDF plan's stated margins are margin95's, and ``dpgui plan`` states them (not 1-SE figures).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpgui.core.hierarchy import Hierarchy, plan_hierarchy, project_hierarchy
from dpgui.core.hierarchy.release import _release_counts
from dpgui.core.margins import MARGIN_NAME, cdf_margins
from dpgui.core.noise import SeededRandom, gaussian_sigma2, laplace_scale
from dpgui.core.noise_moments import discrete_gaussian_pmf
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan, margin95
from dpgui.core.quantiles import LATTICE_SLACK, Z_TAIL, noise_margin

# ε per level 10⁻³..10 with Δ = 2 (change) or 1 (add/remove): discrete-Laplace scales 0.1..2000
HIERARCHY_LAPLACE_SCALES = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 20.0, 100.0, 500.0, 2000.0)
HIERARCHY_GAUSSIAN_SIGMA2 = (0.05, 0.3, 1.0, 4.0, 30.0, 300.0, 3_000.0, 40_000.0)


def _laplace_upper_point(scale: float) -> tuple[int, float]:
    """(smallest m with P(Z > m) ≤ 2.5 %, SD) of the discrete Laplace of scale t, in closed form:
    P(Z > m) = q^(m+1)/(1+q), Var = 2q/(1−q)², q = e^(−1/t)."""
    q = math.exp(-1.0 / scale)
    sd = math.sqrt(2 * q) / (1 - q)
    m = 0
    while q ** (m + 1) / (1 + q) > 0.025:
        m += 1
    return m, sd


def _gaussian_upper_point(sigma2: float) -> tuple[int, float]:
    reach = int(14 * math.sqrt(sigma2)) + 14
    support = np.arange(-reach, reach + 1)
    pmf = np.asarray(discrete_gaussian_pmf(support, sigma2), dtype=float)
    pmf /= pmf.sum()
    sd = math.sqrt(float(np.sum(pmf * support.astype(float) ** 2)))
    above = 1.0 - np.cumsum(pmf)  # P(Z > support[i])
    return int(support[np.argmax(above <= 0.025)]), sd


@pytest.mark.parametrize("scale", HIERARCHY_LAPLACE_SCALES)
def test_the_margin_bounds_one_discrete_laplace_at_hierarchy_scales(scale):
    exact, sd = _laplace_upper_point(scale)
    assert exact <= float(noise_margin(sd)) == Z_TAIL * sd + LATTICE_SLACK, (scale, exact, sd)


@pytest.mark.parametrize("sigma2", HIERARCHY_GAUSSIAN_SIGMA2)
def test_the_margin_bounds_one_discrete_gaussian_at_hierarchy_scales(sigma2):
    exact, sd = _gaussian_upper_point(sigma2)
    assert exact <= float(noise_margin(sd)), (sigma2, exact, sd)


def test_the_hierarchy_scales_tested_are_those_of_real_plans():
    """The scales above span what plans at ε_ℓ = 10⁻³..10 per level use (so the exact checks are relevant)."""
    for eps in (1e-3, 10.0):
        for delta1 in (1, 2):
            t = float(laplace_scale(delta1, eps))
            assert min(HIERARCHY_LAPLACE_SCALES) <= t <= max(HIERARCHY_LAPLACE_SCALES)
    for rho in (5e-4, 20.0):
        s2 = float(gaussian_sigma2(2, rho))
        assert min(HIERARCHY_GAUSSIAN_SIGMA2) <= s2 <= max(HIERARCHY_GAUSSIAN_SIGMA2), s2


# ---------------------------------------------------------------- which SE a hierarchy margin uses
def _tree(small: bool = False) -> tuple[Hierarchy, np.ndarray]:
    rng = np.random.default_rng(11)
    paths = [(f"R{r}", f"R{r}D{d}", f"R{r}D{d}S{s}") for r in range(4) for d in range(3) for s in range(int(rng.integers(3, 9)))]
    tree = Hierarchy.from_paths(("region", "district", "school"), paths)
    leaves = np.zeros(tree.level_sizes[-1], dtype=np.int64)
    np.add.at(leaves, tree.leaf_index(paths),
              rng.poisson(3, len(paths)) if small else rng.integers(50, 400, len(paths)))
    return tree, leaves


def test_a_clamped_levels_margin_is_the_noise_sds_margin():
    """Consistency none: the released error is max(Z, −n), whose upward part is the noise's; the one-sided SE is
    exactly the noise's SD (independent: the discrete Laplace variance 2q/(1−q)² from the plan's scale)."""
    tree, leaves = _tree(small=True)
    plan = plan_hierarchy(tree.level_sizes, PrivacySpec(0.5), consistency="none")
    projection = project_hierarchy(plan, tree.aggregate(leaves))
    for level, scale in zip(projection.levels, plan.level_scales()):
        if scale is None:
            assert level.margin95 == 0.0
            continue
        q = math.exp(-1.0 / float(scale))
        sd = math.sqrt(2 * q) / (1 - q)
        assert level.std_error == pytest.approx(sd, rel=1e-9)
        assert level.margin95 == pytest.approx(Z_TAIL * sd + LATTICE_SLACK, rel=1e-9)
        assert math.sqrt(level.mse / level.nodes) < level.std_error  # small counts: the plain RMSE is smaller


def test_a_plain_rmse_margin_would_fail_for_empty_categories_the_one_sided_one_holds():
    """An empty category under the clamp errs upwards only: e = max(Z, 0), E e² = Var/2. The margin from its
    RMSE (σ/√2) is exceeded with probability above 5 % (exact tail); the stated margin (from σ) holds."""
    for scale in (20.0, 100.0, 500.0):  # (at small scales the lattice slack of 1 record covers it)
        q = math.exp(-1.0 / scale)
        sd = math.sqrt(2 * q) / (1 - q)

        def miss(margin: float) -> float:  # P(max(Z, 0) > margin) = P(Z > ⌊margin⌋)
            return q ** (math.floor(margin) + 1) / (1 + q)

        assert miss(float(noise_margin(sd / math.sqrt(2)))) > 0.05
        assert miss(float(noise_margin(sd))) <= 0.025


COVERAGE_RELEASES = 150


@pytest.mark.slow
@pytest.mark.parametrize("consistency, epsilon, neighbours, noise, small", [
    ("none", 0.1, "change", "laplace", True),
    ("topdown", 0.1, "change", "laplace", True),
    ("gls", 1.0, "addremove", "laplace", True),
    ("topdown", 1.0, "addremove", "laplace", False),
    ("gls", 0.3, "change", "laplace", False),
    ("topdown", 1.0, "change", "gaussian", True),
])
def test_released_counts_lie_within_the_stated_margin_95_percent_of_the_time(consistency, epsilon, neighbours, noise,
                                                                            small):
    """Seeded releases of the plan at the projected counts: per level, the share of (release, category)
    pairs within ± margin95 of the truth is at least 95 % less three binomial standard errors."""
    tree, leaves = _tree(small)
    truth = tree.aggregate(leaves)
    privacy = PrivacySpec(epsilon, neighbours, 1, 1e-6 if noise == "gaussian" else 0.0)
    plan = plan_hierarchy(tree.level_sizes, privacy, noise=noise, consistency=consistency)
    projection = project_hierarchy(plan, truth, hierarchy=tree)
    rng = SeededRandom(2024)
    inside = np.zeros(len(truth))
    for _ in range(COVERAGE_RELEASES):
        released = _release_counts(tree.parents, plan, truth, rng)
        for level, (counts, true) in enumerate(zip(released, truth)):
            inside[level] += np.sum(np.abs(counts - true) <= projection.levels[level].margin95)
    for level, figures in enumerate(projection.levels):
        if figures.margin95 == 0:
            continue
        draws = COVERAGE_RELEASES * figures.nodes
        tolerance = 3 * math.sqrt(0.95 * 0.05 / draws)
        assert inside[level] / draws >= 0.95 - tolerance, (level, inside[level] / draws, figures.margin95)


# ---------------------------------------------------------------- CDF plans
def test_a_cdf_plans_stated_margins_are_margin95s():
    plan = auto_plan(100, PrivacySpec(1.0))
    margins = cdf_margins(plan)
    assert (margins.worst, margins.average) == (margin95(plan, "every"), margin95(plan, "average"))
    assert margins.worst >= margins.average > LATTICE_SLACK
    assert MARGIN_NAME == "95 % margin"
