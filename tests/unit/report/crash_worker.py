"""Release after release into signed bundles, in child processes that the test kills (test_report_crash.py).

Each child runs the same steps as `dpgui release --bundle`: ledger spend (before the noise),
release, PDF, crash-safe bundle write, bundle pointer in the ledger. This process loads the
libraries and the signing key once, prints "ready", then starts one child per line read on stdin
(fork: a child starts in milliseconds, so the test's time goes into kills, not into imports):
"release" runs until killed, "until-refused" stops after the first attempt the ledger refuses.
A child prints "child PID" first, then "spent ID" when a spend is committed and "released ID" when
its bundle is written and recorded, or "refused". When it has ended this process prints
"ended PID CODE" (CODE: its exit code, or minus the signal that killed it). POSIX only; forks
only while it is single-threaded (checked where /proc shows the threads), as fork requires.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import traceback
from pathlib import Path

from dpgui.pdf.cdf import render_release_pdf
from dpgui.core.noise import SecureRandom
from dpgui.core.plan import Plan, PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.data.histogram import column_histogram
from dpgui.errors import DpguiError
from dpgui.report.cdf.bundle import default_bundle_name
from dpgui.report.keystore import load_secret_key, read_passphrase_file
from dpgui.report.ledger import Ledger
from dpgui.report.cdf.publish import sign_release, spend_and_release
from dpgui.report.signing import SecretKey


def say(line: str) -> None:
    """Print one line in one write(2): atomic on a pipe, so a kill never leaves half a line
    (print() may write the text and its newline separately)."""
    os.write(sys.stdout.fileno(), (line + "\n").encode())


def release_loop(data: str, out: str, key: SecretKey, plan: Plan, dataset: str, until_refused: bool) -> None:
    """Release, write and record bundles until killed (or, with ``until_refused``, until refused)."""
    while True:
        hist = column_histogram(data, "value", 0.0, 100.0, 32)
        with Ledger() as ledger:
            try:
                result, info = spend_and_release(ledger, dataset, "value", "drop", hist.counts, plan, SecureRandom(),
                                                 0.0, 100.0, "l2", n_missing=hist.n_missing)
            except DpguiError:
                say("refused")
                if until_refused:
                    return
                continue
            say(f"spent {info.release_id}")  # the spend is committed: it must never be lost
            sign_release(ledger, out, default_bundle_name(info), result, info,
                         render_release_pdf(result, info, key.public_key.key_id_hex), key)
        say(f"released {info.release_id}")


def main(data: str, out: str, key_path: str, passphrase_file: str, dataset: str, epsilon: float) -> None:
    key = load_secret_key(Path(key_path), read_passphrase_file(passphrase_file))
    plan = auto_plan(32, PrivacySpec(epsilon))
    render_release_pdf  # noqa: B018 — imported above: Qt is loaded (no application is made before the fork)
    import pandas  # noqa: F401  (the first table read imports it: 0.6 s that every child would repeat)

    tasks = Path("/proc/self/task")
    if tasks.is_dir() and len(list(tasks.iterdir())) != 1:  # only the forking thread lives on in a child
        sys.exit(f"crash worker: {len(list(tasks.iterdir()))} threads before fork; run it with "
                 "OPENBLAS_NUM_THREADS=1 and JE_ARROW_MALLOC_CONF=background_thread:false")
    faulthandler.enable()  # a child that crashes (a signal, not an exception) shows where
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the test asks for the stacks of a hung process
    say("ready")
    for command in sys.stdin:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                say(f"child {os.getpid()}")
                release_loop(data, out, key, plan, dataset, until_refused=command.strip() == "until-refused")
                code = 0
            except BaseException:  # noqa: BLE001 — reported on stderr; the test fails on any traceback
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        say(f"ended {pid} {os.waitstatus_to_exitcode(status)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], float(sys.argv[6]))
