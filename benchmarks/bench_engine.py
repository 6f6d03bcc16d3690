"""Engine accuracy and speed targets (issue 2). Prints figures, ratios and PASS/FAIL lines.

Accuracy: auto-plan projected total squared error / paper_best (target ≤ 0.36) for
K ∈ {256, 4096, 65536}, ε ∈ {0.1, 1}, and the simulated error after ℓ2 consistency on N = 10,000
uniform records (the exact projection is of the unbiased estimate, before consistency).
Speed (median of --repeats): a full release (noise, GLS, ℓ2 consistency) at K = 2^20 (≤ 3 s) and
`plan --branching auto` for K = 10^6 (≤ 0.3 s), timed in-process.

    python benchmarks/bench_engine.py [--repeats 5] [--trials 100] [--check]
"""

from __future__ import annotations

import argparse
import sys

from timing import median_time

from dpgui.core.mechanism import release
from dpgui.core.noise import SecureRandom
from dpgui.core.simulation import SimulationResult, simulate, synthetic_counts
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan, baselines
from dpgui.core.projection import project


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args()
    ok = True

    print("== accuracy: auto plan vs paper 000's best integer plan (equal budgets, covering sum)")
    print(f"{'K':>6} {'eps':>5} {'auto shape':>14} {'paper shape':>14} {'auto total':>12} {'paper_best':>12} "
          f"{'ratio':>6} {'sim l2 after cons.':>20}")
    for bins in (256, 4096, 65536):
        counts = synthetic_counts("uniform", 10_000, bins, seed=bins)
        for eps in (0.1, 1.0):
            privacy = PrivacySpec(eps)
            plan = auto_plan(bins, privacy)
            total = project(plan).total_sq_error
            best = baselines(bins, privacy)["paper_best"]
            ratio = total / best["total_sq_error"]
            trials = args.trials if bins < 65536 else max(20, args.trials // 5)
            sim = SimulationResult.summary(simulate(plan, counts, trials, "l2", seed=bins + int(eps * 10)).counts)
            sim_mean, sim_se = sim["mean_sq_l2"], sim["se_sq_l2"]
            ok &= ratio <= 0.36
            print(f"{bins:>6} {eps:>5} {plan.shape.label:>14} {'x'.join(map(str, best['branching'])):>14} "
                  f"{total:>12.4g} {best['total_sq_error']:>12.4g} {ratio:>6.3f} {sim_mean:>12.4g} ±{sim_se:.2g}"
                  f"  [{'PASS' if ratio <= 0.36 else 'FAIL'} ratio ≤ 0.36]")

    print("== speed")
    bins = 2**20
    counts = synthetic_counts("uniform", 1_000_000, bins, seed=1)
    plan = auto_plan(bins, PrivacySpec(1.0))
    seconds, _ = median_time(lambda: release(counts, plan, SecureRandom(), 0.0, 1.0, "l2"), args.repeats)
    ok &= seconds <= 3.0
    print(f"full release K=2^20 (branching {plan.shape.label}, {plan.shape.node_count} nodes, secure noise, GLS, l2): "
          f"{seconds:.3f} s  [{'PASS' if seconds <= 3.0 else 'FAIL'} ≤ 3 s]")

    seconds, planned = median_time(lambda: auto_plan(10**6, PrivacySpec(1.0)), args.repeats)
    ok &= seconds <= 0.3
    print(f"plan --branching auto, K=10^6 (chose {planned.shape.label}): {seconds:.3f} s  "
          f"[{'PASS' if seconds <= 0.3 else 'FAIL'} ≤ 0.3 s]")
    seconds_full, _ = median_time(lambda: (project(planned), baselines(10**6, PrivacySpec(1.0))), args.repeats)
    print(f"  plus the exact per-prefix projection and the four baselines printed by `plan --json`: {seconds_full:.3f} s")
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
