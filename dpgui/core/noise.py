"""Exact, integer-valued noise samplers (discrete Laplace and discrete Gaussian).

Why integers: adding floating-point Laplace noise leaks the secret through the pattern of
representable doubles (Mironov, "On significance of the least significant bits for
differential privacy", CCS 2012).  Every release in dpgui therefore adds *integer* noise to
integer counts, and that noise is sampled *exactly* with the algorithms of Canonne, Kamath
and Steinke, "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020,
arXiv:2004.00010):

* Algorithm 1 -- Bernoulli(exp(-gamma)) for rational gamma = num/den >= 0;
* Algorithm 2 -- discrete Laplace with rational scale t/s,  P(x) ∝ exp(-|x| s/t);
* Algorithm 3 -- discrete Gaussian with rational variance parameter sigma^2,
  P(x) ∝ exp(-x^2 / (2 sigma^2)).

The sampling path uses only integer arithmetic (uint64/int64 numpy arrays, Python ints where
a value would not fit) and exact uniform integers obtained from uniform 64-bit words by
rejection (no modulo bias).  No floating point is used while sampling.  All overflow
conditions are checked: an element whose intermediate value would not fit in 64 bits is
either handled by an exact Python-int fallback or an :class:`OverflowError` is raised --
never a silent wrap-around.

This module is a vectorised numpy port of the CKS algorithms.  OpenDP ships exact samplers
too, but draws one value per call from Python; here every "still pending" element advances
one step per numpy operation, so the work per draw is numpy's, not the interpreter's.
``tests/unit/core/test_core_noise.py`` checks the samplers against the exact pmfs (chi-square
goodness of fit, variances) and against OpenDP's discrete Laplace sampler (two-sample
homogeneity test); ``benchmarks/bench_noise.py`` measures the speed.

Randomness: :class:`SecureRandom` reads the operating system's CSPRNG (``os.urandom``) and
is the only source fit for a real release.  :class:`SeededRandom` (numpy PCG64) is
reproducible and **insecure**; it exists for simulations and tests only.

The two samplers are one algorithm (the Gaussian's is the Laplace's with a Bernoulli acceptance step,
CKS Algorithm 3 on Algorithm 2) sharing the exact-integer helpers, kept together so that their overflow
reasoning is read in one place. Their exact pmfs and variances (floats, for planning and tests) are in
:mod:`dpgui.core.noise_moments`.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from dpgui.errors import ParameterError

__all__ = [
    "RandomSource",
    "SecureRandom",
    "SeededRandom",
    "uniform_below",
    "bernoulli_exp",
    "laplace_scale",
    "MAX_LAPLACE_SCALE",
    "laplace_scale_problem",
    "sample_discrete_laplace",
    "sample_discrete_laplace_levels",
    "sample_discrete_gaussian",
    "sample_discrete_gaussian_levels",
    "gaussian_sigma2",
    "gaussian_sigma2_problem",
    "MAX_GAUSSIAN_SIGMA2",
]

_TWO64 = 1 << 64
_U64_MAX = _TWO64 - 1
_I64_MAX = (1 << 63) - 1
_U32_MAX = (1 << 32) - 1
# Bernoulli(exp(-1)) from one 32-bit word: w uniform in [0, 8 * 12!) has independent
# uniform factorial-base digits, so [w mod k! == 0] is the event A_2 = ... = A_k = 1 for
# independent A_j ~ Bernoulli(1/j), j = 2..12.
_FACT = [math.factorial(k) for k in range(13)]
_FACT32_LIMIT = np.uint32(((1 << 32) // _FACT[12]) * _FACT[12])
# Largest t (numerator of a Laplace scale) the vectorised sampler accepts; keeps U + t*V
# comfortably inside int64 for every V that has a non-negligible chance of occurring (the
# check is still performed on every batch).
_T_MAX = 1 << 62
# Largest scale numerator t that a plan may use (checked when the plan is built, before any budget
# is spent; see :func:`laplace_scale_problem`). U + t*V overflows int64 only when V >= 2**63/t - 1,
# and V is geometric with P(V >= v) = exp(-v): at t <= 2**57 that needs V >= 63, probability
# exp(-63) ~ 4e-28 per draw, so a release never meets the OverflowError that _dlap_core keeps as a guard.
_PLAN_T_MAX = 1 << 57
#: Largest discrete-Laplace scale (in records) a release may use: 2**41 ~ 2.2e12. Any scale up to it
#: (rounded up to a multiple of 2**-16 by :func:`laplace_scale`) has a numerator within the limit.
MAX_LAPLACE_SCALE = Fraction(_PLAN_T_MAX, 1 << 16)
#: Largest discrete-Gaussian variance parameter σ² (records²) a release may use: 2**62, σ ≈ 2.1e9
#: records. The sampler's Laplace proposal has scale t = ⌊σ⌋ + 1 ≤ 2**31, far inside ``_T_MAX``.
MAX_GAUSSIAN_SIGMA2 = Fraction(1 << 62)
# Elements processed per vectorised pass; bounds peak memory (~100 bytes per element and thread).
_CHUNK = 1 << 21
# Threads drawing chunks of secure noise at once (see _dlap_chunked).
_THREADS = max(1, min(4, os.cpu_count() or 1))


# ----------------------------------------------------------------------------------------
# Random sources
# ----------------------------------------------------------------------------------------


@runtime_checkable
class RandomSource(Protocol):
    """A source of independent uniform 64-bit words."""

    secure: bool

    def uint64(self, n: int) -> np.ndarray:
        """Return ``n`` independent uniform words in [0, 2**64) as a uint64 array."""
        ...


class SecureRandom:
    """Uniform words from the operating system CSPRNG (``os.urandom``).  Use for releases."""

    secure: bool = True

    def uint64(self, n: int) -> np.ndarray:
        n = int(n)
        if n < 0:
            raise ValueError("n must be >= 0")
        return np.frombuffer(os.urandom(8 * n), dtype=np.uint64)

    def __repr__(self) -> str:
        return "SecureRandom()"


class SeededRandom:
    """Reproducible numpy PCG64 words.  NOT SECURE: for simulation and tests only."""

    secure: bool = False

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._bitgen = np.random.PCG64(seed)

    def uint64(self, n: int) -> np.ndarray:
        n = int(n)
        if n < 0:
            raise ValueError("n must be >= 0")
        return np.asarray(self._bitgen.random_raw(n), dtype=np.uint64)

    def __repr__(self) -> str:
        return f"SeededRandom({self.seed!r})"


# ----------------------------------------------------------------------------------------
# Exact uniform integers and Bernoulli trials
# ----------------------------------------------------------------------------------------


def _as_int_array(a: object, name: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.dtype == object:
        for v in arr.ravel():
            if not isinstance(v, numbers.Integral) or isinstance(v, (bool, np.bool_)):
                raise TypeError(f"{name} must contain integers, got {type(v).__name__}")
        return arr
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array, got dtype {arr.dtype}")
    return arr


def _to_u64(arr: np.ndarray, name: str, minimum: int) -> np.ndarray:
    """Validate arr >= minimum (and < 2**64) and return it as uint64."""
    if arr.size == 0:
        return arr.astype(np.uint64)
    if arr.dtype == object:
        lo, hi = min(int(v) for v in arr.ravel()), max(int(v) for v in arr.ravel())
    else:
        lo, hi = int(arr.min()), int(arr.max())
    if lo < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {lo}")
    if hi > _U64_MAX:
        raise OverflowError(f"{name} must be < 2**64, got {hi}")
    if arr.dtype == object:
        return np.array([int(v) for v in arr.ravel()], dtype=np.uint64).reshape(arr.shape)
    return arr.astype(np.uint64)


def _uniform_below_u64(src: RandomSource, m: np.ndarray) -> np.ndarray:
    """Exact uniform in {0..m-1} per element; m is a 1-D uint64 array with m >= 1.

    A uniform b-bit word w is accepted iff its block [w - w mod m, w - w mod m + m) lies
    entirely below 2**b, i.e. iff w < 2**b - (2**b mod m); then w mod m is exactly uniform
    (no modulo bias).  When every m is below 2**32, each 64-bit word is split into two
    independent uniform 32-bit words (b = 32), halving the draw from the random source;
    otherwise b = 64.
    """
    n = m.size
    if n == 0:
        return np.empty(0, dtype=np.uint64)
    if int(m.max()) <= _U32_MAX:
        top = np.uint64(1 << 32) - m  # 2**32 - m, no wrap

        def draw(k: int) -> np.ndarray:
            return src.uint64((k + 1) // 2).view(np.uint32)[:k].astype(np.uint64)

    else:
        top = np.uint64(0) - m  # 2**64 - m via uint64 wrap-around (m >= 1), exact

        def draw(k: int) -> np.ndarray:
            return src.uint64(k)

    w = draw(n)
    out: np.ndarray = w % m
    ok = (w - out) <= top  # block start + m <= 2**b
    if ok.all():
        return out
    pending = np.flatnonzero(~ok)
    while pending.size:
        mp = m[pending]
        w = draw(pending.size)
        r = w % mp
        ok = (w - r) <= top[pending]
        out[pending[ok]] = r[ok]
        pending = pending[~ok]
    return out


def _bernoulli_ratio_scalar(src: RandomSource, num: int, m: int, size: int) -> np.ndarray:
    """``size`` exact Bernoulli(num/m) trials for Python ints 0 <= num <= m < 2**64.

    Uses the block mapping j = floor(w / Q), Q = floor(2**64 / m), on words w < m*Q (exactly
    uniform j in {0..m-1}); j < num  <=>  w < num*Q.  No division per element.
    """
    q = _TWO64 // m
    limit = q * m  # in (2**63, 2**64]
    thresh = np.uint64(num * q) if num * q <= _U64_MAX else None
    out = np.empty(size, dtype=bool)
    pending = np.arange(size)
    while pending.size:
        w = src.uint64(pending.size)
        if limit == _TWO64:
            ok = None
        else:
            ok = w < np.uint64(limit)
        res = np.ones(w.size, dtype=bool) if thresh is None else (w < thresh)
        if ok is None:
            out[pending] = res
            break
        out[pending[ok]] = res[ok]
        pending = pending[~ok]
    return out


def _uniform_below_big(src: RandomSource, m: int) -> int:
    """Exact uniform in {0..m-1} for an arbitrary Python int m >= 1 (slow scalar path)."""
    if m == 1:
        return 0
    bits = (m - 1).bit_length()
    nwords = (bits + 63) // 64
    excess = 64 * nwords - bits
    while True:
        v = 0
        for x in src.uint64(nwords):
            v = (v << 64) | int(x)
        v >>= excess
        if v < m:
            return v


def _bern_exp_frac_big(src: RandomSource, n: int, d: int, k: int) -> bool:
    """CKS Algorithm 1 (gamma = n/d in [0,1]) with Python ints, resumed at K = k."""
    while True:
        if _uniform_below_big(src, d * k) >= n:  # A ~ Bernoulli(gamma/K) came out 0
            return k % 2 == 1
        k += 1


def uniform_below(src: RandomSource, m: np.ndarray) -> np.ndarray:
    """Exact uniform integers in {0, ..., m-1}, independently per element of ``m``.

    ``m`` is an integer array (uint64 or int64) with every element >= 1; the result is a
    uint64 array of the same shape.  Rejection sampling, so there is no modulo bias.
    """
    arr = _as_int_array(m, "m")
    mu = _to_u64(arr, "m", 1)
    return _uniform_below_u64(src, mu.ravel()).reshape(mu.shape)


def _bern_exp_frac(src: RandomSource, n: np.ndarray, d: np.ndarray) -> np.ndarray:
    """CKS Algorithm 1 for gamma = n/d in [0, 1]; n, d 1-D uint64 with n <= d, d >= 1.

    K=1; loop { A ~ Bernoulli(gamma/K); if A == 0 break; K += 1 }; return K odd.
    All pending elements share the same K, so K is a scalar.  The trial
    Bernoulli(n/(d*K)) is ``uniform_below(d*K) < n``; elements for which d*K would not fit
    in uint64 continue on the exact Python-int path.
    """
    size = n.size
    res = np.ones(size, dtype=bool)  # stopping at an odd K gives 1; even K overwrite
    if size == 0:
        return res
    idx = np.arange(size)
    dmax = int(d.max())
    k = 1
    while idx.size:
        if dmax > _U64_MAX // k:  # d*K would overflow for some elements
            big = d > np.uint64(_U64_MAX // k)
            for j in np.flatnonzero(big):
                res[idx[j]] = _bern_exp_frac_big(src, int(n[j]), int(d[j]), k)
            keep = np.flatnonzero(~big)
            idx, n, d = idx[keep], n[keep], d[keep]
            if not idx.size:
                break
            dmax = int(d.max())
        m = d if k == 1 else d * np.uint64(k)
        a = _uniform_below_u64(src, m) < n
        if k % 2 == 0:
            res[idx[~a]] = False
        sel = np.flatnonzero(a)
        idx, n, d = idx[sel], n[sel], d[sel]
        k += 1
    return res


def _bern_exp1(src: RandomSource, size: int) -> np.ndarray:
    """``size`` exact Bernoulli(exp(-1)) trials (CKS Algorithm 1 with gamma = 1).

    K = 1: A_1 ~ Bernoulli(1) is always 1.  For K = 2..12 the trials A_K ~ Bernoulli(1/K)
    are read off one 32-bit word w (half of a 64-bit word), made uniform on [0, 8 * 12!)
    by rejection: A_2 = ... = A_K = 1 iff w mod K! == 0, because the factorial-base digits
    of w are independent and uniform.  Elements still running after K = 12 (probability
    1/12!) continue with fresh exact trials A_13, A_14, ...
    """
    res = np.empty(size, dtype=bool)
    if size == 0:
        return res

    def draw(k: int) -> np.ndarray:
        return src.uint64((k + 1) // 2).view(np.uint32)[:k]

    w = draw(size)
    bad = np.flatnonzero(w >= _FACT32_LIMIT)
    if bad.size:
        w = w.copy()
        while bad.size:
            fresh = draw(bad.size)
            w[bad] = fresh
            bad = bad[fresh >= _FACT32_LIMIT]
    # K = 2: A_2 = 1 iff w is even; stopping at K = 2 (even) gives 0.
    a = (w & np.uint32(1)) == 0
    res[:] = False
    idx = np.flatnonzero(a)
    w = w[idx]
    k = 3
    while idx.size and k <= 12:
        f = np.uint32(_FACT[k])
        a = (w // f) * f == w  # w mod k! == 0
        res[idx[~a]] = k % 2 == 1
        sel = np.flatnonzero(a)
        idx, w = idx[sel], w[sel]
        k += 1
    while idx.size:  # K > 12: fresh exact trials (probability 1/12! per element)
        a = _bernoulli_ratio_scalar(src, 1, k, idx.size)
        res[idx[~a]] = k % 2 == 1
        idx = idx[a]
        k += 1
    return res


def _chain_exp1(src: RandomSource, q: np.ndarray) -> np.ndarray:
    """Per element, the AND of q[i] independent Bernoulli(exp(-1)) trials (q uint64).

    Stops drawing for an element at its first failure, so the loop length is governed by
    the (geometrically distributed) survivors, not by max(q).
    """
    res = np.ones(q.size, dtype=bool)
    idx = np.flatnonzero(q > 0)
    c = q[idx]
    one = np.uint64(1)
    while idx.size:
        b = _bern_exp1(src, idx.size)
        res[idx[~b]] = False
        idx, c = idx[b], c[b] - one
        keep = c > 0
        idx, c = idx[keep], c[keep]
    return res


def _geometric_exp1(src: RandomSource, size: int) -> np.ndarray:
    """V = number of successes of Bernoulli(exp(-1)) before the first failure (int64)."""
    v = np.zeros(size, dtype=np.int64)
    idx = np.arange(size)
    while idx.size:
        b = _bern_exp1(src, idx.size)
        idx = idx[b]
        v[idx] += 1
    return v


def bernoulli_exp(src: RandomSource, num: npt.ArrayLike, den: npt.ArrayLike) -> np.ndarray:
    """Exact Bernoulli(exp(-num/den)) per element (CKS 2020, Algorithm 1).

    ``num >= 0`` and ``den >= 1`` are integer arrays (broadcast together; object arrays of
    Python ints are accepted for values beyond 64 bits).  For gamma = num/den > 1 the trial
    is floor(gamma) Bernoulli(exp(-1)) trials that must all succeed, then one
    Bernoulli(exp(-(gamma - floor(gamma)))) trial.  Returns a bool array.
    """
    num_a = _as_int_array(num, "num")
    den_a = _as_int_array(den, "den")
    num_a, den_a = np.broadcast_arrays(num_a, den_a)
    shape = num_a.shape
    num_f, den_f = num_a.ravel(), den_a.ravel()
    size = num_f.size
    if size == 0:
        return np.zeros(shape, dtype=bool)

    if num_f.dtype == object or den_f.dtype == object:
        nums = [int(v) for v in num_f]
        dens = [int(v) for v in den_f]
        if min(nums) < 0:
            raise ValueError("num must be >= 0")
        if min(dens) < 1:
            raise ValueError("den must be >= 1")
        qs = [a // b for a, b in zip(nums, dens)]
        if max(qs) > _U64_MAX:
            raise OverflowError("floor(num/den) must be < 2**64")
        q = np.array(qs, dtype=np.uint64)
        res = _chain_exp1(src, q)
        rs = [a % b for a, b in zip(nums, dens)]
        need = [i for i in np.flatnonzero(res) if rs[i] > 0]
        small = [i for i in need if dens[i] <= _U64_MAX]
        if small:
            sel = np.array(small, dtype=np.intp)
            r_u = np.array([rs[i] for i in small], dtype=np.uint64)
            d_u = np.array([dens[i] for i in small], dtype=np.uint64)
            res[sel] = _bern_exp_frac(src, r_u, d_u)
        for i in need:
            if dens[i] > _U64_MAX:
                res[i] = _bern_exp_frac_big(src, rs[i], dens[i], 1)
        return res.reshape(shape)

    num_u = _to_u64(num_f, "num", 0)
    den_u = _to_u64(den_f, "den", 1)
    q = num_u // den_u
    r = num_u % den_u
    res = _chain_exp1(src, q) if q.any() else np.ones(size, dtype=bool)
    pending = np.flatnonzero(res & (r > 0))
    if pending.size:
        res[pending] = _bern_exp_frac(src, r[pending], den_u[pending])
    return res.reshape(shape)


def _random_bits(src: RandomSource, size: int) -> np.ndarray:
    """``size`` fair coin flips (bool), 64 per word."""
    words = src.uint64((size + 63) // 64)
    return np.unpackbits(words.view(np.uint8))[:size].view(bool)


# ----------------------------------------------------------------------------------------
# Discrete Laplace
# ----------------------------------------------------------------------------------------


def _positive_fraction(x: object, name: str) -> Fraction:
    if isinstance(x, (bool, np.bool_)):
        raise ParameterError(f"{name} must be a number, got {x!r}")
    try:
        f: Fraction = Fraction(x)  # type: ignore[call-overload]  # exact for int, float, Decimal, Fraction, numpy scalars
    except (TypeError, ValueError, OverflowError) as exc:  # NaN -> ValueError, inf -> Overflow
        raise ParameterError(f"{name} must be a finite number > 0, got {x!r}") from exc
    if f <= 0:
        raise ParameterError(f"{name} must be > 0, got {x!r}")
    return f


def laplace_scale(sensitivity: int, epsilon: float, denominator: int = 2**16) -> Fraction:
    """Smallest scale t = k/denominator (k integer) with t >= sensitivity/epsilon.

    Computed exactly from ``Fraction(epsilon)`` (the exact binary value of the float), so the
    mechanism's true privacy loss sensitivity/t is <= epsilon.  Raises
    :class:`~dpgui.errors.ParameterError` for epsilon <= 0, NaN or infinite, a sensitivity
    that is not an integer >= 1, or a denominator that is not an integer >= 1.
    """
    if isinstance(sensitivity, (bool, np.bool_)) or not isinstance(
        sensitivity, numbers.Integral
    ):
        raise ParameterError(
            f"sensitivity must be a whole number >= 1, got {sensitivity!r}",
            "use an integer sensitivity",
        )
    if int(sensitivity) < 1:
        raise ParameterError(f"sensitivity must be >= 1, got {sensitivity!r}")
    if isinstance(denominator, (bool, np.bool_)) or not isinstance(
        denominator, numbers.Integral
    ) or int(denominator) < 1:
        raise ParameterError(f"denominator must be a whole number >= 1, got {denominator!r}")
    if isinstance(epsilon, (bool, np.bool_)):
        raise ParameterError(f"epsilon must be a number, got {epsilon!r}")
    try:
        eps = Fraction(epsilon)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ParameterError(
            f"epsilon must be a finite number > 0, got {epsilon!r}", "enter e.g. 1.0"
        ) from exc
    if eps <= 0:
        raise ParameterError(f"epsilon must be > 0, got {epsilon!r}", "enter e.g. 1.0")
    target = Fraction(int(sensitivity)) / eps
    den = int(denominator)
    k = -((-target.numerator * den) // target.denominator)  # ceil(target * den)
    return Fraction(k, den)


def laplace_scale_problem(scale: Fraction) -> str | None:
    """Why the sampler cannot draw at ``scale`` (a positive Fraction), or None if it can.

    The one statement of the sampler's limits, for plans to check before anything is spent:
    the scale's numerator must be at most 2**57 and its denominator fit in int64 (see
    ``_PLAN_T_MAX``); in records that is a scale of at most :data:`MAX_LAPLACE_SCALE` ~ 2.2e12.
    """
    if scale.numerator > _PLAN_T_MAX or scale.denominator > _I64_MAX:
        return (f"a noise scale of {float(scale):.3g} records is beyond the noise sampler's limit of "
                f"{float(MAX_LAPLACE_SCALE):.3g}")
    return None


def laplace_scale_float(sensitivity: int, epsilon: float, denominator: int = 2**16) -> float:
    """``float(laplace_scale(sensitivity, epsilon))`` with integers instead of Fractions:
    ε = p/q exactly (a float is a dyadic rational), t = ceil(Δ·q·den/p)/den, correctly rounded.
    Unchecked fast path for projections of many ε values (plots); ε > 0 and Δ ≥ 1 are the caller's."""
    p, q = float(epsilon).as_integer_ratio()
    k = -((-int(sensitivity) * q * denominator) // p)
    return k / denominator


def _laplace_ts(scale: object) -> tuple[int, int]:
    f = _positive_fraction(scale, "scale")
    t, s = f.numerator, f.denominator
    if t > _T_MAX or s > _I64_MAX:
        raise OverflowError(
            f"scale {f} has numerator/denominator too large for the 64-bit sampler"
        )
    return t, s


def _dlap_core(src: RandomSource, t: np.ndarray, s: np.ndarray) -> np.ndarray:
    """CKS Algorithm 2 per element with scale t[i]/s[i] (1-D int64 arrays, t, s >= 1).

    loop: U ~ unif{0..t-1}; D ~ Bernoulli(exp(-U/t)); if not D: restart;
          V = #successes of Bernoulli(exp(-1)) before the first failure;
          X = U + t V; Y = floor(X / s); B ~ Bernoulli(1/2);
          if B and Y == 0: restart; return (1 - 2B) Y.
    """
    size = t.size
    out = np.empty(size, dtype=np.int64)
    idx = np.arange(size)
    while idx.size:
        tu = t.view(np.uint64)
        u = _uniform_below_u64(src, tu)
        d = _bern_exp_frac(src, u, tu)
        acc = np.flatnonzero(d)
        rej = np.flatnonzero(~d)
        v = _geometric_exp1(src, acc.size)
        ta, sa = t[acc], s[acc]
        if acc.size:
            vmax, tmax = int(v.max()), int(ta.max())
            if vmax * tmax + tmax - 1 > _I64_MAX:  # conservative; check exactly
                over = v > (np.int64(_I64_MAX) - (ta - 1)) // ta
                if over.any():
                    raise OverflowError("U + t*V does not fit in int64 (scale too large)")
        x = u[acc].view(np.int64) + ta * v
        y = x // sa
        b = _random_bits(src, acc.size)
        bad = b & (y == 0)
        np.negative(y, out=y, where=b)  # (1 - 2B) Y
        good = np.flatnonzero(~bad)
        out[idx[acc[good]]] = y[good]
        retry = np.concatenate([rej, acc[bad]])
        idx, t, s = idx[retry], t[retry], s[retry]
    return out


def _dlap_chunked(src: RandomSource, t: np.ndarray, s: np.ndarray) -> np.ndarray:
    """:func:`_dlap_core` in chunks of ``_CHUNK`` elements (memory ~100 bytes per element of a chunk).

    Chunks draw independent words, so their order does not change the distribution: from a
    :class:`SecureRandom` (``os.urandom`` is thread-safe, and it and numpy release the GIL) they run
    on :data:`_THREADS` threads; a seeded source draws them one after the other, so that its
    results stay reproducible."""
    size = t.size
    if size <= _CHUNK:
        return _dlap_core(src, t, s)
    out = np.empty(size, dtype=np.int64)

    def chunk(lo: int) -> None:
        hi = min(lo + _CHUNK, size)
        out[lo:hi] = _dlap_core(src, t[lo:hi], s[lo:hi])

    starts = range(0, size, _CHUNK)
    if isinstance(src, SecureRandom) and _THREADS > 1:
        with ThreadPoolExecutor(_THREADS) as pool:
            for future in [pool.submit(chunk, lo) for lo in starts]:
                future.result()
    else:
        for lo in starts:
            chunk(lo)
    return out


def _check_size(size: object) -> int:
    if isinstance(size, (bool, np.bool_)) or not isinstance(size, numbers.Integral):
        raise TypeError(f"size must be an int, got {size!r}")
    if int(size) < 0:
        raise ValueError(f"size must be >= 0, got {size}")
    return int(size)


def sample_discrete_laplace(src: RandomSource, scale: Fraction, size: int) -> np.ndarray:
    """``size`` exact draws with P(x) ∝ exp(-|x| / scale), x integer (int64 array).

    ``scale`` is a positive rational (Fraction or int; a float is taken at its exact binary
    value) t/s, and CKS Algorithm 2 is run with the integers t and s.
    """
    n = _check_size(size)
    t, s = _laplace_ts(scale)
    return _dlap_chunked(
        src, np.full(n, t, dtype=np.int64), np.full(n, s, dtype=np.int64)
    )


def sample_discrete_laplace_levels(
    src: RandomSource, scales: Sequence[Fraction], sizes: Sequence[int]
) -> list[np.ndarray]:
    """Discrete-Laplace noise for several levels at once: one int64 array per level.

    Level i gets ``sizes[i]`` draws at scale ``scales[i]``.  All elements go through one
    vectorised pass (each element carries its own integers t, s), processed in chunks of
    at most ``_CHUNK`` elements to bound memory.
    """
    scales = list(scales)
    sizes_l = [_check_size(n) for n in sizes]
    if len(scales) != len(sizes_l):
        raise ValueError(f"{len(scales)} scales but {len(sizes_l)} sizes")
    if not scales:
        return []
    ts = [_laplace_ts(sc) for sc in scales]
    counts = np.array(sizes_l, dtype=np.int64)
    t = np.repeat(np.array([a for a, _ in ts], dtype=np.int64), counts)
    s = np.repeat(np.array([b for _, b in ts], dtype=np.int64), counts)
    flat = _dlap_chunked(src, t, s)
    bounds: np.ndarray | list[int] = np.cumsum(counts)[:-1] if counts.size else []
    return [np.ascontiguousarray(a) for a in np.split(flat, bounds)]


# ----------------------------------------------------------------------------------------
# Discrete Gaussian
# ----------------------------------------------------------------------------------------


def sample_discrete_gaussian(src: RandomSource, sigma2: Fraction, size: int) -> np.ndarray:
    """``size`` exact draws with P(x) ∝ exp(-x^2 / (2 sigma2)) (CKS 2020, Algorithm 3).

    sigma2 = n/d is a positive rational.  t = floor(sigma) + 1; loop: Y ~ discrete
    Laplace(t); accept with Bernoulli(exp(-(|Y| - sigma2/t)^2 / (2 sigma2))), where the
    exponent is the exact fraction (|Y| d t - n)^2 / (2 n d t^2).  Numerators that would not
    fit in int64 are handled with Python ints.
    """
    count = _check_size(size)
    f = _positive_fraction(sigma2, "sigma2")
    n, d = f.numerator, f.denominator
    t = math.isqrt(n * d) // d + 1  # floor(sqrt(n/d)) + 1, exact
    if t > _T_MAX:
        raise OverflowError(f"sigma2 = {f} is too large for the 64-bit sampler")
    dt = d * t
    den = 2 * n * d * t * t
    den_arg: npt.ArrayLike = np.int64(den) if den <= _I64_MAX else np.array(den, dtype=object)
    root = math.isqrt(_I64_MAX)  # |a| <= root  =>  a*a fits in int64
    # |Y| d t - n is in [-root, root] iff n <= root and |Y| <= (root + n) // (d t).
    ylim = (root + n) // dt if n <= root else -1

    out = np.empty(count, dtype=np.int64)
    idx = np.arange(count)
    while idx.size:
        m = idx.size
        y = _dlap_chunked(src, np.full(m, t, dtype=np.int64), np.ones(m, dtype=np.int64))
        ay = np.abs(y)
        safe = ay <= ylim
        if safe.all():
            a = ay * np.int64(dt) - np.int64(n)
            num: np.ndarray = a * a
        else:
            num = np.empty(m, dtype=object)
            for i in range(m):
                num[i] = (int(ay[i]) * dt - n) ** 2
        c = bernoulli_exp(src, num, den_arg)
        out[idx[c]] = y[c]
        idx = idx[~c]
    return out


def sample_discrete_gaussian_levels(src: RandomSource, sigma2s: Sequence[Fraction], sizes: Sequence[int]) -> list[np.ndarray]:
    """Discrete-Gaussian noise for several levels: level i gets ``sizes[i]`` exact draws at variance
    parameter ``sigma2s[i]`` (one :func:`sample_discrete_gaussian` call per level)."""
    sigma2s = list(sigma2s)
    sizes_l = [_check_size(n) for n in sizes]
    if len(sigma2s) != len(sizes_l):
        raise ValueError(f"{len(sigma2s)} variances but {len(sizes_l)} sizes")
    return [sample_discrete_gaussian(src, s2, n) for s2, n in zip(sigma2s, sizes_l)]


def gaussian_sigma2(l2_sensitivity_squared: int, rho: float) -> Fraction:
    """Smallest rational σ² = k/den (k integer) with σ² ≥ Δ₂²/(2ρ): the discrete Gaussian at σ² is then
    Δ₂²/(2σ²) ≤ ρ -zCDP (CKS 2020, Thm 14), computed exactly from ``Fraction(rho)``.

    ``den`` is a power of two giving about 16 significant bits (2**16 for σ² near 1, fewer for large σ²,
    down to 1), so the rounding adds at most ~2**-16 of relative variance while the sampler's integers
    stay small. Raises :class:`~dpgui.errors.ParameterError` for ρ ≤ 0, NaN or infinite.
    """
    if isinstance(rho, (bool, np.bool_)):
        raise ParameterError(f"rho must be a number, got {rho!r}")
    try:
        r = Fraction(rho)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ParameterError(f"rho must be a finite number > 0, got {rho!r}", "give e.g. 0.01") from exc
    if r <= 0:
        raise ParameterError(f"rho must be > 0, got {rho!r}", "give e.g. 0.01")
    if isinstance(l2_sensitivity_squared, (bool, np.bool_)) or not isinstance(l2_sensitivity_squared, numbers.Integral) \
            or int(l2_sensitivity_squared) < 1:
        raise ParameterError(f"the squared L2 sensitivity must be a whole number >= 1, got {l2_sensitivity_squared!r}")
    target = Fraction(int(l2_sensitivity_squared)) / (2 * r)
    magnitude = target.numerator.bit_length() - target.denominator.bit_length()  # ≈ log2(target)
    den = 1 << max(0, 16 - magnitude)
    k = -((-target.numerator * den) // target.denominator)  # ceil(target * den)
    return Fraction(k, den)


def gaussian_sigma2_problem(sigma2: Fraction) -> str | None:
    """Why the sampler cannot draw at ``sigma2`` (a positive Fraction), or None if it can: σ² must be at
    most :data:`MAX_GAUSSIAN_SIGMA2` (checked by plans before anything is spent)."""
    if sigma2 > MAX_GAUSSIAN_SIGMA2:
        return (f"a noise standard deviation of {math.sqrt(float(sigma2)):.3g} records is beyond the noise sampler's "
                f"limit of {math.sqrt(float(MAX_GAUSSIAN_SIGMA2)):.3g}")
    return None
