"""Crash test: releases in child processes killed with SIGKILL at random points, a fixed number of times.

Afterwards the ledger opens cleanly and passes SQLite's integrity check; every spend a child saw
committed is in it, once, and nothing else but at most one spend per kill (the kill came after the
commit, before the child could say so); a last run, not killed, stops exactly at the cap (a kill
may waste budget, never overspend or free any); every bundle on disk verifies and has exactly one
ledger entry. Bounded by the number of kills, not by time: a slow machine runs the same test.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from dpgui.report.bundle import MANIFEST_SUFFIX, verify_bundle
from dpgui.report.files import remove_stale_temporaries
from dpgui.report.keystore import create_key, load_public_key
from dpgui.report.ledger import Ledger

WORKER = Path(__file__).with_name("crash_worker.py")
EPSILON = 0.01
# Each of KILLS children makes one release (its Qt application and first PDF warm up), then is
# killed at a uniformly random time within the next two releases, timed on the first child (so the
# kills follow this machine's speed). Each release runs every step (read, ledger spend, noise, PDF,
# bundle write, ledger pointer) in a share of its time, so every step is a target: with 50 kills, a
# step that takes 10 % of a release is hit with probability 1 - 0.9^50 = 99.5 %, one of 5 % with
# 92 %; the time from a committed spend to its recorded bundle (most of a release) with
# probability > 1 - 10^-12 (asserted below). SQLite's own commit is atomic by its design, not by
# this test. Then the cap is lowered to FINAL_RELEASES more than the ledger holds, and a last child,
# not killed, releases until the ledger refuses: the budget left after the kills is exact.
KILLS = 50
FINAL_RELEASES = 5
HANG_S = 120  # a worker silent this long is hung: stops the test only, never a limit on its speed


class Hung(Exception):
    """The crash worker said nothing for HANG_S seconds."""


def _drain(stream, into: queue.Queue | list) -> threading.Thread:
    """Read ``stream`` line by line on a thread (a full pipe would block the worker); None at its end."""
    def read() -> None:
        for line in stream:
            (into.put if isinstance(into, queue.Queue) else into.append)(line.rstrip("\n"))
        if isinstance(into, queue.Queue):
            into.put(None)
    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def _next_line(lines: queue.Queue) -> str:
    try:
        line = lines.get(timeout=HANG_S)
    except queue.Empty:
        raise Hung(f"the crash worker said nothing for {HANG_S} s") from None
    assert line is not None, "the crash worker ended early"
    return line


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork") or not hasattr(signal, "SIGKILL"), reason="fork and SIGKILL are POSIX-only")
def test_sigkill_during_releases_never_loses_duplicates_or_overspends_a_committed_spend(tmp_path):
    home = tmp_path / "home"
    out = tmp_path / "bundles"
    out.mkdir()
    data = tmp_path / "data.csv"
    rng = np.random.default_rng(1)
    data.write_text("value\n" + "\n".join(f"{v:.3f}" for v in rng.uniform(0, 100, 2000)) + "\n")
    (tmp_path / "pass.txt").write_text("crash test passphrase\n")
    key = create_key("crash", "crash test passphrase", tmp_path)
    # the worker forks, so it must have one thread: no BLAS threads, no background thread of pyarrow's allocator
    env = {**os.environ, "DPGUI_HOME": str(home), "QT_QPA_PLATFORM": "offscreen", "OPENBLAS_NUM_THREADS": "1",
           "JE_ARROW_MALLOC_CONF": "background_thread:false"}
    os.environ["DPGUI_HOME"] = str(home)  # the fixture already isolates it; the parent reads the same ledger
    with Ledger() as ledger:
        ledger.set_cap("crash", EPSILON * 100_000)  # never reached by the kills: every child releases

    rng = np.random.default_rng(20261121)
    said: Counter[str] = Counter()  # every line the children printed, by its first word
    spent: list[str] = []  # release ids a child printed after their spend was committed
    released: list[str] = []  # ... after their bundle was written and recorded
    ended: list[int] = []  # the exit code of each child (minus the signal that killed it)
    killed_after: Counter[str] = Counter()  # the last line a child printed before it was killed
    server = subprocess.Popen([sys.executable, str(WORKER), str(data), str(out), str(key.secret_path),
                               str(tmp_path / "pass.txt"), "crash", str(EPSILON)],
                              env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)  # its own process group: the worker and its children
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    lines: queue.Queue = queue.Queue()
    errors: list[str] = []
    _drain(server.stdout, lines)
    stderr_reader = _drain(server.stderr, errors)
    child = 0

    def start(command: str) -> int:
        server.stdin.write(command + "\n")
        server.stdin.flush()
        word, pid = _next_line(lines).split()
        assert word == "child", word
        return int(pid)

    def take(until: str, count: int = 1) -> str:
        """Record the children's lines up to the ``count``-th that starts with ``until``; the last
        line before it (the child's last word, if ``until`` is "ended")."""
        last = "child"
        while True:
            try:
                line = _next_line(lines)
            except Hung as err:
                raise Hung(f"{err} (waiting for {until!r} after {last!r}; children ended so far: {ended})") from None
            word, *rest = line.split()
            assert word in ("spent", "released", "refused", "ended"), line
            assert len(rest) == (word != "refused") + (word == "ended"), line
            if word == "ended":
                ended.append(int(rest[1]))
                assert until == "ended", f"a child ended by itself (exit code {ended[-1]}) before it said {until!r}"
            else:
                said[word] += 1
                (spent if word == "spent" else released if word == "released" else []).extend(rest)
            if word == until:
                count -= 1
                if count == 0:
                    return last
            last = word

    try:
        assert _next_line(lines) == "ready"
        child = start("release")  # the first child: how long does a release take here, now?
        take("released")
        began = time.monotonic()
        take("released", 3)
        span = 2 * (time.monotonic() - began) / 3
        os.kill(child, signal.SIGKILL)
        take("ended")
        for _ in range(KILLS):
            child = start("release")
            take("released")
            time.sleep(float(rng.uniform(0.0, span)))
            with contextlib.suppress(ProcessLookupError):  # it died by itself: reported below
                os.kill(child, signal.SIGKILL)
            killed_after[take("ended")] += 1  # what it printed before it died, then how it ended
            child = 0
        with Ledger() as ledger:
            after_kills = ledger.totals("crash").releases
            ledger.set_cap("crash", EPSILON * (after_kills + FINAL_RELEASES), reason="the crash test's last run")
        child = start("until-refused")  # not killed: uses up the budget left, then stops
        take("ended")
        child = 0
        server.stdin.close()
        assert server.wait(timeout=HANG_S) == 0
    except (Hung, AssertionError) as err:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGUSR1)  # their Python stacks, on stderr (faulthandler)
        time.sleep(1)
        raise AssertionError(f"{err}; the crash worker's stderr:\n" + "\n".join(errors)[-6000:]) from err
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)  # the worker and any child still running (after a failure)
        server.wait()
    stderr_reader.join(timeout=HANG_S)
    assert not any("Traceback" in line for line in errors), "\n".join(errors)
    assert ended == [-signal.SIGKILL] * (1 + KILLS) + [0], ended
    assert killed_after["spent"] >= 1, f"no kill fell between a spend and its bundle: {killed_after}"

    db = home / "ledger.sqlite3"
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with Ledger() as ledger:
        totals = ledger.totals("crash")
        entries = ledger.releases("crash")
    ids = [e.release_id for e in entries]
    assert len(set(ids)) == len(ids), "a release id is recorded twice"
    assert len(set(spent)) == len(spent) and set(released) <= set(spent)
    lost = set(spent) - set(ids)
    assert not lost, f"committed spends missing from the ledger: {sorted(lost)}"
    unsaid = set(ids) - set(spent)  # committed, then killed before the worker printed it: one per kill at most
    assert len(unsaid) <= KILLS
    assert len(entries) == after_kills + FINAL_RELEASES  # the cap was reached, then the next attempt was refused
    assert said["refused"] == 1
    assert totals.releases == len(entries) and all(e.epsilon == EPSILON for e in entries)
    assert totals.epsilon_spent == pytest.approx(math.fsum([EPSILON] * len(entries)), rel=1e-12)
    assert totals.epsilon_spent <= totals.cap_epsilon * (1 + 1e-9)

    public = load_public_key(key.secret_path.with_suffix(".pub"))
    manifests = sorted(out.glob(f"*{MANIFEST_SUFFIX}"))
    pointers = {e.release_id: e.bundle for e in entries if e.bundle is not None}
    for manifest in manifests:
        result = verify_bundle(manifest, public)
        assert result.ok, f"{manifest.name}: {result.failure}"
        release_id = json.loads(manifest.read_text())["release_id"]
        assert ids.count(release_id) == 1, f"{manifest.name} has {ids.count(release_id)} ledger entries"
    for release_id in released:  # a worker said it was recorded: the ledger points at its bundle
        assert pointers.get(release_id) is not None and Path(pointers[release_id]).exists(), release_id
    assert set(pointers) <= {json.loads(m.read_text())["release_id"] for m in manifests}
    temporaries = list(out.glob(".*.tmp"))
    assert remove_stale_temporaries(out) == len(temporaries)  # every writer is dead: all are stale
    assert not list(out.glob(".*.tmp"))
    complete = {m.name[: -len(MANIFEST_SUFFIX)] for m in manifests}
    orphans = [p.name for p in out.iterdir() if p.suffix in (".csv", ".pdf") and p.stem not in complete]
    wasted = len(entries) - len(manifests)  # spends killed before their bundle was complete
    print(f"{KILLS} kills (after the child's last line: {dict(killed_after)}), {said['released']} released and "
          f"{said['refused']} refused attempts, {len(entries)} ledger "
          f"entries ({len(unsaid)} committed but not yet printed when killed), {len(manifests)} bundles, {wasted} "
          f"spends without a bundle (budget wasted by kills), {len(temporaries)} temporary files left by kills "
          f"(removed), {len(orphans)} CSV/PDF without a manifest; kills within {span:.2f} s after a child's first release")
