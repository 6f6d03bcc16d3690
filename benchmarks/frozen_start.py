"""Start-up time of the frozen app to its first visible window, against the source install, on Xvfb.

    .venv/bin/python benchmarks/frozen_start.py [--bundle dist/dpgui/dpgui] [--runs 5]

Run after `make package`. Each run starts the program with no file (the start page) on a fresh Xvfb
screen and polls ``xdotool search --onlyvisible --classname dpgui`` every 10 ms; the time is from
process start to the first visible window (polling adds up to ~15 ms). The first frozen run is
reported apart: it is the one that reads the bundle from disk cold(er). Prints the medians, the
ratio frozen/source, and the issue's target (frozen ≤ 3 s). Needs Xvfb and xdotool
(`make system-deps`). Exit 1 only if a window never appears.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 3.0
TIMEOUT_S = 30.0


def start_xvfb(display: str) -> subprocess.Popen:
    server = subprocess.Popen(["Xvfb", display, "-screen", "0", "1280x860x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = {**os.environ, "DISPLAY": display}
    for _ in range(200):
        if subprocess.run(["xdotool", "getdisplaygeometry"], env=env, capture_output=True).returncode == 0:
            return server
        time.sleep(0.05)
    server.kill()
    raise SystemExit(f"Xvfb did not start on {display}")


def time_to_window(command: list[str], display: str) -> float:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "DPGUI_HOME": home,
               "XDG_CONFIG_HOME": home}
        started = time.perf_counter()
        app = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while time.perf_counter() - started < TIMEOUT_S:
                found = subprocess.run(["xdotool", "search", "--onlyvisible", "--classname", "^dpgui$"],
                                       env=env, capture_output=True, text=True).stdout.strip()
                if found:
                    return time.perf_counter() - started
                if app.poll() is not None:
                    raise SystemExit(f"{command[0]} exited with {app.returncode} before showing a window")
                time.sleep(0.01)
            raise SystemExit(f"{command[0]} showed no window within {TIMEOUT_S:g} s")
        finally:
            app.terminate()
            try:
                app.wait(5)
            except subprocess.TimeoutExpired:
                app.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", default=str(ROOT / "dist" / "dpgui" / "dpgui"))
    parser.add_argument("--source", default=str(ROOT / ".venv" / "bin" / "dpgui"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not Path(args.bundle).is_file():
        print(f"no frozen app at {args.bundle}: build it first with `make package`", file=sys.stderr)
        return 1
    display = f":{200 + os.getpid() % 300}"
    server = start_xvfb(display)
    try:
        frozen = [time_to_window([args.bundle], display) for _ in range(args.runs + 1)]
        source = [time_to_window([args.source], display) for _ in range(args.runs)]
    finally:
        server.kill()
    first, warm = frozen[0], frozen[1:]
    frozen_median, source_median = statistics.median(warm), statistics.median(source)
    print(f"frozen app, first run:       {first:.2f} s")
    print(f"frozen app, median of {len(warm)}:     {frozen_median:.2f} s  (runs: {', '.join(f'{t:.2f}' for t in warm)})")
    print(f"source install, median of {len(source)}: {source_median:.2f} s  (runs: {', '.join(f'{t:.2f}' for t in source)})")
    print(f"ratio frozen/source: {frozen_median / source_median:.2f}")
    worst = max(frozen)
    print(f"target: frozen start to first window ≤ {TARGET_S:g} s — slowest frozen run {worst:.2f} s: "
          + ("met" if worst <= TARGET_S else "NOT met"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
