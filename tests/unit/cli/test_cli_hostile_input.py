"""Hostile input through the real CLI: every subcommand, given deep nesting, NaN and infinity, huge and
tiny numbers, control characters, over-long names and special files, ends with its documented exit
code (2; ``verify``: 1, "a check failed") and ONE line on stderr, never a traceback, with no control
character of the input echoed raw, nothing written and nothing charged to the budget ledger.

The table ``CASES`` is meant to grow: one :class:`Case` per hostile input; each id starts with the
subcommand it attacks. Signed manifests are signed here, with the test's own key, from a manifest that
``build_manifest`` makes for a seeded (test-noise) release: the refusals under test come before the
noise source is looked at. Each command runs in its own interpreter (``python -m dpgui.cli``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

import pytest

from dpgui.cli import main

from cli_helpers import PASSPHRASE, Case, World, check_refused_in_one_line
from cli_helpers import run_real as run

DATASET = "data"
CAP = 10.0
DEEP = 100_000  # nesting of the "deep" JSON files (Python's parser recurses: RecursionError before)
LONG = "x" * 300  # longer than a file name may be (255 bytes)
CONTROL = "a\x1b[2J\r\nforged line"  # ESC (clears the terminal), CR, LF


def release(w: World, *extra: str, out: str | None = "out.csv") -> list[str]:
    args = ["release", str(w / "data.csv"), "--column", "x", "--lower", "0", "--upper", "10", "--bins", "4",
            "--epsilon", "1", "--dataset", DATASET]
    return args + (["--out", str(w / out)] if out is not None else []) + list(extra)


def hierarchy_plan(w: World, *extra: str) -> list[str]:
    return ["hierarchy", "plan", "--levels", "r,d", "--source", str(w / "h.csv"), "--counts-from-data",
            "--epsilon", "1", *extra]


def verify(w: World, name: str) -> list[str]:
    return ["verify", str(w / f"{name}.manifest.json"), "--pubkey", str(w.key.with_suffix(".pub"))]


def _base_manifest(w: World) -> dict:
    return json.loads((w / "base.manifest.json").read_text(encoding="utf-8"))


def _manifest(name: str, change: Callable[[dict], None] | None = None, raw: Callable[[str], str] | None = None,
              signed: bool = False) -> Callable[[World], None]:
    """A setup writing ``NAME.manifest.json``: the base manifest changed by ``change`` (a dict edit) or by
    ``raw`` (an edit of its JSON text), signed with the test key if ``signed``."""
    def setup(w: World) -> None:
        manifest = _base_manifest(w)
        if change is not None:
            change(manifest)
        text = json.dumps(manifest, indent=1)
        body = (raw(text) if raw is not None else text).encode("utf-8")
        (w / f"{name}.manifest.json").write_bytes(body)
        if signed:
            from dpgui.report.keystore import load_secret_key

            secret = load_secret_key(w.key, PASSPHRASE)
            (w / f"{name}.manifest.json.minisig").write_text(secret.sign(body, "hostile"), encoding="utf-8")
    return setup


def _deeper(text: str) -> str:
    """The manifest's JSON text with a key nested DEEP lists down added at its end."""
    return text.rstrip()[:-1] + ', "x": ' + "[" * DEEP + "]" * DEEP + "}"


def _set(path: str, value: object) -> Callable[[dict], None]:
    def change(manifest: dict) -> None:
        *parents, last = path.split("/")
        target = manifest
        for key in parents:
            target = target[key]
        target[last] = value
    return change


def _write(name: str, data: bytes | str) -> Callable[[World], None]:
    def setup(w: World) -> None:
        (w / name).write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return setup


def _link(name: str, target: str) -> Callable[[World], None]:
    return lambda w: (w / name).symlink_to(target)


CASES: list[Case] = [
    # ---- quantiles: a manifest or record someone handed over
    Case("quantiles-manifest-nested-100k-deep", lambda w: ["quantiles", str(w / "deep.manifest.json")],
         ("nested",), setup=_manifest("deep", raw=_deeper)),
    Case("quantiles-csv-name-climbs-out", lambda w: ["quantiles", str(w / "up.manifest.json")],
         ("files/csv/name",), setup=_manifest("up", _set("files/csv/name", "../../etc/passwd"))),
    Case("quantiles-csv-name-is-dev-zero", lambda w: ["quantiles", str(w / "zero.manifest.json")],
         ("files/csv/name",), setup=_manifest("zero", _set("files/csv/name", "/dev/zero"))),
    Case("quantiles-files-null", lambda w: ["quantiles", str(w / "null.manifest.json")], ("files",),
         setup=_manifest("null", _set("files", None))),
    Case("quantiles-missing-values-null", lambda w: ["quantiles", str(w / "mv.manifest.json")], ("missing_values",),
         setup=_manifest("mv", _set("missing_values", None))),
    Case("quantiles-bins-1e300", lambda w: ["quantiles", str(w / "bins.manifest.json")], ("bins",),
         setup=_manifest("bins", _set("bins", 1e300))),
    Case("quantiles-epsilon-nan", lambda w: ["quantiles", str(w / "nan.manifest.json")], ("privacy/epsilon",),
         setup=_manifest("nan", raw=lambda t: t.replace('"epsilon": 1.0', '"epsilon": NaN', 1))),
    Case("quantiles-plan-nested-100k-deep", lambda w: ["quantiles", str(w / "base.csv"), "--plan", str(w / "deep.json")],
         ("nested",), setup=_write("deep.json", "[" * DEEP + "]" * DEEP)),
    Case("quantiles-plan-is-dev-zero", lambda w: ["quantiles", str(w / "base.csv"), "--plan", str(w / "zero.json")],
         ("not a regular file",), setup=_link("zero.json", "/dev/zero")),
    Case("quantiles-plan-bins-infinite", lambda w: ["quantiles", str(w / "base.csv"), "--plan", str(w / "inf.json")],
         ("bins",), setup=_write("inf.json", '{"bins": 1e400, "branching": [5]}')),
    # ---- verify: signed, so only the content can be wrong
    Case("verify-signed-manifest-nested-100k-deep", lambda w: verify(w, "sdeep"), ("nested",),
         setup=_manifest("sdeep", raw=_deeper, signed=True), code=1),
    Case("verify-signed-epsilon-nan", lambda w: verify(w, "snan"), ("privacy/epsilon",),
         setup=_manifest("snan", raw=lambda t: t.replace('"epsilon": 1.0', '"epsilon": NaN', 1), signed=True), code=1),
    Case("verify-signed-duplicate-key", lambda w: verify(w, "sdup"), ("'epsilon' twice",),
         setup=_manifest("sdup", raw=lambda t: t.replace('"epsilon": 1.0,', '"epsilon": 1.0, "epsilon": 1e-9,', 1),
                         signed=True), code=1),
    Case("verify-signed-delta-one-half", lambda w: verify(w, "shalf"), ("privacy/delta", "0.001"),
         setup=_manifest("shalf", _set("privacy/delta", 0.5), signed=True), code=1),
    Case("verify-signed-megabyte-value", lambda w: verify(w, "sbig"), ("privacy/epsilon", "type number"),
         setup=_manifest("sbig", _set("privacy/epsilon", "9" * 1_000_000), signed=True), code=1,
         not_words=("9" * 50,)),
    Case("verify-signed-control-characters", lambda w: verify(w, "sctl"), ("dataset",),
         setup=_manifest("sctl", _set("dataset", CONTROL), signed=True), code=1),
    # ---- release: numbers, names, files
    Case("release-out-name-300-characters", lambda w: release(w, out=LONG + ".csv"), ("longer than", "shorter")),
    Case("release-bundle-folder-300-characters", lambda w: release(w, "--bundle", str(w / LONG), "--key", str(w.key),
                                                                   "--passphrase-file", str(w.passphrase), out=None),
         ("bundle folder",)),
    Case("release-delta-one-half", lambda w: release(w, "--delta", "0.5"), ("0.001",)),
    Case("release-column-with-control-characters", lambda w: [*release(w)[:3], CONTROL, *release(w)[4:]],
         ("not found",)),
    Case("release-dataset-with-control-characters", lambda w: [*release(w)[:-3], CONTROL, "--out", str(w / "o.csv")],
         ("control characters",)),
    Case("release-key-nested-100k-deep", lambda w: release(w, "--bundle", str(w.folder), "--key", str(w / "deep.key"),
                                                           "--passphrase-file", str(w.passphrase), out=None),
         ("secret key file", "nested"), setup=lambda w: (_write("deep.key", '{"format": ' + "[" * DEEP + "]" * DEEP
                                                                 + "}")(w), (w / "deep.key").chmod(0o600))),
    Case("release-records-per-person-300-digits", lambda w: release(w, "--records-per-person", "9" * 300),
         ("records-per-person", "at most")),
    # ---- plan and simulate: numbers
    Case("plan-n-300-digits", lambda w: ["plan", "--bins", "4", "--epsilon", "1", "--n", "9" * 300], ("--n",)),
    Case("simulate-n-300-digits", lambda w: ["simulate", "--synthetic", "uniform", "--n", "9" * 300, "--bins", "4",
                                             "--epsilon", "1", "--trials", "2"], ("--n",)),
    Case("simulate-trials-300-digits", lambda w: ["simulate", "--synthetic", "uniform", "--n", "100", "--bins", "4",
                                                  "--epsilon", "1", "--trials", "9" * 300], ("--trials",)),
    # ---- hierarchy plan: the optimiser's arithmetic
    Case("hierarchy-allocation-target-1e300", lambda w: hierarchy_plan(w, "--allocation", "target:1e300"),
         ("target weighted mse", "give a target near")),
    Case("hierarchy-allocation-target-1e-300", lambda w: hierarchy_plan(w, "--allocation", "target:1e-300"),
         ("target weighted mse",)),
    Case("hierarchy-allocation-target-1e50-gaussian",
         lambda w: hierarchy_plan(w, "--delta", "1e-6", "--noise", "gaussian", "--allocation", "target:1e50"),
         ("target weighted mse", "smaller target")),
    Case("hierarchy-weights-1e308", lambda w: hierarchy_plan(w, "--allocation", "optimal", "--weights", "1e308,1e308,1e308"),
         ("weights",)),
    Case("hierarchy-weights-1e-300", lambda w: hierarchy_plan(w, "--allocation", "optimal", "--weights", "1,1e-300,1e6"),
         ("weights",)),
    Case("hierarchy-alpha-1e-300", lambda w: hierarchy_plan(w, "--delta", "1e-6", "--alpha", "1e-300"), ("α",)),
    # ---- ledger: a reason must not forge lines of the cap history
    Case("ledger-cap-reason-with-escape", lambda w: ["ledger", "cap", DATASET, "20", "--reason", "ok\x1b[2Jforged"],
         ("control character", "\\x1b")),
    Case("ledger-cap-reason-with-line-feed", lambda w: ["ledger", "cap", DATASET, "20", "--reason",
                                                        "ok\n  2026-01-01  cap set to ε = 1000"], ("control character",)),
    Case("ledger-cap-reason-with-carriage-return", lambda w: ["ledger", "cap", DATASET, "20", "--reason", "ok\rforged"],
         ("control character",)),
    Case("ledger-cap-reason-with-right-to-left-override", lambda w: ["ledger", "cap", DATASET, "20", "--reason",
                                                                     "ok\u202edesrever"], ("control character",)),
    # ---- columns: a database path longer than the system allows
    Case("columns-sqlite-path-300-characters", lambda w: ["columns", f"sqlite:///{LONG}", "--table", "t"],
         ("cannot be used",)),
    Case("columns-sqlite-absolute-path-300-characters", lambda w: ["columns", f"sqlite:////{LONG}", "--table", "t"],
         ("cannot be used",)),
]


def _base_release(w: World) -> None:
    """``base.manifest.json`` + ``base.csv``: a release of 16 bins with seeded test noise, as
    ``build_manifest`` writes its manifest (unsigned)."""
    import uuid
    from datetime import datetime, timezone

    import numpy as np

    from dpgui.core.mechanism import release as engine_release
    from dpgui.core.noise import SeededRandom
    from dpgui.core.plan import PrivacySpec
    from dpgui.core.planner import auto_plan
    from dpgui.report.bundle import manifest_bytes
    from dpgui.report.cdf.bundle import ReleaseInfo, build_manifest
    from dpgui.report.cdf.csv_export import release_csv_text

    result = engine_release(np.arange(16), auto_plan(16, PrivacySpec(1.0)), SeededRandom(4), 0.0, 16.0, "l2")
    info = ReleaseInfo(DATASET, "x", uuid.uuid4().hex, datetime.now(timezone.utc), "bucket")
    csv_bytes = release_csv_text(result).encode()
    (w / "base.csv").write_bytes(csv_bytes)
    (w / "base.pdf").write_bytes(b"%PDF-1.4\n")
    manifest = build_manifest(result, info, "base", csv_bytes, b"%PDF-1.4\n", "0" * 16)
    (w / "base.manifest.json").write_bytes(manifest_bytes(manifest))


@pytest.fixture
def world(tmp_path, key_folder) -> World:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "data.csv").write_text("x\n1\n2\n3\n4\n5\n6\n7\n8\n", encoding="utf-8")
    (folder / "h.csv").write_text("r,d\nA,a1\nA,a2\nB,b1\nB,b1\nB,b2\n", encoding="utf-8")
    passphrase = folder / "passphrase.txt"
    passphrase.write_text(PASSPHRASE + "\n", encoding="utf-8")
    assert main(["ledger", "cap", DATASET, str(CAP), "--reason", "hostile input"]) == 0
    w = World(folder, key_folder / "officer.key", passphrase)
    _base_release(w)
    return w


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input_is_refused_in_one_line_without_a_traceback(case: Case, world: World):
    check_refused_in_one_line(case, world)


def test_case_ids_name_a_subcommand():
    subcommands = {"quantiles", "verify", "release", "plan", "simulate", "hierarchy", "ledger", "columns"}
    assert {c.id.split("-")[0] for c in CASES} == subcommands
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.slow
@pytest.mark.parametrize("length", [234, 245, 255])
def test_an_out_name_up_to_the_longest_file_name_is_written(world: World, length: int):
    """A 234–255 character ``--out`` name is a valid file name: the release is written (its temporary
    file named after the name's first bytes only), with its release record beside it (its stem cut to
    fit), and ``quantiles`` reads the CSV back."""
    name = "r" * (length - 4) + ".csv"
    result = run(release(world, out=name), world.folder)
    assert result.returncode == 0, result.stderr
    records = [p.name for p in world.folder.iterdir() if p.name.endswith(".release.json")]
    assert (world / name).is_file() and len(records) == 1 and len(records[0]) <= 255
    assert not [p.name for p in world.folder.iterdir() if p.name.startswith(".")]  # no temporary left
    quantiles = run(["quantiles", str(world / name)], world.folder)
    assert quantiles.returncode == 0, quantiles.stderr


def _store_reason_as_an_older_dpgui_did(reason: str) -> None:
    """A cap change whose reason holds control characters, as dpgui stored it before they were refused."""
    from dpgui.report.ledger import default_ledger_path

    with sqlite3.connect(default_ledger_path()) as conn:
        conn.execute("INSERT INTO cap_changes (dataset_id, old_epsilon, new_epsilon, old_delta, new_delta, reason, "
                     "changed_utc) VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (DATASET, CAP, CAP, 0.0, 0.0, reason, "2026-01-02T00:00:00.000000Z"))


@pytest.mark.slow
def test_ledger_show_prints_a_stored_reason_with_control_characters_escaped(world: World):
    """A reason stored raw (by a dpgui that took them) cannot forge a line of the printed cap history."""
    _store_reason_as_an_older_dpgui_did("ok\r\n  2026-01-01T00:00:00Z  cap set to ε = 1000\x1b[2K")
    result = run(["ledger", "show"], world.folder)
    assert result.returncode == 0, result.stderr
    assert "\r" not in result.stdout and "\x1b" not in result.stdout
    history = [line for line in result.stdout.splitlines() if "reason:" in line or "cap set to ε = 1000" in line]
    assert any("reason: ok\\r\\n  2026-01-01T00:00:00Z  cap set to ε = 1000\\x1b[2K" in line for line in history)
    assert not any(line.lstrip().startswith("2026-01-01T00:00:00Z") for line in result.stdout.splitlines())
