"""Privacy accounting for zero-concentrated DP (zCDP): ρ of a Gaussian, and ρ → (ε, δ).

Units and conventions
---------------------
* ε (epsilon) and ρ (rho) are in nats (natural logarithms), as everywhere in dpgui.
* δ (delta) is a probability, 0 < δ < 1 for the conversions.
* ρ-zCDP (Bun & Steinke, TCC 2016) composes by addition: k releases with ρ_1..ρ_k are together
  (Σ ρ_i)-zCDP. Convert only the *total* ρ to (ε, δ); converting each release and adding the ε
  is valid but much looser.

The conversion
--------------
Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020,
arXiv:2004.00010), Corollary 13: a ρ-zCDP mechanism is (ε, δ)-DP for

    δ(ε) = inf_{α > 1}  exp((α − 1)(αρ − ε) + α·ln(1 − 1/α)) / (α − 1).

This is the bound OpenDP's ``cdp_delta`` implements (``make_zCDP_to_approxDP``) and Steinke's
``cdp2adp.py``. It is never worse than the simple bound ρ-zCDP ⇒ (ρ + 2√(ρ ln(1/δ)), δ)-DP and
allows more ρ for the same (ε, δ) (docs/privacy-model.md, "zCDP accounting in the ledger").

How it is computed: ln δ_α(ε) is convex in α with derivative (2α − 1)ρ − ε + ln(1 − 1/α), which
increases in α, so the best α is found by bisection on the sign of the derivative, to full
double precision. Every α > 1 gives a *valid* bound, so an imprecise α can only make δ larger
(the safe direction); a slack of 64 ulps is added to ln δ against rounding in ``log``/``log1p``.
``zcdp_epsilon`` then inverts δ(ε) by bisection on ε and returns the upper end of the final
bracket, i.e. an ε whose δ(ε) is ≤ the target: the answer errs, if at all, towards more ε.
Each call costs a few thousand floating-point operations.

Composing a dataset's releases against a cap
--------------------------------------------
:func:`compose` adds up a list of charges (ε, δ and, where the noise is zCDP, ρ) against a cap
(ε, δ): **basic composition** (Σε ≤ cap ε and Σδ ≤ cap δ), **or** — when every charge carries a ρ
and cap δ > 0 — **zCDP composition**: Σρ converted to ε at δ = cap δ (:func:`zcdp_epsilon`) is
≤ cap ε. Both are valid bounds on the composed privacy loss, so the charges fit if either holds.
Sums use ``math.fsum``; a total within a relative :data:`RELATIVE_TOLERANCE` of the cap fits (three
charges of ε/3 fit a cap of ε, 1.0000001·ε does not).

No I/O, no global state, no OpenDP at run time (the tests compare against OpenDP).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from dpgui.errors import ParameterError
from dpgui.vocabulary import Name

__all__ = [
    "RELATIVE_TOLERANCE",
    "Accounting",
    "Composition",
    "Shortfall",
    "Spend",
    "compose",
    "largest_fitting_epsilon",
    "shortfall",
    "within_cap",
    "gaussian_rho",
    "cdp_delta",
    "zcdp_epsilon",
    "zcdp_rho",
    "simple_zcdp_epsilon",
]

_ALPHA_MIN = 1.0 + 2.0**-26  # α this close to 1 only matters when δ is near 1; any α > 1 is valid
_LOG_SLACK_ULPS = 64.0
_MAX_STEPS = 4000  # a guard only: bisection on doubles ends long before it


def _check_finite_nonneg(name: str, value: float, fix: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, not {value!r}", fix) from None
    if not math.isfinite(x) or x < 0:
        raise ParameterError(f"{name} must be a finite number ≥ 0, not {value!r}", fix)
    return x


def _check_delta(delta: float) -> float:
    try:
        d = float(delta)
    except (TypeError, ValueError):
        raise ParameterError(f"δ must be a number, not {delta!r}", "give a probability such as 1e-6") from None
    if not (0.0 < d < 1.0):
        raise ParameterError(f"δ must be strictly between 0 and 1, not {delta!r}",
                             "give a small probability such as 1e-6 (zCDP gives no guarantee with δ = 0)")
    return d


def gaussian_rho(l2_sensitivity: float, sigma2: float) -> float:
    """ρ of the (discrete or continuous) Gaussian mechanism: Δ₂² / (2σ²).

    ``l2_sensitivity`` Δ₂ ≥ 0 is the largest change of the released vector in Euclidean norm
    between neighbouring datasets (e.g. √2 per tree level under change-one); ``sigma2`` σ² > 0 is
    the noise *variance* parameter (for the discrete Gaussian, the σ² of exp(−x²/(2σ²))).
    The discrete Gaussian with integer-valued queries satisfies the same ρ (CKS 2020, Thm 14).
    """
    d = _check_finite_nonneg("the L2 sensitivity", l2_sensitivity, "give the sensitivity Δ₂ ≥ 0")
    try:
        s2 = float(sigma2)
    except (TypeError, ValueError):
        raise ParameterError(f"σ² must be a number, not {sigma2!r}", "give the noise variance σ² > 0") from None
    if not (math.isfinite(s2) and s2 > 0):
        raise ParameterError(f"σ² must be a finite number > 0, not {sigma2!r}", "give the noise variance σ² > 0")
    return d * d / (2.0 * s2)


def simple_zcdp_epsilon(rho: float, delta: float) -> float:
    """The simple bound: ρ-zCDP ⇒ (ρ + 2√(ρ ln(1/δ)), δ)-DP (Bun & Steinke 2016, Prop. 1.3).

    Valid but looser than :func:`zcdp_epsilon`; kept for comparison and as a bracket.
    """
    r = _check_finite_nonneg("ρ", rho, "give the zCDP parameter ρ ≥ 0")
    d = _check_delta(delta)
    return r + 2.0 * math.sqrt(r * -math.log(d))


def _log_delta_at(alpha: float, rho: float, eps: float) -> float:
    """ln of CKS's δ bound at one order α > 1 (a valid bound for every α > 1)."""
    am1 = alpha - 1.0  # exact for α < 2 (Sterbenz), so ln(1 − 1/α) = ln(α − 1) − ln α is accurate near 1
    log_1m_inv = math.log(am1) - math.log(alpha) if alpha < 2.0 else math.log1p(-1.0 / alpha)
    return am1 * (alpha * rho - eps) + alpha * log_1m_inv - math.log(am1)


def _log_cdp_delta(rho: float, eps: float) -> float:
    """ln δ(ε) for ρ-zCDP (ρ > 0 finite, ε ≥ 0 finite), slightly rounded up (the safe side)."""
    lo = _ALPHA_MIN
    hi = (eps + 1.0) / (2.0 * rho) + 2.0  # the derivative is > 0 here (≥ 3ρ), so the optimum is below
    if not math.isfinite(hi) or hi > 1e300:
        hi = 1e300
    if (2.0 * lo - 1.0) * rho - eps + math.log1p(-1.0 / lo) >= 0.0:
        hi = lo  # optimum at (or below) the smallest α we use: δ is then close to 1 anyway
    else:
        for _ in range(_MAX_STEPS):
            mid = lo + (hi - lo) / 2.0
            if mid <= lo or mid >= hi:
                break
            if (2.0 * mid - 1.0) * rho - eps + math.log1p(-1.0 / mid) < 0.0:
                lo = mid
            else:
                hi = mid
    value = min(_log_delta_at(lo, rho, eps), _log_delta_at(hi, rho, eps))
    if math.isnan(value):
        return 0.0
    return min(0.0, value + _LOG_SLACK_ULPS * sys.float_info.epsilon * max(1.0, abs(value)))


def cdp_delta(rho: float, epsilon: float) -> float:
    """The smallest δ (CKS 2020, Cor. 13) such that ρ-zCDP ⇒ (ε, δ)-DP; at most 1.

    ``rho`` ≥ 0 and ``epsilon`` ≥ 0, finite. ρ = 0 ⇒ 0. Decreasing in ε, increasing in ρ.
    """
    r = _check_finite_nonneg("ρ", rho, "give the zCDP parameter ρ ≥ 0")
    e = _check_finite_nonneg("ε", epsilon, "give ε ≥ 0")
    if r == 0.0:
        return 0.0
    return math.exp(_log_cdp_delta(r, e))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The smallest ε such that ρ-zCDP ⇒ (ε, δ)-DP by the CKS 2020 conversion.

    ``rho`` ≥ 0 finite (nats), ``delta`` strictly between 0 and 1; raises
    :class:`~dpgui.errors.ParameterError` otherwise. ρ = 0 ⇒ 0. The result is finite, ≥ 0,
    increasing in ρ and decreasing in δ, and never more than :func:`simple_zcdp_epsilon`.
    It computes the same bound as OpenDP's ``make_zCDP_to_approxDP(...).map(d_in).epsilon(δ)`` (the
    tests compare the two); where they differ it is by rounding, at worst a few ulps from the exact
    bisection end that satisfies δ(ε) ≤ δ.
    """
    r = _check_finite_nonneg("ρ", rho, "give the zCDP parameter ρ ≥ 0")
    d = _check_delta(delta)
    if r == 0.0:
        return 0.0
    target = math.log(d)
    if _log_cdp_delta(r, 0.0) <= target:
        return 0.0
    lo = 0.0
    hi = r + 2.0 * math.sqrt(r * -target)  # the simple bound: δ(hi) ≤ δ
    while _log_cdp_delta(r, hi) > target:  # only if rounding put the simple bound a hair short
        lo, hi = hi, hi * 2.0
        if not math.isfinite(hi):
            raise ParameterError(f"ρ = {r!r} with δ = {d!r} gives no finite ε", "give a smaller ρ or a larger δ")
    for _ in range(_MAX_STEPS):
        mid = lo + (hi - lo) / 2.0
        if mid <= lo or mid >= hi:
            break
        if _log_cdp_delta(r, mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest ρ such that ρ-zCDP ⇒ (ε, δ)-DP by the CKS 2020 conversion (inverse of
    :func:`zcdp_epsilon` in ρ).

    ``epsilon`` ≥ 0 finite, 0 < ``delta`` < 1. Use it to turn an (ε, δ) budget into the ρ a
    Gaussian release may spend: e.g. ε = 1, δ = 1e-6 gives ρ ≈ 0.02436, against 0.01747 from the
    simple bound. The returned ρ is the lower end of the final bisection bracket, checked against the
    forward conversion: ``zcdp_epsilon(ρ, δ) ≤ ε`` always holds (``cdp_delta(ρ, ε)`` may exceed δ by an
    ulp of rounding in ``exp``).
    """
    e = _check_finite_nonneg("ε", epsilon, "give ε ≥ 0")
    d = _check_delta(delta)
    target = math.log(d)
    big_l = -target
    lo = (math.sqrt(big_l + e) - math.sqrt(big_l)) ** 2  # the simple bound's ρ: feasible
    while lo > 0.0 and _log_cdp_delta(lo, e) > target:  # rounding guard
        lo /= 2.0
    hi = max(2.0 * lo, 1e-300)
    while _log_cdp_delta(hi, e) <= target:
        lo = hi
        hi *= 2.0
        if hi > 1e300:
            return _checked_rho(lo, e, d)
    for _ in range(_MAX_STEPS):
        mid = lo + (hi - lo) / 2.0
        if mid <= lo or mid >= hi:
            break
        if _log_cdp_delta(mid, e) <= target:
            lo = mid
        else:
            hi = mid
    return _checked_rho(lo, e, d)


def _checked_rho(rho: float, epsilon: float, delta: float) -> float:
    """``rho`` lowered, if need be, until the forward conversion gives ``zcdp_epsilon(ρ, δ) ≤ ε``.

    The bisection in :func:`zcdp_rho` tests δ(ε) ≤ δ; :func:`zcdp_epsilon` runs its own bisection on ε, whose
    last step can land a few ulps above ε (seen for 20 of 20,000 random (ε, δ), all with ε < 0.03, by ≤ 2e-14
    relative). Each step down doubles (from 4 ulps), so this ends after a few forward conversions.
    """
    step = 4.0 * sys.float_info.epsilon
    while rho > 0.0 and zcdp_epsilon(rho, delta) > epsilon:
        rho *= 1.0 - step
        step = min(2.0 * step, 0.5)
    return rho


# ---------------------------------------------------------------------------------------------
# composing charges against a cap

RELATIVE_TOLERANCE = 1e-9  # a total within cap·(1 + 1e-9) fits: float rounding, not extra budget


class Accounting(Name):
    """Which bound gives a dataset's spent ε."""

    BASIC = "basic"  # Σε (basic composition)
    ZCDP = "zcdp"  # Σρ converted to ε at the cap's δ (Canonne, Kamath & Steinke 2020)


class Shortfall(Name):
    """What a charge that does not fit a cap lacks."""

    EPSILON = "epsilon"  # not enough ε left
    DELTA = "delta"  # ε would fit, but not enough δ is left (basic composition)
    CAP_DELTA = "cap_delta"  # the charge has δ > 0 and the cap's δ is 0: neither bound can hold


class Spend(Protocol):
    """One charge as :func:`compose` reads it: ε ≥ 0, 0 ≤ δ < 1 (basic composition) and its zCDP ρ ≥ 0,
    or None when the release carries no ρ (then its dataset counts by basic composition only).
    :class:`dpgui.vocabulary.Charge` is one."""

    @property
    def epsilon(self) -> float: ...

    @property
    def delta(self) -> float: ...

    @property
    def rho(self) -> float | None: ...


def within_cap(total: float, cap: float) -> bool:
    """``total`` ≤ ``cap`` up to a relative :data:`RELATIVE_TOLERANCE` (rounding of sums, not budget)."""
    return total <= cap * (1.0 + RELATIVE_TOLERANCE)


@dataclass(frozen=True)
class Composition:
    """What a list of charges adds up to against a cap (cap ε > 0, 0 ≤ cap δ < 1).

    ``epsilon``/``delta``: basic composition, Σε and Σδ. ``rho``: Σρ if every charge has a ρ (0.0 for
    none), else None. ``zcdp_epsilon``: ``rho`` converted to ε at δ = ``cap_delta``; None when ``rho``
    is None or ``cap_delta`` is 0. ``count``: how many charges.
    """

    cap_epsilon: float
    cap_delta: float
    epsilon: float
    delta: float
    rho: float | None
    zcdp_epsilon: float | None
    count: int

    @property
    def basic_fits(self) -> bool:
        """Σε ≤ cap ε and Σδ ≤ cap δ."""
        return within_cap(self.epsilon, self.cap_epsilon) and within_cap(self.delta, self.cap_delta)

    @property
    def zcdp_fits(self) -> bool:
        """Every charge has a ρ, cap δ > 0, and Σρ converted at cap δ is ≤ cap ε."""
        return self.zcdp_epsilon is not None and within_cap(self.zcdp_epsilon, self.cap_epsilon)

    @property
    def fits(self) -> bool:
        """The charges fit the cap under basic or zCDP composition (either bound is sound)."""
        return self.basic_fits or self.zcdp_fits

    @property
    def accounting(self) -> Accounting:
        """ZCDP when the converted Σρ is below Σε, or Σδ is over the cap δ (so that only the zCDP bound
        holds); else BASIC."""
        if self.zcdp_epsilon is not None and (self.zcdp_epsilon < self.epsilon
                                              or not within_cap(self.delta, self.cap_delta)):
            return Accounting.ZCDP
        return Accounting.BASIC

    @property
    def spent_epsilon(self) -> float:
        """The ε spent under :attr:`accounting` (not clipped at the cap)."""
        if self.accounting is Accounting.ZCDP and self.zcdp_epsilon is not None:
            return self.zcdp_epsilon
        return self.epsilon

    @property
    def epsilon_remaining(self) -> float:
        """Cap ε minus :attr:`spent_epsilon`, ≥ 0. Under zCDP it is not additive: what fits next depends on
        the charge (one with a ρ may use up to :attr:`rho_remaining`, one without must fit basic composition)."""
        return max(0.0, self.cap_epsilon - self.spent_epsilon)

    @property
    def delta_remaining(self) -> float:
        """Cap δ − Σδ, ≥ 0 (basic composition)."""
        return max(0.0, self.cap_delta - self.delta)

    @property
    def rho_remaining(self) -> float | None:
        """The extra ρ a charge may still spend under zCDP: the largest ρ whose conversion at cap δ fits cap ε
        (:func:`zcdp_rho`) minus Σρ, ≥ 0; None where the zCDP path does not apply (a charge without ρ, or
        cap δ = 0)."""
        if self.rho is None or self.cap_delta <= 0:
            return None
        return max(0.0, zcdp_rho(self.cap_epsilon, self.cap_delta) - self.rho)


def compose(charges: Sequence[Spend], cap_epsilon: float, cap_delta: float) -> Composition:
    """The composition of ``charges`` (ε, δ, ρ each, already checked) against the cap (ε, δ)."""
    eps = math.fsum(c.epsilon for c in charges)
    dlt = math.fsum(c.delta for c in charges)
    rhos = [c.rho for c in charges]
    rho = math.fsum(r for r in rhos if r is not None) if all(r is not None for r in rhos) else None
    zeps = zcdp_epsilon(rho, cap_delta) if rho is not None and cap_delta > 0 else None
    return Composition(cap_epsilon, cap_delta, eps, dlt, rho, zeps, len(charges))


def shortfall(after: Composition, charge: Spend) -> Shortfall | None:
    """What ``charge`` lacks when ``after`` (the dataset's charges with it added) does not fit; None if
    it fits. CAP_DELTA: it has δ > 0 and the cap's δ is 0; DELTA: ε would fit by basic composition but Σδ
    would not (and zCDP does not apply); else EPSILON."""
    if after.fits:
        return None
    if charge.delta > 0 and after.cap_delta == 0:
        return Shortfall.CAP_DELTA
    if (after.zcdp_epsilon is None and charge.delta > 0 and within_cap(after.epsilon, after.cap_epsilon)
            and not within_cap(after.delta, after.cap_delta)):
        return Shortfall.DELTA
    return Shortfall.EPSILON


def largest_fitting_epsilon(before: Composition, delta: float) -> float:
    """The largest ε a release with this δ could still spend on top of ``before``: with δ > 0 a Gaussian
    release (ρ = zcdp_rho(ε, δ)), with δ = 0 a Laplace one (ρ = ε²/2): the better of zCDP (ρ left) and
    basic composition (ε left, if the δ fits), times (1 − 10⁻⁹). 0 when nothing fits."""
    best = 0.0
    left = before.rho_remaining
    if left:
        best = zcdp_epsilon(left, delta) if delta > 0 else math.sqrt(2.0 * left)
    if within_cap(before.delta + delta, before.cap_delta):
        best = max(best, before.cap_epsilon - before.epsilon)
    return best * (1.0 - 1e-9)
