"""Release after release into signed bundles, until killed (used by test_report_crash.py).

Runs until killed (never exits by itself), the same steps as `dpgui release --bundle`: ledger spend (before the noise), release,
PDF, crash-safe bundle write, bundle pointer in the ledger. Prints "ready" once set up, then one
line per attempt ("released ID" or "refused").
"""

from __future__ import annotations

import sys
from pathlib import Path

from dpgui.app.pdf_report import render_release_pdf
from dpgui.core.noise import SecureRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.data.histogram import column_histogram
from dpgui.errors import DpguiError
from dpgui.report.bundle import default_bundle_name
from dpgui.report.keystore import load_secret_key, read_passphrase_file
from dpgui.report.ledger import Ledger
from dpgui.report.publish import sign_release, spend_and_release


def main(data: str, out: str, key_path: str, passphrase_file: str, dataset: str, epsilon: float) -> None:
    key = load_secret_key(Path(key_path), read_passphrase_file(passphrase_file))
    plan = auto_plan(32, PrivacySpec(epsilon))
    render_release_pdf  # imported above: Qt is loaded before "ready"
    print("ready", flush=True)
    while True:
        hist = column_histogram(data, "value", 0.0, 100.0, 32)
        with Ledger() as ledger:
            try:
                result, info = spend_and_release(ledger, dataset, "value", "drop", hist.counts, plan, SecureRandom(),
                                                 0.0, 100.0, "l2", n_missing=hist.n_missing)
            except DpguiError:
                print("refused", flush=True)
                continue
            sign_release(ledger, out, default_bundle_name(info), result, info,
                         render_release_pdf(result, info, key.public_key.key_id_hex), key)
        print(f"released {info.release_id}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], float(sys.argv[6]))
