"""Benchmark: exact vectorised discrete-Laplace sampler (dpgui.core.noise) vs OpenDP.

* 10^6 discrete-Laplace draws at scale 20 with SecureRandom (os.urandom), median of 5;
* OpenDP's exact discrete Laplace (make_laplace on a vector of ints, scale 20) for 10^5
  draws, median of 5, scaled x10 to 10^6, and the ratio OpenDP / ours;
* the multi-level call for a tree with 2^20 leaves and branching 16: levels of
  2^20, 2^16, 2^12, 2^8, 2^4 nodes (1,118,480 in all) at 5 different scales, one call;
* for information: 10^6 discrete-Gaussian draws at sigma^2 = 100.

Run:  .venv/bin/python benchmarks/bench_noise.py
"""

from __future__ import annotations

from fractions import Fraction

from timing import median_time

from dpgui.core.noise import (
    SecureRandom, laplace_scale, sample_discrete_gaussian, sample_discrete_laplace, sample_discrete_laplace_levels,
)

REPEATS = 5
N = 10**6
N_OPENDP = 10**5
SCALE = 20
LEVEL_SIZES = [16**k for k in (5, 4, 3, 2, 1)]  # 2^20 leaves, branching 16, root excluded
LEVEL_EPSILONS = [0.3, 0.25, 0.2, 0.15, 0.1]  # -> 5 different scales t = 1/eps (2^-16 grid)


def main() -> None:
    src = SecureRandom()

    ours = median_time(lambda: sample_discrete_laplace(src, Fraction(SCALE), N), REPEATS)[0]
    print(f"dpgui discrete Laplace, scale {SCALE}, 10^6 draws, SecureRandom: {ours:.3f} s")

    try:
        import opendp.prelude as dp
    except ImportError:  # pragma: no cover
        print("OpenDP not installed: skipping comparison")
    else:
        dp.enable_features("contrib")
        meas = dp.m.make_laplace(
            dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=float(SCALE)
        )
        zeros = [0] * N_OPENDP
        theirs = median_time(lambda: meas(zeros), REPEATS)[0] * (N / N_OPENDP)
        print(f"OpenDP make_laplace, scale {SCALE}, 10^5 draws x10 -> 10^6: {theirs:.3f} s")
        print(f"speed-up (OpenDP / dpgui): {theirs / ours:.1f}x")

    scales = [laplace_scale(1, eps) for eps in LEVEL_EPSILONS]
    total = sum(LEVEL_SIZES)
    levels = median_time(lambda: sample_discrete_laplace_levels(src, scales, LEVEL_SIZES), REPEATS)[0]
    print(
        f"multi-level: {total:,} nodes (sizes {LEVEL_SIZES}) at scales "
        f"{[round(float(s), 4) for s in scales]}, SecureRandom: {levels:.3f} s"
    )

    gauss = median_time(lambda: sample_discrete_gaussian(src, Fraction(100), N), REPEATS)[0]
    print(f"dpgui discrete Gaussian, sigma^2 = 100, 10^6 draws, SecureRandom: {gauss:.3f} s")


if __name__ == "__main__":
    main()
