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
allows more ρ for the same (ε, δ) (docs/design.md, "zCDP accounting in the ledger").

How it is computed: ln δ_α(ε) is convex in α with derivative (2α − 1)ρ − ε + ln(1 − 1/α), which
increases in α, so the best α is found by bisection on the sign of the derivative, to full
double precision. Every α > 1 gives a *valid* bound, so an imprecise α can only make δ larger
(the safe direction); a slack of 64 ulps is added to ln δ against rounding in ``log``/``log1p``.
``zcdp_epsilon`` then inverts δ(ε) by bisection on ε and returns the upper end of the final
bracket, i.e. an ε whose δ(ε) is ≤ the target: the answer errs, if at all, towards more ε.
Each call costs a few thousand floating-point operations.

No I/O, no global state, no OpenDP at run time (the tests compare against OpenDP).
"""

from __future__ import annotations

import math
import sys

from dpgui.errors import ParameterError

__all__ = [
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
