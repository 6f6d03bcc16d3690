"""One rule for a release's ledger charge (:func:`dpgui.core.accounting.release_charge`), whatever the
statistic: a CDF plan (:meth:`Plan.ledger_charge`) and a hierarchy plan (:meth:`HierarchyPlan.ledger_charge`)
charge the same (ε, δ, ρ) for the same privacy, and both agree with an independent closed form:
Laplace (ε, 0, ε²/2) (Bun & Steinke 2016, Prop. 1.4); Gaussian (ε, δ, ρ) with ρ the largest zCDP ρ whose
Canonne–Kamath–Steinke (2020) ε at δ is ε, found here by bisection on the ε-form minimised over a dense α
grid (no code shared with dpgui); the charged figures never below what the noise spends (exact rationals).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpgui.core.accounting import release_charge
from dpgui.core.hierarchy import HierarchyPlan
from dpgui.core.plan import Plan, PrivacySpec, equal_budgets
from dpgui.core.tree import TreeShape
from dpgui.vocabulary import Charge, Noise


def cks_epsilon(rho: float, delta: float) -> float:
    def eps_of(alpha: np.ndarray) -> np.ndarray:
        am1 = alpha - 1.0
        return alpha * rho + (math.log(1 / delta) + am1 * np.log1p(-1 / alpha) - np.log(alpha)) / am1

    alphas = 1.0 + np.logspace(-6, 7, 400_001)
    values = eps_of(alphas)
    best = int(np.argmin(values))
    fine = np.linspace(alphas[max(best - 1, 0)], alphas[min(best + 1, alphas.size - 1)], 100_001)
    return float(min(values[best], eps_of(fine).min()))


def cks_rho(epsilon: float, delta: float) -> float:
    lo, hi = 0.0, epsilon
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cks_epsilon(mid, delta) <= epsilon else (lo, mid)
    return lo


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


def test_a_spend_above_the_plan_is_what_is_charged():
    """Level budgets may sum to the total within a relative 10⁻⁹; the rule charges the larger figure."""
    assert release_charge(Noise.LAPLACE, 1.0, 0.0, spent_epsilon=1.0 + 1e-10) == Charge(1.0 + 1e-10, 0.0,
                                                                                        (1.0 + 1e-10) ** 2 / 2)
    assert release_charge("laplace", 1.0, 0.0, spent_epsilon=0.9) == Charge(1.0, 0.0, 0.5)
    rho = cks_rho(1.0, 1e-6)
    above = release_charge(Noise.GAUSSIAN, 1.0, 1e-6, planned_rho=rho, spent_rho=rho * (1 + 1e-6))
    assert above.rho == rho * (1 + 1e-6) and above.delta == 1e-6
    assert above.epsilon == pytest.approx(cks_epsilon(rho * (1 + 1e-6), 1e-6), rel=1e-6) and above.epsilon > 1.0
    assert release_charge(Noise.GAUSSIAN, 1.0, 1e-6, planned_rho=rho, spent_rho=rho / 2) == Charge(1.0, 1e-6, rho)
    assert release_charge(Noise.MULTIPLICATIVE, 1.0, 1e-6, spent_epsilon=0.99, spent_delta=2e-6) == \
        Charge(1.0, 2e-6, None)
