"""The noise seam (:mod:`dpgui.core.noise_mechanisms`): each mechanism's noise parameter, variance,
spending and charge against closed forms computed here independently.

Independent references:
* the variances by direct summation of the pmfs, Σ x² P(x) over the integers (no sinh formula, no
  Poisson summation), in exact-enough float with ``math.fsum``;
* the noise parameters from their definitions (t ≥ Δ₁/ε on a grid of 2⁻¹⁶; σ² ≥ Δ₂²/(2ρ)), with Fractions;
* the Gaussian charge's ρ by a brute-force minimum over a dense α grid of CKS 2020's δ(ε) bound
  (Corollary 13), as in ``test_core_accounting.py``: the charged ρ must give δ(ε) ≤ δ, and a ρ 10⁻⁶ larger
  must not;
* the Laplace charge's ρ as ε²/2 (Bun & Steinke 2016, Prop. 1.4).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpgui.core.noise import SeededRandom
from dpgui.core.noise_mechanisms import (
    GAUSSIAN, LAPLACE, Sensitivity, mechanism_for, mechanism_named, pure_rho, round_up_float,
)
from dpgui.vocabulary import Charge, Noise

SENSITIVITIES = [Sensitivity(1, 1), Sensitivity(2, 2), Sensitivity(6, 18)]  # add/remove L=1; change L=1; change L=3
BUDGETS = [0.05, 0.3, 1.0, 2.5]


def laplace_pmf_variance(t: float) -> float:
    """Σ x² P(x), P(x) = (1 − p)/(1 + p) p^|x|, p = e^{−1/t}, summed until the terms vanish."""
    p = math.exp(-1.0 / t)
    c = (1.0 - p) / (1.0 + p)
    top = int(60 * t) + 60
    return 2.0 * math.fsum(c * x * x * p**x for x in range(1, top))


def gaussian_pmf_variance(sigma2: float) -> float:
    """Σ x² e^{−x²/2σ²} / Σ e^{−x²/2σ²} over |x| ≤ 40σ + 50."""
    top = int(40 * math.sqrt(sigma2)) + 50
    w = [math.exp(-x * x / (2.0 * sigma2)) for x in range(-top, top + 1)]
    return math.fsum(x * x * wx for x, wx in zip(range(-top, top + 1), w)) / math.fsum(w)


def cks_delta(rho: float, epsilon: float) -> float:
    """CKS 2020 Corollary 13, minimised over a dense α grid, then over a finer grid around the best (no bisection)."""
    def log_delta(alpha: np.ndarray) -> np.ndarray:
        return (alpha - 1) * (alpha * rho - epsilon) + alpha * np.log1p(-1.0 / alpha) - np.log(alpha - 1)

    alpha = 1.0 + np.logspace(-7, 4, 200_000)
    best = int(np.argmin(log_delta(alpha)))
    fine = np.linspace(alpha[max(best - 1, 0)], alpha[min(best + 1, alpha.size - 1)], 200_001)
    return float(np.exp(log_delta(fine).min()))


@pytest.mark.parametrize("noise", [Noise.LAPLACE, Noise.GAUSSIAN])
def test_registry_names_each_mechanism_once(noise):
    mechanism = mechanism_for(noise)
    assert mechanism.noise is noise and mechanism_for(str(noise)) is mechanism
    assert mechanism_named(mechanism.manifest_name) is mechanism
    assert mechanism.manifest_name == {"laplace": "discrete_laplace", "gaussian": "discrete_gaussian"}[noise]
    assert mechanism.budget_unit == {"laplace": "ε", "gaussian": "ρ"}[noise]


def test_multiplicative_noise_is_not_a_per_count_mechanism():
    with pytest.raises(ValueError, match="multiplicative"):
        mechanism_for(Noise.MULTIPLICATIVE)
    assert mechanism_named("discrete_multiplicative") is None


@pytest.mark.parametrize("sensitivity", SENSITIVITIES)
@pytest.mark.parametrize("epsilon", BUDGETS)
def test_laplace_scale_variance_and_spending(sensitivity, epsilon):
    t = LAPLACE.scale(sensitivity, epsilon)
    exact = Fraction(sensitivity.l1) / Fraction(epsilon)
    assert exact <= t < exact + Fraction(1, 2**16) and (t * 2**16).denominator == 1
    assert LAPLACE.variance(float(t)) == pytest.approx(laplace_pmf_variance(float(t)), rel=1e-11)
    assert LAPLACE.rounded_variance(sensitivity, epsilon) == LAPLACE.variance(float(t))
    unrounded = LAPLACE.budget_variances(np.array([epsilon, 0.0]), sensitivity)
    assert unrounded[0] == pytest.approx(laplace_pmf_variance(sensitivity.l1 / epsilon), rel=1e-11)
    assert unrounded[1] == math.inf
    spent = LAPLACE.spent(sensitivity, [t, None, t])
    assert spent == 2 * Fraction(sensitivity.l1) / t and spent <= 2 * Fraction(epsilon)
    assert LAPLACE.epsilon_of(spent, 1e-9) == spent
    assert LAPLACE.rho_of(spent) == spent * spent / 2


@pytest.mark.parametrize("sensitivity", SENSITIVITIES)
@pytest.mark.parametrize("rho", [0.001, 0.02, 0.3, 4.0])
def test_gaussian_scale_variance_and_spending(sensitivity, rho):
    sigma2 = GAUSSIAN.scale(sensitivity, rho)
    exact = Fraction(sensitivity.l2_squared) / (2 * Fraction(rho))
    assert exact <= sigma2 <= exact * (1 + Fraction(1, 2**15))
    assert GAUSSIAN.variance(float(sigma2)) == pytest.approx(gaussian_pmf_variance(float(sigma2)), rel=1e-11)
    assert GAUSSIAN.rounded_variance(sensitivity, rho) == GAUSSIAN.variance(float(sigma2))
    unrounded = GAUSSIAN.budget_variances(np.array([rho, 0.0]), sensitivity)
    assert unrounded[0] == pytest.approx(gaussian_pmf_variance(sensitivity.l2_squared / (2 * rho)), rel=1e-11)
    assert unrounded[1] == math.inf
    spent = GAUSSIAN.spent(sensitivity, [None, sigma2])
    assert spent == Fraction(sensitivity.l2_squared) / (2 * sigma2) and spent <= Fraction(rho)
    assert GAUSSIAN.rho_of(spent) == spent


@pytest.mark.parametrize("epsilon", BUDGETS)
def test_laplace_charge_is_pure_epsilon(epsilon):
    charge = LAPLACE.charge(epsilon, 1e-9, Fraction(epsilon))  # δ is unused by pure ε-DP noise
    assert charge == Charge(epsilon, 0.0, float(Fraction(epsilon) ** 2 / 2))  # ρ = ε²/2 for the ledger
    assert LAPLACE.budget_total(epsilon, 1e-9) == epsilon
    assert pure_rho(Fraction(epsilon)) == Fraction(epsilon) ** 2 / 2


@pytest.mark.parametrize("epsilon", BUDGETS)
@pytest.mark.parametrize("delta", [1e-10, 1e-6])
def test_gaussian_charge_is_the_largest_rho_within_epsilon_delta(epsilon, delta):
    charge = GAUSSIAN.charge(epsilon, delta, Fraction(GAUSSIAN.budget_total(epsilon, delta)))  # all of it spent
    assert (charge.epsilon, charge.delta) == (epsilon, delta)
    assert charge.rho == GAUSSIAN.budget_total(epsilon, delta)
    assert cks_delta(charge.rho, epsilon) <= delta * (1 + 1e-6)
    assert cks_delta(charge.rho * (1 + 1e-5), epsilon) > delta
    # the ε a release that spent all of that ρ is charged: at most ε (rounded towards more ε)
    assert float(GAUSSIAN.epsilon_of(Fraction(charge.rho), delta)) == pytest.approx(epsilon, rel=1e-6)


@pytest.mark.parametrize("mechanism, scale", [(LAPLACE, Fraction(3, 2)), (LAPLACE, Fraction(40)),
                                              (GAUSSIAN, Fraction(1, 3)), (GAUSSIAN, Fraction(250))])
def test_half_width_is_the_least_95_percent_bound(mechanism, scale):
    q = mechanism.half_width(scale, 0.05)
    s = float(scale)
    if mechanism is LAPLACE:
        p = math.exp(-1.0 / s)
        inside = [(1 - p) / (1 + p) * (1 + 2 * math.fsum(p**x for x in range(1, k + 1))) for k in (q - 1, q)]
    else:
        top = int(40 * math.sqrt(s)) + 50
        w = {x: math.exp(-x * x / (2.0 * s)) for x in range(-top, top + 1)}
        z = math.fsum(w.values())
        inside = [math.fsum(w[x] for x in range(-k, k + 1)) / z if k >= 0 else 0.0 for k in (q - 1, q)]
    assert inside[1] >= 0.95 > inside[0]


@pytest.mark.parametrize("mechanism, scale", [(LAPLACE, Fraction(7, 2)), (GAUSSIAN, Fraction(9))])
def test_sampled_noise_has_the_stated_variance(mechanism, scale):
    draws = mechanism.sample(SeededRandom(29), [scale, scale], [20_000, 10])
    assert [d.size for d in draws] == [20_000, 10] and all(d.dtype == np.int64 for d in draws)
    variance = mechanism.variance(float(scale))
    # the sample variance's standard error is about √(2/n)·Var (a little more for Laplace's heavier tails)
    assert abs(float(np.mean(draws[0].astype(float) ** 2)) - variance) < 5 * math.sqrt(6.0 / 20_000) * variance


def test_round_up_float_never_rounds_down():
    for value in (Fraction(1, 3), Fraction(2, 3), Fraction(10, 7)):
        up = round_up_float(value)
        assert Fraction(up) >= value > Fraction(math.nextafter(up, -math.inf))
    assert round_up_float(Fraction(1, 2)) == 0.5


def test_a_manifests_noise_name_reads_back_as_the_vocabularys_noise() -> None:
    from dpgui.core.noise_mechanisms import noise_named

    assert noise_named("discrete_gaussian") is Noise.GAUSSIAN
    assert noise_named("discrete_laplace") is Noise.LAPLACE
    assert noise_named("gaussian") is None and noise_named(None) is None and noise_named(3) is None
