"""Crash test: releases in a subprocess killed with SIGKILL at random moments.

Afterwards the ledger opens cleanly, every bundle on disk verifies and has exactly one ledger
entry, and the recorded spend never exceeds the cap (a kill may waste budget, never overspend).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from dpgui.report.bundle import MANIFEST_SUFFIX, verify_bundle
from dpgui.report.csv_export import remove_stale_temporaries
from dpgui.report.keystore import create_key, load_public_key
from dpgui.report.ledger import Ledger

WORKER = Path(__file__).with_name("crash_worker.py")
EPSILON = 0.01
CAP_RELEASES = 200  # the cap admits 200 releases; the workers try more
MIN_KILLS = 20


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="SIGKILL is POSIX-only")
def test_sigkill_during_releases_never_overspends_or_orphans_a_bundle(tmp_path):
    home = tmp_path / "home"
    out = tmp_path / "bundles"
    out.mkdir()
    data = tmp_path / "data.csv"
    rng = np.random.default_rng(1)
    data.write_text("value\n" + "\n".join(f"{v:.3f}" for v in rng.uniform(0, 100, 2000)) + "\n")
    (tmp_path / "pass.txt").write_text("crash test passphrase\n")
    key = create_key("crash", "crash test passphrase", tmp_path)
    env = {**os.environ, "DPGUI_HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}
    os.environ["DPGUI_HOME"] = str(home)  # the fixture already isolates it; the parent reads the same ledger
    with Ledger() as ledger:
        ledger.set_cap("crash", EPSILON * CAP_RELEASES)

    rng = np.random.default_rng(20261121)
    attempts = kills = 0
    deadline = time.monotonic() + 600
    recorded = 0
    while kills < MIN_KILLS or recorded < CAP_RELEASES or attempts < CAP_RELEASES + 20:
        assert time.monotonic() < deadline, "the crash test took over 10 minutes"
        proc = subprocess.Popen([sys.executable, str(WORKER), str(data), str(out), str(key.secret_path),
                                 str(tmp_path / "pass.txt"), "crash", str(EPSILON)],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        ready = proc.stdout.readline()
        assert ready.strip() == "ready", proc.stderr.read() if proc.stderr else ready
        time.sleep(float(rng.uniform(0.05, 2.0)))
        proc.send_signal(signal.SIGKILL)
        remaining, errors = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL, errors
        assert "Traceback" not in errors, errors
        attempts += sum(1 for line in remaining.splitlines() if line.startswith(("released", "refused")))
        kills += 1
        with Ledger() as ledger:
            recorded = ledger.totals("crash").releases

    db = home / "ledger.sqlite3"
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with Ledger() as ledger:
        totals = ledger.totals("crash")
        entries = ledger.releases("crash")
        assert totals.epsilon_spent <= EPSILON * CAP_RELEASES * (1 + 1e-9)
        assert len(entries) == CAP_RELEASES  # the cap was reached and then every attempt was refused
        ids = [e.release_id for e in entries]
        public = load_public_key(key.secret_path.with_suffix(".pub"))
        manifests = sorted(out.glob(f"*{MANIFEST_SUFFIX}"))
        assert len(manifests) >= 100
        for manifest in manifests:
            result = verify_bundle(manifest, public)
            assert result.ok, f"{manifest.name}: {result.failure}"
            release_id = json.loads(manifest.read_text())["release_id"]
            assert ids.count(release_id) == 1, f"{manifest.name} has {ids.count(release_id)} ledger entries"
    temporaries = list(out.glob(".*.tmp"))
    assert remove_stale_temporaries(out) == len(temporaries)  # every writer is dead: all are stale
    assert not list(out.glob(".*.tmp"))
    complete = {m.name[: -len(MANIFEST_SUFFIX)] for m in manifests}
    orphans = [p.name for p in out.iterdir() if p.suffix in (".csv", ".pdf") and p.stem not in complete]
    print(f"{kills} kills, {attempts} completed attempts, {len(entries)} ledger entries, {len(manifests)} "
          f"bundles, {len(entries) - len(manifests)} spends without a bundle (budget wasted by kills), "
          f"{len(temporaries)} temporary files left by kills (removed), {len(orphans)} CSV/PDF without a manifest")
