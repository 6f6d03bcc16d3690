"""The noise seam: what a noise added to released counts is, for the plans that use it.

A :class:`NoiseMechanism` adds independent integer noise to each count of a released vector (a tree's
level, a hierarchy's level) at a *noise parameter* set by a *budget* in its own unit and by the vector's
:class:`Sensitivity` (what one person can move). It says, for a budget and a sensitivity, the exact
rational noise parameter the sampler draws at (rounded up, never below the privacy the budget promises),
the variance of one noisy count, how to draw the noise (:mod:`dpgui.core.noise`'s exact samplers), what
the release spends and what the ledger charges (:class:`~dpgui.vocabulary.Charge`, by one rule for every
noise and statistic: :func:`ledger_charge`), and the words the
manifest and the report use. :func:`mechanism_for` is the one registry, keyed by
:class:`~dpgui.vocabulary.Noise`.

* **Laplace** (pure ε-DP): discrete Laplace with scale ``t ≥ Δ₁/ε`` (:func:`~dpgui.core.noise.laplace_scale`),
  so the vector is ``Δ₁/t ≤ ε``-DP; budgets are ε and compose by addition (basic composition). As zCDP it
  is ``ε²/2``-zCDP (Bun & Steinke 2016, Prop. 1.4), which lets the ledger compose it with Gaussian releases.
  Variance 2p/(1−p)², p = e^{−1/t} (≈ 2t²).
* **Gaussian** (needs δ > 0): discrete Gaussian with ``σ² ≥ Δ₂²/(2ρ)`` (:func:`~dpgui.core.noise.gaussian_sigma2`),
  so the vector is ``Δ₂²/(2σ²) ≤ ρ``-zCDP (Canonne, Kamath & Steinke 2020, Thm 14); budgets are ρ, compose
  by addition, and the total converts to (ε, δ) by their Corollary 13 (:mod:`dpgui.core.accounting`).
  Variance slightly below σ² (:func:`~dpgui.core.noise_moments.discrete_gaussian_variance`).

The multiplicative noise of hierarchies (Ghazi et al. 2023) is not a mechanism of this kind: it releases
bucketed upper estimates found by sparse-vector rounds, with no per-count noise parameter, no variance of
a count and an (ε, δ) of its own composition (:mod:`dpgui.core.counting_trees`); :func:`mechanism_for`
refuses it.

Pure functions of public numbers (budgets, sensitivities, noise parameters); sampling reads only the
random source. No I/O, no Qt.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final, Protocol

import numpy as np

from dpgui.core.accounting import zcdp_epsilon, zcdp_rho
from dpgui.core.noise import (
    MAX_GAUSSIAN_SIGMA2, MAX_LAPLACE_SCALE, RandomSource, gaussian_sigma2, gaussian_sigma2_problem, laplace_scale,
    laplace_scale_float, laplace_scale_problem, sample_discrete_gaussian_levels, sample_discrete_laplace_levels,
)
from dpgui.core.noise_moments import discrete_gaussian_pmf, discrete_gaussian_variance, discrete_laplace_variance
from dpgui.vocabulary import Charge, Noise

__all__ = [
    "GAUSSIAN",
    "LAPLACE",
    "GaussianMechanism",
    "LaplaceMechanism",
    "NoiseMechanism",
    "Sensitivity",
    "ledger_charge",
    "mechanism_for",
    "mechanism_named",
    "pure_rho",
    "round_up_float",
]


@dataclass(frozen=True)
class Sensitivity:
    """How far one person moves one released vector of counts: its L1 norm Δ₁ and squared L2 norm Δ₂²
    (whole numbers ≥ 1; e.g. 2L and 2L² for a tree level under change, L records per person)."""

    l1: int
    l2_squared: int


class NoiseMechanism(Protocol):
    """One noise, as the plans see it (module docstring). Budgets are in :attr:`budget_unit`; a noise
    parameter (``scale``) is the exact rational the sampler draws at; figures are per noisy count."""

    @property
    def noise(self) -> Noise:
        """Its name (the registry's key)."""

    @property
    def budget_unit(self) -> str:
        """The unit of its budgets: "ε" or "ρ"."""

    @property
    def manifest_name(self) -> str:
        """Its name in a plan's JSON and the manifest: "discrete_laplace" or "discrete_gaussian"."""

    @property
    def budget_power(self) -> int:
        """k in variance ≈ c / budget^k: 2 for Laplace (1/ε²), 1 for Gaussian (1/ρ)."""

    def budget_total(self, epsilon: float, delta: float) -> float:
        """What a release's budgets at (ε, δ) sum to: ε, or the ρ whose conversion is (ε, δ) (δ > 0)."""

    def scale(self, sensitivity: Sensitivity, budget: float) -> Fraction:
        """The noise parameter for ``budget`` (> 0): rounded up, so the vector costs at most ``budget``."""

    def scale_problem(self, scale: Fraction) -> str | None:
        """Why the sampler cannot draw at ``scale``, or None."""

    def least_budget(self, sensitivity: Sensitivity) -> float:
        """The smallest budget whose noise the sampler can draw (below it :meth:`scale_problem` says why)."""

    def variance(self, scale: float) -> float:
        """The exact variance of one noisy count at noise parameter ``scale``, counts²."""

    def budget_variances(self, budgets: np.ndarray, sensitivity: Sensitivity) -> np.ndarray:
        """Variance of one count at each budget with the unrounded noise parameter (the planner's view);
        inf where the budget is 0."""

    def rounded_variance(self, sensitivity: Sensitivity, budget: float) -> float:
        """``variance(scale(sensitivity, budget))`` by a fast path for many budgets (plots); the budget
        (> 0) is the caller's to check."""

    def unrounded_scale(self, sensitivity: Sensitivity, budget: float) -> float:
        """The noise parameter before rounding: Δ₁/ε or Δ₂²/(2ρ); it falls as scale/budget per unit budget."""

    def half_width(self, scale: Fraction, miss: float) -> int:
        """The smallest whole q with P(|Z| ≤ q) ≥ 1 − ``miss`` for one count's noise Z at ``scale``."""

    def sample(self, source: RandomSource, scales: Sequence[Fraction], sizes: Sequence[int]) -> list[np.ndarray]:
        """Exact integer noise: ``sizes[i]`` draws at ``scales[i]`` for each i (one int64 array each)."""

    def spent(self, sensitivity: Sensitivity, scales: Sequence[Fraction | None]) -> Fraction:
        """What noise at ``scales`` (None: a vector not noised) spends, exactly, in :attr:`budget_unit`."""

    def epsilon_of(self, spent: Fraction, delta: float) -> Fraction:
        """The ε of a release that spent ``spent`` (in :attr:`budget_unit`) at δ."""

    def rho_of(self, spent: Fraction) -> Fraction:
        """The zCDP ρ of a release that spent ``spent`` (in :attr:`budget_unit`)."""

    def charge(self, epsilon: float, delta: float, spent: Fraction) -> Charge:
        """What the ledger charges a release planned at (ε, δ) whose noise spends ``spent`` (:meth:`spent`, in
        :attr:`budget_unit`): :func:`ledger_charge`, the one rule for every per-count noise."""


def ledger_charge(mechanism: NoiseMechanism, epsilon: float, delta: float, spent: Fraction) -> Charge:
    """What the ledger charges a release planned at (ε, δ) whose noise spends ``spent`` (exactly, in the
    mechanism's budget unit: :meth:`NoiseMechanism.spent` of its noise parameters), δ being 0 for pure
    ε-DP noise. The one rule of both statistics' plans:

    * the **planned** charge when the noise spends at most the planned total (ε, or ρ = zcdp_rho(ε, δ)):
      (ε, δ, ρ) with ρ = ε²/2 for pure ε-DP noise (Bun & Steinke 2016, Prop. 1.4: it lets Laplace and
      Gaussian releases compose under zCDP; the nearest float, half an ulp being far below the ledger's
      relative tolerance of 10⁻⁹) or the planned ρ for zCDP noise;
    * else the **larger figures of what is spent**: a plan's level budgets may sum to its total within a
      relative :data:`dpgui.core.plan.BUDGET_RTOL` (a saved plan, budgets given with ``--budgets``, a
      hierarchy's typed level budgets), and then the noise spends up to 10⁻⁹ more than planned. ε is then
      max(ε, ε of ``spent``) (Laplace: ``spent``; Gaussian: its conversion at δ, Canonne, Kamath &
      Steinke 2020, Cor. 13) and ρ is ρ of ``spent`` (ε²/2, or ``spent``), each rounded up to a float.

    Never less than the planned charge nor than what the noise spends; pure, public numbers only."""
    planned = Fraction(mechanism.budget_total(epsilon, delta))
    charged_delta = delta if mechanism.noise.is_zcdp else 0.0
    if spent <= planned:
        return Charge(epsilon, charged_delta, float(mechanism.rho_of(planned)))
    spent = Fraction(round_up_float(spent))
    return Charge(max(epsilon, round_up_float(mechanism.epsilon_of(spent, delta))), charged_delta,
                  round_up_float(mechanism.rho_of(spent)))


def pure_rho(epsilon: Fraction) -> Fraction:
    """The zCDP ρ of an ε-DP release: ε²/2 (Bun & Steinke 2016, Prop. 1.4)."""
    return epsilon * epsilon / 2


class LaplaceMechanism:
    """Discrete Laplace noise: budgets ε, scale t = laplace_scale(Δ₁, ε), pure ε-DP."""

    noise: Final = Noise.LAPLACE
    budget_unit: Final = "ε"
    manifest_name: Final = "discrete_laplace"
    budget_power: Final = 2

    def budget_total(self, epsilon: float, delta: float) -> float:
        return epsilon

    def scale(self, sensitivity: Sensitivity, budget: float) -> Fraction:
        return laplace_scale(sensitivity.l1, budget)

    def scale_problem(self, scale: Fraction) -> str | None:
        return laplace_scale_problem(scale)

    def least_budget(self, sensitivity: Sensitivity) -> float:
        return sensitivity.l1 / float(MAX_LAPLACE_SCALE)

    def variance(self, scale: float) -> float:
        return discrete_laplace_variance(scale)

    def budget_variances(self, budgets: np.ndarray, sensitivity: Sensitivity) -> np.ndarray:
        """1 / (2 sinh²(ε/2Δ₁)), the variance at scale Δ₁/ε; inf where ε = 0."""
        eps = np.asarray(budgets, dtype=float)
        with np.errstate(divide="ignore"):
            return 0.5 / np.sinh(eps / (2.0 * sensitivity.l1)) ** 2

    def rounded_variance(self, sensitivity: Sensitivity, budget: float) -> float:
        return discrete_laplace_variance(laplace_scale_float(sensitivity.l1, budget))

    def unrounded_scale(self, sensitivity: Sensitivity, budget: float) -> float:
        return sensitivity.l1 / budget

    def half_width(self, scale: Fraction, miss: float) -> int:
        """From P(|Z| > m) = 2 q^{m+1}/(1+q), q = e^{−1/t}."""
        q = math.exp(-1.0 / float(scale))
        m = max(0, math.ceil(math.log(miss * (1.0 + q) / 2.0) / math.log(q)) - 1)
        while m > 0 and 2.0 * q**m / (1.0 + q) <= miss:
            m -= 1
        while 2.0 * q ** (m + 1) / (1.0 + q) > miss:
            m += 1
        return m

    def sample(self, source: RandomSource, scales: Sequence[Fraction], sizes: Sequence[int]) -> list[np.ndarray]:
        return sample_discrete_laplace_levels(source, scales, sizes)

    def spent(self, sensitivity: Sensitivity, scales: Sequence[Fraction | None]) -> Fraction:
        """Σ Δ₁/t over the noised vectors (basic composition)."""
        return sum((Fraction(sensitivity.l1) / s for s in scales if s is not None), Fraction(0))

    def epsilon_of(self, spent: Fraction, delta: float) -> Fraction:
        return spent

    def rho_of(self, spent: Fraction) -> Fraction:
        return pure_rho(spent)

    def charge(self, epsilon: float, delta: float, spent: Fraction) -> Charge:
        """(ε, 0, ε²/2) of the larger of the planned ε and ``spent``; δ is unused by pure ε-DP noise."""
        return ledger_charge(self, epsilon, delta, spent)


class GaussianMechanism:
    """Discrete Gaussian noise: budgets ρ, σ² = gaussian_sigma2(Δ₂², ρ), ρ-zCDP, (ε, δ) by the
    Canonne–Kamath–Steinke conversion."""

    noise: Final = Noise.GAUSSIAN
    budget_unit: Final = "ρ"
    manifest_name: Final = "discrete_gaussian"
    budget_power: Final = 1

    def budget_total(self, epsilon: float, delta: float) -> float:
        """zcdp_rho(ε, δ); δ must be > 0 (the caller says so first, with its own fix)."""
        return zcdp_rho(epsilon, delta)

    def scale(self, sensitivity: Sensitivity, budget: float) -> Fraction:
        return gaussian_sigma2(sensitivity.l2_squared, budget)

    def scale_problem(self, scale: Fraction) -> str | None:
        return gaussian_sigma2_problem(scale)

    def least_budget(self, sensitivity: Sensitivity) -> float:
        return sensitivity.l2_squared / (2.0 * float(MAX_GAUSSIAN_SIGMA2))

    def variance(self, scale: float) -> float:
        return float(discrete_gaussian_variance(float(scale)))

    def budget_variances(self, budgets: np.ndarray, sensitivity: Sensitivity) -> np.ndarray:
        """The discrete Gaussian's exact variance at σ² = Δ₂²/(2ρ) (unrounded); inf where ρ = 0."""
        r = np.asarray(budgets, dtype=float)
        out = np.full(r.shape, np.inf)
        positive = r > 0
        if positive.any():
            out[positive] = discrete_gaussian_variance(sensitivity.l2_squared / (2.0 * r[positive]))
        return out

    def rounded_variance(self, sensitivity: Sensitivity, budget: float) -> float:
        return self.variance(float(gaussian_sigma2(sensitivity.l2_squared, budget)))

    def unrounded_scale(self, sensitivity: Sensitivity, budget: float) -> float:
        return sensitivity.l2_squared / (2.0 * budget)

    def half_width(self, scale: Fraction, miss: float) -> int:
        """From the exact pmf summed over |k| ≤ 14σ + 2 (beyond, the mass is below 10⁻⁴²)."""
        s = float(scale)
        half = int(math.ceil(14.0 * math.sqrt(s))) + 2
        pmf = discrete_gaussian_pmf(np.arange(0, half + 1), s)
        outside = 1.0 - (pmf[0] + 2.0 * np.concatenate([[0.0], np.cumsum(pmf[1:])]))  # P(|Z| > k), k = 0..half
        return int(np.argmax(outside <= miss))

    def sample(self, source: RandomSource, scales: Sequence[Fraction], sizes: Sequence[int]) -> list[np.ndarray]:
        return sample_discrete_gaussian_levels(source, scales, sizes)

    def spent(self, sensitivity: Sensitivity, scales: Sequence[Fraction | None]) -> Fraction:
        """Σ Δ₂²/(2σ²) over the noised vectors (zCDP composition)."""
        l2sq = Fraction(sensitivity.l2_squared)
        return sum((l2sq / (2 * s) for s in scales if s is not None), Fraction(0))

    def epsilon_of(self, spent: Fraction, delta: float) -> Fraction:
        """The CKS conversion of ρ = ``spent`` at δ (rounded towards more ε)."""
        return Fraction(zcdp_epsilon(float(spent), delta))

    def rho_of(self, spent: Fraction) -> Fraction:
        return spent

    def charge(self, epsilon: float, delta: float, spent: Fraction) -> Charge:
        """(ε, δ, ρ = zcdp_rho(ε, δ)), or the larger figures of ``spent`` when it is more than that ρ."""
        return ledger_charge(self, epsilon, delta, spent)


LAPLACE: Final = LaplaceMechanism()
GAUSSIAN: Final = GaussianMechanism()
_REGISTRY: Final[dict[Noise, NoiseMechanism]] = {Noise.LAPLACE: LAPLACE, Noise.GAUSSIAN: GAUSSIAN}


def mechanism_for(noise: str) -> NoiseMechanism:
    """The mechanism of ``noise`` (a :class:`Noise` or its token); ValueError for a noise that is not
    one (multiplicative: module docstring) or is unknown: a programming error, names are checked first."""
    mechanism = _REGISTRY.get(Noise(noise))
    if mechanism is None:
        raise ValueError(f"{noise!r} noise is not a per-count noise mechanism")
    return mechanism


def mechanism_named(manifest_name: str) -> NoiseMechanism | None:
    """The mechanism a plan's JSON or a manifest names ("discrete_laplace", "discrete_gaussian"), or None."""
    return next((m for m in _REGISTRY.values() if m.manifest_name == manifest_name), None)


def noise_named(manifest_name: object) -> Noise | None:
    """The noise a plan's JSON or a manifest names ("discrete_laplace", "discrete_gaussian"), or None
    (a name of no per-count mechanism, or not a name)."""
    mechanism = mechanism_named(manifest_name) if isinstance(manifest_name, str) else None
    return None if mechanism is None else mechanism.noise


def round_up_float(value: Fraction) -> float:
    """``value`` as the nearest float not below it (a charge is never rounded down)."""
    near = float(value)
    return math.nextafter(near, math.inf) if Fraction(near) < value else near
