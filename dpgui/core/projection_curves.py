"""The numbers behind the plan page's four plots of projected error (no Qt, no data, no budget).

(a) the 95 % error margin of every cumulative count (CDF point), the plan against the paper's
baselines; (b) the typical (root-mean-square) margin against ε; (c) the same against the branching
factor of a uniform tree. Plot (d), the budget and noise per level, is read off the plan itself.

With δ > 0 the plots also compare the two noises: (a) and (b) show the best plan of the other noise
(the ``"alternative"`` series: Gaussian for a Laplace plan, Laplace for a Gaussian one; (b) at the
same δ), and (c) gains uniform trees with Gaussian noise (``"gaussian"``: GLS, ρ split by the
closed-form covering optimum ρ_l ∝ D_l^{1/2} of :func:`optimise_budgets`). The paper's baselines are
Laplace trees (pure ε-DP) at every δ.

Every number is the engine's (:mod:`dpgui.core.projection`, :mod:`dpgui.core.planner`,
:func:`~dpgui.core.quantiles.noise_margin`) for a real :class:`Plan` (exact discrete-Laplace
variances at rounded-up scales). :class:`ProjectionCache` keeps the tree-only parts of those
formulas (:func:`~dpgui.core.projection.prefix_basis`,
:func:`~dpgui.core.projection.total_coefficients`), so a change of ε or of the budget split only
recomputes what depends on it; it is meant to run on worker threads. Three documented shortcuts:

* for K > :data:`EXACT_POINT_LIMIT` plot (a) evaluates the exact margin at
  :data:`SAMPLED_POINTS` prefixes (one at a jittered position in each of equal strata, plus the
  first and last), not at all K; the curve is exact at every drawn point;
* plot (a) keeps at most 2 × :data:`~dpgui.core.thinning.DRAWN_SLICES` of those points: the lowest
  and the highest of each of that many equal slices of the range
  (:func:`~dpgui.core.thinning.peak_envelope`);
* the "tuned budgets" curve of plot (c) is first computed from budget *fractions* optimised once
  per (K, b, neighbour model) at ε = 1 and scaled to the chosen ε (exact errors of those plans),
  then refined (:meth:`ProjectionCache.refine`): each point becomes the better of that split and
  :func:`optimise_budgets` run at the chosen ε. Only up to :data:`GLS_BRANCHINGS` factors b
  (log-spaced) get this curve, as each needs a numerical optimisation.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

from dpgui.core.noise_mechanisms import LAPLACE, Sensitivity, mechanism_for
from dpgui.core.plan import Plan, PrivacySpec, budget_total, check_neighbours, check_noise, equal_budgets, split_budget
from dpgui.core.level_budgets import optimise_budgets
from dpgui.core.planner import (
    average_margin95,
    candidate_shapes,
    margin95,
    paper_error,
)
from dpgui.core.projection import (
    prefix_basis,
    prefix_variances_from_basis,
    TotalCoefficients,
    total_coefficients,
    total_from_coefficients,
)
from dpgui.core.quantiles import noise_margin
from dpgui.core.thinning import peak_envelope
from dpgui.core.tree import TreeShape
from dpgui.errors import Cancelled, ParameterError
from dpgui.vocabulary import AccuracyWhere, Estimator, Noise, Objective

EXACT_POINT_LIMIT = 1 << 16  # plot (a) evaluates every CDF point up to this K
SAMPLED_POINTS = 1 << 15  # …and this many exact points above it
MAX_BRANCHING = 1024  # plot (c) x range: 2 .. min(K, MAX_BRANCHING)
MAX_PADDING = 2.0  # plot (c) keeps b whose uniform tree pads K to at most 2K (as the planner does)
GLS_BRANCHINGS = 24  # plot (c): at most this many b get GLS + optimised budgets
EPS_PER_DECADE = 15  # plot (b): ε grid points per factor of 10 (on a fixed lattice, so cached)
EPS_SPAN = 10.0  # plot (b) x range: ε/10 .. 10ε (capped at ε = 100, the engine's limit)
BASELINES = ("binary", "hist", "paper_best")  # the mechanisms Rameshwar, Tandon & Sharma compares
REFINE_CHUNK_MS = 100.0  # ProjectionCache.refine works for about this long per call


def draw_prefixes(bins: int, limit: int = EXACT_POINT_LIMIT, samples: int = SAMPLED_POINTS) -> np.ndarray:
    """Prefix lengths j at which plot (a) evaluates the margin: all 1..K up to ``limit``, else one
    per stratum at a fixed pseudo-random position (no stride that could alias with the tree's
    periodic structure) plus 1 and K."""
    if bins <= limit:
        return np.arange(1, bins + 1, dtype=np.int64)
    edges = np.linspace(1.0, float(bins), samples + 1)
    jitter = np.random.default_rng(20240607).random(samples)
    picks = np.floor(edges[:-1] + jitter * (edges[1:] - edges[:-1])).astype(np.int64)
    return np.unique(np.concatenate([[1], np.clip(picks, 1, bins), [bins]]))


def epsilon_grid(epsilon: float, per_decade: int = EPS_PER_DECADE) -> np.ndarray:
    """ε values of plot (b): the points of the fixed lattice 10^(k/per_decade) in [ε/10, min(10ε, 100)], plus ε
    (a hierarchy plan's curves, each point a Monte Carlo projection, use a coarser lattice)."""
    top = min(EPS_SPAN * epsilon, 100.0)
    k_lo = math.ceil(per_decade * math.log10(epsilon / EPS_SPAN) - 1e-9)
    k_hi = math.floor(per_decade * math.log10(top) + 1e-9)
    lattice = [10.0 ** (k / per_decade) for k in range(k_lo, k_hi + 1)]
    lattice = [e for e in lattice if 0 < e <= 100.0]
    return np.unique(np.array(lattice + [float(epsilon)]))


def uniform_branchings(bins: int, max_branching: int = MAX_BRANCHING, max_padding: float = MAX_PADDING) -> list[int]:
    """Branching factors b ∈ 2..min(K, max_branching) whose uniform tree pads K to ≤ max_padding·K."""
    out = []
    for b in range(2, min(bins, max_branching) + 1):
        span = b
        while span < bins:
            span *= b
        if span <= max_padding * bins:
            out.append(b)
    return out


def log_spaced_subset(values: list[int], count: int) -> list[int]:
    """At most ``count`` members of ``values`` (sorted ints), nearest to log-spaced targets, ends kept."""
    if len(values) <= count:
        return list(values)
    arr = np.asarray(values, dtype=float)
    targets = np.geomspace(arr[0], arr[-1], count)
    picks = {values[int(np.argmin(np.abs(np.log(arr) - math.log(t))))] for t in targets}
    return sorted(picks)


def effective_branching(shape: TreeShape) -> float:
    """The uniform branching factor with the same height and leaves: K̄^(1/h) (= b for a uniform tree)."""
    if len(set(shape.branching)) == 1:
        return float(shape.branching[0])
    return float(shape.padded_bins ** (1.0 / shape.height))


Curve = tuple[np.ndarray, np.ndarray]


@dataclass
class ProjectedCurves:
    """Everything the plots and the plan summary show for one plan, in records (not % of N).

    ``a``, ``b``, ``c``: the (x, y) series of plots (a)–(c) by series name; ``rms`` and ``worst``:
    the plan's 95 % margin on average (RMS) and at the worst CDF point (``margin95``); ``pending``:
    the factors b of plot (c) whose budgets are still to be tuned at this ε. With δ > 0 and an
    ``alternative`` plan (the best plan of the other noise), ``a`` and ``b`` hold its series under
    "alternative" and ``alternative_rms`` / ``alternative_worst`` its margins; ``c`` holds
    "gaussian" whenever δ > 0. With a ``region`` (the CDF points first..last of the region the officer
    needs accurate), ``region_rms`` / ``region_worst`` are the plan's 95 % margins there (``margin95``
    with that focus): the figures accuracy first targets for a region."""

    plan: Plan
    lower: float
    upper: float
    a: dict[str, Curve]
    b: dict[str, Curve]
    c: dict[str, Curve]
    rms: float
    worst: float
    allowed: list[int]
    pending: list[int] = field(default_factory=list)
    alternative: Plan | None = None
    alternative_rms: float | None = None
    alternative_worst: float | None = None
    region: tuple[int, int] | None = None
    region_rms: float | None = None
    region_worst: float | None = None


Value = TypeVar("Value")


class _Memo(Generic[Value]):
    """A small LRU dictionary."""

    def __init__(self, size: int) -> None:
        self.size: int = size
        self.data: OrderedDict[Hashable, Value] = OrderedDict()

    def get(self, key: Hashable, make: Callable[[], Value]) -> Value:
        if key in self.data:
            self.data.move_to_end(key)
            return self.data[key]
        value = make()
        self.data[key] = value
        if len(self.data) > self.size:
            self.data.popitem(last=False)
        return value


class ProjectionCache:
    """Exact projections of plans, with everything that does not change with ε memoised.

    The coefficient arrays that turn per-level noise variances into errors depend on the tree
    shape only (covering digits, GLS boundary terms, their closed-form totals), so a change of ε
    or of the budget split is a matrix–vector product; the baselines depend on (K, privacy) only.
    Every figure equals the engine's (``prefix_variances``, ``total_sq_error``) for the same plan.
    :meth:`project` and :meth:`refine` hold :attr:`lock`, so they may run on any thread; call the
    other methods from one thread only.
    """

    # --- what the widget asks for (off the GUI thread)
    def project(self, plan: Plan, lower: float, upper: float,
                should_cancel: Callable[[], bool] = lambda: False, alternative: Plan | None = None,
                region: tuple[int, int] | None = None) -> ProjectedCurves:
        """Plots (a)–(c)'s data for ``plan`` over [lower, upper). Raises Cancelled when asked to stop
        between steps. O(K·h) for plot (a), O(h) per point of (b) and (c) once the tree-only parts
        of the same K and neighbour model are memoised. ``alternative``: the best plan of the other
        noise at the same (ε, δ), shown beside the plan (ignored when δ = 0 or when it is not for
        the plan's K and privacy). ``region``: CDF points first..last whose margins to give too
        (ignored when they are not the plan's: O(len·h²) more)."""
        def check() -> None:
            if should_cancel():
                raise Cancelled("projection no longer needed")

        with self.lock:
            bins, privacy = plan.shape.bins, plan.privacy
            laplace = privacy.pure()  # the baselines and plot (c)'s Laplace trees do not depend on δ: memos shared
            if alternative is not None and (privacy.delta <= 0 or alternative.privacy != privacy
                                            or alternative.shape.bins != bins or alternative.noise == plan.noise):
                alternative = None
            plans = {"plan": plan} if alternative is None else {"plan": plan, "alternative": alternative}
            # (a) every CDF point (or an exact sample of them for huge K)
            prefixes = self.draw_prefixes(bins)
            width = (upper - lower) / bins
            a = {}
            for name in (*plans, *BASELINES):
                check()
                y = (self.prefix_margins(plans[name], prefixes) if name in plans
                     else self.baseline_prefix_margins(name, bins, laplace, prefixes))
                keep = np.flatnonzero(y > 0)  # C_K = N is exact under 'change': margin 0, not on a log axis
                keep = keep[peak_envelope(y[keep])]
                a[name] = (lower + prefixes[keep] * width, y[keep])
            check()
            # (b) typical margin against ε (same budget fractions for the plan; δ kept)
            grid = epsilon_grid(privacy.epsilon)
            b = {name: (grid, self.plan_epsilon_curve(p, grid)) for name, p in plans.items()}
            for name in BASELINES:
                b[name] = (grid, np.array([self.baseline_rms(name, bins, laplace.with_epsilon(e)) for e in grid]))
            check()
            # (c) typical margin against uniform branching
            c = {"equal": self.uniform_equal_curve(bins, laplace),
                 "optimised": self.uniform_optimised_curve(bins, laplace, compute=False)}
            if privacy.delta > 0:
                c[Noise.GAUSSIAN] = self.uniform_gaussian_curve(bins, privacy)
            check()
            at = grid == privacy.epsilon
            in_region: tuple[float | None, float | None] = (None, None)
            if region is not None:
                try:
                    in_region = margin95(plan, AccuracyWhere.AVERAGE, region), margin95(plan, AccuracyWhere.EVERY, region)
                except ParameterError:  # not CDF points of this plan (another K): no region figures
                    region = None
            return ProjectedCurves(plan, float(lower), float(upper), a, b, c,
                                   rms=float(b["plan"][1][at][0]), worst=margin95(plan, AccuracyWhere.EVERY),
                                   allowed=self.branchings(bins, privacy.missing_leaf),
                                   pending=self.missing_optimisations(bins, laplace), alternative=alternative,
                                   alternative_rms=None if alternative is None else float(b["alternative"][1][at][0]),
                                   alternative_worst=None if alternative is None else margin95(alternative, AccuracyWhere.EVERY),
                                   region=region, region_rms=in_region[0], region_worst=in_region[1])

    def refine(self, bins: int, privacy: PrivacySpec, pending: list[int], budget_ms: float = REFINE_CHUNK_MS,
               should_cancel: Callable[[], bool] = lambda: False) -> tuple[list[int], Curve]:
        """Tune the budgets of some factors b of ``pending`` (about ``budget_ms`` of work, stopping
        early when asked: first every factor's ε = 1 split, reused at any ε, then the tuning at this
        ε). Returns the factors still pending and plot (c)'s tuned curve as it now stands. These are
        Laplace trees: δ is ignored."""
        privacy = privacy.pure()
        with self.lock:
            pending = list(pending)
            start = time.perf_counter()
            while pending and not should_cancel() and (time.perf_counter() - start) * 1000.0 < budget_ms:
                unknown = [b for b in pending if self.reference_fractions(bins, b, privacy.neighbours, False) is None]
                if unknown:
                    self.reference_fractions(bins, unknown[0], privacy.neighbours)
                else:
                    self.optimised_budgets(bins, pending.pop(0), privacy)
            return pending, self.uniform_optimised_curve(bins, privacy, compute=not pending)

    def __init__(self) -> None:
        # project() and refine() run on worker threads; one at a time may use the memos
        self.lock = threading.RLock()
        self._variance: dict[tuple[str, Sensitivity, float], float] = {}
        self._candidates: _Memo[tuple[list[TreeShape], np.ndarray, np.ndarray]] = _Memo(8)
        self._coefficients: _Memo[TotalCoefficients] = _Memo(8192)
        self._prefix_basis: _Memo[np.ndarray] = _Memo(8)
        self._fractions: _Memo[tuple[float, ...]] = _Memo(4096)
        self._tuned: _Memo[tuple[float, ...]] = _Memo(4096)
        self._plans: _Memo[Plan] = _Memo(8192)
        self._shapes: _Memo[TreeShape] = _Memo(8192)
        self._rms: _Memo[float] = _Memo(8192)
        self._branchings: _Memo[list[int]] = _Memo(8192)
        self._prefixes: _Memo[np.ndarray] = _Memo(64)
        self._curves: _Memo[Curve] = _Memo(64)
        self._margins: _Memo[np.ndarray] = _Memo(64)

    # --- the engine's numbers, from cached per-shape coefficients
    def level_variance(self, sensitivity: Sensitivity, budget: float, noise: str = Noise.LAPLACE) -> float:
        """Exact variance of one level's noise at the plan's rounded noise parameter (as
        Plan.level_variances): discrete Laplace at scale t ≥ Δ₁/ε_l (``budget`` = ε_l), or discrete
        Gaussian at σ² ≥ Δ₂²/(2ρ_l) (``budget`` = ρ_l). In counts²."""
        key = (noise, sensitivity, budget)
        value = self._variance.get(key)
        if value is None:
            if len(self._variance) > 200_000:
                self._variance.clear()
            value = mechanism_for(check_noise(noise)).rounded_variance(sensitivity, budget)
            self._variance[key] = value
        return value

    def level_variances(self, shape: TreeShape, privacy: PrivacySpec, level_budgets: Sequence[float],
                        noise: str = Noise.LAPLACE) -> np.ndarray:
        """Plan(shape, privacy, level_budgets, noise=noise).level_variances() without building the Plan
        (budgets ε_l for Laplace, ρ_l for Gaussian)."""
        out = np.full(shape.height + 1, np.inf)
        first = privacy.first_noised_level()
        sensitivity = privacy.sensitivity
        for offset, e in enumerate(level_budgets):
            if e > 0:
                out[first + offset] = self.level_variance(sensitivity, e, noise)
        if privacy.root_public:
            out[0] = 0.0
        return out

    def coefficients(self, shape: TreeShape, estimator: str, released: tuple[bool, ...],
                     root_public: bool) -> TotalCoefficients:
        """The engine's :func:`~dpgui.core.projection.total_coefficients`, memoised."""
        return self._coefficients.get((shape, estimator, released, root_public),
                                      lambda: total_coefficients(shape, estimator, released, root_public))

    def total_sq_error(self, shape: TreeShape, privacy: PrivacySpec, level_budgets: Sequence[float],
                       estimator: str, noise: str = Noise.LAPLACE) -> float:
        """Σ_j Var Ĉ_j of Plan(shape, privacy, level_budgets, estimator, noise): the engine's
        :func:`~dpgui.core.projection.total_sq_error` with memoised coefficients. O(h)."""
        variances = self.level_variances(shape, privacy, level_budgets, noise)
        released = tuple(bool(r) for r in np.isfinite(variances))  # = Plan.released()
        coefficients = self.coefficients(shape, estimator, released, privacy.root_public)
        return total_from_coefficients(shape, estimator, coefficients, variances)

    def rms(self, shape: TreeShape, privacy: PrivacySpec, level_budgets: Sequence[float], estimator: str,
            noise: str = Noise.LAPLACE) -> float:
        """Typical 95 % margin of that plan: the engine's ``margin95(plan, 'average')``. O(h)."""
        return average_margin95(self.total_sq_error(shape, privacy, level_budgets, estimator, noise), shape,
                                privacy.root_public)

    def prefix_margins(self, plan: Plan, prefixes: np.ndarray) -> np.ndarray:
        """95 % margins of the cumulative counts Ĉ_j, j ∈ prefixes:
        ``noise_margin(sqrt(prefix_variances(plan, prefixes)))`` with the tree's part memoised. O(len·h)."""
        shape, released = plan.shape, tuple(plan.released())
        basis = self._prefix_basis.get((shape, plan.estimator, released, hash(prefixes.tobytes())),
                                       lambda: prefix_basis(shape, plan.estimator, released, prefixes))
        variances = prefix_variances_from_basis(shape, plan.estimator, basis, plan.level_variances(), prefixes,
                                                plan.privacy.root_public)
        return noise_margin(np.sqrt(variances))

    # --- Rameshwar, Tandon & Sharma's best tree (planner.paper_best_shape, with its O(#shapes·h) scan cached per K)
    def paper_best_shape(self, bins: int, privacy: PrivacySpec) -> TreeShape:
        """Same choice as :func:`dpgui.core.planner.paper_best_shape` (least
        :func:`~dpgui.core.planner.paper_error` over :func:`candidate_shapes`), with the per-shape
        covering totals cached per K: a vectorised scan (under equal budgets every noised level has
        the same variance), then the planner's own :func:`paper_error` on the near-ties so that even
        ties broken by rounding come out the same."""
        root_public, first = privacy.root_public, privacy.first_noised_level()

        def make() -> tuple[list[TreeShape], np.ndarray, np.ndarray]:
            shapes = candidate_shapes(bins)
            sums = []
            for shape in shapes:
                digit_totals = self.coefficients(shape, Estimator.COVERING, (True,) * (shape.height + 1), root_public).levels
                sums.append(float(digit_totals[first:].sum()))
            levels = np.array([s.height + 1 - first for s in shapes])
            return shapes, np.array(sums), levels

        shapes, sums, levels = self._candidates.get((bins, root_public), make)
        sensitivity = privacy.sensitivity
        per_level = {n: float(LAPLACE.budget_variances(np.array(privacy.epsilon / n), sensitivity))
                     for n in np.unique(levels).tolist()}
        values = sums * np.array([per_level[n] for n in levels.tolist()])
        near = np.flatnonzero(values <= values.min() * (1 + 1e-9))
        best: tuple[int, float] | None = None
        for i in near.tolist():
            value = paper_error(shapes[i], privacy)
            if best is None or value < best[1]:
                best = (i, value)
        assert best is not None
        return shapes[best[0]]

    def baseline_plan(self, name: str, bins: int, privacy: PrivacySpec) -> Plan:
        """The paper's reference mechanisms: equal budgets, covering sum."""
        def make() -> Plan:
            if name == "hist":
                shape = TreeShape(bins, (bins,))
            elif name == "binary":
                shape = TreeShape.uniform(bins, 2)
            elif name == "paper_best":
                shape = self.paper_best_shape(bins, privacy)
            else:
                raise ValueError(f"unknown baseline {name!r}")
            return Plan(shape, privacy, equal_budgets(shape, privacy), Estimator.COVERING)
        return self._plans.get((name, bins, privacy), make)

    def baseline_rms(self, name: str, bins: int, privacy: PrivacySpec) -> float:
        def make() -> float:
            plan = self.baseline_plan(name, bins, privacy)
            return self.rms(plan.shape, privacy, plan.level_budgets, Estimator.COVERING)
        return self._rms.get((name, bins, privacy), make)

    def baseline_prefix_margins(self, name: str, bins: int, privacy: PrivacySpec, prefixes: np.ndarray) -> np.ndarray:
        key = ("prefix", name, bins, privacy, hash(prefixes.tobytes()))
        return self._margins.get(key, lambda: self.prefix_margins(self.baseline_plan(name, bins, privacy), prefixes))

    # --- plot (b)
    def plan_epsilon_curve(self, plan: Plan, grid: np.ndarray) -> np.ndarray:
        """RMS margin of the plan with the same budget fractions at each ε of ``grid`` (at the plan's
        δ: a Gaussian plan's ρ_l are the same shares of ρ = zcdp_rho(ε, δ))."""
        out = np.empty(grid.size)
        for i, e in enumerate(grid.tolist()):
            privacy = plan.privacy.with_epsilon(e) if e != plan.privacy.epsilon else plan.privacy
            budgets = (plan.level_budgets if e == plan.privacy.epsilon
                       else split_budget(budget_total(privacy, plan.noise), plan.level_budgets))
            out[i] = self.rms(plan.shape, privacy, budgets, plan.estimator, plan.noise)
        return out

    # --- plot (c)
    def uniform_equal_curve(self, bins: int, privacy: PrivacySpec) -> tuple[np.ndarray, np.ndarray]:
        """(b, RMS margin) of the uniform trees with equal budgets and the covering sum (paper style)."""
        def make() -> tuple[np.ndarray, np.ndarray]:
            bs = self.branchings(bins, privacy.missing_leaf)
            values = []
            for b in bs:
                shape = self.uniform(bins, b, privacy.missing_leaf)
                values.append(self.rms(shape, privacy, equal_budgets(shape, privacy), Estimator.COVERING))
            return np.array(bs, dtype=float), np.array(values)
        return self._curves.get(("equal", bins, privacy), make)

    def uniform_gaussian_curve(self, bins: int, privacy: PrivacySpec) -> tuple[np.ndarray, np.ndarray]:
        """(b, RMS margin) of uniform trees with discrete Gaussian noise at the privacy's (ε, δ), δ > 0:
        GLS, with ρ split by the closed-form covering optimum (ρ_l ∝ D_l^{1/2},
        :func:`optimise_budgets`); every tree of :meth:`branchings`, no numerical tuning."""
        def make() -> tuple[np.ndarray, np.ndarray]:
            bs = self.branchings(bins, privacy.missing_leaf)
            values = []
            for b in bs:
                shape = self.uniform(bins, b, privacy.missing_leaf)
                budgets = optimise_budgets(shape, privacy, Estimator.COVERING, Objective.TOTAL, noise=Noise.GAUSSIAN)
                values.append(self.rms(shape, privacy, budgets, Estimator.GLS, Noise.GAUSSIAN))
            return np.array(bs, dtype=float), np.array(values)
        return self._curves.get((Noise.GAUSSIAN, bins, privacy), make)

    def optimised_branchings(self, bins: int, missing_leaf: bool = False) -> list[int]:
        """The factors b of plot (c)'s GLS curve: at most GLS_BRANCHINGS, log-spaced."""
        return self._branchings.get(("gls_b", bins, missing_leaf),
                                lambda: log_spaced_subset(self.branchings(bins, missing_leaf), GLS_BRANCHINGS))

    def missing_optimisations(self, bins: int, privacy: PrivacySpec) -> list[int]:
        """Factors b of the GLS curve whose budgets are not yet tuned for exactly this privacy."""
        return [b for b in self.optimised_branchings(bins, privacy.missing_leaf) if (bins, b, privacy) not in self._tuned.data]

    def uniform_optimised_curve(self, bins: int, privacy: PrivacySpec,
                                compute: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(b, RMS margin) of uniform trees with GLS and tuned budgets (see :meth:`optimised_budgets`).

        With ``compute=False`` nothing is optimised: factors with tuned budgets use them, the others
        use their ε = 1 fractions scaled to ε when those are known, and factors with neither are
        left out (each optimisation is a numerical search; the widget runs them on workers,
        :meth:`refine`)."""
        def curve(allow_compute: bool) -> tuple[np.ndarray, np.ndarray]:
            bs, values = [], []
            for b in self.optimised_branchings(bins, privacy.missing_leaf):
                budgets = self.optimised_budgets(bins, b, privacy, allow_compute)
                if budgets is not None:
                    bs.append(b)
                    values.append(self.rms(self.uniform(bins, b, privacy.missing_leaf), privacy, budgets, Estimator.GLS))
            return np.array(bs, dtype=float), np.array(values)

        if compute or not self.missing_optimisations(bins, privacy):
            return self._curves.get((Estimator.GLS, bins, privacy), lambda: curve(True))
        return curve(False)

    def reference_fractions(self, bins: int, b: int, neighbours: str, compute: bool = True) -> tuple[float, ...] | None:
        """GLS budget fractions of the uniform tree optimised once at ε = 1, L = 1 (reused for every ε)."""
        key = (bins, b, neighbours)
        if not compute and key not in self._fractions.data:
            return None
        unit = PrivacySpec(1.0, check_neighbours(neighbours), 1)
        shape = self.uniform(bins, b, unit.missing_leaf)
        return self._fractions.get(key, lambda: optimise_budgets(shape, unit, Estimator.GLS, Objective.TOTAL))

    def optimised_budgets(self, bins: int, b: int, privacy: PrivacySpec,
                          compute: bool = True) -> tuple[float, ...] | None:
        """Tuned GLS budgets of the uniform tree with factor b: the better (smaller exact total error)
        of the ε = 1 fractions scaled to ε and :func:`optimise_budgets` run at this very ε. Both
        are kept because neither always wins: at ε far from 1 the discrete Laplace changes the
        optimum, and the optimiser does not always converge (it can return a split up to ~2.5×
        worse than the rescaled one, e.g. K = 65,536, b = 2, ε = 0.05). With ``compute=False``
        returns the tuned budgets if known, else the rescaled fractions if known, else None."""
        key = (bins, b, privacy)
        if key in self._tuned.data or compute:
            def tune() -> tuple[float, ...]:
                shape = self.uniform(bins, b, privacy.missing_leaf)
                fractions = self.reference_fractions(bins, b, privacy.neighbours)
                assert fractions is not None  # computed when not known yet
                scaled = split_budget(privacy.epsilon, fractions)
                fresh = optimise_budgets(shape, privacy, Estimator.GLS, Objective.TOTAL)
                return min((scaled, fresh), key=lambda eps: self.total_sq_error(shape, privacy, eps, Estimator.GLS))
            return self._tuned.get(key, tune)
        fractions = self.reference_fractions(bins, b, privacy.neighbours, compute=False)
        return None if fractions is None else split_budget(privacy.epsilon, fractions)

    def draw_prefixes(self, bins: int) -> np.ndarray:
        return self._prefixes.get(bins, lambda: draw_prefixes(bins))

    def branchings(self, bins: int, missing_leaf: bool = False) -> list[int]:
        """Plot (c)'s factors for the tree's real leaves (K, or K + 1 with the change model's missing leaf)."""
        return self._branchings.get(("all", bins, missing_leaf), lambda: uniform_branchings(bins + int(missing_leaf)))

    def uniform(self, bins: int, b: int, missing_leaf: bool = False) -> TreeShape:
        return self._shapes.get((bins, b, missing_leaf), lambda: TreeShape.uniform(bins, b, missing_leaf))
