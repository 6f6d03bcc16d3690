"""Signed bundles: the CLI writes them, `dpgui verify` and stock minisign check them, and no
confidential value (true counts, true CDF, a hash of the input file) is in any of their files."""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from dpgui.cli import main
from dpgui.core.noise import SecureRandom
from dpgui.core.plan import PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.data.histogram import column_histogram
from dpgui.report.bundle import BundlePaths, schema_problems, verify_bundle
from dpgui.report.keystore import create_key, load_public_key, load_secret_key
from dpgui.report.ledger import Ledger
from dpgui.report.cdf.publish import sign_release, spend_and_release

from cli_helpers import run_cli

PASSPHRASE = "correct horse battery"


def _minisign() -> str:
    binary = shutil.which("minisign")
    assert binary, "minisign is not installed: run `make system-deps` (CI does this in .ci/run)"
    return binary


@pytest.fixture(scope="module")
def signer(tmp_path_factory):
    folder = tmp_path_factory.mktemp("keys")
    (folder / "pass.txt").write_text(PASSPHRASE + "\n")
    files = create_key("officer", PASSPHRASE, folder)
    return files, folder / "pass.txt"


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    """A column whose true bin counts are distinctive (no round numbers), N = 54,321 + change."""
    rng = np.random.default_rng(20261121)
    values = np.concatenate([rng.gamma(3.0, 180.0, 50_000), rng.uniform(0, 5000, 4_330)])
    path = tmp_path_factory.mktemp("data") / "payroll.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["salary"])
        writer.writerows([f"{v:.2f}"] for v in values)
    return path


@pytest.fixture(scope="module")
def bundle_and_home(tmp_path_factory, signer, data_file):
    """One bundle written by `dpgui release --bundle` (secure noise, ledger cap set first)."""
    files, passfile = signer
    out = tmp_path_factory.mktemp("bundle")
    home = tmp_path_factory.mktemp("home")
    mp = pytest.MonkeyPatch()
    mp.setenv("DPGUI_HOME", str(home))
    try:
        assert main(["ledger", "cap", "payroll", "2"]) == 0
        code = main(["release", str(data_file), "--column", "salary", "--lower", "0", "--upper", "5000", "--bins", "100",
                     "--epsilon", "1", "--dataset", "payroll", "--bundle", str(out), "--key", str(files.secret_path),
                     "--passphrase-file", str(passfile), "--name", "payroll-2026"])
        assert code == 0
    finally:
        mp.undo()
    return BundlePaths.of(out, "payroll-2026"), home


@pytest.fixture(scope="module")
def bundle(bundle_and_home):
    return bundle_and_home[0]


def test_cli_bundle_has_four_files_and_verifies(bundle, signer, capsys):
    files, _ = signer
    for path in bundle.all():
        assert path.is_file() and path.stat().st_size > 0
    assert not list(bundle.csv.parent.glob(".*.tmp")), "temporary files left behind"
    manifest = json.loads(bundle.manifest.read_text())
    assert schema_problems(manifest) == []
    assert manifest["signer"]["key_id"] == files.key_id_hex
    assert manifest["privacy"] == {"epsilon": 1.0, "delta": 0.0, "rho": None,
                                   "epsilon_from_noise_scales": manifest["privacy"]["epsilon_from_noise_scales"],
                                   "rho_from_noise_scales": None, "delta_used": 0.0, "conversion": None,
                                   "charged": {"epsilon": 1.0, "delta": 0.0, "rho": 0.5}}
    # version 4: the CLI records where the data was read (a CSV on this computer; never its path)
    assert manifest["noise"] == "discrete_laplace" and manifest["schema_version"] == 4
    assert manifest["source"] == {"kind": "file", "format": "csv", "engine": "this computer",
                                  "dialect": {"delimiter": ",", "decimal": ".", "origin": "default"}}
    assert 0.999 < manifest["privacy"]["epsilon_from_noise_scales"] <= 1.0
    assert manifest["files"]["csv"]["sha256"] == hashlib.sha256(bundle.csv.read_bytes()).hexdigest()
    assert manifest["files"]["pdf"]["sha256"] == hashlib.sha256(bundle.pdf.read_bytes()).hexdigest()
    assert manifest["total_records"]["value"] == 54_330 and manifest["bins"] == 100
    header = bundle.csv.read_text().splitlines()[0]
    assert header == "bin_lower,bin_upper,cumulative_count,cdf,std_error,ci95_low,ci95_high,unbiased_estimate"
    code, out, err = run_cli(["verify", str(bundle.manifest), "--pubkey", str(files.public_path)], capsys)
    assert code == 0, err
    assert "VERIFIED" in out and files.key_id_hex in out


def test_ledger_records_the_bundle(bundle_and_home):
    bundle, home = bundle_and_home
    manifest = json.loads(bundle.manifest.read_text())
    with Ledger(home / "ledger.sqlite3") as ledger:
        entry = ledger.release(manifest["release_id"])
        assert entry is not None and entry.epsilon == 1.0 and entry.dataset_id == "payroll"
        assert entry.bundle == str(bundle.manifest.resolve())
        assert ledger.totals("payroll").epsilon_spent == pytest.approx(1.0)


def test_stock_minisign_accepts_the_manifest_and_rejects_a_tampered_one(bundle, signer, tmp_path):
    files, _ = signer
    minisign = _minisign()
    ok = subprocess.run([minisign, "-Vm", str(bundle.manifest), "-p", str(files.public_path)],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "Signature and comment signature verified" in ok.stdout + ok.stderr
    copy = tmp_path / bundle.manifest.name
    shutil.copy(bundle.manifest, copy)
    shutil.copy(bundle.signature, tmp_path / bundle.signature.name)
    data = bytearray(copy.read_bytes())
    index = data.index(b'"epsilon": 1.0') + len(b'"epsilon": ')
    data[index] = ord("0")  # ε = 0.0: a forged, smaller budget
    copy.write_bytes(bytes(data))
    bad = subprocess.run([minisign, "-Vm", str(copy), "-p", str(files.public_path)], capture_output=True, text=True)
    assert bad.returncode != 0
    assert "verification failed" in (bad.stdout + bad.stderr).lower()


@pytest.mark.slow
def test_a_thousand_single_byte_changes_are_all_detected(bundle, signer, tmp_path, capsys):
    """1,200 random single-byte changes spread over the CSV, the PDF and the manifest.

    (The signature file's first line is minisign's *untrusted* comment, unsigned by design; its
    signed lines are mutated position by position in test_report_signing.py.)"""
    files, _ = signer
    work = tmp_path / "b"
    work.mkdir()
    for path in bundle.all():
        shutil.copy(path, work / path.name)
    copies = BundlePaths.of(work, "payroll-2026")
    targets = [copies.csv, copies.pdf, copies.manifest]
    rng = np.random.default_rng(4)
    detected = 0
    trials = 1200
    for trial in range(trials):
        target = targets[trial % len(targets)]
        original = target.read_bytes()
        data = bytearray(original)
        position = int(rng.integers(len(data)))
        data[position] ^= int(rng.integers(1, 256))
        target.write_bytes(bytes(data))
        code, _, err = run_cli(["verify", str(copies.manifest), "--pubkey", str(files.public_path)], capsys)
        target.write_bytes(original)
        assert code == 1, f"change at byte {position} of {target.name} was not detected"
        assert err.startswith("FAILED: ") and err.count("\n") == 1
        detected += 1
    assert detected == trials
    code, _, err = run_cli(["verify", str(copies.manifest), "--pubkey", str(files.public_path)], capsys)
    assert code == 0, err  # the restored copy verifies again: the changes were what failed


@pytest.mark.parametrize("which", ["csv", "pdf", "manifest", "signature"])
def test_truncated_files_are_detected(bundle, signer, tmp_path, capsys, which):
    files, _ = signer
    for path in bundle.all():
        shutil.copy(path, tmp_path / path.name)
    copies = BundlePaths.of(tmp_path, "payroll-2026")
    target = getattr(copies, which)
    data = target.read_bytes()
    target.write_bytes(data[: len(data) // 2])
    code, _, err = run_cli(["verify", str(copies.manifest), "--pubkey", str(files.public_path)], capsys)
    assert code == 1 and err.startswith("FAILED: ")
    target.unlink()
    code, _, err = run_cli(["verify", str(copies.manifest), "--pubkey", str(files.public_path)], capsys)
    assert code == 1 and err.startswith("FAILED: ")


def test_wrong_public_key_is_detected(bundle, tmp_path, capsys):
    other = create_key("someone-else", PASSPHRASE, tmp_path)
    code, _, err = run_cli(["verify", str(bundle.manifest), "--pubkey", str(other.public_path)], capsys)
    assert code == 1
    assert "FAILED" in err and other.key_id_hex in err
    (tmp_path / "garbage.pub").write_text("not a key\n")
    code, _, err = run_cli(["verify", str(bundle.manifest), "--pubkey", str(tmp_path / "garbage.pub")], capsys)
    assert code == 1 and err.startswith("FAILED: ")


def test_a_signed_manifest_that_breaks_the_schema_is_refused(signer, bundle, tmp_path):
    """Signed by the right key but not a valid manifest: the schema check catches it."""
    files, _ = signer
    key = load_secret_key(files.secret_path, PASSPHRASE)
    manifest = json.loads(bundle.manifest.read_text())
    del manifest["privacy"]
    path = tmp_path / "x.manifest.json"
    body = json.dumps(manifest).encode()
    path.write_bytes(body)
    (tmp_path / "x.manifest.json.minisig").write_text(key.sign(body, "test"))
    result = verify_bundle(path, load_public_key(files.public_path))
    assert not result.ok and "schema" in result.failure and "privacy" in result.failure


def _numbers(text: str) -> set[str]:
    """Every number in ``text`` with thousands separators removed (1,234.5 → 1234.5).

    Only whole numbers count: digits inside a word (hex ids and hashes such as ``c251f``) and the
    date and time of signing are not released values, and matching them made the test flaky.
    """
    text = re.sub(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?)?Z?", " ", text)  # dates and times
    grouped = re.findall(r"(?<![\w.,\u202f])\d{1,3}(?:[,\u202f]\d{3})+(?:\.\d+)?(?![\w])", text)
    plain = re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])", text)  # also "123,456" read as two CSV fields
    return {m.replace(",", "").replace("\u202f", "") for m in grouped} | set(plain)


def _comments(minisig: str) -> str:
    """The comment lines of a minisign signature; the other lines are base64, random to the reader."""
    return "\n".join(line for line in minisig.splitlines() if "comment:" in line)


def test_bundles_hold_no_confidential_value(signer, data_file, tmp_path):
    """True counts, true CDF values and hashes of the input file appear in none of the four files.

    Secure noise (only secure releases are signed), so the released values differ from run to run
    and no lucky seed can hide a coincidence: a true value that equals any released count (at any
    bin) is public by release, so only true values that differ from every released one are
    forbidden (about 190 of the 200 here). The salaries are in units of 5,000 (values in [0, 1)):
    the PDF's quantiles and bin edges are then decimals that cannot be mistaken for a count.
    """
    files, _ = signer
    key = load_secret_key(files.secret_path, PASSPHRASE)
    scaled = tmp_path / "payroll-scaled.csv"
    rows = data_file.read_text().splitlines()
    scaled.write_text("\n".join([rows[0]] + [repr(float(v) / 5000.0) for v in rows[1:]]) + "\n")
    data_file = scaled
    hist = column_histogram(data_file, "salary", 0.0, 1.0, 100)
    plan = auto_plan(100, PrivacySpec(0.5))
    from dpgui.pdf.cdf import render_release_pdf

    with Ledger() as ledger:
        ledger.set_cap("payroll", 1.0)
        result, info = spend_and_release(ledger, "payroll", "salary", "drop", hist.counts, plan, SecureRandom(),
                                         0.0, 1.0, "l2", n_missing=hist.n_missing)
        paths = sign_release(ledger, tmp_path, "leak", result, info,
                             render_release_pdf(result, info, files.key_id_hex), key)
    pdftotext = shutil.which("pdftotext")
    assert pdftotext, "pdftotext is not installed: run `make system-deps`"
    # Numbers are searched in the text files and in the PDF's text (its raw bytes hold font
    # tables full of numbers); fingerprints are searched in the raw bytes of all four files.
    raw_texts = {p.name: p.read_bytes().decode("latin-1") for p in paths.all()}
    texts = {p.name: raw_texts[p.name] for p in (paths.csv, paths.manifest)}
    texts[paths.signature.name] = _comments(raw_texts[paths.signature.name])
    texts["pdf text"] = subprocess.run([pdftotext, "-layout", str(paths.pdf), "-"], capture_output=True,
                                       text=True, check=True).stdout
    found = set().union(*(_numbers(t) for t in texts.values()))

    true_cum = np.cumsum(hist.counts)
    n = int(true_cum[-1])
    released = {int(c) for c in result.cumulative} | {int(d) for d in np.diff(result.cumulative)} | {n}
    # the PDF's mean and sum are post-processing of the release (public); the sum is count-sized here, and the
    # reader below also takes "7,845" as the two fields "7" and "845"
    from dpgui.core.cdf_moments import cdf_moments

    moments = cdf_moments(result)
    figures = [round(v) for e in (moments.sum, moments.mean) if e is not None
               for v in (e.value, e.low, e.high, e.noise_margin)]
    released |= {int(v) for v in figures} | {int(v) % 1000 for v in figures}
    forbidden = {str(int(v)) for v in np.concatenate([true_cum, hist.counts])
                 if int(v) not in released and int(v) >= 100 and int(v) % 100}
    assert len(forbidden) > 100  # the test has teeth: most true counts differ from the released ones
    assert {str(int(c)) for c in result.cumulative if c >= 100} <= found  # and the scan reads the numbers
    assert not (forbidden & found), f"true counts found in the bundle: {sorted(forbidden & found)[:5]}"
    true_cdf = {repr(float(c / n)) for c in true_cum if int(c) not in released}
    assert len(true_cdf) > 50 and not any(v in t for v in true_cdf for t in texts.values())
    raw = data_file.read_bytes()
    digests = [hashlib.new(name, raw) for name in ("md5", "sha1", "sha256", "sha512", "blake2b", "sha3_256")]
    fingerprints = [d.hexdigest() for d in digests] + [d.hexdigest().upper() for d in digests]
    fingerprints += [base64.b64encode(d.digest()).decode()[:20] for d in digests]
    for text in [*texts.values(), *raw_texts.values()]:
        for fingerprint in fingerprints:
            assert fingerprint not in text
