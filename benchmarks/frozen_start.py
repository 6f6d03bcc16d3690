"""Start-up time of the frozen app to its first visible window, against the source install, on Xvfb.

    .venv/bin/python benchmarks/frozen_start.py [--bundle dist/dpgui/dpgui] [--runs 5]

Run after `make package`. Each run starts the program with no file (the start page) on one Xvfb
screen (scripts/xvfb.py) and polls ``xdotool search --onlyvisible --classname dpgui`` every 10 ms; the time is from
process start to the first visible window (polling adds up to ~15 ms). The first frozen run is
reported apart: it is the one that reads the bundle from disk cold(er). Prints the medians, the
ratio frozen/source, and the target (frozen ≤ 3 s). Needs Xvfb and xdotool
(`make system-deps`). Exit 1 only if a window never appears. A run whose app could not connect to
the X server (Qt: "could not connect to display") is retried up to twice, with a note on stderr.
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
sys.path.insert(0, str(ROOT / "scripts"))
from xvfb import virtual_display  # noqa: E402  (scripts/ is not a package)

TARGET_S = 3.0
TIMEOUT_S = 30.0


class DisplayRefused(Exception):
    """The app could not connect to the X server (the X server's fault, not the app's)."""


def time_to_window(command: list[str], display: str, attempts: int = 3) -> float:
    """Seconds from start to the first visible window; a run the X server refused is retried (and said)."""
    message = ""
    for attempt in range(1, attempts + 1):
        try:
            return _one_run(command, display)
        except DisplayRefused as refused:
            message = str(refused)
            print(f"note: {Path(command[0]).name} could not connect to the X display {display} "
                  f"(attempt {attempt} of {attempts}); {'retrying' if attempt < attempts else 'giving up'}",
                  file=sys.stderr)
    raise SystemExit(message)


def _one_run(command: list[str], display: str) -> float:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "DPGUI_HOME": home,
               "XDG_CONFIG_HOME": home}
        log = Path(home) / "app.log"
        started = time.perf_counter()
        with log.open("wb") as sink:
            app = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT)
        try:
            while time.perf_counter() - started < TIMEOUT_S:
                found = subprocess.run(["xdotool", "search", "--onlyvisible", "--classname", "^dpgui$"],
                                       env=env, capture_output=True, text=True).stdout.strip()
                if found:
                    return time.perf_counter() - started
                if app.poll() is not None:
                    printed = log.read_text(errors="replace")
                    message = (f"{command[0]} exited with {app.returncode} before showing a window; "
                               f"it printed:\n{printed[-3000:]}")
                    raise DisplayRefused(message) if "could not connect to display" in printed else SystemExit(message)
                time.sleep(0.01)
            raise SystemExit(f"{command[0]} showed no window within {TIMEOUT_S:g} s; it printed:\n"
                             f"{log.read_text(errors='replace')[-3000:]}")
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
    with virtual_display() as display:
        frozen = [time_to_window([args.bundle], display) for _ in range(args.runs + 1)]
        source = [time_to_window([args.source], display) for _ in range(args.runs)]
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
