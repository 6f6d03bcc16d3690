"""Composition of a dataset's charges against a cap (:func:`dpgui.core.accounting.compose` and friends), and
the charge a CDF plan (:meth:`Plan.ledger_charge`) and a hierarchy plan (:meth:`HierarchyPlan.ledger_charge`)
record: the same for the same privacy, by one rule (:meth:`NoiseMechanism.charge`): the planned figures, or
the larger figures of what the noise spends when its level budgets sum past the planned total.

Every figure is checked against an independent computation: sums written out by hand; Laplace's
(ε, 0, ε²/2) (Bun & Steinke 2016, Prop. 1.4); the Canonne–Kamath–Steinke (2020, Cor. 13) conversion in its
ε-form minimised over a dense α grid with numpy, and its inverse by plain bisection (no code shared with
dpgui); the noise's spend in exact rationals.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpgui.core.accounting import (
    RELATIVE_TOLERANCE, Accounting, Shortfall, compose, largest_fitting_epsilon, shortfall, within_cap, zcdp_epsilon,
)
from dpgui.core.hierarchy import HierarchyPlan
from dpgui.core.noise_mechanisms import GAUSSIAN, LAPLACE
from dpgui.core.plan import Plan, PrivacySpec, equal_budgets
from dpgui.core.tree import TreeShape
from dpgui.vocabulary import Charge, Noise


def cks_epsilon(rho: float, delta: float) -> float:
    """ε of ρ-zCDP at δ: CKS Cor. 13 in ε-form, minimised on a dense grid of α, refined around the best."""
    def eps_of(alpha: np.ndarray) -> np.ndarray:
        am1 = alpha - 1.0
        return alpha * rho + (math.log(1 / delta) + am1 * np.log1p(-1 / alpha) - np.log(alpha)) / am1

    alphas = 1.0 + np.logspace(-6, 7, 400_001)
    values = eps_of(alphas)
    best = int(np.argmin(values))
    fine = np.linspace(alphas[max(best - 1, 0)], alphas[min(best + 1, alphas.size - 1)], 100_001)
    return float(min(values[best], eps_of(fine).min()))


def cks_rho(epsilon: float, delta: float) -> float:
    """The largest ρ whose :func:`cks_epsilon` at δ is ≤ ε, by plain bisection on the grid form."""
    lo, hi = 0.0, epsilon
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cks_epsilon(mid, delta) <= epsilon else (lo, mid)
    return lo


def gaussian(rho: float, epsilon: float = 0.5, delta: float = 1e-7) -> Charge:
    return Charge(epsilon, delta, rho)


def test_basic_composition_adds_epsilon_and_delta_and_fits_up_to_rounding():
    charges = [Charge(0.25), Charge(0.5, 1e-7), Charge(0.125)]  # no ρ: basic composition only
    c = compose(charges, 1.0, 1e-6)
    assert (c.epsilon, c.delta, c.count) == (0.875, 1e-7, 3)
    assert c.rho is None and c.zcdp_epsilon is None and c.rho_remaining is None
    assert c.basic_fits and not c.zcdp_fits and c.fits and c.accounting is Accounting.BASIC
    assert c.spent_epsilon == 0.875 and c.epsilon_remaining == 0.125 and c.delta_remaining == pytest.approx(9e-7)
    thirds = [Charge(0.7 / 3, 0.0, None)] * 3  # 0.7/3 is not exact in binary
    assert compose(thirds, 0.7, 0.0).fits
    assert not compose([Charge(0.7 * (1 + 100 * RELATIVE_TOLERANCE), 0.0, None)], 0.7, 0.0).fits
    assert within_cap(0.7 * (1 + RELATIVE_TOLERANCE / 2), 0.7) and not within_cap(0.7 * 1.0000001, 0.7)
    assert compose([], 2.0, 0.0).epsilon_remaining == 2.0


@pytest.mark.parametrize("rho, cap_delta", [(0.008, 1e-6), (0.02, 1e-9), (0.3, 1e-5)])
def test_zcdp_composition_converts_the_sum_of_rho_at_the_cap_delta(rho, cap_delta):
    charges = [gaussian(rho, 3.0), gaussian(rho / 2, 3.0), Charge(0.1, 0.0, 0.1**2 / 2)]  # Laplace: ρ = ε²/2
    c = compose(charges, 5.0, cap_delta)
    total = rho + rho / 2 + 0.005
    assert c.rho == pytest.approx(total, rel=1e-15)
    assert c.zcdp_epsilon == pytest.approx(cks_epsilon(total, cap_delta), rel=1e-6)
    assert c.zcdp_epsilon < c.epsilon and c.accounting is Accounting.ZCDP
    assert c.spent_epsilon == c.zcdp_epsilon and c.epsilon_remaining == pytest.approx(5.0 - c.zcdp_epsilon)
    assert c.rho_remaining == pytest.approx(cks_rho(5.0, cap_delta) - total, rel=1e-6)
    assert compose(charges, 5.0, 0.0).zcdp_epsilon is None  # no δ in the cap: no zCDP path


def test_zcdp_holds_where_basic_composition_does_not():
    """Three Gaussians of ε = 0.5, δ = 1e-7 (ρ = 0.008 each) on a cap (1, 1e-6): Σε = 1.5 > 1, but Σρ = 0.024
    converts to ε < 1 at δ = 1e-6; a fourth (Σρ = 0.032) does not fit either way."""
    three = compose([gaussian(0.008)] * 3, 1.0, 1e-6)
    assert not three.basic_fits and three.zcdp_fits and three.fits
    assert three.zcdp_epsilon == pytest.approx(cks_epsilon(0.024, 1e-6), rel=1e-6) and three.zcdp_epsilon < 1.0
    four = compose([gaussian(0.008)] * 4, 1.0, 1e-6)
    assert cks_epsilon(0.032, 1e-6) > 1.0 and not four.fits
    assert shortfall(four, gaussian(0.008)) is Shortfall.EPSILON


def test_what_a_refused_charge_lacks():
    assert shortfall(compose([gaussian(0.001)], 1.0, 0.0), gaussian(0.001)) is Shortfall.CAP_DELTA
    old = Charge(0.1, 8e-7, None)  # no ρ: basic composition only
    new = Charge(0.1, 5e-7, 0.001)
    assert shortfall(compose([old, new], 5.0, 1e-6), new) is Shortfall.DELTA
    assert shortfall(compose([Charge(0.6, 0.0, None), Charge(0.6, 0.0, None)], 1.0, 0.0), Charge(0.6)) \
        is Shortfall.EPSILON
    assert shortfall(compose([Charge(0.5)], 1.0, 0.0), Charge(0.5)) is None


def test_the_largest_epsilon_that_still_fits():
    before = compose([gaussian(0.008)] * 3, 1.0, 1e-6)
    left = cks_rho(1.0, 1e-6) - 0.024
    laplace = largest_fitting_epsilon(before, 0.0)  # ρ = ε²/2 ≤ ρ left
    assert laplace == pytest.approx(math.sqrt(2 * left), rel=1e-5) and laplace <= math.sqrt(2 * before.rho_remaining)
    at = largest_fitting_epsilon(before, 1e-7)  # a Gaussian: its ρ at δ = 1e-7 ≤ ρ left
    assert at == pytest.approx(cks_epsilon(left, 1e-7), rel=1e-5)
    basic = compose([Charge(0.25, 0.0, None)], 1.0, 0.0)
    assert largest_fitting_epsilon(basic, 0.0) == pytest.approx(0.75, rel=1e-8) and largest_fitting_epsilon(basic, 0.0) < 0.75
    assert largest_fitting_epsilon(compose([Charge(1.0, 0.0, None)], 1.0, 0.0), 0.0) == 0.0


# -- one rule for a release's charge, whatever the statistic ---------------------------------------------

def _cdf_plan(privacy: PrivacySpec, noise: str) -> Plan:
    shape = TreeShape(100, (10, 10))
    return Plan(shape, privacy, equal_budgets(shape, privacy, noise), "gls", noise)


def _hierarchy_plan(privacy: PrivacySpec, noise: str) -> HierarchyPlan:
    first = privacy.first_noised_level()
    total = privacy.rho if noise == Noise.GAUSSIAN else privacy.epsilon
    assert total is not None
    shares = (0.0,) * first + (total / (4 - first),) * (4 - first)
    return HierarchyPlan((1, 2, 3, 5), privacy, noise, shares, (1.0,) * 4, "uniform", "none")


@pytest.mark.parametrize("neighbours", ["change", "addremove"])
@pytest.mark.parametrize("epsilon", [0.3, 1.0, 2.5])
def test_both_statistics_charge_laplace_by_the_same_closed_form(neighbours, epsilon):
    privacy = PrivacySpec(epsilon, neighbours, 2)
    expected = (epsilon, 0.0, epsilon**2 / 2)
    cdf, hierarchy = _cdf_plan(privacy, "laplace"), _hierarchy_plan(privacy, "laplace")
    assert cdf.ledger_charge() == pytest.approx(expected, rel=1e-15, abs=0)
    assert hierarchy.ledger_charge() == pytest.approx(expected, rel=1e-15, abs=0)
    assert Fraction(cdf.ledger_charge()[0]) >= cdf.epsilon_spent()
    assert Fraction(hierarchy.ledger_charge()[0]) >= Fraction(hierarchy.epsilon_spent())


@pytest.mark.parametrize("neighbours", ["change", "addremove"])
@pytest.mark.parametrize("epsilon, delta", [(0.5, 1e-6), (1.0, 1e-9), (2.0, 1e-5)])
def test_both_statistics_charge_gaussian_by_the_same_closed_form(neighbours, epsilon, delta):
    privacy = PrivacySpec(epsilon, neighbours, 1, delta)
    cdf, hierarchy = _cdf_plan(privacy, "gaussian"), _hierarchy_plan(privacy, "gaussian")
    rho = cks_rho(epsilon, delta)
    for plan in (cdf, hierarchy):
        charged_epsilon, charged_delta, charged_rho = plan.ledger_charge()
        assert (charged_epsilon, charged_delta) == (epsilon, delta)
        assert charged_rho == pytest.approx(rho, rel=1e-6)
        assert charged_rho >= float(plan.rho_spent())
    assert cdf.ledger_charge() == hierarchy.ledger_charge()


# -- the rule when the noise spends more than planned ---------------------------------------------------

DELTA = 1e-6


def simple_epsilon(rho: float, delta: float) -> float:
    """Bun & Steinke's (2016, Prop. 1.3) closed form ρ + 2√(ρ ln(1/δ)): never below the CKS conversion."""
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))


def test_the_rule_charges_the_plan_or_what_the_noise_spends_whichever_is_more():
    """:meth:`NoiseMechanism.charge` against closed forms: Laplace (max(ε, spent), 0, its ε²/2), Gaussian
    (max(ε, ε of ρ), δ, ρ = max(zcdp_rho(ε, δ), spent)) with ε of ρ the CKS conversion, checked on the α grid
    and below the simple bound."""
    assert LAPLACE.charge(1.0, DELTA, Fraction(1, 2)) == Charge(1.0, 0.0, 0.5)  # spends less: the plan's figures
    assert LAPLACE.charge(1.0, DELTA, Fraction(5, 4)) == Charge(1.25, 0.0, 1.25**2 / 2)  # spends more
    assert LAPLACE.charge(1.0, 0.0, 1 + Fraction(1, 2**40)) == Charge(1 + 2**-40, 0.0, math.nextafter(0.5 + 2**-40, 1))
    planned = cks_rho(1.0, DELTA)
    low = GAUSSIAN.charge(1.0, DELTA, Fraction(planned / 2))
    assert (low.epsilon, low.delta) == (1.0, DELTA) and low.rho == pytest.approx(planned, rel=1e-6)
    high = GAUSSIAN.charge(1.0, DELTA, Fraction(0.05))
    assert (high.delta, high.rho) == (DELTA, 0.05)
    assert high.epsilon == pytest.approx(cks_epsilon(0.05, DELTA), rel=1e-6)
    assert 1.0 < high.epsilon < simple_epsilon(0.05, DELTA)


def _plans(privacy: PrivacySpec, noise: str, budgets: tuple[float, float]) -> tuple[Plan, HierarchyPlan]:
    """A CDF plan (4 bins, branching 2·2: levels 1 and 2 noised) and a hierarchy plan (1, 2, 4 nodes) with
    the same level budgets, under change with one record a person (Δ₁ = Δ₂² = 2)."""
    cdf = Plan(TreeShape(4, (2, 2)), privacy, budgets, "gls", noise)
    hierarchy = HierarchyPlan((1, 2, 4), privacy, noise, (0.0, *budgets), (1.0,) * 3, "uniform", "none")
    return cdf, hierarchy


def test_a_laplace_plan_whose_budgets_sum_past_epsilon_is_charged_what_its_noise_spends():
    """Level budgets 0.5 + 0.25 = 0.75 for ε = 0.75·(1 − 5·10⁻¹⁰): within the plans' relative 10⁻⁹, so both
    plans accept them. The scales are exact (t = Δ₁/ε_l = 4 and 8), so the noise spends ε = 0.75, 3.75·10⁻¹⁰
    more than planned: charging the planned ε would under-charge. Both statistics charge (0.75, 0, 0.28125)."""
    epsilon = 0.75 * (1 - 5e-10)
    for plan in _plans(PrivacySpec(epsilon, "change", 1), "laplace", (0.5, 0.25)):
        assert [s for s in (plan.scales if isinstance(plan, Plan) else plan.level_scales()) if s] == [4, 8]
        assert Fraction(plan.epsilon_spent()) == Fraction(3, 4) > Fraction(epsilon)
        assert plan.ledger_charge() == (0.75, 0.0, 0.75**2 / 2)  # max(ε, Σ ε_l), and its ε²/2


def test_a_gaussian_plan_whose_budgets_sum_past_rho_is_charged_what_its_noise_spends():
    """Level budgets ρ 0.5 + 0.25 for an (ε, δ) whose ρ is 0.75·(1 − 5·10⁻¹⁰); σ² = Δ₂²/(2ρ_l) = 2 and 4 are
    exact, so the noise spends ρ = 0.75. Both statistics charge ρ = 0.75 and its ε at δ, found here on the
    α grid, below Bun & Steinke's closed form and above the planned ε."""
    target = 0.75 * (1 - 5e-10)
    epsilon = zcdp_epsilon(target, DELTA)  # an ε whose ρ is the target
    assert epsilon == pytest.approx(cks_epsilon(target, DELTA), rel=1e-6)
    privacy = PrivacySpec(epsilon, "change", 1, DELTA)
    assert privacy.rho is not None and abs(privacy.rho - target) <= 1e-12 and privacy.rho < 0.75
    for plan in _plans(privacy, "gaussian", (0.5, 0.25)):
        assert Fraction(plan.rho_spent()) == Fraction(3, 4)
        charged_epsilon, charged_delta, charged_rho = plan.ledger_charge()
        assert (charged_delta, charged_rho) == (DELTA, 0.75)  # max(zcdp_rho(ε, δ), Σ ρ_l)
        assert charged_epsilon == pytest.approx(cks_epsilon(0.75, DELTA), rel=1e-6)
        assert epsilon < charged_epsilon < simple_epsilon(0.75, DELTA)
        assert charged_epsilon >= plan.epsilon_spent()
