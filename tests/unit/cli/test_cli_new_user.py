"""The CLI as a new user meets it: the real CLI in a subprocess, a fresh DPGUI_HOME, a cap set first.

Every bad case must end with exit code 2 (``verify``: 1, its documented "a check failed"), exactly one
line on stderr and no traceback, and must leave the budget ledger exactly as it was: ``dpgui ledger show
--json`` before and after are identical (nothing charged, nothing logged).

The table ``CASES`` is meant to grow: one :class:`Case` per bad input, its ``id`` starting with the
group of rules it checks (``item6-…``: the numbered groups of ``CASES``, which
:func:`test_case_ids_name_their_item` requires). ``argv`` is built from the case's folder (see :class:`World`).
The command under test runs in its own interpreter (``python -m dpgui.cli``); the cap and the ledger
snapshots go through the same entry point (``dpgui.cli.main``) in this process, to keep the test
fast — :func:`test_snapshot_in_process_equals_the_real_cli` checks that the two agree.

Items not here: 1 (a project file signed in the window: the CLI cannot open projects; see
``tests/unit/app/test_app_signing.py``) and 4 (no exact N under add/remove is printed, not a refusal;
see ``tests/unit/cli/test_cli_dataset_identity.py``).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dpgui.cli import main

from cli_helpers import GUARD_S, PASSPHRASE, ROOT, Case, World, check_refused_in_one_line
from cli_helpers import ledger_snapshot as _snapshot
from cli_helpers import run_real as run

DATASET = "data"  # the ledger's name of data.csv
CAP = 10.0


def release(w: World, *extra: str, data: str = "data.csv", out: str | None = "out.csv", epsilon: str = "1",
            bins: str = "4") -> list[str]:
    args = ["release", str(w / data), "--column", "x", "--lower", "0", "--upper", "10", "--bins", bins,
            "--epsilon", epsilon, "--dataset", DATASET]
    if out is not None:
        args += ["--out", str(w / out)]
    return args + list(extra)


def bundle(w: World, folder: Path, *extra: str) -> list[str]:
    return release(w, "--bundle", str(folder), "--key", str(w.key), "--passphrase-file", str(w.passphrase),
                   *extra, out=None)


def _write(path: Path, data: bytes) -> None:
    path.write_bytes(data)


def _mkfifo(path: Path) -> None:
    os.mkfifo(path)


def _unwritable_folder(w: World) -> Path:
    """A folder in which no file can be created, even by root (``/proc`` there)."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return Path("/proc")
    folder = w / "readonly"
    folder.mkdir(exist_ok=True)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    return folder


def _without_dataset(argv: list[str]) -> list[str]:
    i = argv.index("--dataset")
    return argv[:i] + argv[i + 2:]


def _hand_signed_seeded_bundle(w: World) -> None:
    """A release with seeded test noise, signed file by file with the signing
    helpers (``write_bundle`` itself now refuses it), into ``w / "seeded.*"``."""
    import uuid
    from datetime import datetime, timezone

    import numpy as np

    from dpgui.core.mechanism import release as engine_release
    from dpgui.core.noise import SeededRandom
    from dpgui.core.plan import PrivacySpec
    from dpgui.core.planner import auto_plan
    from dpgui.report.bundle import BundlePaths, manifest_bytes
    from dpgui.report.cdf.bundle import ReleaseInfo, build_manifest
    from dpgui.report.cdf.csv_export import release_csv_text
    from dpgui.report.keystore import load_secret_key

    secret = load_secret_key(w.key, PASSPHRASE)
    result = engine_release(np.arange(16), auto_plan(16, PrivacySpec(1.0)), SeededRandom(4), 0.0, 16.0, "l2")
    info = ReleaseInfo(DATASET, "x", uuid.uuid4().hex, datetime.now(timezone.utc), "bucket")
    paths = BundlePaths.of(w.folder, "seeded")
    csv_bytes = release_csv_text(result).encode()
    body = manifest_bytes(build_manifest(result, info, "seeded", csv_bytes, b"%PDF-1.4\n", secret.public_key.key_id_hex))
    paths.csv.write_bytes(csv_bytes)
    paths.pdf.write_bytes(b"%PDF-1.4\n")
    paths.manifest.write_bytes(body)
    paths.signature.write_text(secret.sign(body, "hand-signed"))


def _released_once_then_copied(w: World) -> None:
    """``data.csv`` released once under DATASET, then a copy named ``copy.csv`` whose new
    dataset name ``copy`` has a cap of its own (one click in the old window)."""
    import shutil

    assert main(release(w, out="first.csv")) == 0
    shutil.copy(w / "data.csv", w / "copy.csv")
    assert main(["ledger", "cap", "copy", str(CAP), "--reason", "a new name for old data"]) == 0


CASES: list[Case] = [
    # ---- item 2: missing values follow the neighbour model; no policy makes publishing depend on the data
    Case("item2-missing-error-is-refused", lambda w: release(w, "--missing", "error"), ("not a rule", "missing")),
    Case("item2-missing-drop-under-change", lambda w: release(w, "--missing", "drop"), ("not a rule", "change")),
    # ---- item 3: test noise never verifies, even signed by hand
    Case("item3-verify-a-hand-signed-seeded-bundle", lambda w: ["verify", str(w / "seeded.manifest.json"), "--pubkey",
                                                                str(w.key.with_suffix(".pub"))], ("test noise",),
         setup=_hand_signed_seeded_bundle, code=1, not_words=("verified",)),
    # ---- item 5: the dataset is named, and a copy under a new name is not a fresh budget
    Case("item5-release-without-dataset", lambda w: _without_dataset(release(w)), ("--dataset",)),
    Case("item5-copy-under-a-new-name", lambda w: [*release(w, data="copy.csv", out=None)[:-2], "--dataset", "copy",
                                                   "--out", str(w / "out.csv")],
         ("same column names", "'data'", "--new-dataset"), setup=_released_once_then_copied),
    # ---- item 6: limits of the noise sampler, checked when the plan is built
    Case("item6-epsilon-1e-15", lambda w: release(w, epsilon="1e-15"), ("ε", "sampler", "use ε ≥")),
    Case("item6-records-per-person-1e20", lambda w: release(w, "--records-per-person", "1" + "0" * 20),
         ("records per person", "sampler")),
    Case("item6-budgets-1e-300", lambda w: release(w, "--branching", "2x4", "--budgets", "1e-300,1"),
         ("level 1", "budget", "sampler")),
    Case("item6-plan-budgets-1e-300", lambda w: ["plan", "--bins", "4", "--epsilon", "1", "--branching", "2x4",
                                                 "--budgets", "1e-300,1"], ("level 1", "sampler")),
    Case("item6-leaf-budget-1e-300", lambda w: release(w, "--branching", "2x4", "--budgets", "1,1e-300"),
         ("level 2", "sampler")),
    Case("item6-simulate-epsilon-1e-15", lambda w: ["simulate", "--synthetic", "uniform", "--n", "100", "--bins", "4",
                                                    "--epsilon", "1e-15", "--trials", "2"], ("sampler",)),
    # ---- item 7: every output target checked before the spend
    Case("item7-bundle-folder-missing", lambda w: bundle(w, w / "no-such-folder"), ("bundle folder", "does not exist")),
    Case("item7-bundle-folder-missing-with-name", lambda w: bundle(w, w / "no-such-folder", "--name", "x"),
         ("does not exist",)),
    Case("item7-bundle-folder-is-a-file", lambda w: bundle(w, w / "data.csv"), ("not a folder",)),
    Case("item7-bundle-folder-unwritable", lambda w: bundle(w, _unwritable_folder(w)), ("not writable",)),
    Case("item7-bundle-name-exists", lambda w: bundle(w, w.folder, "--name", "taken"), ("taken.csv", "already exists"),
         setup=lambda w: _write(w / "taken.csv", b"x\n")),
    Case("item7-bundle-name-bad", lambda w: bundle(w, w.folder, "--name", "a/b"), ("bundle name",)),
    Case("item7-out-folder-missing", lambda w: release(w, out="nowhere/out.csv"), ("does not exist",)),
    Case("item7-out-folder-unwritable", lambda w: release(w, out=str(_unwritable_folder(w) / "out.csv")),
         ("cannot write",)),
    Case("item7-out-is-bundle-file", lambda w: bundle(w, w.folder, "--name", "rel", "--out", str(w / "rel.csv")),
         ("bundle",)),
    # ---- item 8: --out never the input, never an existing file without --force
    Case("item8-out-is-the-input", lambda w: release(w, out="data.csv"), ("is the input",)),
    Case("item8-out-is-the-input-by-another-path", lambda w: release(w, out="sub/../data.csv"), ("is the input",),
         setup=lambda w: (w / "sub").mkdir()),
    Case("item8-out-is-a-link-to-the-input", lambda w: release(w, out="link.csv"), ("is the input",),
         setup=lambda w: (w / "link.csv").symlink_to(w / "data.csv")),
    Case("item8-out-is-a-hard-link-to-the-input", lambda w: release(w, out="hard.csv"), ("is the input",),
         setup=lambda w: os.link(w / "data.csv", w / "hard.csv")),
    Case("item8-out-is-the-input-even-with-force", lambda w: release(w, "--force", out="data.csv"), ("is the input",)),
    Case("item8-out-exists", lambda w: release(w, out="old.csv"), ("already exists", "--force"),
         setup=lambda w: _write(w / "old.csv", b"keep me\n")),
    Case("item8-out-is-a-fifo", lambda w: release(w, "--force", out="pipe.csv"), ("not a regular file",),
         setup=lambda w: _mkfifo(w / "pipe.csv")),
    # ---- item 11: encodings, ambiguous columns, pipes and devices
    Case("item11-latin1-header", lambda w: release(w, data="latin1.csv"), ("not utf-8", "save it as utf-8"),
         setup=lambda w: _write(w / "latin1.csv", "x,café\n1,2\n3,4\n".encode("latin-1"))),
    Case("item11-latin1-in-the-column", lambda w: release(w, data="latin1b.csv"), ("utf-8",),
         setup=lambda w: _write(w / "latin1b.csv", "x,y\n1,2\ncafé,4\n".encode("latin-1"))),
    Case("item11-duplicate-column", lambda w: release(w, data="dup.csv"), ("'x'", "ambiguous", "rename"),
         setup=lambda w: _write(w / "dup.csv", b"x,y,x\n1,2,3\n4,5,6\n")),
    Case("item11-input-is-a-fifo", lambda w: release(w, data="fifo.csv"), ("not a regular file",),
         setup=lambda w: _mkfifo(w / "fifo.csv")),
    Case("item11-input-is-dev-zero", lambda w: release(w, data="zero.csv"), ("not a regular file",),
         setup=lambda w: (w / "zero.csv").symlink_to("/dev/zero")),
    Case("item11-verify-manifest-is-a-fifo", lambda w: ["verify", str(w / "b.manifest.json"), "--pubkey",
                                                        str(w.key.with_suffix(".pub"))], ("not a regular file",),
         setup=lambda w: _mkfifo(w / "b.manifest.json"), code=1),
    Case("item11-verify-manifest-is-dev-zero", lambda w: ["verify", str(w / "z.manifest.json"), "--pubkey",
                                                          str(w.key.with_suffix(".pub"))], ("not a regular file",),
         setup=lambda w: (w / "z.manifest.json").symlink_to("/dev/zero"), code=1),
    Case("item11-verify-pubkey-is-dev-zero", lambda w: ["verify", str(w / "z.manifest.json"), "--pubkey",
                                                        str(w / "zero.pub")], ("not a regular file",),
         setup=lambda w: (w / "zero.pub").symlink_to("/dev/zero"), code=1),
    Case("item11-key-is-dev-zero", lambda w: release(w, "--bundle", str(w.folder), "--key", str(w / "zero.key"),
                                                     "--passphrase-file", str(w.passphrase), out=None),
         ("not a regular file",), setup=lambda w: (w / "zero.key").symlink_to("/dev/zero")),
    Case("item11-passphrase-file-is-dev-zero", lambda w: release(w, "--bundle", str(w.folder), "--key", str(w.key),
                                                                 "--passphrase-file", "/dev/zero", out=None),
         ("passphrase file", "longer")),
    # ---- item 12: a mistyped input path says so (not "no budget for dataset 'nope'")
    Case("item12-mistyped-input", lambda w: release(w, data="nope.csv")[:1] + [str(w / "nope.csv")]
         + release(w, data="nope.csv")[2:-2] + ["--out", str(w / "out.csv")], ("does not exist",),
         not_words=("budget",)),
    Case("item12-mistyped-input-default-dataset", lambda w: ["release", str(w / "nope.csv"), "--column", "x", "--lower",
                                                             "0", "--upper", "1", "--bins", "4", "--epsilon", "1",
                                                             "--out", str(w / "o.csv")],
         ("nope.csv", "does not exist"), not_words=("budget",)),
    Case("item12-input-is-a-folder", lambda w: release(w, data="."), ("directory",)),
    Case("item12-simulate-mistyped-input", lambda w: ["simulate", "--input", str(w / "nope.csv"), "--column", "x",
                                                      "--lower", "0", "--upper", "1", "--bins", "4", "--epsilon", "1",
                                                      "--trials", "2"], ("does not exist",)),
    # ---- item 13: a cap raise needs a reason; a "1,234.5" cell names its row
    Case("item13-cap-raise-without-reason", lambda w: ["ledger", "cap", DATASET, "20"], ("needs a reason", "--reason")),
    Case("item13-thousands-separator-names-its-row", lambda w: release(w, data="comma.csv"),
         ("row 3", "thousands separator"), not_words=("9,876", "9876"),  # the cell itself is never quoted
         setup=lambda w: _write(w / "comma.csv", b'x\n1\n2\n"9,876.5"\n4\n')),
    Case("item13-quantiles-of-a-csv-without-its-plan", lambda w: ["quantiles", str(w / "data.csv")],
         ("--plan",)),
]


@pytest.fixture
def world(tmp_path, key_folder) -> World:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "data.csv").write_text("x\n1\n2\n3\n4\n5\n6\n7\n8\n", encoding="utf-8")
    passphrase = folder / "passphrase.txt"
    passphrase.write_text(PASSPHRASE + "\n", encoding="utf-8")
    with_cap = main(["ledger", "cap", DATASET, str(CAP), "--reason", "pilot acceptance"])
    assert with_cap == 0
    return World(folder, key_folder / "officer.key", passphrase)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_refused_in_one_line_and_charges_nothing(case: Case, world: World):
    assert _snapshot()["datasets"][0]["cap_epsilon"] == CAP  # the cap was set first
    check_refused_in_one_line(case, world)


def test_case_ids_name_their_item():
    assert all(c.id.split("-")[0].startswith("item") and c.id.split("-")[0][4:].isdigit() for c in CASES)
    assert len({c.id for c in CASES}) == len(CASES)
    assert {c.id.split("-")[0] for c in CASES} >= {"item6", "item7", "item8", "item11", "item12", "item13"}


@pytest.mark.slow
def test_snapshot_in_process_equals_the_real_cli(world: World):
    real = run(["ledger", "show", "--json"], world.folder)
    assert real.returncode == 0 and json.loads(real.stdout) == _snapshot()


@pytest.mark.slow
def test_ledger_show_into_head_ends_quietly(world: World):
    """``dpgui ledger show | head -1``: the reader stops early; no BrokenPipeError traceback, exit 0."""
    from dpgui.report.ledger import Ledger

    with Ledger() as ledger:  # ~130 kB of text: more than a pipe holds, so the writer meets the closed end
        for i in range(500):
            ledger.set_cap(f"{i:04d}-" + "d" * 190, 1.0)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, "-m", "dpgui.cli", "ledger", "show"], cwd=world.folder, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = process.stdout.readline()
    process.stdout.close()  # what head does after one line
    errors = process.stderr.read()
    assert process.wait(timeout=GUARD_S) == 0, errors
    assert first.startswith((DATASET.encode(), b"0000-"))
    assert errors == b"", errors


@pytest.mark.slow
def test_ctrl_d_at_the_passphrase_prompt_is_one_line(world: World):
    """Ctrl-D at 'Passphrase:' (the terminal sends end of input): one line, exit 2, no traceback."""
    import fcntl
    import pty
    import termios

    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT))

    def take_terminal() -> None:  # the pty becomes the child's controlling terminal (getpass reads /dev/tty)
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    process = subprocess.Popen([sys.executable, "-m", "dpgui.cli", "key", "create", "nobody", "--dir",
                                str(world.folder)], stdin=slave, stdout=slave, stderr=slave, env=env,
                               start_new_session=True, preexec_fn=take_terminal)
    os.close(slave)
    output = b""
    try:
        while b"Passphrase" not in output:
            output += os.read(master, 1024)
        os.write(master, b"\x04")  # Ctrl-D
        while True:
            try:
                chunk = os.read(master, 1024)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            output += chunk
    finally:
        code = process.wait(timeout=GUARD_S)
        os.close(master)
    text = output.decode("utf-8", "replace")
    assert code == 2, text
    assert "Traceback" not in text
    errors = [line for line in text.splitlines() if "error" in line]
    assert len(errors) == 1 and "no passphrase was typed" in errors[0], text
    assert not (world / "nobody.key").exists()


# ---------------------------------------------------------------- what a new user then reads (items 13, 8, 11)
def _json_run(argv: list[str], cwd: Path) -> dict:
    result = run(argv, cwd)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.slow
def test_release_json_and_the_quantiles_command_print_the_same_quantiles_with_intervals(world: World):
    released = _json_run(release(world, "--json", "--probabilities", "0.1,0.5,0.9", bins="8"), world.folder)
    found = released["quantiles"]
    assert [q["probability"] for q in found] == [0.1, 0.5, 0.9]
    for q in found:
        assert q["low"] <= q["value"] <= q["high"] and q["low"] >= 0 and q["high"] <= 10
    (world / "release.json").write_text(json.dumps(released), encoding="utf-8")
    again = _json_run(["quantiles", str(world / "out.csv"), "--plan", str(world / "release.json"),
                       "--probabilities", "0.1,0.5,0.9", "--json"], world.folder)
    assert again["quantiles"] == found  # read back from the CSV: the same values and intervals
    text = run(["quantiles", str(world / "out.csv"), "--plan", str(world / "release.json")], world.folder)
    assert text.returncode == 0 and "95 % interval" in text.stdout and "0.5" in text.stdout


@pytest.mark.slow
def test_quantiles_of_a_bundle_from_its_manifest_or_its_csv(world: World):
    out = world / "bundle"
    out.mkdir()
    released = _json_run(release(world, "--bundle", str(out), "--key", str(world.key), "--passphrase-file",
                                 str(world.passphrase), "--name", "rel", "--json", out=None, bins="8"), world.folder)
    from_manifest = _json_run(["quantiles", str(out / "rel.manifest.json"), "--json"], world.folder)
    from_csv = _json_run(["quantiles", str(out / "rel.csv"), "--json"], world.folder)  # finds the manifest beside it
    assert from_manifest["quantiles"] == from_csv["quantiles"] == released["quantiles"]
    assert from_manifest["release_id"] == released["release_id"]
    (out / "rel.csv").write_text((out / "rel.csv").read_text().replace("0.0,", "0.5,", 1))
    tampered = run(["quantiles", str(out / "rel.manifest.json")], world.folder)
    assert tampered.returncode == 2 and "changed after signing" in tampered.stderr


@pytest.mark.slow
def test_force_replaces_an_existing_output_and_charges_once(world: World):
    (world / "old.csv").write_text("keep me\n")
    assert run(release(world, "--force", out="old.csv"), world.folder).returncode == 0
    assert (world / "old.csv").read_text().startswith("bin_lower,")
    assert _snapshot()["datasets"][0]["epsilon_spent"] == 1.0


@pytest.mark.slow
def test_a_utf16_file_with_a_byte_order_mark_is_read(world: World):
    (world / "wide.csv").write_bytes("x,név\r\n1,a\r\n2,b\r\n3,c\r\n".encode("utf-16"))
    released = _json_run(release(world, "--json", data="wide.csv"), world.folder)
    assert released["n_released"] == 3  # N is public under change: the exact row count
    counts = [line.split(",")[2] for line in (world / "out.csv").read_text().splitlines()[1:]]
    assert len(counts) == 4  # the K bins were read from the UTF-16 text
    # the values and the (noised) missing bucket add up to the exact N of 3 rows
    assert int(counts[-1]) + released["missing_values"]["released_count"] == 3


@pytest.mark.slow
def test_ledger_show_lists_the_cap_history_with_reasons(world: World):
    assert run(["ledger", "cap", DATASET, "12", "--reason", "board decision 2026-11"], world.folder).returncode == 0
    shown = run(["ledger", "show"], world.folder).stdout
    assert "cap set to ε = 10" in shown and "pilot acceptance" in shown
    assert "cap changed from ε = 10, δ = 0 to ε = 12, δ = 0  reason: board decision 2026-11" in shown
    history = _json_run(["ledger", "show", "--json"], world.folder)["cap_history"][DATASET]
    assert [(c["old_epsilon"], c["new_epsilon"], c["reason"]) for c in history] == [
        (None, 10.0, "pilot acceptance"), (10.0, 12.0, "board decision 2026-11")]
    assert run(["ledger", "cap", DATASET, "11"], world.folder).returncode == 0  # lowering needs no reason


@pytest.mark.slow
def test_simulate_without_json_prints_a_table(world: World):
    result = run(["simulate", "--synthetic", "uniform", "--n", "1000", "--bins", "16", "--epsilon", "1",
                  "--trials", "20", "--seed", "3"], world.folder)
    assert result.returncode == 0, result.stderr
    assert "{" not in result.stdout and "INSECURE" in result.stdout
    rows = [line for line in result.stdout.splitlines() if line.strip().startswith(("worst point", "L2 norm"))]
    assert len(rows) == 2 and all("±" in row for row in rows)


def test_an_interrupted_release_says_whether_it_was_spent(world: World, monkeypatch, capsys):
    """Ctrl-C after the spend: the message asks the ledger instead of claiming nothing happened."""
    import dpgui.core.mechanism as mechanism

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(mechanism, "release", interrupted)
    monkeypatch.setattr("dpgui.report.cdf.publish.release", interrupted)
    assert main(release(world)) == 130
    error = capsys.readouterr().err
    entries = _snapshot()["releases"]
    assert len(entries) == 1 and f"its ε was spent (ledger release {entries[0]['release_id']})" in error
