"""Benchmark: `dpgui plan --bins 1000000 --epsilon 1 --json` answers at once (target ≤ 0.3 s wall).

    python benchmarks/bench_cli.py            # median of 5 runs (after 1 untimed one)
    python benchmarks/bench_cli.py --check    # exit 1 if the median misses 0.3 s

Runs the real console command (the ``dpgui`` script beside this Python, i.e. the venv's entry point) in a
fresh process each time, on this checkout's code (PYTHONPATH = the repository), and times it from start
to exit: interpreter start, imports, planning, baselines, projections and the JSON. Prints the median
wall time against the limit with PASS/FAIL, and, to read it by: the median CPU time of the runs (user +
system; on a busy machine the wall time is larger), the load average, and whether Python may cache
bytecode: PYTHONDONTWRITEBYTECODE makes every run compile dpgui's sources again, which an installed
package never does, so then the runs are repeated with a bytecode cache in a temporary folder and
printed for reference (the limit applies to the first figure). Checks that each run exits 0 and prints
the plan's JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from timing import median_time  # noqa: E402  (benchmarks/ is not a package)

LIMIT_S = 0.3
ARGS = ["plan", "--bins", "1000000", "--epsilon", "1", "--json"]


def console_command() -> list[str]:
    """The installed ``dpgui`` entry point next to this interpreter (``python -m dpgui.cli`` if there is none)."""
    script = Path(sys.executable).with_name("dpgui.exe" if os.name == "nt" else "dpgui")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dpgui.cli"]


def measure(command: list[str], env: dict[str, str], repeats: int) -> tuple[float, float]:
    """(median wall time, median CPU time) in seconds of ``repeats`` runs after one untimed one; each run
    must exit 0 and print the plan's JSON."""
    cpu: list[float] = []

    def run() -> dict[str, object]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            raise SystemExit(f"bench_cli: {' '.join(command)} exited {done.returncode}: {done.stderr.strip()}")
        plan: dict[str, object] = json.loads(done.stdout)
        return plan

    wall, plan = median_time(run, repeats=repeats)
    assert plan["bins"] == 1_000_000 and "projected" in plan and "baselines" in plan
    return wall, statistics.median(cpu[1:])  # (the first run is the untimed warm-up)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5, help="timed runs (default 5)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the median wall time misses the limit")
    args = parser.parse_args(argv)

    command = [*console_command(), *ARGS]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    print(f"command: {' '.join(command)}")
    compiling = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    wall, cpu = measure(command, env, args.repeats)
    print(f"  cpu time (user+sys), median: {cpu:.3f} s; load average {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} cores; bytecode cache "
          f"{'off (PYTHONDONTWRITEBYTECODE: every run compiles dpgui)' if compiling else 'on'}")
    if compiling:  # for reference: as an installed package runs (its bytecode compiled once)
        with tempfile.TemporaryDirectory(prefix="dpgui-pyc-") as cache:
            cached = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
            cached_wall, cached_cpu = measure(command, {**cached, "PYTHONPYCACHEPREFIX": cache}, args.repeats)
        print(f"  with a bytecode cache (as installed): {cached_wall:.3f} s wall, {cached_cpu:.3f} s cpu (median)")
    ok = wall <= LIMIT_S
    print(f"plan_wall_s = {wall:.3f} s (median of {args.repeats})  limit <= {LIMIT_S} s  {'PASS' if ok else 'FAIL'}")
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
