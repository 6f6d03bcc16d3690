"""Counting on trees under (ε, δ) with a multiplicative-plus-additive guarantee (Ghazi et al. 2023).

Ghazi, Kamath, Kumar, Manurangsi & Wu, "On Differentially Private Counting on Trees" (ICALP 2023).
Qt-free and I/O-free; numpy only; every noise draw is exact integer noise from
:mod:`dpgui.core.noise` on a :class:`~dpgui.core.noise.RandomSource`.

The tree: ``levels`` = counts of levels 0..L, root first;
``parents[ℓ-1][i]`` = index on level ℓ-1 of node i of level ℓ. The paper's depth d (nodes on a
root-to-leaf path) is the number of levels, L + 1. The (α, η) guarantee of Problem 3.1: for every
node u, P(|w̃_u − w_u| ≤ α·max(w_u, τ_u)) ≥ 1 − η. The error measure, the Gaussian baseline and the
projections that compare the two mechanisms are in :mod:`dpgui.core.counting_trees_accuracy`.

The multiplicative mechanism (Algorithms 1–4)
---------------------------------------------
Algorithm 4 (Corollary 4.7): an upper bound M ≥ w_root (under add/remove: w_root + R + TruncLap, half
the budget; under ``change`` N is public, so M = N exactly and all the budget goes to the reduction);
then Algorithm 2 (Reduction) runs rounds i = ℓ..1 with geometric thresholds

    β = α/(6+5α),  r = (1+α)(1−β)/(1+β) > 1,  τ_i = α τ_min r^{i−1}/(1+β),  M_i = α τ_min r^i,  M_0 = α τ_min,

each round calling Algorithm 1 (Classification) on the forest of still-unclassified nodes; Algorithm 1
finds, per tree of the forest, the nodes above τ_i with the sparse vector technique (Algorithm 3,
cut-off c) plus truncated-Laplace counts. A node classified above τ_i in round i is released as
⌊M_i⌋; nodes never classified above get ⌊M_0⌋. (Flooring keeps the proof: w_u ≤ M_i and w_u is an
integer, so w_u ≤ ⌊M_i⌋.) The outputs are a "bucketed" upper estimate, not consistent across levels.

Four things differ from (or read into) the paper's text, and why:

* **The next forest.** Algorithm 2, line 8, puts only the subtrees below "transition" nodes into
  F_{i−1}; a ⊥ subtree hanging off a non-transition ⊤ node would then never get an estimate. The
  proof of Lemma 4.6 needs every node classified ⊥ in round i (weight < (1+β)τ_i ≤ M_{i−1}) to go on,
  so F_{i−1} = all ⊥ nodes of F_i (a union of subtrees, as ⊤ is closed upwards); every ⊤ node (a
  transition node or an ancestor of one within its tree of F_i) is released as ⌊M_i⌋.

* **The budget sequence.** The paper sets ε_i ∝ i·r^{i−1} and C = Σ_i i·r^{i−1} = ((2+α)β−α)/(1+β))^{−2};
  with r > 1 that series diverges (a typo: the proof needs (1/r)^{i−1}/ε_i ∝ 1/i). We use
  ε_i = ε_R·i·q^{i−1}/C, δ_i = δ_R·i·q^{i−1}/C with q = 1/r and C = Σ_{i≥1} i q^{i−1} = (1 − q)^{−2},
  and η_i = η/2^i, which is what the proof of Theorem A.1 uses. Only rounds i ≤ ``rounds`` exist
  (M_rounds ≥ :data:`MAX_ROOT_COUNT`), so the spent budget is a partial sum ≤ (ε_R, δ_R).
* **c is an integer.** c = M_i/((1−β)τ_i) = 1 + α, not an integer; the sparse vector needs a whole
  number of restarts, so c = ⌈1+α⌉ = 2 (a larger c only strengthens the "fewer than c tops" step).
* **τ_min.** Instead of Corollary 4.7's closed-form upper bound (kept, as ``tau_min_paper``, for
  comparison) we take the smallest τ_min that meets the proof's per-round conditions with our actual
  noises: in round i the sparse-vector margin Δ_i and the truncation bound R_i satisfy
  Δ_i + 2R_i ≤ β τ_i (Lemma 4.3's proof: "Δ, R ≤ ατ/3" is a sufficient form of this), i.e.
  τ_min = max_i (1+β)(Δ_i + 2R_i)/(α β r^{i−1}). The per-round condition is what the proof needs.

Discrete noises and their privacy (one record added or removed: every query has sensitivity 1)
-----------------------------------------------------------------------------------------------
The paper's Laplace noises are continuous; floating-point Laplace leaks (Mironov 2012), so we use
integer noise on integer counts:

* Discrete Laplace DLap(t), P(z) ∝ exp(−|z|/t): its pmf ratio under a shift by s is ≤ exp(s/t), so
  a sensitivity-1 integer query is (1/t)-DP. Its tail P(|Z| > x) = 2 e^{−(⌊x⌋+1)/t}/(1+e^{−1/t}) ≤
  e^{−x/t}, the continuous Laplace's, so the paper's accuracy union bounds hold unchanged.
* Sparse vector (Algorithm 3) with DLap: each AboveThreshold instance uses threshold noise of scale
  t_ρ and query noise of scale t_ν; integer queries compared with an integer noisy threshold
  (f + ν − ρ ≥ ⌈τ⌉). The DR14 Thm 3.23 proof goes through with integer shifts (ρ' = ρ + 1 and
  ν'_k = ν_k + 2), costing 1/t_ρ + 2/t_ν. We take t_ρ ≥ 4c/ε_i and t_ν ≥ 8c/ε_i: c instances cost
  ≤ ε_i/2 (the paper's Sparse(…, ε_i/2)). Margin: Δ_i = 2 t_ν ln(2d/η_i) (then d e^{−Δ/(2t_ρ)} +
  d e^{−Δ/(2t_ν)} ≤ η_i since t_ρ ≤ t_ν).
* Discrete truncated Laplace TDLap(t, R): DLap(t) conditioned on |z| ≤ R (exact rejection sampling
  from DLap). On inputs x and x+1 every output in the common support has pmf ratio ≤ e^{1/t}; the
  only output outside it is x − R (or x+1+R), of probability P(Z = R). So the mechanism is exactly
  (1/t, δ_T)-DP with δ_T = P(Z = R) = q^R (1−q)/(1 + q − 2q^{R+1}), q = e^{−1/t} (the hockey-stick
  divergence at e^{1/t}, which is tight). R is the least integer with δ_T ≤ the target.
  In Algorithm 1 each "top" answer triggers TDLap(t_T, R_i) counts of one level of one tree, t_T ≥
  2c/ε_i, δ_T ≤ δ_i/c: one record touches one node per level (parallel composition), at most c tops
  per tree, trees of a forest are disjoint (parallel composition): ≤ (ε_i/2, δ_i) per round.
  (The sparse vector and the counts are interleaved adaptively: concurrent composition of
  interactive DP mechanisms, Vadhan & Wang 2021 / Lyu 2022, as the paper's Fact 2.3 assumes.)
* M (add/remove only): TDLap(t_M ≥ 2/ε₀, R_M) with δ_T ≤ δ₀/2, shifted by +R_M so M ≥ w_root.

Not implemented: Lemma 3.3's second stage (a per-level truncated-Laplace clip at another (ε/2, δ/2)
that bounds the error on the failure event); without it the α-mRMSE projection holds on the success
event, probability ≥ 1 − η per node.

Per record (the paper's neighbours, ‖x − x'‖₁ = 1) the release is (ε₀', δ₀')-DP with
ε₀' = [1/t_M] + Σ_i c(1/t_ρ,i + 2/t_ν,i + 1/t_T,i) and δ₀' = [δ_T(t_M, R_M)] + Σ_i c δ_T(t_T,i, R_i)
(basic composition, bracketed terms under add/remove only), see :func:`multiplicative_privacy`.

The user's neighbour model (group privacy, Fact 2.2)
---------------------------------------------------
One person's neighbour is k = :attr:`PrivacySpec.level_sensitivity` add/removes away: k = L under
``addremove`` (L records per person) and k = 2L under ``change`` (each changed record is one removal
plus one addition). Fact 2.2: an (ε₀, δ₀)-DP mechanism is (kε₀, δ₀(e^{kε₀} − 1)/(e^{ε₀} − 1))-DP for
inputs k apart. So we calibrate per record ε₀ = ε/k and δ₀ = δ(e^{ε/k} − 1)/(e^{ε} − 1), and the whole
release is (ε, δ)-DP for the user's model. Under ``change`` the mechanism uses the public N as M:
for fixed n, the mechanism with M = n is (ε₀, δ₀)-DP under add/remove whatever n is (the paper's
footnote 7: privacy does not depend on the M_i, τ_i), and change-neighbours share n, so group
privacy applies to it; the released root is N exactly.

Complexity: per round O(nodes) numpy work and O(nodes) noise draws at most; rounds = O(log(N/τ_min)/α).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from dpgui.core.noise import RandomSource, laplace_scale, laplace_scale_problem, sample_discrete_laplace
from dpgui.core.plan import PrivacySpec, check_neighbours
from dpgui.errors import DataError, ParameterError
from dpgui.vocabulary import Neighbours

__all__ = [
    "MAX_ROOT_COUNT",
    "DEFAULT_ETA",
    "MIN_ALPHA",
    "truncated_laplace_delta",
    "truncation_bound",
    "sample_truncated_discrete_laplace",
    "group_privacy",
    "per_record_budget",
    "MultiplicativeParams",
    "multiplicative_params",
    "multiplicative_privacy",
    "release_multiplicative",
    "multiplicative_intervals",
    "check_alpha_eta",
    "check_level_sizes",
    "check_tree",
]

#: Largest root count (records) the multiplicative mechanism's rounds cover: M_rounds ≥ 2**40 ≈ 1.1e12.
MAX_ROOT_COUNT = float(1 << 40)
#: Default failure probability η per node of the (α, η) guarantee.
DEFAULT_ETA = 0.05
#: The smallest multiplicative error α: below it the rounds' ratio r = (1+α)(1−β)/(1+β) rounds to 1 in
#: double precision (and long before, at about 10⁻⁶, the first round's noise is beyond the sampler).
MIN_ALPHA = 1e-9
_SVT_CUTOFF = 2  # c = ⌈M_i/((1−β)τ_i)⌉ = ⌈1 + α⌉ = 2 for 0 < α < 1 (module docstring)


# ----------------------------------------------------------------------------------------
# Discrete truncated Laplace
# ----------------------------------------------------------------------------------------


def truncated_laplace_delta(scale: float | Fraction, bound: int) -> float:
    """δ of the discrete truncated Laplace TDLap(t, R) on a sensitivity-1 integer query at ε = 1/t:
    P(Z = R) = q^R (1 − q)/(1 + q − 2q^{R+1}), q = e^{−1/t} (exact hockey-stick divergence)."""
    t = float(scale)
    R = int(bound)
    if not t > 0 or R < 0:
        raise ParameterError(f"a truncated Laplace needs scale > 0 and bound ≥ 0, got {scale!r}, {bound!r}")
    q = math.exp(-1.0 / t)
    one_minus_q = -math.expm1(-1.0 / t)
    return math.exp(-R / t) * one_minus_q / (1.0 + q - 2.0 * q * math.exp(-R / t))


def truncation_bound(scale: float | Fraction, delta: float) -> int:
    """Least integer R ≥ 0 with :func:`truncated_laplace_delta` (t, R) ≤ δ (with a 1e-9 relative margin
    for floating-point rounding)."""
    t = float(scale)
    if not 0 < delta < 1:
        raise ParameterError(f"δ must be in (0, 1) for a truncated Laplace, got {delta!r}")
    target = delta * (1 - 1e-9)
    q = math.exp(-1.0 / t)
    one_minus_q = -math.expm1(-1.0 / t)
    # q^R ((1−q) + 2δq) ≤ δ(1+q)  ⇔  R ≥ t ln(((1−q) + 2δq)/(δ(1+q)))
    R = max(0, math.ceil(t * math.log((one_minus_q + 2 * target * q) / (target * (1 + q)))) - 1)
    while truncated_laplace_delta(t, R) > target:
        R += 1
    return R


def sample_truncated_discrete_laplace(src: RandomSource, scale: Fraction, bound: int, size: int) -> np.ndarray:
    """``size`` exact draws of DLap(scale) conditioned on |z| ≤ bound (int64), by rejection from
    :func:`~dpgui.core.noise.sample_discrete_laplace`. Expected draws per value 1/P(|Z| ≤ bound)."""
    out = sample_discrete_laplace(src, scale, size)
    bad = np.flatnonzero(np.abs(out) > bound)
    while bad.size:
        redo = sample_discrete_laplace(src, scale, bad.size)
        out[bad] = redo
        bad = bad[np.abs(redo) > bound]
    return out


# ----------------------------------------------------------------------------------------
# Privacy bookkeeping
# ----------------------------------------------------------------------------------------


def group_privacy(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    """Fact 2.2: an (ε, δ)-DP mechanism is (kε, δ (e^{kε} − 1)/(e^{ε} − 1))-DP for inputs k apart."""
    if k == 1:
        return float(epsilon), float(delta)
    return k * epsilon, delta * math.expm1(k * epsilon) / math.expm1(epsilon)


def per_record_budget(privacy: PrivacySpec) -> tuple[float, float, int]:
    """(ε₀, δ₀, k): the per-record (add/remove one record) budget whose group privacy over
    k = level_sensitivity add/removes is the user's (ε, δ) (module docstring)."""
    k = privacy.level_sensitivity
    eps0 = privacy.epsilon / k
    delta0 = privacy.delta * math.expm1(eps0) / math.expm1(privacy.epsilon) if k > 1 else privacy.delta
    return eps0, delta0, k


def _frac_json(f: Fraction | None) -> str | None:
    return None if f is None else f"{f.numerator}/{f.denominator}"


def _frac_from(s: str | None) -> Fraction | None:
    return None if s is None else Fraction(s)


@dataclass(frozen=True)
class MultiplicativeParams:
    """Parameters of the multiplicative mechanism (Corollary 4.7 / Algorithm 4) for one tree shape and
    privacy spec. Public, JSON-serialisable. Counts in records; scales are discrete-Laplace scales.

    Per round i = 1..``rounds`` (tuples indexed i − 1): ``thresholds`` τ_i, ``buckets`` M_i,
    ``threshold_scales`` t_ρ (sparse-vector threshold noise), ``query_scales`` t_ν, ``count_scales``
    t_T and ``count_bounds`` R_i (truncated counts), ``margins`` Δ_i, ``etas`` η_i. ``root_scale``,
    ``root_bound``: the truncated Laplace of M (None under ``change``: M = N is public).
    """

    alpha: float
    eta: float
    epsilon: float
    delta: float
    neighbours: Neighbours
    records_per_person: int
    level_sizes: tuple[int, ...]
    group_size: int
    epsilon_record: float
    delta_record: float
    beta: float
    ratio: float
    cutoff: int
    tau_min: float
    tau_min_paper: float
    bucket_zero: float
    thresholds: tuple[float, ...]
    buckets: tuple[float, ...]
    threshold_scales: tuple[Fraction, ...]
    query_scales: tuple[Fraction, ...]
    count_scales: tuple[Fraction, ...]
    count_bounds: tuple[int, ...]
    margins: tuple[float, ...]
    etas: tuple[float, ...]
    root_scale: Fraction | None = None
    root_bound: int | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def depth(self) -> int:
        """The paper's d: nodes on a root-to-leaf path = number of levels (root included)."""
        return len(self.level_sizes)

    @property
    def rounds(self) -> int:
        return len(self.thresholds)

    @property
    def root_public(self) -> bool:
        return self.neighbours is Neighbours.CHANGE

    def to_json(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha, "eta": self.eta, "epsilon": self.epsilon, "delta": self.delta,
            "neighbours": self.neighbours, "records_per_person": self.records_per_person,
            "level_sizes": list(self.level_sizes), "group_size": self.group_size,
            "epsilon_record": self.epsilon_record, "delta_record": self.delta_record,
            "beta": self.beta, "ratio": self.ratio, "cutoff": self.cutoff,
            "tau_min": self.tau_min, "tau_min_paper": self.tau_min_paper, "bucket_zero": self.bucket_zero,
            "thresholds": list(self.thresholds), "buckets": list(self.buckets),
            "threshold_scales": [_frac_json(f) for f in self.threshold_scales],
            "query_scales": [_frac_json(f) for f in self.query_scales],
            "count_scales": [_frac_json(f) for f in self.count_scales],
            "count_bounds": list(self.count_bounds), "margins": list(self.margins), "etas": list(self.etas),
            "root_scale": _frac_json(self.root_scale), "root_bound": self.root_bound,
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> MultiplicativeParams:
        try:
            return cls(
                alpha=float(d["alpha"]), eta=float(d["eta"]), epsilon=float(d["epsilon"]),
                delta=float(d["delta"]), neighbours=check_neighbours(d["neighbours"]),
                records_per_person=int(d["records_per_person"]),
                level_sizes=tuple(int(n) for n in d["level_sizes"]), group_size=int(d["group_size"]),
                epsilon_record=float(d["epsilon_record"]), delta_record=float(d["delta_record"]),
                beta=float(d["beta"]), ratio=float(d["ratio"]), cutoff=int(d["cutoff"]),
                tau_min=float(d["tau_min"]), tau_min_paper=float(d["tau_min_paper"]),
                bucket_zero=float(d["bucket_zero"]),
                thresholds=tuple(float(x) for x in d["thresholds"]),
                buckets=tuple(float(x) for x in d["buckets"]),
                threshold_scales=tuple(Fraction(s) for s in d["threshold_scales"]),
                query_scales=tuple(Fraction(s) for s in d["query_scales"]),
                count_scales=tuple(Fraction(s) for s in d["count_scales"]),
                count_bounds=tuple(int(x) for x in d["count_bounds"]),
                margins=tuple(float(x) for x in d["margins"]), etas=tuple(float(x) for x in d["etas"]),
                root_scale=_frac_from(d.get("root_scale")),
                root_bound=None if d.get("root_bound") is None else int(d["root_bound"]),
                notes=tuple(str(s) for s in d.get("notes", ())),
            )
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
            raise ParameterError(f"the multiplicative parameters are malformed ({exc})",
                                 "re-create the plan instead of editing its JSON") from exc


def check_alpha_eta(alpha: object, eta: object) -> tuple[float, float]:
    """(α, η) as floats, α ∈ [MIN_ALPHA, 1) and η ∈ (0, ½); ParameterError otherwise."""
    try:
        a = float(alpha)  # type: ignore[arg-type]
        e = float(eta)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ParameterError(f"α and η must be numbers, got {alpha!r}, {eta!r}", "use e.g. α = 0.5, η = 0.05") from None
    if not MIN_ALPHA <= a < 1:
        raise ParameterError(f"α must be in [{MIN_ALPHA:g}, 1), got {alpha!r}",
                             "use e.g. α = 0.5 (at α ≥ 1 releasing zeros already meets the guarantee)")
    if not 0 < e < 0.5:
        raise ParameterError(f"η must be in (0, 0.5), got {eta!r}", "use e.g. η = 0.05")
    return a, e


def check_level_sizes(level_sizes: Sequence[int]) -> tuple[int, ...]:
    """A tree's level sizes (1, n_1, …, n_L), L ≥ 1, every n_ℓ ≥ 1; ParameterError otherwise."""
    sizes = tuple(int(n) for n in level_sizes)
    if len(sizes) < 2 or sizes[0] != 1 or any(n < 1 for n in sizes):
        raise ParameterError(f"level sizes {sizes} are not a tree's (1, n_1, …, n_L) with every n_ℓ ≥ 1",
                             "give the node count of each level, root first")
    return sizes


def _tau_min_paper(alpha: float, eps: float, delta: float, d: int, eta: float) -> float:
    """Corollary 4.7's (Theorem A.1's when M is public) closed-form τ_min at per-record (ε, δ)."""
    return 324 * (1 + alpha) ** 2 / (alpha**4 * eps) * max(
        8 * math.log(4 * d / eta), math.log(1 + 2 * math.expm1(eps / 4) / delta))


@dataclass(frozen=True)
class _RoundNoise:
    """Round i's noise (module docstring): the sparse vector's scales t_ρ, t_ν, the truncated counts' t_T and
    bound R_i, the margin Δ_i, η_i, and the τ_min that round i's condition Δ_i + 2R_i ≤ β τ_i requires."""

    threshold_scale: Fraction
    query_scale: Fraction
    count_scale: Fraction
    count_bound: int
    margin: float
    eta: float
    tau_min_needed: float


def _round_noise(i: int, eps_r: float, delta_r: float, eta: float, alpha: float, depth: int) -> _RoundNoise:
    """Round i's share of the reduction's (ε_R, δ_R) and η (ε_i = ε_R·i·q^{i−1}/C, η_i = η/2^i) and its
    noise; ParameterError if a scale is beyond the sampler."""
    beta = alpha / (6 + 5 * alpha)
    r = (1 + alpha) * (1 - beta) / (1 + beta)
    q = 1 / r
    C = (1 - q) ** -2
    c = _SVT_CUTOFF
    w = i * q ** (i - 1) / C
    eps_i, delta_i, eta_i = eps_r * w, delta_r * w, eta / 2.0**i
    tr = laplace_scale(1, eps_i / (4 * c))
    tn = laplace_scale(1, eps_i / (8 * c))
    tc = laplace_scale(1, eps_i / (2 * c))
    for t in (tr, tn, tc):
        problem = laplace_scale_problem(t)
        if problem is not None:
            raise ParameterError(f"the multiplicative mechanism's round {i} needs {problem}",
                                 "use a larger ε or δ, or a larger α")
    R = truncation_bound(tc, delta_i / c)
    margin = 2 * float(tn) * math.log(2 * depth / eta_i)
    need = (1 + beta) * (margin + 2 * R) / (alpha * beta * r ** (i - 1))
    return _RoundNoise(tr, tn, tc, R, margin, eta_i, need)


def _rounds_covering(alpha: float, tau_min: float, ratio: float) -> int:
    """How many rounds make M_rounds = α τ_min r^rounds cover :data:`MAX_ROOT_COUNT` (at least one)."""
    return max(1, math.ceil(math.log(MAX_ROOT_COUNT / (alpha * tau_min)) / math.log(ratio)))


def _root_noise(eps0: float, delta0: float) -> tuple[Fraction, int]:
    """The truncated Laplace of M under add/remove: scale t_M for ε₀/2 and bound R_M for δ₀/2."""
    root_scale = laplace_scale(1, eps0 / 2)
    problem = laplace_scale_problem(root_scale)
    if problem is not None:
        raise ParameterError(f"the root bound M needs {problem}", "use a larger ε")
    return root_scale, truncation_bound(root_scale, delta0 / 2)


def multiplicative_params(level_sizes: Sequence[int], privacy: PrivacySpec, alpha: float,
                          eta: float = DEFAULT_ETA) -> MultiplicativeParams:
    """Corollary 4.7's parameters (module docstring) for a tree with ``level_sizes`` (1, n_1, …, n_L),
    the user's (ε, δ) (δ > 0 required), neighbour model and records per person, α ∈ (0, 1), η ∈ (0, ½).
    ParameterError if δ = 0 or a noise scale is beyond the sampler. O(rounds)."""
    sizes = check_level_sizes(level_sizes)
    a, e = check_alpha_eta(alpha, eta)
    if privacy.delta <= 0:
        raise ParameterError("the multiplicative mechanism needs δ > 0",
                             "give a δ such as 1e-9, or use Laplace noise for pure ε-DP")
    d = len(sizes)
    eps0, delta0, k = per_record_budget(privacy)
    root_public = privacy.root_public
    eps_r, delta_r = (eps0, delta0) if root_public else (eps0 / 2, delta0 / 2)
    beta = a / (6 + 5 * a)
    r = (1 + a) * (1 - beta) / (1 + beta)
    # The per-round noise does not depend on τ_min, but the round count depends on τ_min, which depends on
    # the rounds' noise: start from round 1's requirement and add rounds until τ_min is a fixed point.
    noise = [_round_noise(1, eps_r, delta_r, e, a, d)]
    tau_min = noise[0].tau_min_needed
    while True:
        rounds = _rounds_covering(a, tau_min, r)
        while len(noise) < rounds:
            noise.append(_round_noise(len(noise) + 1, eps_r, delta_r, e, a, d))
        new_tau = max(n.tau_min_needed for n in noise[:rounds]) * (1 + 1e-12)
        if new_tau <= tau_min:
            break
        tau_min = new_tau
    rounds = _rounds_covering(a, tau_min, r)
    noise = noise[:rounds]
    root_scale, root_bound = (None, None) if root_public else _root_noise(eps0, delta0)
    tau_min_paper = _tau_min_paper(a, eps_r, delta_r, d, e)
    notes = (
        f"τ_min = {tau_min:.4g} records (Corollary 4.7's closed form: "
        f"{tau_min_paper:.4g}); nodes below ~τ_min are released as ⌊α τ_min⌋",
    )
    return MultiplicativeParams(
        alpha=a, eta=e, epsilon=privacy.epsilon, delta=privacy.delta, neighbours=privacy.neighbours,
        records_per_person=privacy.records_per_person, level_sizes=sizes, group_size=k,
        epsilon_record=eps0, delta_record=delta0, beta=beta, ratio=r, cutoff=_SVT_CUTOFF,
        tau_min=tau_min, tau_min_paper=tau_min_paper, bucket_zero=a * tau_min,
        thresholds=tuple(a * tau_min * r ** (i - 1) / (1 + beta) for i in range(1, rounds + 1)),
        buckets=tuple(a * tau_min * r**i for i in range(1, rounds + 1)),
        threshold_scales=tuple(n.threshold_scale for n in noise), query_scales=tuple(n.query_scale for n in noise),
        count_scales=tuple(n.count_scale for n in noise), count_bounds=tuple(n.count_bound for n in noise),
        margins=tuple(n.margin for n in noise), etas=tuple(n.eta for n in noise),
        root_scale=root_scale, root_bound=root_bound, notes=notes,
    )


def multiplicative_privacy(params: MultiplicativeParams) -> tuple[float, float]:
    """(ε, δ) the release spends under the user's neighbour model: the per-record basic composition of
    every round's sparse vector and truncated counts (and M's truncated Laplace under add/remove),
    then group privacy over k = ``group_size`` add/removes (module docstring)."""
    c = params.cutoff
    eps = Fraction(0)
    delta = 0.0
    for tr, tn, tc, R in zip(params.threshold_scales, params.query_scales, params.count_scales,
                             params.count_bounds):
        eps += c * (1 / tr + 2 / tn + 1 / tc)
        delta += c * truncated_laplace_delta(tc, R)
    if params.root_scale is not None:
        eps += 1 / params.root_scale
        delta += truncated_laplace_delta(params.root_scale, int(params.root_bound or 0))
    return group_privacy(float(eps), delta, params.group_size)


# ----------------------------------------------------------------------------------------
# Algorithms 1–2 (vectorised over the trees of a forest, one level at a time)
# ----------------------------------------------------------------------------------------


def check_tree(parents: Sequence[np.ndarray], levels_true: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(parents, counts) as int64 arrays per level; DataError unless they are a tree's with counts ≥ 0."""
    levels = [np.asarray(v, dtype=np.int64).reshape(-1) for v in levels_true]
    pars = [np.asarray(p, dtype=np.int64).reshape(-1) for p in parents]
    if len(levels) != len(pars) + 1 or levels[0].size != 1:
        raise DataError(f"{len(levels)} count levels for {len(pars)} parent arrays",
                        "pass counts for levels 0..L (root first) and parents for levels 1..L")
    for j, p in enumerate(pars, start=1):
        if p.size != levels[j].size or (p.size and (p.min() < 0 or p.max() >= levels[j - 1].size)):
            raise DataError(f"level {j}'s parent indices do not fit the tree", "pass Hierarchy.parents")
    if any(v.size and v.min() < 0 for v in levels):
        raise DataError("a node count is negative", "pass the true non-negative counts")
    return pars, levels


def _classify(pars: list[np.ndarray], w: list[np.ndarray], active: list[np.ndarray], tau: float,
              margin: float, t_rho: Fraction, t_nu: Fraction, t_cnt: Fraction, bound: int, cutoff: int,
              rng: RandomSource) -> list[np.ndarray]:
    """Algorithm 1 on every tree of the forest ``active`` at once; returns the ⊤ mask per level."""
    n_levels = len(w)
    sizes = [v.size for v in w]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    # Tree of each active node = its highest active ancestor (active sets are closed downwards).
    tree_gid: list[np.ndarray] = []
    for j in range(n_levels):
        own = offsets[j] + np.arange(sizes[j], dtype=np.int64)
        if j == 0:
            gid = own
        else:
            p = pars[j - 1]
            gid = np.where(active[j - 1][p], tree_gid[j - 1][p], own)
        tree_gid.append(np.where(active[j], gid, -1))
    all_gid = np.concatenate(tree_gid)
    is_root = np.zeros(all_gid.size, dtype=bool)
    is_root[all_gid[all_gid >= 0]] = True
    rank = np.cumsum(is_root) - 1  # tree number of each root, O(nodes) instead of a sort
    n_trees = int(is_root.sum())
    tree: list[np.ndarray] = []
    flat = np.where(all_gid >= 0, rank[np.maximum(all_gid, 0)], -1)
    for j in range(n_levels):
        tree.append(flat[offsets[j]:offsets[j + 1]])
    top = [np.zeros(s, dtype=bool) for s in sizes]
    decided = [~a for a in active]
    if n_trees == 0:
        return top
    tops_so_far = np.zeros(n_trees, dtype=np.int64)
    rho = sample_discrete_laplace(rng, t_rho, n_trees)
    tau_int = math.ceil(tau)
    keep_level = math.ceil(tau - margin - bound)
    for j in range(n_levels - 1, -1, -1):
        in_s = np.flatnonzero(~decided[j])
        if in_s.size == 0:
            continue
        trees_here = tree[j][in_s]
        fmax = np.full(n_trees, np.iinfo(np.int64).min, dtype=np.int64)
        np.maximum.at(fmax, trees_here, w[j][in_s])
        has_nodes = np.zeros(n_trees, dtype=bool)
        has_nodes[trees_here] = True
        asking = np.flatnonzero(has_nodes & (tops_so_far < cutoff))
        is_top_tree = np.zeros(n_trees, dtype=bool)
        if asking.size:
            nu = sample_discrete_laplace(rng, t_nu, asking.size)
            is_top_tree[asking[fmax[asking] + nu - rho[asking] >= tau_int]] = True
        node_top_tree = is_top_tree[trees_here]
        counted = in_s[node_top_tree]
        decided[j][in_s] = True  # every node of S_j is classified now (⊥ unless raised below)
        if counted.size:
            noisy = w[j][counted] + sample_truncated_discrete_laplace(rng, t_cnt, bound, counted.size)
            raised = counted[noisy >= keep_level]
            top[j][raised] = True
            up = raised
            for jj in range(j - 1, -1, -1):  # u's ancestors in its tree are ⊤ and leave S
                up = np.unique(pars[jj][up])
                up = up[active[jj][up]]
                if up.size == 0:
                    break
                top[jj][up] = True
                decided[jj][up] = True
            top_trees = np.flatnonzero(is_top_tree)
            tops_so_far[top_trees] += 1
            rho[top_trees] = sample_discrete_laplace(rng, t_rho, top_trees.size)
    return top


def release_multiplicative(parents: Sequence[np.ndarray], levels_true: Sequence[np.ndarray],
                           params: MultiplicativeParams, rng: RandomSource) -> tuple[np.ndarray, ...]:
    """Algorithms 4 → 2 → 1: the released non-negative integer count of every node (int64 per level,
    root first). Under ``change`` the root is N exactly. (ε, δ) = :func:`multiplicative_privacy`.
    Guarantee (Problem 3.1 with τ_u = τ_min): P(|w̃_u − w_u| ≤ α max(w_u, τ_min)) ≥ 1 − η per node."""
    pars, w = check_tree(parents, levels_true)
    sizes = tuple(v.size for v in w)
    if sizes != params.level_sizes:
        raise DataError(f"the tree's level sizes {sizes} differ from the plan's {params.level_sizes}",
                        "plan for this tree")
    root = int(w[0][0])
    if params.root_public:
        root_bound_m = float(root)
    else:
        assert params.root_scale is not None and params.root_bound is not None
        z = int(sample_truncated_discrete_laplace(rng, params.root_scale, params.root_bound, 1)[0])
        root_bound_m = float(root + params.root_bound + z)
    top_bucket = params.buckets[-1]
    if root_bound_m > top_bucket:
        if params.root_public:
            raise DataError(f"the total count {root:,} is beyond the multiplicative mechanism's limit "
                            f"of {params.buckets[-1]:.3g}", "use the Gaussian or Laplace noise")
        root_bound_m = top_bucket
    r = params.ratio
    m0 = params.bucket_zero
    if root_bound_m <= m0:
        ell = 0
    else:
        ell = min(params.rounds, max(1, math.ceil(math.log(root_bound_m / m0) / math.log(r))))
    out = [np.full(s, -1, dtype=np.int64) for s in sizes]
    active = [np.ones(s, dtype=bool) for s in sizes]
    for i in range(ell, 0, -1):
        if not any(a.any() for a in active):
            break
        k = i - 1
        top = _classify(pars, w, active, params.thresholds[k], params.margins[k], params.threshold_scales[k],
                        params.query_scales[k], params.count_scales[k], params.count_bounds[k],
                        params.cutoff, rng)
        value = math.floor(params.buckets[k])
        for j in range(len(sizes)):
            out[j][top[j]] = value
            active[j] &= ~top[j]
    zero_value = math.floor(params.bucket_zero)
    for j in range(len(sizes)):
        out[j][active[j]] = zero_value
    if params.root_public:
        out[0][0] = root
    return tuple(out)


def multiplicative_intervals(released: Sequence[np.ndarray], params: MultiplicativeParams
                             ) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """Per node interval [lower, upper] (int64 per level) that holds the true count with probability
    ≥ 1 − η (the success event of Lemma 4.6): a node released as ⌊M_i⌋ (⊤ in round i) has
    (1−β)τ_i ≤ w ≤ ⌊M_i⌋; one released as ⌊M_0⌋ has 0 ≤ w ≤ ⌊M_0⌋; the root under ``change`` is exact."""
    values = np.array([math.floor(params.bucket_zero)] + [math.floor(m) for m in params.buckets], dtype=np.int64)
    lows = np.array([0] + [math.ceil((1 - params.beta) * t) for t in params.thresholds], dtype=np.int64)
    lower: list[np.ndarray] = []
    upper: list[np.ndarray] = []
    for j, rel in enumerate(released):
        v = np.asarray(rel, dtype=np.int64)
        pos = np.searchsorted(values, v)
        known = (pos < values.size) & (values[np.minimum(pos, values.size - 1)] == v)
        if j == 0 and params.root_public:
            lower.append(v.copy())
            upper.append(v.copy())
            continue
        if not known.all():
            raise DataError("a released value is not one of the mechanism's buckets",
                            "pass the output of release_multiplicative with the same parameters")
        lower.append(np.minimum(lows[pos], v))
        upper.append(v.copy())
    return tuple(lower), tuple(upper)
