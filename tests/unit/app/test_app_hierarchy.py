"""The "Counts over a hierarchy" mode, headless, as the officer uses it: open the
bundled flights (time zone → airport → route), choose the levels, see the plan, change a level's
budget, release through the budget ledger, browse and search the result, export a signed bundle and
verify it. Bad inputs: one level only, a value under two parents — a message on the page, nothing spent."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
import pytest

from dpgui.core.hierarchy import Hierarchy, project_hierarchy
from dpgui.core.noise import SecureRandom
from dpgui.data.hierarchy import HIERARCHY_SAMPLE_LEVELS, count_paths, hierarchy_sample_path
from dpgui.report.bundle import verify_bundle
from dpgui.report.keystore import create_key, load_public_key
from dpgui.report.ledger import Ledger

from gui_helpers import TIMEOUT, error_text, make_window, open_and_wait, open_other_data
from hierarchy_gui_helpers import release_and_wait
from hierarchy_gui_helpers import mode

PASSPHRASE = "hierarchy passphrase"
SAMPLE_SIZES = (1, 9, 105, 224)  # time zones, airports, routes of the bundled flights


def wait_planned(qtbot, window, check=lambda planned: True) -> None:
    page = mode(window)
    qtbot.waitUntil(lambda: page.state_ws.state.planned is not None and not page.is_busy()
                    and check(page.state_ws.state.planned), timeout=TIMEOUT)


def spends() -> list:
    with Ledger() as ledger:
        return [(e.dataset_id, e.epsilon) for e in ledger.releases()]


@pytest.fixture
def sample_window(qtbot):
    """The window on the hierarchical sample, opened from the start page's button, levels chosen."""
    window = make_window(qtbot, seed=5)
    window.start_page.hierarchy_sample_button.click()
    qtbot.waitUntil(lambda: window.table is not None and window.in_hierarchy_mode(), timeout=TIMEOUT)
    wait_planned(qtbot, window)
    return window


def test_whole_hierarchy_workflow(qtbot, sample_window, tmp_path):
    window = sample_window
    page = mode(window)
    path = hierarchy_sample_path()

    # ---- step 1: the mode, the levels and their distinct values (counted on a worker)
    assert window.modes.currentWidget() is page
    assert page.categories_public.isChecked()  # the sample button declares the public sample's categories public
    assert page.chosen_levels() == HIERARCHY_SAMPLE_LEVELS
    qtbot.waitUntil(lambda: page.state_ws.state.column_counts is not None, timeout=TIMEOUT)
    counts = dict(page.state_ws.state.column_counts)
    assert [counts[c] for c in HIERARCHY_SAMPLE_LEVELS] == list(SAMPLE_SIZES[1:])
    assert any("105 values" in page.level_combos[1].itemText(i) for i in range(page.level_combos[1].count()))
    assert "336,776 rows" in page.read_note.text()
    assert "published" in page.published_note.text()
    assert not page.counts_from_data.isChecked()  # the opt-in is off by default

    # ---- step 2: the plan (uniform, no prior): under change N is public, the errors projected at N spread evenly
    planned = page.state_ws.state.planned
    plan = planned.plan
    assert plan.level_sizes == SAMPLE_SIZES and plan.noise == "laplace" and plan.privacy.epsilon == 1.0
    assert plan.level_budgets[0] == 0 and math.fsum(plan.level_budgets) == pytest.approx(1.0)
    assert plan.assumed_records == 336_776 and "336,776 records" in page.summary.text()
    assert page.table.rowCount() == 4 and page.table.item(3, 2).text() == "224"
    assert page.table.item(3, 8).text() == f"± {planned.errors.levels[3].margin95:,.1f} records"
    # under add/remove N is private: no counts unless an estimate is typed, the noise's own variance per level
    page.neighbours.setCurrentIndex(page.neighbours.findData("addremove"))
    wait_planned(qtbot, window, lambda p: p.plan.privacy.neighbours == "addremove")
    planned = page.state_ws.state.planned
    plan = planned.plan
    assert planned.projection is None and "depend on the counts" in page.summary.text()
    assert page.records.text() == ""  # the file's row count is never put in the field
    noise_variance = 224 * plan.level_noise_variances()[3]
    assert float(page.table.item(3, 6).text().replace(",", "")) == pytest.approx(noise_variance, rel=1e-2)
    page.neighbours.setCurrentIndex(page.neighbours.findData("change"))
    wait_planned(qtbot, window, lambda p: p.plan.privacy.neighbours == "change")

    # bad values: a message on the page, no plan, nothing to release
    page.epsilon.set_text("-1")
    page.epsilon.edited.emit()
    assert "ε must be" in page.epsilon.error_text() and "No plan" in page.summary.text()
    assert page.state_ws.state.planned is None
    window.release()
    assert spends() == [] and page.tabs.currentIndex() == 1
    page.epsilon.set_text("1")
    page.epsilon.edited.emit()
    wait_planned(qtbot, window)
    page.allocation.setCurrentIndex(page.allocation.findData("optimal"))  # needs counts: none yet
    qtbot.waitUntil(lambda: "needs node counts" in page.plan_message.text(), timeout=TIMEOUT)
    assert page.state_ws.state.planned is None
    page.allocation.setCurrentIndex(page.allocation.findData("uniform"))
    wait_planned(qtbot, window)

    # opting in: the projection per level appears, equal to the engine's at the data's counts
    page.counts_from_data.setChecked(True)
    wait_planned(qtbot, window, lambda p: p.projection is not None)
    planned = page.state_ws.state.planned
    assert planned.plan.prior_source == "confidential data (opted in)"
    assert set(planned.projections) == {"topdown", "gls"}
    best = min(planned.projections, key=lambda m: planned.projections[m].weighted_mse)
    assert planned.plan.consistency == best  # default: the lower projected error
    data = count_paths(path, HIERARCHY_SAMPLE_LEVELS)
    tree = Hierarchy.from_paths(HIERARCHY_SAMPLE_LEVELS, data.paths)
    leaves = np.zeros(tree.level_sizes[-1], dtype=np.int64)
    np.add.at(leaves, tree.leaf_index(data.paths), data.counts)
    reference = project_hierarchy(planned.plan, tree.aggregate(leaves), hierarchy=tree)
    assert planned.projection.weighted_mse == pytest.approx(reference.weighted_mse, rel=1e-9)
    level3 = planned.projection.levels[3]
    assert float(page.table.item(3, 7).text().replace(",", "")) == pytest.approx(level3.mse, rel=1e-2)
    assert "CONFIDENTIAL" in page.summary.text()

    # change a budget in the editor: level 1 gets 0.1, the others share the rest in proportion
    page.table.item(1, 4).setText("0.1")
    wait_planned(qtbot, window, lambda p: p.plan.level_budgets[1] == pytest.approx(0.1))
    plan = page.state_ws.state.planned.plan
    assert plan.level_budgets == pytest.approx((0.0, 0.1, 0.45, 0.45))
    assert page.table.item(1, 4).text() == "0.1"
    # a budget above the total: a message on the page, the plan unchanged
    page.table.item(2, 4).setText("3")
    assert "between 0 and the total" in page.plan_message.text()
    assert page.state_ws.state.planned.plan.level_budgets == pytest.approx((0.0, 0.1, 0.45, 0.45))

    # ---- step 3: the icicle of the real hierarchy
    icicle = page.tree_view.icicle
    assert icicle.hierarchy.level_sizes == SAMPLE_SIZES
    node = icicle.node_at(icicle.node_centre(2, 10).x(), icicle.node_centre(2, 10).y())
    assert node == (2, 10)
    assert "budget ε = 0.45" in icicle.describe(2, 10)

    # ---- step 4: release through the ledger (cap asked once), nothing before the confirmation
    assert spends() == []
    release_and_wait(qtbot, window)
    outcome = page.state_ws.state.outcome
    assert outcome is not None, error_text(window)
    released = outcome.release
    assert spends() == [(outcome.dataset, 1.0)]
    for level in range(3):  # consistent, non-negative whole numbers; the root is N exactly (change model)
        start, _ = released.hierarchy.child_ranges(level)
        sums = np.add.reduceat(released.counts[level + 1], start) if len(start) else []
        np.testing.assert_array_equal(sums, released.counts[level])
    assert all((c >= 0).all() for c in released.counts) and int(released.counts[0][0]) == 336_776
    assert "TEST NOISE" in page.release_step.release_status.text() and page.tabs.currentIndex() == 3
    assert ("Every parent equals the sum" in page.release_step.release_status.text()
            and "on average" in page.release_step.release_status.text())

    # browse: the root, then its time zones; search a route and a path
    view = page.release_step.result_view
    model = view.model
    root = model.index(0, 0)
    assert model.data(root) == "All records" and model.data(model.index(0, 1)) == "336,776"
    assert model.rowCount(root) == 9
    first_zone = model.index(0, 0, root)
    assert model.parent(first_zone) == root
    view.search.setText("JFK")
    found = view.selected_node()
    assert found is not None and "JFK" in released.hierarchy.labels[found[0] - 1][found[1]]
    index = view.tree.currentIndex()
    assert view.tree.isExpanded(model.parent(index))
    assert "of" in view.matches_label.text()
    view.search.setText("no such airport")
    assert view.matches_label.text() == "no category contains this"


def test_export_a_signed_bundle_and_verify_it(qtbot, sample_window, tmp_path):
    window = sample_window
    page = mode(window)
    window.noise_source = SecureRandom  # only secure noise may be signed
    release_and_wait(qtbot, window)
    outcome = page.state_ws.state.outcome
    assert outcome is not None and outcome.secure, error_text(window)
    key = create_key("officer", PASSPHRASE)
    out = tmp_path / "out"
    out.mkdir()
    assert window.export_bundle_action.isEnabled()
    dialog = page.release_step.export_dialog()
    dialog.folder.setText(str(out))
    dialog.passphrase.setText(PASSPHRASE)
    paths = dialog.export()
    assert paths is not None, dialog.message.text()
    result = verify_bundle(paths.manifest, load_public_key(key.public_path))
    assert result.ok, result.failure
    assert result.manifest["release_id"] == outcome.release_id
    with Ledger() as ledger:
        assert ledger.release(outcome.release_id).bundle == str(paths.manifest.resolve())
    with open(paths.csv, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == sum(SAMPLE_SIZES)
    assert spends() == [(outcome.dataset, 1.0)]  # exporting spends nothing


# ------------------------------------------------------------------------------------------ bad inputs

def _nested_csv(path: Path, rows: list[tuple[str, str]]) -> Path:
    path.write_text("region,district\n" + "\n".join(f"{a},{b}" for a, b in rows) + "\n")
    return path


def test_one_level_only_is_a_message_on_the_page(qtbot, tmp_path):
    data = _nested_csv(tmp_path / "schools.csv", [("North", "N1"), ("North", "N2"), ("South", "S1")] * 10)
    window = make_window(qtbot)
    open_and_wait(qtbot, window, data)
    window.set_mode(True)
    page = mode(window)
    page.set_levels(("region",))
    assert "at least 2 level columns" in page.levels_text()
    assert page.state_ws.state.planned is None
    window.release()  # nothing to release: says what to do, spends nothing
    assert "level" in page.release_step.release_status.text().lower() and page.tabs.currentIndex() == 0
    assert spends() == []


def test_a_value_under_two_parents_is_a_message_on_the_page(qtbot, tmp_path):
    data = _nested_csv(tmp_path / "schools.csv",
                       [("North", "Central"), ("South", "Central"), ("North", "N1"), ("South", "S1")] * 10)
    window = make_window(qtbot)
    open_and_wait(qtbot, window, data)
    window.set_mode(True)
    page = mode(window)
    page.set_levels(("region", "district"))
    qtbot.waitUntil(lambda: page.levels_text() != "" and not page.is_busy(), timeout=TIMEOUT)
    message = page.levels_text()
    assert "two parents" in message and "'district'" in message and "'region'" in message, message
    assert not any(label in message for label in ("Central", "North", "South"))  # data is never quoted
    assert "Nothing was spent" in message
    assert page.state_ws.state.planned is None
    window.release()
    assert spends() == []


def test_a_public_prior_file_gives_the_categories_and_the_counts(qtbot, tmp_path):
    data = _nested_csv(tmp_path / "schools.csv", [("North", "N1")] * 20 + [("South", "S1")] * 15)
    prior = tmp_path / "prior.csv"
    prior.write_text("region,district,count\nNorth,N1,18\nNorth,N2,4\nSouth,S1,16\n")
    window = make_window(qtbot)
    open_and_wait(qtbot, window, data)
    window.set_mode(True)
    page = mode(window)
    page.set_prior(prior)
    assert not page.counts_from_data.isEnabled()  # the prior's counts are public: no opt-in needed
    page.set_levels(("region", "district"))
    wait_planned(qtbot, window, lambda p: p.projection is not None)
    planned = page.state_ws.state.planned
    assert planned.plan.level_sizes == (1, 2, 3)  # N2 comes from the prior: published with a count
    assert planned.plan.prior_source == "prior file" and "prior file" in page.summary.text()
    assert "categories of the prior file" in page.published_note.text()
    # the optimiser may use the public counts; the weight editor changes the plan
    page.allocation.setCurrentIndex(page.allocation.findData("optimal"))
    wait_planned(qtbot, window, lambda p: p.plan.allocation == "optimal")
    page.table.item(2, 3).setText("4")
    wait_planned(qtbot, window, lambda p: p.plan.weights == (1.0, 1.0, 4.0))
    release_and_wait(qtbot, window)
    outcome = page.state_ws.state.outcome
    assert outcome.info.node_list_source == "prior file" and outcome.info.prior_name == "prior.csv"
    assert outcome.release.counts[2].size == 3
    target = tmp_path / "counts.csv"
    assert window.export_action.isEnabled() and page.release_step.export_csv_to(str(target))
    with open(target, newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 6


@pytest.mark.parametrize("typed", [False, True])
def test_a_numeric_level_is_allowed_and_said_only_from_the_files_types(qtbot, tmp_path, typed):
    """A Parquet file's own type says that 'code' is numeric: the note (published with the release) says so.
    A CSV's column "type" would be read from its cells (one record's value would decide it): no note."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [("North", 11), ("North", 12), ("South", 21)] * 5
    if typed:
        data = tmp_path / "codes.parquet"
        pq.write_table(pa.table({"region": [r for r, _ in rows], "code": [c for _, c in rows]}), data)
    else:
        data = tmp_path / "codes.csv"
        data.write_text("region,code\n" + "\n".join(f"{r},{c}" for r, c in rows) + "\n")
    window = make_window(qtbot)
    open_and_wait(qtbot, window, data)
    window.set_mode(True)
    page = mode(window)
    qtbot.waitUntil(lambda: page.state_ws.state.column_counts is not None, timeout=TIMEOUT)
    assert any("numbers, used as labels" in page.level_combos[1].itemText(i) for i in range(page.level_combos[1].count()))
    page.set_levels(("region", "code"))
    wait_planned(qtbot, window)
    said = "Column 'code' is numeric; its values are used as categories." in page.read_note.text()
    assert said == typed, page.read_note.text()


def test_multiplicative_noise_of_ghazi_et_al(qtbot, tmp_path):
    rows = [(f"R{r}", f"R{r}-D{d}") for r in range(3) for d in range(4) for _ in range(40)]
    data = _nested_csv(tmp_path / "big.csv", rows)
    window = make_window(qtbot)
    open_and_wait(qtbot, window, data)
    window.set_mode(True)
    page = mode(window)
    page.set_levels(("region", "district"))
    wait_planned(qtbot, window)
    assert not page.alpha.isEnabled()  # α matters only with δ > 0
    page.delta.set_text("1e-6")
    page.epsilon.set_text("4")
    page.alpha.set_text("0.5")
    page.consistency.setCurrentIndex(page.consistency.findData("none"))
    page.noise.setCurrentIndex(page.noise.findData("multiplicative"))
    page.delta.edited.emit()
    wait_planned(qtbot, window, lambda p: p.plan.noise == "multiplicative")
    planned = page.state_ws.state.planned
    assert page.alpha.isEnabled() and planned.plan.multiplicative.alpha == 0.5
    assert page.table.item(1, 4).text() == "—"  # no per-level budget
    assert planned.alpha is not None and page.compare.rowCount() == 3 and not page.compare.isHidden()
    assert "multiplicative" in page.summary.text()


def test_downstream_use_of_a_node_as_ko_ziani_fioretto_section_5(qtbot, sample_window):
    window = sample_window
    page = mode(window)
    icicle = page.tree_view.icicle
    page.tabs.setCurrentIndex(2)
    page.project_downstream(1, 0)  # no counts yet: says what it needs
    assert "needs counts" in page.tree_view.downstream.text()
    page.counts_from_data.setChecked(True)
    wait_planned(qtbot, window, lambda p: p.projection is not None)
    new_york = page.state_ws.state.loaded.hierarchy.labels[0].index("America/New_York")
    centre = icicle.node_centre(1, new_york)
    qtbot.mouseDClick(icicle, Qt.MouseButton.LeftButton, pos=centre.toPoint())
    assert icicle.x_range != (0.0, 1.0)  # zoomed into the time zone
    qtbot.waitUntil(lambda: "Downstream use (Ko, Ziani & Fioretto 2025, §5) of America/New_York"
                    in page.tree_view.downstream.text(), timeout=TIMEOUT)
    text = page.tree_view.downstream.text()
    assert "log(1 + share)" in text and "share²" in text and "bias²" in text
    icicle.show_all()
    assert icicle.x_range == (0.0, 1.0)


def test_a_release_of_your_own_categories_needs_the_declaration(qtbot, tmp_path):
    """Without a prior file the data's own categories are published: the Levels step's checkbox "These
    categories are public" starts unticked for the user's file; Release is refused with the message next
    to it (nothing spent) until it is ticked; a prior file hides it (its categories are public)."""
    data = _nested_csv(tmp_path / "own.csv", [(f"R{r}", f"R{r}-D{d}") for r in range(2) for d in range(3)] * 5)
    window = make_window(qtbot)
    open_and_wait(qtbot, window, data)
    window.set_mode(True)
    page = mode(window)
    page.set_levels(("region", "district"))
    wait_planned(qtbot, window)
    assert not page.categories_public.isChecked() and not page.categories_public.isHidden()
    window.release()
    assert spends() == [] and page.tabs.currentIndex() == 0
    assert "categories are public" in page.categories_message.text() and not page.categories_message.isHidden()
    assert "Nothing was spent" in page.release_step.release_status.text()
    planned = page.state_ws.state.planned
    page.categories_public.setChecked(True)
    assert page.categories_message.isHidden() and page.state_ws.state.planned is planned  # no new plan needed
    release_and_wait(qtbot, window)
    assert page.state_ws.state.outcome is not None and len(spends()) == 1, error_text(window)
    prior = tmp_path / "prior.csv"
    prior.write_text("region,district,count\n" + "".join(f"R{r},R{r}-D{d},5\n" for r in range(2) for d in range(3)))
    page.set_prior(prior)
    assert page.categories_public.isHidden()
    other = _nested_csv(tmp_path / "other.csv", [("A", "A1"), ("B", "B1")])
    open_other_data(qtbot, window, other)  # another file: its categories are not declared yet
    assert not page.categories_public.isChecked()
