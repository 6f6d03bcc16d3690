"""The window's "Person-ID column" choice (dpgui/app/widgets/person_column.py), headless: in the one-page modes
(the counts of one column; the CDF for each group) and on the CDF's plan page. With a column chosen the protection
is "one person added or removed" and cannot be changed, the page says the records per person are enforced, and
the release keeps at most L rows a person (stated in the release's source record); with none, the protection is
free again and the page says L is declared."""

from __future__ import annotations

from pathlib import Path

from dpgui.vocabulary import Neighbours, StatisticKind
from dpgui.workspace.release import ReleaseRequest, confirmation_text, release_request

from gui_helpers import TIMEOUT, click_release_in_confirmation, error_text, make_window, open_and_wait, set_column

#: p1 has 6 rows, p2 3, p3 and p4 one each: with L = 2, six rows are counted
ROWS = [("p1", "WA", 30 + i) for i in range(6)] + [("p2", "OR", 50 + i) for i in range(3)] + [
    ("p3", "OR", 70), ("p4", "WA", 90)]
ENFORCED = ("At most 2 records per person, enforced: dpgui kept at most 2 rows of each value of 'pid' (chosen at "
            "random, not by their values)")
DECLARED = "At most 2 records per person — declared by you, not checked by dpgui (no person-ID column)"


def _data(tmp_path: Path) -> Path:
    path = tmp_path / "people.csv"
    path.write_text("pid,state,age\n" + "".join(f"{p},{s},{a}\n" for p, s, a in ROWS), encoding="utf-8")
    return path


def _one_page_mode(qtbot, tmp_path: Path, kind: StatisticKind):
    """The window on the data, in the one-page mode of ``kind``; (window, its page)."""
    window = make_window(qtbot)
    open_and_wait(qtbot, window, _data(tmp_path))
    window.choose_mode(kind)
    return window, window.statistic_modes[kind]


def test_counts_mode_enforces_the_person_column_and_says_so(qtbot, tmp_path: Path) -> None:
    window, page = _one_page_mode(qtbot, tmp_path, StatisticKind.COUNTS)
    page.column.setCurrentIndex(page.column.findText("state"))
    page.categories.setPlainText("WA\nOR")
    page.records.setValue(2)
    assert [page.person.combo.itemData(i) for i in range(page.person.combo.count())] == [None, "pid", "state", "age"]
    assert page.person.note.text() == DECLARED and page.neighbours.isEnabled() and page.privacy_unit() is None

    page.person.combo.setCurrentIndex(page.person.combo.findData("pid"))
    assert page.person.note.text() == ENFORCED
    assert page.neighbours.currentData() == Neighbours.ADDREMOVE and not page.neighbours.isEnabled()
    before = page.outcome
    click_release_in_confirmation("Release")
    window.release()
    qtbot.waitUntil(lambda: page.release_worker is None and (page.outcome is not before or error_text(window) != ""),
                    timeout=TIMEOUT)
    outcome = page.outcome
    assert outcome is not None, error_text(window)
    assert ENFORCED.replace("'", "&#x27;") in page._confirm_box.text()  # the confirmation said it before the spend
    assert outcome.info.source["privacy_unit"] == {"person_column": "pid", "records_per_person": 2}
    assert outcome.release.plan.privacy.neighbours == Neighbours.ADDREMOVE
    assert outcome.release.plan.privacy.records_per_person == 2

    project = tmp_path / "work.dpgui"  # the choice is kept in the project file, and restored with it
    assert window.project.save_to(project)
    reopened = make_window(qtbot)
    assert reopened.project.open_project(project)
    restored = reopened.statistic_modes[StatisticKind.COUNTS]
    qtbot.waitUntil(lambda: restored.outcome is not None, timeout=TIMEOUT)
    assert restored.person.column() == "pid" and restored.person.note.text() == ENFORCED
    assert not restored.neighbours.isEnabled()

    page.person.combo.setCurrentIndex(0)  # none again: the protection is free, L declared
    assert page.neighbours.isEnabled() and page.person.note.text() == DECLARED
    assert page.settings() is not None and page.settings().person_column is None


def test_grouped_mode_spends_with_the_person_column(qtbot, tmp_path: Path) -> None:
    _, page = _one_page_mode(qtbot, tmp_path, StatisticKind.GROUPED_CDF)
    page.column.setCurrentIndex(page.column.findText("age"))
    page.group_column.setCurrentIndex(page.group_column.findText("state"))
    page.groups.setPlainText("WA\nOR")
    page.records.setValue(2)
    page.person.combo.setCurrentIndex(page.person.combo.findData("pid"))
    spend = page.spend()
    assert spend.privacy_unit is not None and spend.privacy_unit.person_column == "pid"
    assert spend.plan.tree.privacy.neighbours == Neighbours.ADDREMOVE and not page.neighbours.isEnabled()


def test_cdf_plan_page_puts_the_person_column_in_the_release_request(qtbot, tmp_path: Path) -> None:
    window = make_window(qtbot)
    open_and_wait(qtbot, window, _data(tmp_path))
    set_column(qtbot, window, "age", "0", "100", "10")
    plan_page = window.plan_page
    assert plan_page.person.note.text().endswith("declared by you, not checked by dpgui (no person-ID column)")
    plan_page.records_per_person.setValue(2)
    plan_page.person.combo.setCurrentIndex(plan_page.person.combo.findData("pid"))
    assert plan_page.neighbours.currentData() == Neighbours.ADDREMOVE and not plan_page.neighbours.isEnabled()
    assert plan_page.person.note.text() == ENFORCED
    qtbot.waitUntil(lambda: isinstance(release_request(window.workspace.state), ReleaseRequest)
                    and release_request(window.workspace.state).plan.privacy.records_per_person == 2, timeout=TIMEOUT)
    request = release_request(window.workspace.state)
    assert isinstance(request, ReleaseRequest)
    assert request.privacy_unit is not None and request.privacy_unit.person_column == "pid"
    assert request.spend.privacy_unit == request.privacy_unit
    assert "at most 2 records per person, enforced: dpgui kept at most 2 rows of each value of &#x27;pid&#x27;" in (
        confirmation_text(request))


def test_hierarchy_mode_releases_with_the_person_column(qtbot) -> None:
    from hierarchy_gui_helpers import release_and_wait

    from dpgui.workspace.hierarchy import HierarchyRequest, hierarchy_request

    window = make_window(qtbot, seed=5)
    window.start_page.hierarchy_sample_button.click()
    page = window.hierarchy
    qtbot.waitUntil(lambda: page.state_ws.state.column_counts is not None and page.state_ws.state.planned is not None
                    and not page.is_busy(), timeout=TIMEOUT)
    assert page.person.combo.findData("origin") > 0 and page.person.column() is None
    page.records_per_person.setValue(20)
    page.person.combo.setCurrentIndex(page.person.combo.findData("origin"))  # a text column, as a person ID here
    assert page.state_ws.state.person_column == "origin" and not page.neighbours.isEnabled()
    assert page.person.note.text().startswith("At most 20 records per person, enforced: dpgui kept at most 20 rows "
                                              "of each value of 'origin'")
    qtbot.waitUntil(lambda: page.state_ws.state.planned is not None and not page.is_busy()
                    and page.state_ws.state.planned.plan.privacy.neighbours == Neighbours.ADDREMOVE
                    and page.state_ws.state.planned.plan.privacy.records_per_person == 20, timeout=TIMEOUT)
    request = hierarchy_request(page.state_ws.state, window.workspace.state.dataset)
    assert isinstance(request, HierarchyRequest) and request.spend.privacy_unit is not None
    assert "At most 20 records per person, enforced: dpgui kept at most 20 rows of each value of &#x27;origin&#x27;" in (
        page.release_step.confirmation_text(request))
    release_and_wait(qtbot, window)
    outcome = page.state_ws.state.outcome
    assert outcome is not None, error_text(window)
    assert outcome.info.source["privacy_unit"] == {"person_column": "origin", "records_per_person": 20}
