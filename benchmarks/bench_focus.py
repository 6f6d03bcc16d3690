"""Where do you need accuracy: the focused plan's exact error in a region against the
default plan's, per region and neighbour model (squared errors, counts²), and whether it is offered: its
95 % margin there is at least 5 % smaller (the "margin" column, the figure the window and the CLI show).

Checks: the focused plan is never worse in its region than the default (it is a candidate), both spend
the same ε, and the offer at K = 10^6 takes ≤ 3 s (median of --repeats; the window computes it on a
worker, the CLI only with --focus). Exact projections, no Monte Carlo.

    python benchmarks/bench_focus.py [--check] [--quick] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys

from timing import median_time

from dpgui.core.focus import PRESETS, focus_offer, value_span
from dpgui.core.plan import PrivacySpec

REGIONS = {"lowest 1 %": (0.0, 0.01), "lowest 5 %": (0.0, 0.05), **{
    f"{name} (preset)": fractions for name, fractions in PRESETS.items() if fractions is not None}}
OFFER_LIMIT_S = 3.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--quick", action="store_true", help="K = 4096 only, one timing")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    ok = True
    print(f"{'K':>8} {'model':>10} {'region':>20} {'span':>18} {'default':>10} {'focused':>10} {'margin':>7} "
          f"{'offered':>8}  shapes")
    for bins in (4096,) if args.quick else (4096, 65536):
        for neighbours in ("change", "addremove"):
            privacy = PrivacySpec(1.0, neighbours)
            for name, (low, high) in REGIONS.items():
                span = value_span(low, high, 0.0, 1.0, bins)
                offer = focus_offer(bins, privacy, span)
                never_worse = offer.focused_error <= offer.default_error
                same_eps = offer.focused_plan.privacy == offer.default_plan.privacy
                ok &= never_worse and same_eps
                print(f"{bins:>8} {neighbours:>10} {name:>20} {span!s:>18} {offer.default_error:>10.4g} "
                      f"{offer.focused_error:>10.4g} {-100 * offer.gain:>6.1f}% {'yes' if offer.worth_it else 'no':>8}"
                      f"  {offer.default_plan.shape.label} -> {offer.focused_plan.shape.label}"
                      f"  [{'PASS' if never_worse and same_eps else 'FAIL'} focused ≤ default, same ε]")
    bins = 10**6
    span = value_span(0.0, 0.1, 0.0, 1.0, bins)
    seconds, offer = median_time(lambda: focus_offer(bins, PrivacySpec(1.0), span), 1 if args.quick else args.repeats)
    fast = seconds <= OFFER_LIMIT_S
    ok &= fast
    print(f"offer for the lowest 10 % at K = 10^6 (default plan included): {seconds:.2f} s, gain "
          f"{100 * offer.gain:.1f} %  [{'PASS' if fast else 'FAIL'} ≤ {OFFER_LIMIT_S:g} s]")
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
