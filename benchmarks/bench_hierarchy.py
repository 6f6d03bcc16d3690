"""Benchmark: counts over a categorical hierarchy -- level budgets, consistency, speed, Ghazi et al. (2023).

Part 1 -- Ko, Ziani & Fioretto (2025) on the bundled sample (``resources/sample/flight_routes.parquet``, 336,776 flights
from NYC in 2013; levels dest_tzone → dest → route: 1 + 9 + 105 + 224 nodes). For ε ∈ {0.1, 1}, both
neighbour models (L = 1 record per person), discrete-Laplace noise, equal level weights, allocation
uniform and optimal (Ko, Ziani & Fioretto's program 6) and consistency none, topdown and gls: per level bias²,
variance and MSE (summed over the level's nodes, flights²), empirical (``simulate_hierarchy``: seeded
batches of releases, the SE of the MSE from the batch means) beside projected (``project_hierarchy``:
exact closed form for "none", a seeded Monte Carlo over the prior for topdown/gls, as the engine does).
The total weighted MSE (eq. 5) and the ratio optimal/uniform with its SE (delta method, independent runs).
Two priors for the optimiser:

* "own counts": the sample's own counts, as in Ko, Ziani & Fioretto's experiments (the optimiser sees the true
  counts: the opted-in "counts from the data" case). Target: optimal < uniform in every cell.
* "first half x 2" (the honest variant, for information): the counts of the same routes in January-June
  2013, doubled (an earlier period as public prior); the release is of the whole year. The month comes
  from ``flights.parquet``, which holds the same flights in the same row order (checked on origin and
  carrier). Totals and ratios only.

Part 2 -- speed: a synthetic 4-level hierarchy, fan-outs 10 × 10 × 10 × 100 (10⁵ leaves), leaf counts
Poisson(lognormal(2, 1.5)) (seeded). ``plan_hierarchy`` (optimal allocation, prior = the counts,
consistency auto, noise auto) target < 1 s; ``release_hierarchy`` (topdown and gls, SecureRandom as a
real release; Laplace, and at δ > 0 also Gaussian and Ghazi et al.'s multiplicative mechanism) target < 2 s.
Median of a few runs, in process, after a warm-up.

Part 3 -- Ghazi et al. (2023): α-mRMSE (records) of the multiplicative mechanism (Algorithms 1-2,
``dpgui.core.counting_trees``) and of the Gaussian baseline (Corollary 2.7, uniform ρ per level,
``dpgui.core.counting_trees_accuracy``) on the
sample and on a synthetic binary tree of depth d = 8 (levels 0..7, 128 leaves), for a few (α, ε, δ):
projected at the tree's own counts and worst case over data (no prior), and empirical from seeded
releases (per-node RMSE_α over the trials, max over nodes). No target; it says which is better.

``--quick``: fewer trials and repeats (about a minute). ``--check``: exit 1 if a target is missed.

Run:  PYTHONPATH=. python benchmarks/bench_hierarchy.py [--quick] [--check]
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import statistics
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
from timing import median_time

from dpgui.core.counting_trees_accuracy import projected_alpha_mrmse, simulate_alpha_mrmse
from dpgui.core.hierarchy import (
    Hierarchy, HierarchyPlan, HierarchyProjection, LevelProjection, plan_hierarchy, project_hierarchy,
    release_hierarchy, simulate_hierarchy,
)
from dpgui.core.noise import SecureRandom
from dpgui.core.plan import PrivacySpec
from dpgui.data.hierarchy import HIERARCHY_SAMPLE_LEVELS, count_paths, hierarchy_sample_path

T = TypeVar("T")

SEED = 20261125
EPSILONS = (0.1, 1.0)
NEIGHBOURS = ("change", "addremove")
ALLOCATIONS = ("uniform", "optimal")
CONSISTENCY = ("none", "topdown", "gls")
BATCHES = {"full": (20, 20), "quick": (8, 10)}  # empirical: simulate_hierarchy batches × trials per cell (part 1)
PROJECTION_TRIALS = {"full": 200, "quick": 50}  # project_hierarchy's Monte Carlo (topdown/gls)

FANOUTS = (10, 10, 10, 100)
PLAN_TARGET_S = 1.0
RELEASE_TARGET_S = 2.0
MULTIPLICATIVE_ALPHA = 0.5
REPEATS = {"full": 5, "quick": 3}

GHAZI_CASES = (  # (neighbours, α, ε, δ)
    ("change", 0.5, 1.0, 1e-6),
    ("change", 0.5, 1.0, 1e-9),
    ("change", 0.25, 1.0, 1e-6),
    ("change", 0.5, 0.1, 1e-6),
    ("change", 0.9, 10.0, 1e-3),
    ("addremove", 0.5, 1.0, 1e-6),
)
GHAZI_TRIALS = {"full": {"gaussian": 200, "multiplicative": 30}, "quick": {"gaussian": 50, "multiplicative": 6}}
BINARY_DEPTH = 8


def seed_for(*key: object) -> int:
    """A fixed seed per run, independent of Python's hash randomisation."""
    return SEED + zlib.crc32(" ".join(map(str, key)).encode())


def fmt(x: float) -> str:
    return f"{x:9.3e}"


# ----------------------------------------------------------------------------------------------
# Part 1: Ko, Ziani & Fioretto (2025) on the sample
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    tree: Hierarchy
    leaf: np.ndarray  # true leaf counts (flights), the tree's leaf order
    truth: tuple[np.ndarray, ...]  # counts of levels 0..L
    half_prior: tuple[np.ndarray, ...] | None  # 2 × the January-June counts, levels 0..L
    half_note: str


def load_sample() -> Sample:
    path = hierarchy_sample_path()
    counted = count_paths(path, HIERARCHY_SAMPLE_LEVELS)
    tree = Hierarchy.from_paths(counted.level_names, counted.paths)
    leaf = np.zeros(tree.level_sizes[-1], dtype=np.int64)
    np.add.at(leaf, tree.leaf_index(counted.paths), counted.counts)
    half, note = first_half_prior(tree, path)
    return Sample(tree, leaf, tree.aggregate(leaf), half, note)


def first_half_prior(tree: Hierarchy, path: object) -> tuple[tuple[np.ndarray, ...] | None, str]:
    """2 × the counts of January-June 2013 on the sample's tree (routes without such flights: 0)."""
    levels = list(HIERARCHY_SAMPLE_LEVELS)
    routes = pq.read_table(str(path), columns=[*levels, "origin", "carrier"])
    flights_path = hierarchy_sample_path().parent / "flights.parquet"
    if not flights_path.exists():
        return None, "flights.parquet (the month) is absent: no first-half prior"
    flights = pq.read_table(flights_path, columns=["origin", "carrier", "month"])
    if (routes.num_rows != flights.num_rows or not routes["origin"].equals(flights["origin"])
            or not routes["carrier"].equals(flights["carrier"])):
        return None, "flights.parquet is not in flight_routes.parquet's row order: no first-half prior"
    first = routes.select(levels).append_column("month", flights["month"]).filter(
        pc.less_equal(flights["month"], 6))
    grouped = first.group_by(levels).aggregate([([], "count_all")])
    paths = list(zip(*(grouped[c].to_pylist() for c in levels)))
    leaf = np.zeros(tree.level_sizes[-1], dtype=np.int64)
    leaf[tree.leaf_index(paths)] = 2 * np.asarray(grouped["count_all"].to_numpy(), dtype=np.int64)
    absent = int(np.sum(leaf == 0))
    note = (f"{first.num_rows:,} flights in January-June (row order checked on origin and carrier), doubled; "
            f"{absent} of the {leaf.size} routes have none (prior 0)")
    return tree.aggregate(leaf), note


@dataclass(frozen=True)
class Empirical:
    """Per level (summed over nodes): bias² (unbiased), variance (= MSE − bias²), MSE and its SE; the total
    weighted MSE (eq. 5) and its SE; from ``batches`` seeded ``simulate_hierarchy`` runs of ``per_batch``
    trials each (the batches are independent: SE = sd of the batch means / √batches)."""

    levels: tuple[LevelProjection, ...]
    mse_se: tuple[float, ...]
    total: float
    total_se: float
    trials: int


def empirical(tree: Hierarchy, leaf: np.ndarray, plan: HierarchyPlan, batches: int, per_batch: int,
              seed: int) -> Empirical:
    """``batches`` × ``per_batch`` seeded releases through ``simulate_hierarchy`` (seeds seed, seed+1, …).

    A batch's bias² is simulate_hierarchy's estimate Σ (mean error² − s²/n) (unbiased, but clamped at 0 per
    level, so slightly high where the true bias² is near 0); it is averaged over the batches."""
    runs = [simulate_hierarchy(tree, leaf, plan, trials=per_batch, seed=seed + b) for b in range(batches)]
    mse = np.array([[lv.mse for lv in run.levels] for run in runs])  # batches × levels
    bias2 = np.array([[lv.bias2 for lv in run.levels] for run in runs])
    over = np.array([[lv.over_sq for lv in run.levels] for run in runs])  # the MSE split by the error's sign
    under = np.array([[lv.under_sq for lv in run.levels] for run in runs])
    totals = np.array([run.weighted_mse for run in runs])
    levels = tuple(LevelProjection(ell, lv.nodes, float(bias2[:, ell].mean()),
                                   float(mse[:, ell].mean() - bias2[:, ell].mean()), float(mse[:, ell].mean()),
                                   float(over[:, ell].mean()), float(under[:, ell].mean()))
                   for ell, lv in enumerate(runs[0].levels))
    root_batches = math.sqrt(batches)
    return Empirical(levels, tuple(float(x) for x in mse.std(axis=0, ddof=1) / root_batches), float(totals.mean()),
                     float(totals.std(ddof=1) / root_batches), batches * per_batch)


@dataclass(frozen=True)
class Run:
    plan: HierarchyPlan
    empirical: Empirical
    projected: HierarchyProjection


@dataclass(frozen=True)
class Ratio:
    """optimal / uniform total weighted MSE for one (prior, ε, neighbours, consistency)."""

    prior: str
    epsilon: float
    neighbours: str
    consistency: str
    ratio: float
    se: float
    projected: float

    @property
    def passed(self) -> bool:
        return self.ratio < 1.0

    def text(self) -> str:
        below = (1.0 - self.ratio) / self.se if self.se > 0 else math.inf
        return (f"{self.prior:<15} {self.epsilon:>4g} {self.neighbours:>9} {self.consistency:>8} | "
                f"{self.ratio:6.3f} ± {self.se:5.3f} ({below:5.1f} SE below 1) | {self.projected:6.3f} | "
                f"{'PASS' if self.passed else 'MISS'}")


def ratio_of(optimal: Empirical, uniform: Empirical) -> tuple[float, float]:
    ratio = optimal.total / uniform.total
    return ratio, ratio * math.hypot(optimal.total_se / optimal.total, uniform.total_se / uniform.total)


def run_group(sample: Sample, prior_name: str, prior: tuple[np.ndarray, ...], epsilon: float, neighbours: str,
              batches: tuple[int, int], projection_trials: int) -> dict[tuple[str, str], Run]:
    privacy = PrivacySpec(epsilon, neighbours, 1)
    source = "confidential data (opted in)" if prior_name == "own counts" else "prior file"
    runs = {}
    for consistency, allocation in itertools.product(CONSISTENCY, ALLOCATIONS):
        plan = plan_hierarchy(sample.tree.level_sizes, privacy, noise="laplace", allocation=allocation,
                              consistency=consistency, prior_levels=prior, prior_source=source, hierarchy=sample.tree)
        key = (prior_name, epsilon, neighbours, consistency, allocation)
        emp = empirical(sample.tree, sample.leaf, plan, *batches, seed_for(*key))
        proj = project_hierarchy(plan, prior, trials=projection_trials, seed=seed_for(*key, "projection"),
                                 hierarchy=sample.tree)
        runs[(consistency, allocation)] = Run(plan, emp, proj)
    return runs


def budgets_text(plan: HierarchyPlan) -> str:
    return "[" + ", ".join(f"{b:.4f}" for b in plan.level_budgets) + "]"


LEVEL_HEADER = (f"  {'consistency':<11} {'allocation':<10} {'lvl':>3} {'nodes':>5} | {'emp bias²':>9} {'emp var':>9} "
                f"{'emp MSE':>9} ± {'SE':<8} | {'proj bias²':>10} {'proj var':>9} {'proj MSE':>9} | {'emp/proj':>8}")


def print_group(runs: dict[tuple[str, str], Run], per_level: bool) -> list[tuple[str, float, float, float]]:
    """Print one (prior, ε, neighbours) group; return (consistency, ratio, se, projected ratio) rows."""
    if per_level:
        print(LEVEL_HEADER)
    out = []
    for consistency in CONSISTENCY:
        for allocation in ALLOCATIONS:
            run = runs[(consistency, allocation)]
            if not per_level:
                continue
            for emp, proj, se in zip(run.empirical.levels, run.projected.levels, run.empirical.mse_se):
                level_ratio = f"{emp.mse / proj.mse:8.3f}" if proj.mse > 0 else "       -"
                print(f"  {consistency:<11} {allocation:<10} {emp.level:>3} {emp.nodes:>5} | {fmt(emp.bias2)} "
                      f"{fmt(emp.variance)} {fmt(emp.mse)} ± {se:<8.2e} | {proj.bias2:>10.3e} {fmt(proj.variance)} "
                      f"{fmt(proj.mse)} | {level_ratio}")
        uniform, optimal = runs[(consistency, "uniform")], runs[(consistency, "optimal")]
        ratio, se = ratio_of(optimal.empirical, uniform.empirical)
        projected = optimal.projected.weighted_mse / uniform.projected.weighted_mse
        print(f"  {consistency:<11} total weighted MSE: uniform {fmt(uniform.empirical.total)} ± "
              f"{uniform.empirical.total_se:.2e} (proj {fmt(uniform.projected.weighted_mse)}), optimal "
              f"{fmt(optimal.empirical.total)} ± {optimal.empirical.total_se:.2e} (proj "
              f"{fmt(optimal.projected.weighted_mse)}); optimal/uniform {ratio:.3f} ± {se:.3f} (proj {projected:.3f})")
        out.append((consistency, ratio, se, projected))
    return out


def part1(mode: str) -> list[Ratio]:
    batches, projection_trials = BATCHES[mode], PROJECTION_TRIALS[mode]
    sample = load_sample()
    print("=" * 100)
    print("Part 1: Ko, Ziani & Fioretto (2025) on the bundled sample -- bias², variance, MSE per level (flights², "
          "summed over nodes)")
    print("=" * 100)
    print(f"Tree: {' → '.join(HIERARCHY_SAMPLE_LEVELS)}, level sizes {sample.tree.level_sizes}, "
          f"N = {int(sample.truth[0][0]):,} flights.")
    print("Discrete Laplace, L = 1, equal weights (1 per level, root first), program (6) for 'optimal'.")
    print(f"Empirical: simulate_hierarchy, {batches[0]} seeded batches × {batches[1]} releases per cell (SE from the "
          "batch means); bias² is")
    print("  simulate_hierarchy's Σ (mean error² − s²/n) per batch (unbiased before its clamp at 0); variance = "
          "MSE − bias².")
    print(f"Projected: project_hierarchy on the prior -- closed form (none), Monte Carlo of {projection_trials} "
          "seeded releases of the prior (topdown, gls).")
    print("  Its bias² is the same estimate over R releases of the prior.")
    print("Under change the root is N exactly (level 0: no noise, no budget); under addremove it is noised.")
    ratios: list[Ratio] = []
    priors: list[tuple[str, tuple[np.ndarray, ...], bool]] = [("own counts", sample.truth, True)]
    if sample.half_prior is not None:
        priors.append(("first half x 2", sample.half_prior, False))
    for prior_name, prior, per_level in priors:
        print()
        if prior_name == "own counts":
            print("--- prior = the sample's own counts (as in Ko, Ziani & Fioretto's experiments; the optimiser sees the true "
                  "counts) ---")
        else:
            print("--- prior = 2 × the January-June counts (honest variant, for information; totals only) ---")
            print(f"    {sample.half_note}. Projected = on this prior; empirical = releases of the whole year.")
        for epsilon, neighbours in itertools.product(EPSILONS, NEIGHBOURS):
            runs = run_group(sample, prior_name, prior, epsilon, neighbours, batches, projection_trials)
            print()
            print(f"ε = {epsilon:g}, {neighbours}: level budgets ε_ℓ (root first) uniform "
                  f"{budgets_text(runs[('none', 'uniform')].plan)}, optimal {budgets_text(runs[('none', 'optimal')].plan)}")
            for consistency, ratio, se, projected in print_group(runs, per_level):
                ratios.append(Ratio(prior_name, epsilon, neighbours, consistency, ratio, se, projected))
    print()
    print("Optimal / uniform total weighted MSE (empirical ± SE; projected). Target: < 1 with the own-counts prior.")
    print(f"{'prior':<15} {'ε':>4} {'nb':>9} {'cons.':>8} | {'empirical':<35} | {'proj':>6} |")
    for r in ratios:
        print(r.text() + ("" if r.prior == "own counts" else "  (information)"))
    return ratios


# ----------------------------------------------------------------------------------------------
# Part 2: speed on 10^5 leaves
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Timing:
    """Median wall time (the target's measure) and median process CPU time (all threads) of the timed runs."""

    what: str
    seconds: float
    cpu: float
    target: float
    error: str = ""

    @property
    def passed(self) -> bool:
        return not self.error and self.seconds < self.target

    def text(self) -> str:
        if self.error:
            return f"  {self.what:<74} FAILED: {self.error}  MISS"
        return (f"  {self.what:<74} {self.seconds:7.3f} s (CPU {self.cpu:6.3f} s)  target < {self.target:g} s  "
                f"ratio {self.seconds / self.target:5.2f}  {'PASS' if self.passed else 'MISS'}")


def time_it(what: str, fn: Callable[[], T], repeats: int, target: float) -> tuple[Timing, T | None]:
    """:func:`timed` as a :class:`Timing`; an engine error is reported as a failed timing, not raised."""
    try:
        seconds, cpu, result = timed(fn, repeats)
    except Exception as exc:  # noqa: BLE001 -- a benchmark reports any engine failure as a miss and goes on
        return Timing(what, math.nan, math.nan, target, f"{type(exc).__name__}: {exc}"), None
    return Timing(what, seconds, cpu, target), result


def timed(fn: Callable[[], T], repeats: int) -> tuple[float, float, T]:
    """``median_time`` (wall, after a warm-up) and the median CPU time of the same timed calls."""
    cpu: list[float] = []

    def counted() -> T:
        start = time.process_time()
        result = fn()
        cpu.append(time.process_time() - start)
        return result

    seconds, result = median_time(counted, repeats)
    return seconds, statistics.median(cpu[1:]), result


def synthetic_tree(fanouts: Sequence[int]) -> Hierarchy:
    labels = [[f"{chr(97 + depth)}{i}" for i in range(f)] for depth, f in enumerate(fanouts)]
    paths = []
    for combo in itertools.product(*labels):
        paths.append(tuple("/".join(combo[: depth + 1]) for depth in range(len(combo))))
    return Hierarchy.from_paths([f"level{depth + 1}" for depth in range(len(fanouts))], paths)


def part2(mode: str) -> list[Timing]:
    repeats = REPEATS[mode]
    print()
    print("=" * 100)
    print(f"Part 2: speed on a synthetic 4-level hierarchy, fan-outs {' × '.join(map(str, FANOUTS))}")
    print("=" * 100)
    start = time.perf_counter()
    tree = synthetic_tree(FANOUTS)
    build = time.perf_counter() - start
    rng = np.random.default_rng(SEED)
    leaf = rng.poisson(rng.lognormal(2.0, 1.5, tree.level_sizes[-1])).astype(np.int64)
    prior = tree.aggregate(leaf)
    print(f"Level sizes {tree.level_sizes} ({tree.n_nodes:,} nodes), N = {int(prior[0][0]):,}, leaf counts "
          f"Poisson(lognormal(2, 1.5)), {int(np.sum(leaf == 0)):,} zero leaves (seed {SEED}).")
    print(f"Hierarchy.from_paths on the {tree.level_sizes[-1]:,} leaf paths: {build:.2f} s (information; not timed "
          "against a target).")
    print(f"Median of {repeats} runs after one warm-up, in process; releases draw from SecureRandom (a real release).")
    print("The target is wall time; the CPU time (process, all threads) is shown beside it because the machine may be "
          f"shared (load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs).")
    print("noise auto: Laplace (and at δ > 0 Gaussian) by the closed form; consistency auto: topdown vs gls by "
          "Monte Carlo on the prior.")
    print("Consistent releases include their intervals' parametric bootstrap (re-releases of the released counts).")
    timings: list[Timing] = []
    for privacy, label in ((PrivacySpec(1.0, "change", 1), "ε=1 change δ=0"),
                           (PrivacySpec(1.0, "addremove", 1, 1e-9), "ε=1 addremove δ=1e-9")):
        timing, plan = time_it(f"plan_hierarchy optimal, consistency auto, noise auto, {label}",
                               partial(plan_hierarchy, tree.level_sizes, privacy, allocation="optimal",
                                       consistency="auto", prior_levels=prior, hierarchy=tree), repeats, PLAN_TARGET_S)
        timings.append(timing)
        print(timing.text())
        if plan is not None:
            print(f"    chose {plan.noise} + {plan.consistency}; budgets {budgets_text(plan)}")
        noises = ("laplace", "gaussian") if privacy.delta > 0 else ("laplace",)
        for noise, consistency in itertools.product(noises, ("topdown", "gls")):
            fixed = plan_hierarchy(tree.level_sizes, privacy, noise=noise, allocation="optimal",
                                   consistency=consistency, prior_levels=prior)
            timing, release = time_it(f"release_hierarchy {noise} {consistency}, {label}",
                                      partial(release_hierarchy, tree, leaf, fixed, SecureRandom()), repeats,
                                      RELEASE_TARGET_S)
            timings.append(timing)
            consistent = release is None or all(
                np.array_equal(np.add.reduceat(release.counts[ell + 1], tree.child_ranges(ell)[0]), release.counts[ell])
                for ell in range(tree.n_levels))
            print(timing.text() + ("" if consistent else "  (NOT consistent!)"))
        if privacy.delta > 0:  # Ghazi et al.'s Algorithms 1-2 through release_hierarchy
            mult = plan_hierarchy(tree.level_sizes, privacy, noise="multiplicative", alpha=MULTIPLICATIVE_ALPHA)
            assert mult.multiplicative is not None
            timing, _ = time_it(f"release_hierarchy multiplicative α={MULTIPLICATIVE_ALPHA:g} "
                                f"({mult.multiplicative.rounds} rounds), {label}",
                                partial(release_hierarchy, tree, leaf, mult, SecureRandom()), repeats, RELEASE_TARGET_S)
            timings.append(timing)
            print(timing.text())
    return timings


# ----------------------------------------------------------------------------------------------
# Part 3: Ghazi et al. (2023), α-mRMSE
# ----------------------------------------------------------------------------------------------


def binary_tree(depth: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """A complete binary tree with ``depth`` levels (root first): parents and counts (leaves seeded
    Poisson(lognormal(log 1000, 2)): zeros and counts in the hundreds of thousands)."""
    parents = [np.repeat(np.arange(2 ** (j - 1), dtype=np.int64), 2) for j in range(1, depth)]
    rng = np.random.default_rng(SEED + 8)
    leaf = rng.poisson(rng.lognormal(math.log(1000.0), 2.0, 2 ** (depth - 1))).astype(np.int64)
    levels = [leaf]
    for _ in range(depth - 1):
        levels.append(np.add.reduceat(levels[-1], np.arange(0, levels[-1].size, 2)))
    return parents, levels[::-1]


def part3(mode: str) -> None:
    trials = GHAZI_TRIALS[mode]
    print()
    print("=" * 100)
    print("Part 3: Ghazi et al. (2023) -- α-mRMSE (records) of the multiplicative mechanism (M) and the Gaussian baseline (G)")
    print("=" * 100)
    sample = load_sample()
    parents, levels = binary_tree(BINARY_DEPTH)
    trees = [("sample (d=4)", list(sample.tree.parents), list(sample.truth)),
             (f"binary (d={BINARY_DEPTH})", parents, levels)]
    for name, _, lv in trees:
        print(f"{name}: level sizes {tuple(v.size for v in lv)}, N = {int(lv[0][0]):,}, smallest count "
              f"{int(min(v.min() for v in lv)):,}, largest leaf {int(lv[-1].max()):,}")
    print("proj: projected_alpha_mrmse at the tree's own counts (prior = truth); worst: no prior (an empty node per level).")
    print(f"emp: simulate_alpha_mrmse, per-node RMSE_α over T seeded releases (G: {trials['gaussian']}, "
          f"M: {trials['multiplicative']}), max over nodes (a max of noisy per-node estimates: biased up by a few %). "
          "η = 0.05. L = 1.")
    print(f"{'tree':<13} {'nb':>9} {'α':>4} {'ε':>4} {'δ':>6} {'τ_min':>9} | {'proj G':>9} {'proj M':>9} | "
          f"{'worst G':>9} {'worst M':>9} | {'emp G':>9} {'emp M':>9} | {'M/G emp':>9} | better (proj, emp)  time")
    for (name, pars, lv), (neighbours, alpha, epsilon, delta) in itertools.product(trees, GHAZI_CASES):
        privacy = PrivacySpec(epsilon, neighbours, 1, delta)
        sizes = [v.size for v in lv]
        start = time.perf_counter()
        pg = projected_alpha_mrmse(sizes, privacy, alpha, "gaussian", lv)
        pm = projected_alpha_mrmse(sizes, privacy, alpha, "multiplicative", lv)
        wg = projected_alpha_mrmse(sizes, privacy, alpha, "gaussian")
        wm = projected_alpha_mrmse(sizes, privacy, alpha, "multiplicative")
        key = (name, neighbours, alpha, epsilon, delta)
        eg = simulate_alpha_mrmse(pars, lv, privacy, alpha, "gaussian", trials=trials["gaussian"],
                                  seed=seed_for(*key, "G"))
        em = simulate_alpha_mrmse(pars, lv, privacy, alpha, "multiplicative", trials=trials["multiplicative"],
                                  seed=seed_for(*key, "M"))
        elapsed = time.perf_counter() - start
        assert pm.params is not None
        better_proj = "M" if pm.alpha_mrmse < pg.alpha_mrmse else "G"
        better_emp = "M" if em.alpha_mrmse < eg.alpha_mrmse else "G"
        ratio = em.alpha_mrmse / eg.alpha_mrmse if eg.alpha_mrmse > 0 else math.inf
        print(f"{name:<13} {neighbours:>9} {alpha:>4g} {epsilon:>4g} {delta:>6.0e} {pm.params.tau_min:>9.3e} | "
              f"{fmt(pg.alpha_mrmse)} {fmt(pm.alpha_mrmse)} | {fmt(wg.alpha_mrmse)} {fmt(wm.alpha_mrmse)} | "
              f"{fmt(eg.alpha_mrmse)} {fmt(em.alpha_mrmse)} | {ratio:>9.3g} | {better_proj}, {better_emp}"
              f"{'':14}{elapsed:5.1f} s")
    print("G's α-mRMSE is 0 where every count is large enough that α·count exceeds the noise; M releases every node "
          "below ~τ_min as ⌊α τ_min⌋.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer trials and repeats (a smoke run, ~1 min)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    started = time.perf_counter()
    ratios = part1(mode)
    timings = part2(mode)
    part3(mode)
    print()
    print("Summary")
    targeted = [r for r in ratios if r.prior == "own counts"]
    missed_ratios = [r for r in targeted if not r.passed]
    print(f"  optimal < uniform (total weighted MSE, own-counts prior): {len(targeted) - len(missed_ratios)}/"
          f"{len(targeted)} cells pass; largest ratio {max(r.ratio for r in targeted):.3f}")
    for r in missed_ratios:
        print("  MISS " + r.text())
    info = [r for r in ratios if r.prior != "own counts"]
    if info:
        print(f"  (information) first-half prior: optimal < uniform in {sum(r.passed for r in info)}/{len(info)} cells; "
              f"largest ratio {max(r.ratio for r in info):.3f}")
    missed_timings = [t for t in timings if not t.passed]
    ran = [t for t in timings if not t.error]
    worst = f"; worst ratio to target {max(t.seconds / t.target for t in ran):.2f}" if ran else ""
    print(f"  speed: {len(timings) - len(missed_timings)}/{len(timings)} timings within target{worst}")
    for t in missed_timings:
        print("  MISS " + t.text().strip())
    print(f"total time {time.perf_counter() - started:.0f} s{' (--quick)' if args.quick else ''}")
    missed = bool(missed_ratios or missed_timings)
    return 1 if missed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
