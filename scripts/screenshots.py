"""Open every screen of the real window and save screenshots (used by the Xvfb test and for the README).

    python scripts/screenshots.py OUTDIR [--appearance system|light|dark]

Runs on whatever display Qt is given (Xvfb in CI: QT_QPA_PLATFORM=xcb, DISPLAY set). Each screen
is captured from the screen itself (QScreen.grabWindow of the X root window), so what is saved is
what a user would see, including the window manager-less frame. The release uses the window's own
secure noise, as a user's would: only such a release can be signed, and the last screens export it
as a signed bundle into a throw-away folder (the ledger is the throw-away DPGUI_HOME's: the script makes
one when none is set). The last four screens are the "Counts over a hierarchy" mode's steps on the
bundled hierarchy sample (levels, plan, tree, result). Exit 0 when every screenshot was written.

The README's images are screens of a run on Xvfb with a screen larger than the 1366×860 window:

    QT_QPA_PLATFORM=xcb python scripts/xvfb.py --size 2800x1800 python scripts/screenshots.py OUT

docs/screenshot-plan.png = 03-plan, -plan-delta = 03b, -plan-gaussian = 03c, -results = 07, -database =
21-database-dialog, -csv-dialect = 23, -hierarchy-levels/-plan/-tree/-result = 15–18.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from dpgui.app.main import create_application


def wait(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        QApplication.processEvents()
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not reach the expected state in time")
        time.sleep(0.01)


def settle(seconds: float = 0.4) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.01)


def public_prior(folder: Path) -> Path:
    """A public prior for the hierarchy sample, as an officer might have one (e.g. last year's published
    counts): the sample's routes with counts scaled by a random factor of 0.7 to 1.3 (seeded)."""
    import numpy as np

    from dpgui.data.hierarchy import HIERARCHY_SAMPLE_LEVELS, count_paths, hierarchy_sample_path

    counts = count_paths(hierarchy_sample_path(), list(HIERARCHY_SAMPLE_LEVELS))
    factors = np.random.default_rng(2024).uniform(0.7, 1.3, size=len(counts.paths))
    path = folder / "flights-last-year.csv"
    lines = [",".join((*HIERARCHY_SAMPLE_LEVELS, "count"))]
    lines += [",".join((*p, str(int(round(c * f))))) for p, c, f in zip(counts.paths, counts.counts.tolist(), factors)]
    path.write_text("\n".join(lines) + "\n")
    return path


def hierarchy_screens(window, shot, appearance: str) -> None:
    """The "Counts over a hierarchy" mode's four steps on the bundled sample (File → Open Hierarchy Sample:
    its categories are public), planned with the least error within ε on a public prior file, released
    with the window's secure noise (the throw-away ledger pays)."""
    import tempfile

    from dpgui.app.hierarchy.release_step import TAB_LEVELS, TAB_PLAN, TAB_RESULTS, TAB_TREE
    from dpgui.report.ledger import Ledger

    page = window.hierarchy
    window.open_hierarchy_sample()
    wait(lambda: window.in_hierarchy_mode() and page.state_ws.state.planned is not None and not page.is_busy(), 120.0)
    page.tabs.setCurrentIndex(TAB_LEVELS)
    shot("15-hierarchy-levels")  # no prior file: the sample's categories declared public (ticked by the action)
    page.set_prior(public_prior(Path(tempfile.mkdtemp(prefix="dpgui-screenshot-prior-"))))
    wait(lambda: page.state_ws.state.loaded is not None and page.state_ws.state.loaded.prior_path is not None
         and page.state_ws.state.planned is not None and not page.is_busy(), 120.0)
    page.delta.set_text("1e-9")  # (ε, δ): Ghazi et al.'s (2021) comparison beside the plan
    page.delta.edited.emit()
    page.allocation.setCurrentIndex(page.allocation.findData("optimal"))
    wait(lambda: page.state_ws.state.planned is not None and not page.is_busy()
         and page.state_ws.state.planned.plan.allocation == "optimal" and page.state_ws.state.planned.alpha is not None,
         120.0)
    page.tabs.setCurrentIndex(TAB_PLAN)
    wait(lambda: not page.curves.busy(), 120.0)  # the margin-against-ε plot is computed on a worker
    shot("16-hierarchy-plan")
    page.tabs.setCurrentIndex(TAB_TREE)
    shot("17-hierarchy-tree")
    dataset = window.workspace.state.dataset
    with Ledger() as ledger:  # DPGUI_HOME is a throw-away folder when this script runs in tests
        ledger.set_cap(dataset, 2.0, 1e-6, "screenshots")
    request = page.release_step.release_request()
    if request is None:
        raise RuntimeError("the hierarchy release request is not valid: " + page.release_step.release_status.text())
    page.release_step.start_release(request)
    wait(lambda: page.state_ws.state.outcome is not None and page.release_step.release_worker is None, 120.0)
    page.tabs.setCurrentIndex(TAB_RESULTS)
    page.release_step.result_view.search.setText("PDX")  # Portland, Oregon: the search opens the tree down to it
    shot("18-hierarchy-result")


def source_screens(window, shot) -> None:
    """Data where it lives: the "Connect to a database…" dialog on an SQLite file made here (its
    inline refusal of a password in the URL, then a successful test with the first rows), step 1
    showing the database as the data ("Counted by: the database (…)"), and step 1 with a
    semicolon-separated, decimal-comma CSV whose dialect was detected."""
    import sqlite3
    import tempfile

    import numpy as np

    from dpgui.app.cdf.mode import TAB_DATA

    folder = Path(tempfile.mkdtemp(prefix="dpgui-screenshot-sources-"))
    rng = np.random.default_rng(2013)
    db = folder / "survey.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE households (id INTEGER, region TEXT, persons INTEGER, income REAL, rent REAL)")
        con.executemany("INSERT INTO households VALUES (?, ?, ?, ?, ?)", [
            (i, str(rng.choice(["North", "South", "East", "West"])), int(rng.integers(1, 7)),
             round(float(rng.gamma(2.2, 21000)), 2), round(float(rng.gamma(3.0, 300)), 2)) for i in range(5000)])
    window.set_mode(False)
    window.connect_database()
    dialog = window.database_dialog
    dialog.url_edit.setText("postgresql://officer:hunter2@db.example.org:5432/census")
    dialog.table_edit.setText("households")
    shot("20-database-password-in-url", dialog)
    dialog.url_edit.setText(f"sqlite:///{db}")
    dialog.password_edit.setText("")
    dialog.test_connection()
    wait(lambda: dialog._worker is None)
    shot("21-database-dialog", dialog)
    dialog._on_ok()
    wait(lambda: window.workspace.state.source is not None and window.workspace.state.source.source_spec.kind
         == "database" and not window.pool.busy())
    window.tabs.setCurrentIndex(TAB_DATA)
    page = window.data_page
    page.select_column("income")
    for field, value in ((page.lower_field, "0"), (page.upper_field, "250000"), (page.bins, "1000")):
        field.set_text(value)
        field.edited.emit()
    shot("22-data-database")
    csv = folder / "messungen.csv"
    lines = ["kreis;haushalte;einkommen;miete"] + [
        f"{k};{int(rng.integers(1, 7))};{rng.gamma(2.2, 21000):.2f};{rng.gamma(3.0, 300):.2f}".replace(".", ",")
        for k in rng.choice(["Nord", "Süd", "Ost", "West"], 3000)]
    csv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    window.open_file(str(csv))
    wait(lambda: window.table is not None and window.table.path == csv and not window.pool.busy())
    page.select_column("einkommen")
    for field, value in ((page.lower_field, "0"), (page.upper_field, "250000"), (page.bins, "1000")):
        field.set_text(value)
        field.edited.emit()
    shot("23-data-csv-dialect")
    window.data_page.open_dialect_dialog()
    shot("24-dialect-dialog", window.data_page.dialect_dialog)
    window.data_page.dialect_dialog.reject()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--appearance", default="light", choices=("system", "light", "dark"))
    parser.add_argument("--size", default="1366x860")
    args = parser.parse_args(argv)
    args.outdir.mkdir(parents=True, exist_ok=True)
    if not os.environ.get("DPGUI_HOME"):  # never the officer's own ledger, keys or autosave
        import tempfile

        os.environ["DPGUI_HOME"] = tempfile.mkdtemp(prefix="dpgui-screenshots-home-")
        print(f"DPGUI_HOME={os.environ['DPGUI_HOME']} (a throw-away home)", flush=True)

    app = create_application()
    QSettings().setValue("appearance", args.appearance)
    from dpgui.app.cdf.mode import TAB_DATA, TAB_PLAN, TAB_RESULTS, TAB_TREE
    from dpgui.app.shell.main_window import MainWindow
    from dpgui.app.widgets.theme import apply_appearance

    apply_appearance(args.appearance)
    window = MainWindow()
    width, height = (int(v) for v in args.size.split("x"))
    window.resize(width, height)
    window.move(0, 0)
    window.show()
    screen = app.primaryScreen()
    written: list[Path] = []

    def shot(name: str, widget=None) -> None:
        settle()
        target = widget if widget is not None else window
        pixmap = screen.grabWindow(0, target.x(), target.y(), target.frameGeometry().width(),
                                   target.frameGeometry().height())
        if pixmap.isNull() or pixmap.width() < 50:
            pixmap = target.grab()
        path = args.outdir / f"{name}.png"
        if not pixmap.save(str(path)):
            raise OSError(f"could not write {path}")
        written.append(path)
        print(f"wrote {path} ({pixmap.width()}×{pixmap.height()})", flush=True)

    shot("01-start")
    window.open_sample()
    wait(lambda: window.table is not None)
    page = window.data_page
    wait(lambda: page.current_column() is not None)
    plan_page = window.plan_page
    wait(lambda: plan_page.plan is not None and not plan_page.is_planning())
    shot("02-data")
    window.tabs.setCurrentIndex(TAB_PLAN)
    wait(lambda: plan_page.plan is not None and not plan_page.is_planning())
    wait(lambda: not plan_page.plots.optimisation_pending and not plan_page.plots.busy, timeout=120.0)
    shot("03-plan")
    plan_page.set_delta(1e-9)  # (ε, δ): the Gaussian curves beside the plan's, and why the noise was chosen
    wait(lambda: plan_page.plan.privacy.delta == 1e-9 and not plan_page.is_planning())
    wait(lambda: not plan_page.plots.optimisation_pending and not plan_page.plots.busy, timeout=120.0)
    shot("03b-plan-delta")
    plan_page.set_noise("gaussian")  # Gaussian forced: the budget table and plot (d) in ρ per level
    wait(lambda: plan_page.plan.noise == "gaussian" and not plan_page.is_planning())
    wait(lambda: not plan_page.plots.optimisation_pending and not plan_page.plots.busy, timeout=120.0)
    shot("03c-plan-gaussian")
    plan_page.set_noise("auto")
    plan_page.set_delta(0.0)
    wait(lambda: plan_page.plan.privacy.delta == 0 and plan_page.plan.noise == "laplace" and not plan_page.is_planning())
    # where do you need accuracy: the lowest 10 % of the range, planned for it and offered in words
    plan_page.focus.setCurrentIndex(plan_page.focus.findData("lower"))
    wait(lambda: plan_page.plan.focus is not None and not plan_page.is_planning() and plan_page.focus_note.text())
    wait(lambda: not plan_page.plots.projecting and not plan_page.plots.busy, timeout=120.0)
    from PySide6.QtWidgets import QScrollArea

    controls = plan_page.findChild(QScrollArea)
    controls.ensureWidgetVisible(plan_page.focus_note)
    shot("03d-plan-focus")
    controls.verticalScrollBar().setValue(0)
    plan_page.focus.setCurrentIndex(plan_page.focus.findData("everywhere"))
    wait(lambda: plan_page.plan.focus is None and not plan_page.is_planning())
    plan_page.target.set_text("1")
    plan_page.target_unit.setCurrentIndex(plan_page.target_unit.findData("percent"))
    before = plan_page.plan
    plan_page.accuracy_first()
    wait(lambda: plan_page.plan is not before and not plan_page.is_planning())
    wait(lambda: not plan_page.plots.projecting and not plan_page.plots.busy, timeout=120.0)
    shot("04-accuracy-first")
    plan_page.set_epsilon(1.0)
    wait(lambda: not plan_page.is_planning() and plan_page.plan.privacy.epsilon == 1.0)
    window.tabs.setCurrentIndex(TAB_TREE)
    shot("05-bin-tree")
    from dpgui.report.ledger import Ledger

    inputs_dataset = "flights"
    with Ledger() as ledger:  # DPGUI_HOME is a throw-away folder when this script runs in tests
        ledger.set_cap(inputs_dataset, 2.0, 0.0, "screenshots")
    inputs = window.cdf.release_inputs()
    if inputs is None:
        raise RuntimeError("the release inputs are not valid: " + getattr(window, "last_error", ""))
    box = window.cdf.confirmation_box(inputs)
    box.show()
    settle()
    shot("06-confirm-release", box)
    box.close()
    window.cdf.start_release(inputs)
    wait(lambda: window.cdf.outcome is not None)
    window.tabs.setCurrentIndex(TAB_RESULTS)
    shot("07-results")
    toggle = window.result_view.true_checkbox
    toggle.setChecked(True)
    shot("08-results-confidential-toggle")
    toggle.setChecked(False)
    for field, value in ((page.lower_field, "10"), (page.upper_field, "5"), (page.bins, "0")):
        field.set_text(value)
        field.edited.emit()  # as if typed: the page re-checks the bounds together
    window.tabs.setCurrentIndex(TAB_DATA)
    shot("09-data-bad-input")
    plan_page.epsilon.set_text("abc")
    window.tabs.setCurrentIndex(TAB_PLAN)
    shot("10-plan-bad-epsilon")

    from dpgui.report.keystore import create_key

    create_key("officer", "screenshot passphrase")
    dialog = window.cdf.export_dialog()
    import tempfile

    dialog.folder.setText(tempfile.mkdtemp(prefix="dpgui-screenshot-bundle-"))  # a new folder: never overwrites
    dialog.name.setText(f"flights-{args.appearance}")
    dialog.passphrase.setText("screenshot passphrase")
    dialog.show()
    shot("11-export-bundle", dialog)
    if dialog.export() is None:
        raise RuntimeError("the export failed: " + dialog.message.text())
    window.after_bundle_export(dialog)
    dialog.close()
    shot("11b-exported", window.exported_box)
    window.exported_box.close()  # "Exported …" with Open Folder: not in the next screens
    from dpgui.app.dialogs.ledger import LedgerDialog
    from dpgui.app.dialogs.verify import VerifyDialog
    from dpgui.app.dialogs.keys import KeyManagerDialog

    ledger_dialog = LedgerDialog(window)
    ledger_dialog.show()
    ledger_dialog.select_dataset(inputs_dataset)
    shot("12-ledger", ledger_dialog)
    ledger_dialog.close()
    verify = VerifyDialog(window)
    verify.show()
    verify.set_manifest(str(dialog.paths.manifest))
    verify.verify()
    shot("13-verify", verify)
    verify.close()
    keys = KeyManagerDialog(window)
    keys.show()
    shot("14-keys", keys)
    keys.close()
    source_screens(window, shot)
    hierarchy_screens(window, shot, args.appearance)
    window.close()
    print(f"{len(written)} screenshots in {args.outdir}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
