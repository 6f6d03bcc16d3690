"""Benchmark: final CDF error of our Gaussian, Laplace and `auto` plans vs OpenDP's Gaussian b-ary tree.

For K ∈ {256, 4096, 65536}, ε ∈ {0.1, 1}, δ ∈ {1e-6, 1e-9} and both neighbour models, prints the final
error -- the total squared error Σ_j (Ĉ_j − C_j)² (counts²) over the K CDF points the user gets, after
the consistency step -- of

* G: the best Gaussian plan, ``auto_plan(K, PrivacySpec(ε, nb, 1, δ), noise="gaussian")``;
* L: the best Laplace plan (``noise="laplace"``; δ unused, so one run serves both δ);
* auto: ``noise="auto"`` (its plan is one of the two above -- checked -- and shares that plan's runs);
* OpenDP: ``make_b_ary_tree`` (branching ``choose_branching_factor(K)``) >> ``make_gaussian`` (discrete
  Gaussian, zCDP) >> ``make_zCDP_to_approxDP`` >> ``make_fix_delta(δ)``, the scale found by
  ``binary_search_param`` so that OpenDP's own privacy map gives (ε, δ), then
  ``make_consistent_b_ary_tree`` and cumulative sums of its K leaves.

Our releases use ℓ2 consistency (``dpgui.core.simulation.simulate``: the real release pipeline, seeded
PCG64 noise). OpenDP draws from its own (unseeded) generator.

Neighbour models in OpenDP terms: the histogram's counts under ``l2_distance(T=int)`` (the only metric
its b-ary tree and integer Gaussian compose on). addremove: d_in = 1. change (one record moves between
bins): L2 distance √2, which the integer metric states as d_in = 2. OpenDP's tree map multiplies d_in by
the number of layers h (its bound for L1 and L2 alike). OpenDP noises the root: it does not treat N as
public under change, as we do. For information, ``OpenDP@Δ₂`` is the same tree calibrated (with OpenDP's
zCDP→(ε, δ) map) to the tree's exact L2 sensitivity, Δ₂² = 2(h−1) (change; the root does not move) or h
(addremove); its error is the measured OpenDP error rescaled by the ratio of the two noise variances
(the consistency step is linear, and a discrete Gaussian with σ ≥ 1 has variance σ² to < 1e-8).

Targets per cell: T1 ``auto`` ≤ min(G, L) + 2 SE (SE of the difference); T2 ``auto`` ≤ 0.5 × OpenDP.

Trials: 200 per plan at K = 256, 100 at 4096, 30 at 65536; OpenDP 200, 60, 20 (its exact sampler takes
~1.1 s per release at K = 65536); ``--quick`` divides them by 5. About 7 minutes on 2 idle cores.

Data: one seeded log-normal sample of N = 500,000 records on [0, 6) (clipped into the last bin),
binned into K equal bins; the same counts for every method.

Run:  PYTHONPATH=. python benchmarks/bench_gaussian.py [--quick] [--check]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpgui.core.plan import Plan, PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.core.simulation import simulate

BINS = (256, 4096, 65536)
EPSILONS = (0.1, 1.0)
DELTAS = (1e-6, 1e-9)
NEIGHBOURS = ("change", "addremove")
TRIALS = {256: 200, 4096: 100, 65536: 30}  # our releases per plan
OPENDP_TRIALS = {256: 200, 4096: 60, 65536: 20}  # OpenDP's exact sampler: ~1.1 s per release at K = 65536
QUICK_DIVISOR = 5
MIN_TRIALS = 6
N_RECORDS = 500_000
UPPER = 6.0
SEED = 20261124
T2_RATIO = 0.5


@dataclass(frozen=True)
class Estimate:
    """Monte-Carlo mean of the final total squared error (counts²), its standard error, the trial count."""

    mean: float
    se: float
    trials: int

    def scaled(self, factor: float) -> Estimate:
        return Estimate(self.mean * factor, self.se * factor, self.trials)

    def text(self) -> str:
        return f"{self.mean:9.3e}±{self.se:7.1e}"


def estimate(values: np.ndarray) -> Estimate:
    return Estimate(float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size)), int(values.size))


def lognormal_counts(bins: int) -> np.ndarray:
    """The fixed histogram: N log-normal(0, 0.75) records on [0, UPPER), K equal bins, the tail clipped in."""
    values = np.random.default_rng(SEED).lognormal(0.0, 0.75, N_RECORDS)
    index = np.clip(np.floor(values / UPPER * bins), 0, bins - 1).astype(np.int64)
    return np.bincount(index, minlength=bins).astype(np.int64)


def ours(plan: Plan, counts: np.ndarray, trials: int, seed: int) -> Estimate:
    """Final error of our release of ``plan`` (ℓ2 consistency) over ``trials`` seeded runs."""
    return estimate(simulate(plan, counts, trials, "l2", seed).counts["sq_l2"])


@dataclass(frozen=True)
class OpenDPResult:
    estimate: Estimate
    branching: int
    layers: int
    scale: float
    tight_scale: float

    @property
    def tight(self) -> Estimate:
        """The error rescaled to the tree's exact L2 sensitivity (see the module docstring)."""
        return self.estimate.scaled((self.tight_scale / self.scale) ** 2)


def opendp_tree(counts: np.ndarray, epsilon: float, delta: float, neighbours: str, trials: int) -> OpenDPResult:
    """OpenDP's Gaussian b-ary tree with its consistency step at (ε, δ): final error over ``trials`` runs."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    bins = int(counts.size)
    branching = int(dp.t.choose_branching_factor(bins))
    domain = dp.vector_domain(dp.atom_domain(T=int))
    tree = dp.t.make_b_ary_tree(domain, dp.l2_distance(T=int), leaf_count=bins, branching_factor=branching)
    d_in = 2 if neighbours == "change" else 1  # change: L2 distance √2, stated in the integer metric as 2
    layers = int(tree.map(1))

    def chain(scale: float) -> Any:
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(tree >> dp.m.then_gaussian(scale=scale)), delta)

    scale = float(dp.binary_search_param(chain, d_in=d_in, d_out=(epsilon, delta)))
    spent = chain(scale).map(d_in)  # OpenDP's own (ε, δ) for this scale
    assert spent[0] <= epsilon and spent[1] <= delta, spent

    l2_squared = 2 * (layers - 1) if neighbours == "change" else layers

    def tight_chain(scale: float) -> Any:
        gauss = dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=scale)
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(gauss), delta)

    tight_scale = float(dp.binary_search_param(tight_chain, d_in=math.sqrt(l2_squared), d_out=(epsilon, delta)))

    measure = tree >> dp.m.then_gaussian(scale=scale)
    post = dp.t.make_consistent_b_ary_tree(branching)
    truth = np.cumsum(counts).astype(np.float64)
    data = [int(c) for c in counts]
    errors = np.empty(trials)
    for trial in range(trials):
        noisy = measure(data)
        leaves = np.asarray(post(noisy), dtype=np.float64)[:bins]
        errors[trial] = float(np.sum((np.cumsum(leaves) - truth) ** 2))
    return OpenDPResult(estimate(errors), branching, layers, scale, tight_scale)


@dataclass(frozen=True)
class Cell:
    """One (K, ε, δ, neighbours) cell: our three plans and OpenDP's tree."""

    bins: int
    epsilon: float
    delta: float
    neighbours: str
    gaussian_plan: Plan
    gaussian: Estimate
    laplace_plan: Plan
    laplace: Estimate
    auto_noise: str
    auto: Estimate
    opendp: OpenDPResult

    @property
    def best_ours(self) -> Estimate:
        return min(self.gaussian, self.laplace, key=lambda e: e.mean)

    @property
    def t1_excess(self) -> float:
        """(auto − min(G, L)) in standard errors of the difference (0 when auto is the better plan's runs)."""
        best = self.best_ours
        if self.auto is best:
            return 0.0
        return (self.auto.mean - best.mean) / math.hypot(self.auto.se, best.se)

    @property
    def t1(self) -> bool:
        return self.t1_excess <= 2.0

    @property
    def ratio_min(self) -> float:
        return self.auto.mean / self.best_ours.mean

    def ratio_to(self, other: Estimate) -> tuple[float, float]:
        """auto / other and its standard error (delta method, independent runs)."""
        ratio = self.auto.mean / other.mean
        return ratio, ratio * math.hypot(self.auto.se / self.auto.mean, other.se / other.mean)

    @property
    def t2(self) -> bool:
        return self.ratio_to(self.opendp.estimate)[0] <= T2_RATIO


def branching_label(plan: Plan) -> str:
    """The branching, runs compressed: (3, 3, 2, 2, 2) -> "3^2x2^3"."""
    parts: list[str] = []
    factors = list(plan.shape.branching)
    i = 0
    while i < len(factors):
        j = i
        while j < len(factors) and factors[j] == factors[i]:
            j += 1
        parts.append(f"{factors[i]}^{j - i}" if j - i > 1 else str(factors[i]))
        i = j
    return "x".join(parts)


def seed_for(*key: object) -> int:
    """A fixed seed per run, independent of Python's hash randomisation."""
    return SEED + zlib.crc32(" ".join(map(str, key)).encode())


def same_plan(a: Plan, b: Plan) -> bool:
    return a.noise == b.noise and a.shape == b.shape and a.level_budgets == b.level_budgets


def run_cell(bins: int, counts: np.ndarray, epsilon: float, delta: float, neighbours: str, trials: int,
             opendp_trials: int, laplace_cache: dict[tuple[int, float, str], tuple[Plan, Estimate]]) -> Cell:
    privacy = PrivacySpec(epsilon, neighbours, 1, delta)
    auto = auto_plan(bins, privacy, noise="auto")
    # auto returns the best plan of the noise it picks: that plan is G (or L), not planned twice
    gaussian_plan = auto if auto.noise == "gaussian" else auto_plan(bins, privacy, noise="gaussian")
    gaussian = ours(gaussian_plan, counts, trials, seed_for(bins, epsilon, delta, neighbours, "gaussian"))
    key = (bins, epsilon, neighbours)
    if key not in laplace_cache:  # δ does not enter a Laplace plan: one run serves both δ
        laplace_plan = auto if auto.noise == "laplace" else auto_plan(bins, privacy, noise="laplace")
        laplace_cache[key] = (laplace_plan, ours(laplace_plan, counts, trials, seed_for(*key, "laplace")))
    laplace_plan, laplace = laplace_cache[key]
    if same_plan(auto, gaussian_plan):
        auto_estimate = gaussian
    elif same_plan(auto, laplace_plan):
        auto_estimate = laplace
    else:  # not expected: the Laplace plan does not depend on δ
        print(f"  note: auto's plan differs from both best plans at K={bins} ε={epsilon} δ={delta} {neighbours}")
        auto_estimate = ours(auto, counts, trials, seed_for(bins, epsilon, delta, neighbours, "auto"))
    theirs = opendp_tree(counts, epsilon, delta, neighbours, opendp_trials)
    return Cell(bins, epsilon, delta, neighbours, gaussian_plan, gaussian, laplace_plan, laplace, auto.noise,
                auto_estimate, theirs)


HEADER = (f"{'K':>6} {'ε':>4} {'δ':>6} {'nb':>9} {'T':>7} | {'Gaussian (G)':>17} {'branching':<12}| "
          f"{'Laplace (L)':>17} {'branching':<12}| {'auto':>4} | {'OpenDP tree':>17} {'b':>3} {'h':>2} | "
          f"{'auto/min':>8} {'auto/OpenDP':>13} | {'T1':<4} {'T2':<4} | {'OpenDP@Δ₂':>9} {'auto/@Δ₂':>8}")


def row(cell: Cell) -> str:
    ratio, ratio_se = cell.ratio_to(cell.opendp.estimate)
    tight_ratio = cell.ratio_to(cell.opendp.tight)[0]
    return (f"{cell.bins:>6} {cell.epsilon:>4g} {cell.delta:>6.0e} {cell.neighbours:>9} "
            f"{f'{cell.gaussian.trials}/{cell.opendp.estimate.trials}':>7} | "
            f"{cell.gaussian.text()} {branching_label(cell.gaussian_plan):<12}| "
            f"{cell.laplace.text()} {branching_label(cell.laplace_plan):<12}| {cell.auto_noise[0].upper():>4} | "
            f"{cell.opendp.estimate.text()} {cell.opendp.branching:>3} {cell.opendp.layers:>2} | "
            f"{cell.ratio_min:>8.3f} {ratio:>6.3f}±{ratio_se:<6.3f} | "
            f"{'PASS' if cell.t1 else 'MISS':<4} {'PASS' if cell.t2 else 'MISS':<4} | "
            f"{cell.opendp.tight.mean:>9.3e} {tight_ratio:>8.3f}")


def summary(cells: list[Cell]) -> list[str]:
    def name(cell: Cell) -> str:
        return f"K={cell.bins} ε={cell.epsilon:g} δ={cell.delta:.0e} {cell.neighbours}"

    lines = []
    t1 = [c for c in cells if not c.t1]
    lines.append(f"T1 (auto ≤ better of G and L + 2 SE): {len(cells) - len(t1)}/{len(cells)} cells pass")
    for c in t1:
        lines.append(f"  MISS {name(c)}: auto ({c.auto_noise}) / min = {c.ratio_min:.3f}, "
                     f"{c.t1_excess:.1f} SE above the better plan")
    closest = max(cells, key=lambda c: c.t1_excess)
    lines.append(f"  largest auto / min: {closest.ratio_min:.3f}, {closest.t1_excess:.1f} SE ({name(closest)}, "
                 f"auto chose {closest.auto_noise} by the exact projection before consistency)")
    t2 = [c for c in cells if not c.t2]
    lines.append(f"T2 (auto ≤ {T2_RATIO} × OpenDP's Gaussian tree): {len(cells) - len(t2)}/{len(cells)} cells pass")
    for c in t2:
        ratio = c.ratio_to(c.opendp.estimate)[0]
        lines.append(f"  MISS {name(c)}: auto / OpenDP = {ratio:.3f}, {ratio / T2_RATIO:.2f}× the target")
    worst = max(cells, key=lambda c: c.ratio_to(c.opendp.estimate)[0])
    lines.append(f"  largest auto / OpenDP: {worst.ratio_to(worst.opendp.estimate)[0]:.3f} ({name(worst)})")
    tight = [c for c in cells if c.ratio_to(c.opendp.tight)[0] > T2_RATIO]
    lines.append(f"For information, against OpenDP@Δ₂ (its tree at the exact L2 sensitivity): "
                 f"{len(cells) - len(tight)}/{len(cells)} cells ≤ {T2_RATIO}×")
    for c in tight:
        lines.append(f"  above {T2_RATIO}: {name(c)}: auto / OpenDP@Δ₂ = {c.ratio_to(c.opendp.tight)[0]:.3f}")
    chose = {noise: sum(c.auto_noise == noise for c in cells) for noise in ("gaussian", "laplace")}
    lines.append(f"auto chose Gaussian in {chose['gaussian']} cells, Laplace in {chose['laplace']}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"trials / {QUICK_DIVISOR} (a smoke run)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)
    try:
        from importlib.metadata import version

        import opendp.prelude  # noqa: F401  # the comparison needs it
    except ImportError:
        print("OpenDP not installed: this benchmark compares against it (pip install opendp)")
        return 1

    def fewer(table: dict[int, int]) -> dict[int, int]:
        return {k: max(MIN_TRIALS, t // QUICK_DIVISOR) if args.quick else t for k, t in table.items()}

    trials, opendp_trials = fewer(TRIALS), fewer(OPENDP_TRIALS)
    started = time.perf_counter()
    for line in (
        "Final error Σ_j (Ĉ_j − C_j)² (counts²) over the K CDF points after the consistency step, mean ± SE over "
        f"T trials; OpenDP {version('opendp')}.",
        f"Data: seeded log-normal(0, 0.75), N = {N_RECORDS:,} records on [0, {UPPER:g}), K equal bins (seed {SEED}).",
        f"Trials T per K (ours/OpenDP): {', '.join(f'{k}: {trials[k]}/{opendp_trials[k]}' for k in BINS)}"
        f"{' (--quick)' if args.quick else ''}.",
        "Ours: ℓ2 consistency, GLS, objective total. L is δ-free (one run per K, ε, nb serves both δ);",
        "  auto (G or L: the noise it picked) shares the runs of that plan.",
        "OpenDP: make_b_ary_tree (b = choose_branching_factor(size_guess=K), h layers) >> make_gaussian (discrete,",
        "  zCDP) >> zCDP→(ε, δ); the scale by binary_search_param on OpenDP's own map: d_in = 1 (addremove) or 2",
        "  (change: L2 distance √2, stated as 2 in its integer L2 metric), its tree map d_in·h.",
        "  OpenDP noises the root: it does not treat N as public under change, as we do.",
        "  make_consistent_b_ary_tree; its CDF = cumulative sums of its K leaves.",
        f"T1: auto ≤ min(G, L) + 2 SE of the difference.  T2: auto ≤ {T2_RATIO} × OpenDP.",
        "OpenDP@Δ₂ (information): OpenDP's error rescaled to the scale its zCDP map gives at the tree's exact L2",
        "  sensitivity (√(2(h−1)) change, √h addremove); auto/@Δ₂ = auto / OpenDP@Δ₂.",
    ):
        print(line)
    print()
    print(HEADER)
    print("-" * len(HEADER))
    cells: list[Cell] = []
    laplace_cache: dict[tuple[int, float, str], tuple[Plan, Estimate]] = {}
    for bins in BINS:
        counts = lognormal_counts(bins)
        for epsilon in EPSILONS:
            for delta in DELTAS:
                for neighbours in NEIGHBOURS:
                    cell = run_cell(bins, counts, epsilon, delta, neighbours, trials[bins], opendp_trials[bins],
                                    laplace_cache)
                    cells.append(cell)
                    print(row(cell), flush=True)
    print()
    for line in summary(cells):
        print(line)
    print(f"total time {time.perf_counter() - started:.0f} s")
    missed = any(not (c.t1 and c.t2) for c in cells)
    return 1 if missed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
