"""Run every benchmark script in this folder (the `make bench` target) and report which failed.

``--quick``: the scripts that have a shorter smoke mode run in it (``QUICK_ARGS``); the others as usual.
Scripts in ``CHECK_ARGS`` get the argument that makes a missed target a failure.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: Scripts with a quick mode, and the arguments that select it (bench_gaussian: ~7 min in full;
#: bench_hierarchy: ~2-4 min in full, ~30 s quick; bench_sql: ~1.5 min in full, ~10 s quick; bench_big: K = 2^24
#: in full, 2^20 quick; bench_opendp: ~22 min for K = 256 and 4096 plus ~40 min for 65536 on a busy 2-core
#: machine, OpenDP's exact sampler most of it; ~1-4 min quick; bench_strategy_bound: ~6.5 min in full, ~10 s
#: quick; bench_plan_search: ~5 min in full, ~1 min quick). One script per line.
QUICK_ARGS = {
    "bench_big.py": ["--quick"],
    "bench_focus.py": ["--quick"],
    "bench_gaussian.py": ["--quick"],
    "bench_hierarchy.py": ["--quick"],
    "bench_opendp.py": ["--quick"],
    "bench_plan_search.py": ["--quick"],
    "bench_spark.py": ["--quick"],
    "bench_sql.py": ["--quick"],
    "bench_strategy_bound.py": ["--quick"],
}
#: Scripts run with the argument that makes a missed target exit 1 (listed as failed here). One per line.
CHECK_ARGS = {
    "bench_big.py": ["--check"],
    "bench_cli.py": ["--check"],
    "bench_consistency.py": ["--check"],
    "bench_engine.py": ["--check"],
    "bench_focus.py": ["--check"],
    "bench_hierarchy.py": ["--check"],
    "bench_opendp.py": ["--check"],
    "bench_responsiveness.py": ["--check"],
    "bench_sql.py": ["--check"],
    "bench_strategy_bound.py": ["--check"],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="run the scripts that have one in their quick mode")
    args = parser.parse_args(argv)
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        extra = [*CHECK_ARGS.get(script.name, []), *(QUICK_ARGS.get(script.name, []) if args.quick else [])]
        print(f"\n##### {script.name} {' '.join(extra)}".rstrip(), flush=True)
        if subprocess.run([sys.executable, str(script), *extra]).returncode != 0:
            failed.append(script.name)
    print("\nfailed: " + (", ".join(failed) if failed else "none"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
