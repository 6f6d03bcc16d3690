"""The window and a query's row count: the database dialog's statement that the number
of rows a query returns is public, the plan and hierarchy steps that offer "N is public" only with it and
say when they switched, and a release request that would publish it refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from dpgui.app import text
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import ParameterError
from dpgui.workspace.release import QUERY_ROWS_PRIVATE, NotReady, ReleaseRequest, release_request, run_release

from gui_helpers import TIMEOUT, make_window, set_column, wait_plan

QUERY = "SELECT age, income, region FROM people WHERE region = 'south'"


@pytest.fixture
def people_db(tmp_path) -> Path:
    path = tmp_path / "people.db"
    rng = np.random.default_rng(28)
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE people (age REAL, income REAL, region TEXT)")
        con.executemany("INSERT INTO people VALUES (?, ?, ?)",
                        [(float(a), float(w), r) for a, w, r in zip(rng.integers(0, 100, 400), rng.gamma(2, 2e4, 400),
                                                                    rng.choice(["north", "south"], 400))])
    con.close()
    return path


def connect(qtbot, window, path: Path, query: str | None = None, rows_public: bool = False) -> None:
    """File → Connect to a Database…, fill in (a table, or a query with or without the statement), OK."""
    window.connect_database()
    dialog = window.database_dialog
    dialog.url_edit.setText(f"sqlite:///{path}")
    if query is None:
        dialog.table_radio.setChecked(True)
        dialog.table_edit.setText("people")
    else:
        dialog.query_radio.setChecked(True)
        dialog.query_edit.setPlainText(query)
        dialog.rows_public.setChecked(rows_public)
    dialog._on_ok()
    qtbot.waitUntil(lambda: window.workspace.state.source is not None
                    and window.workspace.state.source.source_spec == dialog.spec and not window.pool.busy(),
                    timeout=TIMEOUT)


def change_offered(combo) -> bool:
    return combo.model().item(combo.findData("change")).isEnabled()


def test_the_dialog_offers_the_statement_for_a_query_only_and_records_it(qtbot, people_db):
    from dpgui.app.dialogs.database import DatabaseDialog

    dialog = DatabaseDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.url_edit.setText(f"sqlite:///{people_db}")
    dialog.table_edit.setText("people")
    assert not dialog.rows_public.isVisible()
    assert dialog.current_spec().row_count_public is False
    dialog.query_radio.setChecked(True)
    dialog.query_edit.setPlainText(QUERY)
    assert dialog.rows_public.isVisible() and not dialog.rows_public.isChecked()  # never ticked for the officer
    assert "public" in dialog.rows_public.text() and "published" in dialog.rows_public.toolTip()
    assert dialog.current_spec() == SourceSpec("database", f"sqlite:///{people_db}", query=QUERY)
    dialog.rows_public.setChecked(True)
    assert dialog.current_spec().row_count_public is True
    reopened = DatabaseDialog(spec=dialog.current_spec())  # File → Connect again shows the statement as made
    qtbot.addWidget(reopened)
    assert reopened.rows_public.isChecked()


def test_a_query_switches_the_plan_to_n_private_and_says_so(qtbot, people_db):
    window = make_window(qtbot)
    page = window.plan_page
    assert page.neighbours.currentData() == "change" and change_offered(page.neighbours)
    connect(qtbot, window, people_db, query=QUERY)
    assert page.neighbours.currentData() == "addremove" and not change_offered(page.neighbours)
    note = page.neighbours_note.text()
    assert page.neighbours_note.isVisibleTo(page) and note == text.query_rows_private_note(switched=True)
    assert note.startswith("Switched to") and "File → Connect to a Database" in note
    set_column(qtbot, window, "income", "0", "200000", "32")
    wait_plan(qtbot, window, 32)
    assert page.plan.privacy.neighbours == "addremove"
    assert page.public_n.text() == ""  # the query's row count is never filled in as a public N
    request = release_request(window.workspace.state)
    assert not isinstance(request, NotReady) and request.plan.privacy.neighbours == "addremove"
    # with the statement, "N is public" is offered again (not chosen for the officer) and the note goes
    connect(qtbot, window, people_db, query=QUERY, rows_public=True)
    assert change_offered(page.neighbours) and page.neighbours_note.isHidden()
    assert page.neighbours.currentData() == "addremove"


def test_a_plan_that_publishes_a_private_row_count_is_not_released(qtbot, people_db):
    window = make_window(qtbot)
    page = window.plan_page
    connect(qtbot, window, people_db, query=QUERY)
    set_column(qtbot, window, "income", "0", "200000", "32")
    wait_plan(qtbot, window, 32)
    page.neighbours.setCurrentIndex(page.neighbours.findData("change"))  # a disabled item, set by a program
    qtbot.waitUntil(lambda: page.plan is not None and not page.is_planning()
                    and page.plan.privacy.neighbours == "change", timeout=TIMEOUT)
    assert release_request(window.workspace.state) == QUERY_ROWS_PRIVATE
    assert "One person may be added or removed" in QUERY_ROWS_PRIVATE.message
    settings = window.workspace.state.column_settings()
    assert settings is not None and settings.spec == window.workspace.state.source.source_spec
    with pytest.raises(ParameterError, match="not public"):  # the worker refuses it before reading, too
        run_release(ReleaseRequest(settings, page.plan, "l2"), lambda: None, lambda *_: None, lambda: False)


def test_the_hierarchy_step_offers_n_public_only_with_the_statement(qtbot, people_db):
    window = make_window(qtbot)
    window.set_mode(True)
    page = window.hierarchy
    connect(qtbot, window, people_db, query=QUERY)
    qtbot.waitUntil(lambda: page.state_ws.state.data_path is not None, timeout=TIMEOUT)
    assert page.neighbours.currentData() == "addremove" and not change_offered(page.neighbours)
    assert not page.neighbours_note.isHidden() and page.neighbours_note.text().startswith("Switched to")
    assert page.state_ws.state.choice.neighbours == "addremove"
    connect(qtbot, window, people_db)  # a table: its row count is the dataset's, public under "change"
    qtbot.waitUntil(lambda: isinstance(page.state_ws.state.data_path, SourceSpec)
                    and page.state_ws.state.data_path.table == "people", timeout=TIMEOUT)
    assert change_offered(page.neighbours) and page.neighbours_note.isHidden()
