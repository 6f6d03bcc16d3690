"""Export Signed Bundle signs only a release the budget ledger confirms, through
the window as the officer uses it: a hand-written project file cannot be turned into a signed
"secure" bundle, a genuine release saved and reopened still exports, an edited one does not, and a
ledger that cannot record the bundle leaves no bundle behind."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np
import pytest

from dpgui.core.mechanism import release_from_levels
from dpgui.core.noise import SecureRandom
from dpgui.core.plan import Plan, PrivacySpec
from dpgui.core.tree import TreeShape
from dpgui.data.histogram import column_histogram
from dpgui.errors import DataError
from dpgui.report.bundle import verify_bundle
from dpgui.report.keystore import create_key, load_public_key
from dpgui.report.ledger import Ledger
from dpgui.report.project_file import Project, ProjectRelease, project_to_json

from gui_helpers import TIMEOUT, error_text, make_window, open_and_wait, release_and_wait, set_column

pytestmark = pytest.mark.slow

PASSPHRASE = "signing rule passphrase"


@pytest.fixture
def people_csv(tmp_path) -> Path:
    path = tmp_path / "data" / "people.csv"
    path.parent.mkdir()
    rng = np.random.default_rng(5)
    path.write_text("age\n" + "\n".join(str(a) for a in rng.integers(0, 100, 400)) + "\n")
    return path


@pytest.fixture
def out(tmp_path) -> Path:
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def no_noise():
    raise AssertionError("opening a project must never draw noise")


def open_project(qtbot, path: Path, csv: Path, out: Path):
    window = make_window(qtbot)
    window.noise_source = no_noise
    window.settings.setValue("last_folder", str(out))
    assert window.project.open_project(path)
    qtbot.waitUntil(lambda: window.table is not None and window.table.path == csv
                    and window.result_view.release() is not None and window._count_worker is None
                    and not window.pool.busy(), timeout=TIMEOUT)
    return window


def ledger_state() -> list:
    with Ledger() as ledger:
        return [(e.release_id, e.dataset_id, e.epsilon, e.bundle) for e in ledger.releases()]


def test_a_hand_written_secure_project_is_not_signed(qtbot, people_csv, out, tmp_path):
    """A forged project file: exact level counts, "secure": true and an invented release id."""
    with Ledger() as ledger:
        ledger.set_cap("people", 2.0)  # the dataset is known to the ledger; the release id is not
    plan = Plan(TreeShape(50, (5, 10)), PrivacySpec(1.0), (0.5, 0.5))
    hist = column_histogram(people_csv, "age", 0.0, 100.0, 50, "drop")
    exact = [np.asarray(lvl) for lvl in plan.shape.level_counts(hist.counts.astype(np.int64))]
    truthful = release_from_levels(plan, exact, 0.0, 100.0, "l2", True)
    record = ProjectRelease.from_release(truthful, uuid.uuid4().hex, "2026-05-01T10:00:00+00:00", "age", "drop")
    document = json.loads(project_to_json(Project(
        data_path=str(people_csv), column="age", lower=0.0, upper=100.0, bins=50, missing="drop", dataset="people",
        plan=plan.to_json(), consistency="l2", releases=(record,))))
    document["releases"][0]["secure"] = True
    hostile = tmp_path / "hostile.dpgui"
    hostile.write_text(json.dumps(document))
    before = ledger_state()

    window = open_project(qtbot, hostile, people_csv, out)
    assert not window.result_view.release().secure  # "secure": true in the file is not believed
    assert "not confirmed by the budget ledger" in window.release_status.text()
    assert window.cdf.export_dialog() is None
    assert "This release cannot be signed" in error_text(window) and "is not in the budget ledger" in error_text(window)
    assert "Nothing was written" in error_text(window)
    window.last_error = ""
    window.export_bundle()  # the menu action and the button refuse the same way, without a dialog
    assert "is not in the budget ledger" in error_text(window)
    assert list(out.iterdir()) == [] and list(tmp_path.rglob("*.manifest.json*")) == []
    assert ledger_state() == before


def _genuine_project(qtbot, csv: Path, tmp_path: Path) -> tuple[Path, np.ndarray, str]:
    """A release made in the window with secure noise, saved as a project."""
    window = make_window(qtbot)
    window.noise_source = SecureRandom
    open_and_wait(qtbot, window, csv)
    set_column(qtbot, window, "age", "0", "100", "50")
    release_and_wait(qtbot, window)
    assert window.cdf.outcome.release.secure
    target = tmp_path / "work.dpgui"
    assert window.project.save_to(target)
    window.project.autosave_timer.stop()
    return target, window.cdf.outcome.release.cumulative.copy(), window.cdf.outcome.release_id


def test_a_genuine_release_saved_and_reopened_exports_and_verifies(qtbot, people_csv, out, tmp_path):
    target, cumulative, release_id = _genuine_project(qtbot, people_csv, tmp_path)
    assert "secure" not in json.loads(target.read_text())["releases"][0]
    window = open_project(qtbot, target, people_csv, out)
    assert window.result_view.release().secure  # confirmed by the ledger's record
    assert "secure noise, confirmed by the budget ledger" in window.release_status.text()
    key = create_key("officer", PASSPHRASE)
    dialog = window.cdf.export_dialog()
    assert dialog is not None, error_text(window)
    dialog.folder.setText(str(out))
    dialog.passphrase.setText(PASSPHRASE)
    paths = dialog.export()
    assert paths is not None, dialog.message.text()
    window.after_bundle_export(dialog)
    result = verify_bundle(paths.manifest, load_public_key(key.public_path))
    assert result.ok, result.failure
    assert result.manifest["release_id"] == release_id and result.manifest["random_source"] == "os_csprng"
    with Ledger() as ledger:
        assert ledger.release(release_id).bundle == str(paths.manifest.resolve())
    with open(paths.csv) as handle:
        exported = [int(line.split(",")[2]) for line in handle.read().splitlines()[1:]]
    assert exported == [int(c) for c in cumulative]


def test_a_project_whose_released_counts_were_edited_is_not_signed(qtbot, people_csv, out, tmp_path):
    target, _, _release_id = _genuine_project(qtbot, people_csv, tmp_path)
    document = json.loads(target.read_text())
    document["releases"][0]["levels"][-1][3] += 7  # one released count changed by hand
    edited = tmp_path / "edited.dpgui"
    edited.write_text(json.dumps(document))
    before = ledger_state()

    window = open_project(qtbot, edited, people_csv, out)
    assert "not confirmed by the budget ledger" in window.release_status.text()
    assert window.cdf.export_dialog() is None
    assert "released counts" in error_text(window) and "differ" in error_text(window)
    assert list(tmp_path.rglob("*.manifest.json*")) == [] and ledger_state() == before


def test_a_bundle_the_ledger_cannot_record_is_removed_and_the_officer_told(qtbot, people_csv, out, tmp_path):
    window = make_window(qtbot)
    window.noise_source = SecureRandom
    window.settings.setValue("last_folder", str(out))
    open_and_wait(qtbot, window, people_csv)
    set_column(qtbot, window, "age", "0", "100", "50")
    release_and_wait(qtbot, window)
    create_key("officer", PASSPHRASE)
    dialog = window.cdf.export_dialog()
    assert dialog is not None, error_text(window)
    dialog.folder.setText(str(out))
    dialog.passphrase.setText(PASSPHRASE)

    def broken(self, release_id, bundle_path):
        raise DataError("the budget ledger cannot be used: disk I/O error", "check the disk and try again")

    with pytest.MonkeyPatch.context() as patch:  # not the test's monkeypatch: that one also holds DPGUI_HOME
        patch.setattr(Ledger, "record_bundle", broken)
        assert dialog.export() is None
    message = dialog.message.text()
    assert "could not record it" in message and "files were removed" in message and "disk I/O error" in message
    assert list(out.iterdir()) == [] and list(tmp_path.rglob("*.manifest.json*")) == []
    with Ledger() as ledger:
        assert ledger.release(window.cdf.outcome.release_id).bundle is None
