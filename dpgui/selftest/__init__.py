"""``dpgui --self-test``: the whole workflow, headless, inside whatever dpgui is running (source or frozen).

Steps: the software versions are known; the bundled sample dataset loads (through
:func:`dpgui.data.source.open_source`, the one source interface the window and the command line
use); its column, copied into an SQLite database, a Stata .dta and a semicolon-separated CSV with
decimal commas, gives the same counts through that interface (SQLite's counted in the database), and
the PostgreSQL driver (psycopg with its own libpq) loads and keyring lists its backends; a plan is made; a
throw-away signing key is created and read back; a release is spent in a throw-away budget ledger
with the secure noise; its PDF is drawn; a signed bundle is written and verified, and a one-byte
change to it is caught; the same for each further statistic, in its own module of this package
(counts over a hierarchy, :mod:`.hierarchy`; the counts of one column, :mod:`.counts`; on the bundled
flight_routes.parquet), and a release plan of two statistics (:mod:`.release_plan`); Qt's text services sort
and name time zones; the main window opens offscreen on the sample and plans it.

Nothing of the user's is touched: ``DPGUI_HOME`` and Qt's settings point into a temporary folder
that is deleted afterwards, so the real budget ledger, keys, recent files and autosaves are never
read or written. Each step prints one line ("ok" or "FAILED" with the reason); the run stops at the
first failure. Exit code 0 only if every step passed. Takes a few seconds.
"""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from dpgui.selftest.checks import EPSILON, Run, SelfTestFailure, require, verify_and_tamper
from dpgui.selftest.counts import counts_step
from dpgui.selftest.grouped_cdf import grouped_cdf_step
from dpgui.selftest.hierarchy import hierarchy_step
from dpgui.selftest.release_plan import release_plan_step
from dpgui.vocabulary import SourceKind

SAMPLE_COLUMN = "distance"
SAMPLE_BOUNDS = (0.0, 5000.0)  # miles; public bounds of the sample's flight distances
SAMPLE_BINS = 500
DATASET = "self-test"
WINDOW_TIMEOUT_S = 60.0


def _versions(run: Run) -> str:
    from dpgui.report.bundle import software_versions

    versions = software_versions()
    unknown = [name for name, version in versions.items() if version == "unknown"]
    require(not unknown, f"no version metadata for {', '.join(unknown)} (manifests would say 'unknown')")
    return ", ".join(f"{name} {version}" for name, version in versions.items())


def _sample(run: Run) -> str:
    """The bundled sample through the one source interface (:func:`dpgui.data.source.open_source`),
    as the window and the command line read it."""
    from dpgui.data.file_source import FileSource
    from dpgui.data.sample import sample_dataset_path
    from dpgui.data.source import open_source
    from dpgui.data.source_spec import parse_source

    path = sample_dataset_path()
    spec = parse_source(path)
    with open_source(spec) as sample:
        require(isinstance(sample, FileSource) and sample.engine == "this computer",
               f"the sample is not read on this computer but by {sample.engine}")
        assert isinstance(sample, FileSource)
        hist = sample.histogram(SAMPLE_COLUMN, *SAMPLE_BOUNDS, SAMPLE_BINS)
        table = sample.info
    require(hist.total > 1000, f"the sample has only {hist.total} values in {SAMPLE_COLUMN!r}")
    require(len(hist.counts) == SAMPLE_BINS, f"{len(hist.counts)} bins instead of {SAMPLE_BINS}")
    run.values.update(path=path, spec=spec, table=table, hist=hist)
    return f"{path.name}: {hist.total:,} values of {SAMPLE_COLUMN!r} in {SAMPLE_BINS} bins"


def _data_sources(run: Run) -> str:
    """The sample's column copied into an SQLite database, a Stata .dta (pyreadstat) and a
    semicolon-separated, decimal-comma CSV in the throw-away folder, each counted through
    :func:`~dpgui.data.source.open_source`: the counts must equal the sample file's, the SQLite ones
    counted in the database (one aggregate query), the CSV's dialect suggested by its head and refused
    until stated, then read as stated. Then the PostgreSQL
    driver: psycopg with its own libpq loads, and SQLAlchemy makes a ``postgresql+psycopg`` engine
    (nothing connects). A frozen app that lacks SQLAlchemy's dialects, pyreadstat, psycopg's libpq or
    keyring's backend list fails here."""
    import importlib.metadata
    import sqlite3

    import pyreadstat
    import sqlalchemy as sa

    from dpgui.data.csv_dialect import UnstatedDialect
    from dpgui.data.file_types import CsvDialect
    from dpgui.data.source import open_source
    from dpgui.data.source_spec import parse_source

    reference = run.values["hist"]
    with open_source(run.values["spec"]) as sample:
        frame = sample.preview(reference.n_rows + 1)[[SAMPLE_COLUMN]]
    require(len(frame) == reference.n_rows, f"the sample's preview has {len(frame):,} rows, not {reference.n_rows:,}")
    work = run.work / "sources"
    work.mkdir()
    database = work / "sample.db"
    with sqlite3.connect(database) as conn:
        conn.execute(f"CREATE TABLE flights ({SAMPLE_COLUMN} REAL)")
        conn.executemany("INSERT INTO flights VALUES (?)", ((float(v),) for v in frame[SAMPLE_COLUMN]))
    conn.close()
    pyreadstat.write_dta(frame, str(work / "sample.dta"))
    lines = (f"{row};{value!r}".replace(".", ",") for row, value in enumerate(frame[SAMPLE_COLUMN].tolist()))
    (work / "sample.csv").write_text(f"row;{SAMPLE_COLUMN}\n" + "\n".join(lines) + "\n", encoding="utf-8")

    semicolon = CsvDialect(";", ",")
    try:
        open_source(parse_source(work / "sample.csv")).close()
        require(False, "a CSV whose head suggests ';' and ',' was read without its dialect stated")
    except UnstatedDialect as refused:
        require(refused.suggestion.dialect == semicolon, f"the CSV's head suggested {refused.suggestion.dialect}")
    found = []
    for label, spec in (("SQLite", parse_source(f"sqlite:///{database.as_posix()}", table="flights")),
                        ("Stata", parse_source(work / "sample.dta")),
                        ("CSV with ';' and decimal ','", parse_source(work / "sample.csv", dialect=semicolon))):
        with open_source(spec) as source:
            engine = source.engine
            if spec.kind == SourceKind.DATABASE:
                require(engine.startswith("the database (SQLite"), f"SQLite's counts came from {engine}, not the database")
            if spec.location.endswith(".csv"):
                dialect = source.csv_dialect
                require(dialect == semicolon, f"the CSV's dialect was read as {dialect}, not ';' and ','")
            hist = source.histogram(SAMPLE_COLUMN, *SAMPLE_BOUNDS, SAMPLE_BINS)
        differ = int((hist.counts != reference.counts).sum())
        require(hist == reference, f"{label} gives other counts than the sample file "
               f"({hist.total:,} values, {differ:,} of {SAMPLE_BINS} bins differ)")
        found.append(f"{label} ({engine})")

    import psycopg

    require(psycopg.pq.__impl__ in ("binary", "c"), f"psycopg uses its '{psycopg.pq.__impl__}' layer: no bundled libpq")
    libpq = psycopg.pq.version()
    postgresql = sa.create_engine("postgresql+psycopg://dpgui@localhost/self-test")  # connects only when used
    require(postgresql.dialect.name == "postgresql", f"SQLAlchemy made a {postgresql.dialect.name} engine")
    postgresql.dispose()
    backends = importlib.metadata.entry_points(group="keyring.backends")
    require(bool(backends), "keyring lists no backends (its entry points are missing): passwords cannot be stored")
    return (f"{reference.total:,} values, the sample's counts from {'; '.join(found)}; PostgreSQL driver psycopg "
            f"{psycopg.__version__} with libpq {libpq // 10000}.{libpq % 10000}; keyring: {len(backends)} backends")


def _plan(run: Run) -> str:
    import math

    from dpgui.core.margins import MARGIN_NAME
    from dpgui.core.plan import PrivacySpec
    from dpgui.core.projection import project
    from dpgui.formatting import format_margin_records
    from dpgui.vocabulary import Estimator, Neighbours, Noise, Objective
    from dpgui.workspace.planning import PlanRequest
    from dpgui.workspace.statistics.cdf import CDF

    planned = CDF.plan(PlanRequest(SAMPLE_BINS, PrivacySpec(EPSILON, Neighbours.CHANGE, 1), None, "auto", Estimator.GLS,
                                   Objective.TOTAL, Noise.LAPLACE))
    plan = planned.plan
    projected = project(plan)
    require(math.isfinite(projected.total_sq_error) and projected.total_sq_error > 0,
           f"projected error {projected.total_sq_error} is not a positive number")
    run.values["plan"] = plan
    worst = planned.margin95  # the margin at the worst CDF point (dpgui.core.margins.cdf_margins' worst)
    return (f"branching {plan.shape.label}, ε = {plan.privacy.epsilon:g}, {MARGIN_NAME} {format_margin_records(worst)} "
            "at the worst point")


def _key(run: Run) -> str:
    from dpgui.report.keystore import create_key, load_secret_key

    passphrase = secrets.token_urlsafe(18)
    files = create_key("self-test", passphrase, run.work / "keys")
    key = load_secret_key(files.secret_path, passphrase)
    require(key.public_key.key_id_hex == files.key_id_hex, "the key read back has another id")
    run.values.update(key=key, public_path=files.public_path)
    return f"key {files.key_id_hex} created and read back (scrypt + AES-GCM)"


def _release(run: Run) -> str:
    """Through the release flow the window uses (:class:`~dpgui.workspace.release.ReleaseController`, whose
    run is :class:`~dpgui.workspace.flow.ReleaseFlow`'s steps), on a workspace of the sample."""
    import numpy as np

    from dpgui.core.noise import SecureRandom
    from dpgui.workspace.flow import ReleaseFlow
    from dpgui.workspace.release import FirstCapNeeded, Problem, ReleaseController, ReleaseRequest
    from dpgui.workspace.state import ColumnChoice, PlanChoice, SourceChoice, Workspace, WorkspaceState

    plan, table = run.values["plan"], run.values["table"]  # the sample's columns, from its source (step 2)
    workspace = Workspace(WorkspaceState(  # a plain file, held as the window holds it (no spec: the file itself)
        source=SourceChoice(table, table.n_rows), column=ColumnChoice(SAMPLE_COLUMN, *SAMPLE_BOUNDS, SAMPLE_BINS),
        dataset=DATASET, plan=PlanChoice(privacy=plan.privacy, plan=plan, consistency="l2"),
    ))
    controller = ReleaseController(workspace, SecureRandom)
    request = controller.request()
    if not isinstance(request, ReleaseRequest):
        raise SelfTestFailure(f"the workspace of the sample is not ready to release: {request.message}")
    require(isinstance(controller.check_budget(request), FirstCapNeeded), "a new dataset was not asked for its budget")
    check = controller.set_first_cap(request, EPSILON, "dpgui --self-test (throw-away ledger)")
    if isinstance(check, Problem):
        raise SelfTestFailure(f"the budget ledger refused the release: {check.message}")
    outcome = controller.run(request, lambda fraction, message: None, lambda: False)
    problem = controller.record(outcome)
    if problem is not None:
        raise SelfTestFailure(f"the release was not recorded: {problem.message}")
    result, info = outcome.release, outcome.info
    with ReleaseFlow.open(DATASET) as flow:
        left = flow.ledger.totals(DATASET).epsilon_remaining
    require(result.secure, "the release did not use the secure noise")
    require(bool(np.all(np.diff(result.cumulative) >= 0)), "the released cumulative counts decrease")
    require(abs(left) < 1e-12, f"the ledger shows ε = {left:g} left after spending the whole cap")
    shown = workspace.state.shown
    require(shown is not None and shown.confirmed, f"the budget ledger does not confirm the release: "
           f"{shown.problem if shown is not None else 'not shown'}")
    run.values.update(result=result, info=info)
    return f"release {info.release_id[:8]}… spent ε = {EPSILON:g}; the ledger has {left:g} left"


def _pdf(run: Run) -> str:
    from PySide6.QtWidgets import QApplication

    from dpgui.pdf.sections import report_pdf
    from dpgui.vocabulary import StatisticKind

    # The window's QApplication (its last step), made before the first PDF: a process holds one
    # application, and widgets cannot run under the bare QGuiApplication dpgui.pdf makes when none runs.
    run.values["application"] = QApplication.instance() or QApplication(["dpgui"])
    pdf = report_pdf(StatisticKind.CDF, run.values["result"], run.values["info"],
                     run.values["key"].public_key.key_id_hex)
    require(pdf.startswith(b"%PDF-") and len(pdf) > 5000, f"the PDF is not a PDF ({len(pdf)} bytes)")
    run.values["pdf"] = pdf
    return f"{len(pdf):,} bytes"


def _bundle(run: Run) -> str:
    """The signed bundle through the release flow's last step (:meth:`ReleaseFlow.sign`)."""
    from dpgui.workspace.flow import ReleaseFlow
    from dpgui.workspace.statistics.cdf import CDF

    (run.work / "bundle").mkdir()
    with ReleaseFlow.open(DATASET) as flow:  # the release is checked against the ledger's record before it is signed
        paths = flow.sign(CDF, run.work / "bundle", "self-test", run.values["result"], run.values["info"],
                              run.values["pdf"], run.values["key"])
        entry = flow.ledger.release(run.values["info"].release_id)
        pointer = entry.bundle if entry is not None else None  # no entry: the check below fails
    missing = [p.name for p in paths.all() if not p.is_file()]
    require(not missing, f"missing after writing: {', '.join(missing)}")
    require(pointer == str(paths.manifest.resolve()), "the ledger does not point to the bundle")
    run.values["paths"] = paths
    return ", ".join(p.name for p in paths.all())


def _verify(run: Run) -> str:
    paths = run.values["paths"]
    checks = verify_and_tamper(paths.manifest, paths.csv, run.values["public_path"])
    return f"signature and hashes hold ({checks} checks); a one-byte change is caught"


def _qt_text(run: Run) -> str:
    """Collation and time-zone names, which Qt on Linux takes from the ICU data that the Linux bundle
    trims (packaging/linux/slim_icu.py). Elsewhere Qt asks the operating system: nothing to check."""
    if not sys.platform.startswith("linux"):
        return "not applicable: Qt uses the system's collation and time zones here"
    from PySide6.QtCore import QCollator, QLocale, QTimeZone

    german = QCollator(QLocale("de_DE"))
    require(german.compare("ä", "z") < 0, "German collation does not sort ä before z (ICU collation data missing)")
    natural = QCollator(QLocale("en_US"))
    natural.setNumericMode(True)  # as the file dialog sorts
    require(natural.compare("file2", "file10") < 0, "numeric collation does not sort file2 before file10")
    zone = QTimeZone(b"Europe/Berlin").displayName(QTimeZone.TimeType.StandardTime, QTimeZone.NameType.LongName,
                                                   QLocale("de_DE"))
    require("Mitteleurop" in zone, f"Europe/Berlin is named {zone!r} in German (ICU time-zone data missing)")
    return f"German and numeric collation; Europe/Berlin is {zone!r}"


def _window(run: Run) -> str:
    from PySide6.QtCore import QSettings, QtMsgType, qInstallMessageHandler

    def quiet_offscreen(kind: QtMsgType, context: object, message: str) -> None:
        if "propagateSizeHints" not in message:  # the offscreen platform's harmless notice
            print(f"Qt: {message}", file=sys.stderr)

    qInstallMessageHandler(quiet_offscreen)
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)  # recent files etc. go to the throw-away folder
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(run.work / "settings"))
    from dpgui.app.main import create_application
    from dpgui.app.shell.main_window import MainWindow

    app = create_application()
    window = MainWindow()
    try:
        window.resize(1100, 750)
        window.show()
        window.open_sample()
        deadline = time.monotonic() + WINDOW_TIMEOUT_S

        def ready() -> bool:
            state = window.workspace.state
            return (state.source is not None and window._count_worker is None and not window.pool.busy()
                    and state.plan.plan is not None and not state.plan.planning)

        while not ready() and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.01)
        require(ready(), f"the window did not load and plan the sample within {WINDOW_TIMEOUT_S:g} s")
        plan = window.workspace.state.plan.plan
        assert plan is not None
        return f"{app.platformName()} platform: sample opened, plan {plan.shape.label} shown"
    finally:
        window.close()
        window.deleteLater()
        app.processEvents()
        qInstallMessageHandler(None)


STEPS: tuple[tuple[str, Callable[[Run], str]], ...] = (
    ("versions", _versions),
    ("load the sample dataset", _sample),
    ("data sources (SQLite, Stata, CSV dialect; PostgreSQL driver)", _data_sources),
    ("plan", _plan),
    ("create a throw-away signing key", _key),
    ("release (secure noise, throw-away ledger)", _release),
    ("draw the PDF report", _pdf),
    ("write the signed bundle", _bundle),
    ("verify the bundle", _verify),
    # each statistic besides the CDF: its own module of this package, and one line here
    ("counts over a hierarchy: plan, release, signed bundle, verify", hierarchy_step),
    ("counts of one column: plan, release, signed bundle, verify", counts_step),
    ("CDF for each group: plan, release, signed bundle, verify", grouped_cdf_step),
    ("a release plan of two statistics: one ledger entry, signed bundle, verify", release_plan_step),
    ("Qt text services (collation, time-zone names)", _qt_text),
    ("open the main window", _window),
)


def run_self_test(out: TextIO | None = None) -> int:
    """Run every step, printing one line each; 0 if all passed, 1 at the first failure."""
    out = out or sys.stdout
    frozen = "frozen app" if getattr(sys, "frozen", False) else "source install"
    print(f"dpgui self-test ({frozen}: {sys.executable})", file=out, flush=True)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # headless, also on a desktop
    saved_home = os.environ.get("DPGUI_HOME")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dpgui-self-test-") as folder:
        os.environ["DPGUI_HOME"] = str(Path(folder) / "home")  # the real ledger and keys are never touched
        run = Run(Path(folder))
        try:
            for number, (name, step) in enumerate(STEPS, start=1):
                step_start = time.monotonic()
                try:
                    detail = step(run)
                except Exception as err:  # noqa: BLE001 - any failure is reported, then the run stops
                    reason = str(err) if isinstance(err, SelfTestFailure) else f"{type(err).__name__}: {err}"
                    print(f"[{number}/{len(STEPS)}] FAILED {name}: {reason}", file=out, flush=True)
                    if not isinstance(err, SelfTestFailure):
                        traceback.print_exc(file=out)
                    print("self-test FAILED", file=out, flush=True)
                    return 1
                print(f"[{number}/{len(STEPS)}] ok {name} ({time.monotonic() - step_start:.2f} s): {detail}",
                      file=out, flush=True)
        finally:
            if saved_home is None:
                os.environ.pop("DPGUI_HOME", None)
            else:
                os.environ["DPGUI_HOME"] = saved_home
    print(f"self-test passed: {len(STEPS)} steps in {time.monotonic() - started:.1f} s", file=out, flush=True)
    return 0
