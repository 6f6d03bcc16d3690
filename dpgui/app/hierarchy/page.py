"""The window's "Counts over a hierarchy" mode, in the CDF workflow's four steps:

1. **Levels** — the level columns in order (2–4, each with its number of distinct values, counted on a
   worker), an optional public prior file, the opt-in "use the confidential counts to choose the
   budgets" (off, with a warning) and the note that the list of categories is published.
2. **Privacy and plan** — ε, δ, noise, neighbour model, records per person, the allocation (equal,
   least error within ε, least ε for a target error), the level-budget editor (one row per level:
   nodes, weight, budget ε or ρ, projected bias², variance, MSE and RMSE per node), consistency
   (default: the lower projected error) and, with δ > 0, the noises side by side.
3. **Hierarchy tree** — the icicle of the real hierarchy (:mod:`dpgui.app.hierarchy.tree`).
4. **Release and results** — through the budget ledger like the CDF release (budget check, first cap,
   confirmation with the cost), the result as a tree table with a search box, and the signed bundle.

The state lives in :class:`~dpgui.workspace.hierarchy.HierarchyWorkspace` (no Qt); slow work (reading
the file, planning) runs on workers. Every bad input is a one-line message on the page; nothing is
spent until the officer confirms the release. This module holds step 1, what the steps share (the
state's listener, a project's choice shown in the fields) and the mode's answers to the window; step 2 is
:mod:`dpgui.app.hierarchy.plan_step` (the page's base class: the two steps share the page's fields — a
change of level columns re-plans, the plan's neighbour model follows the data), step 3's view
:mod:`dpgui.app.hierarchy.tree`, step 4 :mod:`dpgui.app.hierarchy.release_step`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from functools import partial
from pathlib import Path
from typing import Any, cast

import numpy as np
import shiboken6
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QFileDialog, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QScrollArea,
    QTabWidget, QVBoxLayout, QWidget,
)

from dpgui.app import text
from dpgui.app.hierarchy.plan_step import HierarchyPlanStep, help_label
from dpgui.app.hierarchy.release_step import HierarchyReleaseStep, HierarchyWindow
from dpgui.app.hierarchy.tree import HierarchyTreeView
from dpgui.app.widgets.fields import inline_message, offer_neighbours, set_buddy, show_inline
from dpgui.app.workers import Worker, WorkerPool
from dpgui.core.hierarchy import Hierarchy, HierarchyPlan, downstream_projection
from dpgui.data.source import PasswordPrompt
from dpgui.errors import DpguiError
from dpgui.formatting import format_significant
from dpgui.report.hierarchy.project import ProjectHierarchyRelease
from dpgui.report.project_file import Project
from dpgui.report.project_sections import ProjectSection
from dpgui.vocabulary import Neighbours, SourceKind, StatisticKind
from dpgui.workspace.hierarchy import (
    CATEGORIES_PUBLIC_LABEL, CATEGORIES_PUBLISHED, COUNTS_FROM_DATA_WARNING, HierarchyOutcome, HierarchyWorkspace,
    data_file, data_name, data_spec, level_choices, load_hierarchy,
)
from dpgui.workspace.hierarchy_planning import Data, HierarchyChoice, LoadedHierarchy
from dpgui.workspace.hierarchy_project import choice_of_settings, restored_outcome, settings_of_choice
from dpgui.workspace.session import SessionRelease, open_data, same_data
from dpgui.workspace.state import Workspace
from dpgui.workspace.words import escape, sentence

NONE_ITEM = "— none —"
LEVEL_LABELS = ("Level &1 (top):", "Level &2:", "Level &3 (optional):", "Level &4 (optional):")
REPLAN_DELAY_MS = 250
DOWNSTREAM_NAMES = {"log": "log(1 + share) (favours small groups)", "linear": "share", "quadratic": "share²"}
DOWNSTREAM_TRIALS = 200


def downstream_task(loaded: LoadedHierarchy, plan: HierarchyPlan, level: int, node: int, progress: Any,
                    should_cancel: Any) -> str:
    """Ko, Ziani & Fioretto §5's misallocation when the children of one node share a budget by their released counts,
    in plain words (worker thread). O(trials · nodes)."""
    assert loaded.prior_levels is not None
    figures = downstream_projection(loaded.hierarchy, loaded.prior_levels[-1], plan, level=level, node=node,
                                    trials=DOWNSTREAM_TRIALS)
    start, end = loaded.hierarchy.child_ranges(level)
    children = int(end[node] - start[node])
    name = "all records" if level == 0 else " / ".join(loaded.hierarchy.path(level, node))
    parts = "; ".join(f"{DOWNSTREAM_NAMES.get(f.weight, f.weight)}: bias² {format_significant(f.bias2)}, variance "
                      f"{format_significant(f.variance)}" for f in figures)
    return (f"Downstream use (Ko, Ziani & Fioretto 2025, §5) of {name}: if a budget (money, seats…) were shared "
            f"among its {children:,} "
            f"categories in proportion to a function of their released counts, the error of the shares, in %² of "
            f"the budget, would be — {parts} ({DOWNSTREAM_TRIALS} simulated releases at the "
            f"{'prior' if loaded.prior_path is not None else 'confidential (opted-in)'} counts).")


def _same_tree(a: Hierarchy, b: Hierarchy) -> bool:
    """The same node list: level names, labels and parents (O(#nodes); True at once for one object)."""
    return a is b or (a.level_names == b.level_names and a.labels == b.labels
                      and all(np.array_equal(x, y) for x, y in zip(a.parents, b.parents)))


class HierarchyMode(HierarchyPlanStep):
    """The four steps of the mode (see the module doc) for the window's open file."""

    kind = StatisticKind.HIERARCHY
    release_tip = "Spend the budget and publish the counts"

    def __init__(self, window: HierarchyWindow, workspace: Workspace, parent: QWidget) -> None:
        super().__init__(parent)
        self.window_ = window
        self.workspace = workspace  # the CDF workspace: the open file and the dataset's name
        self.state_ws = HierarchyWorkspace()
        self.pool = WorkerPool()
        self._columns: tuple[str, ...] = ()
        self._numeric: frozenset[str] = frozenset()
        self._load_worker: Worker | None = None
        self._plan_worker: Worker | None = None
        self._count_worker: Worker | None = None
        self._filling = False
        self._shown_prior: Path | None = None  # the prior file the Levels step names
        self._replan = QTimer(self)
        self._replan.setSingleShot(True)
        self._replan.setInterval(REPLAN_DELAY_MS)
        self._replan.timeout.connect(self.start_planning)
        unsubscribe = self.state_ws.subscribe(lambda parts: self._on_state(parts) if shiboken6.isValid(self) else None)
        self.destroyed.connect(lambda *_: unsubscribe())

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self._build_levels_page(), "&1 · Levels")
        self.tabs.addTab(self._build_plan_page(), "&2 · Privacy and plan")
        self.tree_view = HierarchyTreeView()
        self.tree_view.icicle.nodeActivated.connect(self.project_downstream)
        self._downstream_worker: Worker | None = None
        self.tabs.addTab(self.tree_view, "&3 · Hierarchy tree")
        self.release_step = HierarchyReleaseStep(self)
        self.tabs.addTab(self.release_step, "&4 · Release and results")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

    # ================================================================== step 1: levels
    def _build_levels_page(self) -> QWidget:
        page = QWidget()
        intro = QLabel("<b>Counts over a hierarchy</b>: publish how many records fall in each category of 2 to 4 "
                       "nested columns — for example region → district → school — each count with noise and, unless "
                       "you turn consistency off, all of them adding up. Choose the columns from the top level down.")
        intro.setWordWrap(True)
        self.file_label = text.plain_text(QLabel("No file open."))
        self.dataset_name = QLineEdit()
        self.dataset_name.setToolTip(text.DATASET_HELP + " " + text.DATASET_TOOLTIP)
        self.dataset_name.setPlaceholderText("e.g. schools-2024")
        self.dataset_name.textChanged.connect(lambda name: self.workspace.update(dataset=name))

        levels_box = self._build_levels_box()
        prior_box = self._build_prior_box()
        published = self._build_published_box()

        self.dialect_label = text.plain_text(QLabel(""))
        self.dialect_confirm = QPushButton("Confirm")
        self.dialect_confirm.setToolTip("Read the file with this separator and decimal mark, as your statement")
        self.dialect_confirm.clicked.connect(lambda: self.window_.data_page.confirm_dialect())
        self.dialect_change = QPushButton("Change…")
        self.dialect_change.clicked.connect(lambda: self.window_.data_page.open_dialect_dialog())
        top = QHBoxLayout()
        top.addWidget(self.file_label)
        for widget in (self.dialect_label, self.dialect_confirm, self.dialect_change):
            widget.hide()
            top.addWidget(widget)
        top.addStretch(1)
        dataset_label = QLabel("&Dataset name in the budget ledger:")
        dataset_label.setBuddy(self.dataset_name)
        top.addWidget(dataset_label)
        top.addWidget(self.dataset_name)
        column = QWidget()
        column.setMaximumWidth(900)
        inner = QVBoxLayout(column)
        inner.addWidget(intro)
        inner.addWidget(levels_box)
        inner.addWidget(prior_box)
        inner.addWidget(published)
        inner.addStretch(1)
        scroll = QScrollArea()  # a short window scrolls the step instead of growing
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(column)
        layout = QVBoxLayout(page)
        layout.addLayout(top)
        layout.addWidget(scroll, 1)
        self._style_counts_warning()
        return page

    def _build_levels_box(self) -> QGroupBox:
        """The level columns, from the top down, with the categories counted and what was read."""
        levels_box = QGroupBox("Level columns, from the top down")
        form = QFormLayout(levels_box)
        self.level_combos: list[QComboBox] = []
        for label in LEVEL_LABELS:
            combo = QComboBox()
            combo.setToolTip("The column whose values are the categories of this level. Each category must sit "
                             "under one category of the level above (a district in one region only).")
            combo.currentIndexChanged.connect(self._on_levels_edited)
            combo.setMinimumContentsLength(24)
            form.addRow(label, combo)
            set_buddy(form, combo, combo)
            self.level_combos.append(combo)
        self.counts_note = help_label("")
        form.addRow(self.counts_note)
        self.levels_message = inline_message(self)
        form.addRow(self.levels_message)
        self.read_note = text.plain_text(QLabel(""))
        self.read_note.setWordWrap(True)
        form.addRow(self.read_note)
        return levels_box

    def _build_prior_box(self) -> QGroupBox:
        """The optional public prior file, and the opt-in to choose the budgets with the confidential counts."""
        prior_box = QGroupBox("Public list of categories and counts (optional)")
        prior_layout = QVBoxLayout(prior_box)
        prior_layout.addWidget(help_label(
            "A public table — for example last year's published counts — with the level columns and a “count” column. "
            "It gives the list of categories, and counts the planner may use to share the budget between levels. "
            "Without it the categories are taken from your data and published: tick “These categories are "
            "public” below only if they are."))
        row = QHBoxLayout()
        self.prior_label = text.plain_text(QLabel("No prior file: the categories come from the data."))
        self.prior_label.setWordWrap(True)
        self.prior_button = QPushButton("Choose &prior file…")
        self.prior_button.clicked.connect(self.choose_prior)
        self.prior_clear = QPushButton("Clear")
        self.prior_clear.clicked.connect(lambda: self.set_prior(None))
        row.addWidget(self.prior_label, 1)
        row.addWidget(self.prior_button)
        row.addWidget(self.prior_clear)
        prior_layout.addLayout(row)
        self.counts_from_data = QCheckBox("Use the &confidential counts to choose the budgets (not recommended)")
        self.counts_from_data.setToolTip(COUNTS_FROM_DATA_WARNING)
        self.counts_from_data.toggled.connect(self._on_counts_from_data)
        prior_layout.addWidget(self.counts_from_data)
        self.counts_warning = QLabel(COUNTS_FROM_DATA_WARNING)
        self.counts_warning.setWordWrap(True)
        prior_layout.addWidget(self.counts_warning)
        return prior_box

    def _build_published_box(self) -> QGroupBox:
        """What is published: the list of categories, and the statement that it is public."""
        published = QGroupBox("What is published")
        published_layout = QVBoxLayout(published)
        self.published_note = QLabel(CATEGORIES_PUBLISHED)
        self.published_note.setWordWrap(True)
        published_layout.addWidget(self.published_note)
        self.categories_public = QCheckBox(CATEGORIES_PUBLIC_LABEL)  # shown without a prior file; needed to release
        self.categories_public.setToolTip(
            "Tick this only if the list of categories is already public (e.g. an official list of regions): the "
            "release publishes every category of your data, and a rare category can reveal that someone is in it.")
        self.categories_public.toggled.connect(self._on_categories_public)
        published_layout.addWidget(self.categories_public)
        self.categories_message = inline_message(self)
        published_layout.addWidget(self.categories_message)
        return published

    def set_source(self, path: Data | None, columns: tuple[str, ...], numeric: frozenset[str], dataset: str) -> None:
        """The window's open data (or None): a file's path, or a database's or Spark's SourceSpec (counted
        where it lives). Fill the level choosers and count each column's distinct values."""
        self._show_dialect()
        previous = self.state_ws.state.data_path
        if path == previous and columns == self._columns:
            self._sync_dataset(dataset)
            return
        same = previous is not None and path is not None and same_data(data_spec(previous), data_spec(path))
        kept_levels = self.state_ws.state.choice.levels if same else ()
        self._columns, self._numeric = columns, numeric
        self.state_ws.open_file(path, same_data=same)
        self._offer_neighbours()
        self.file_label.setText("No file open." if path is None else
                                f"File: {data_name(path)}" if data_file(path) is not None else
                                f"Data: {data_name(path)}")
        self._sync_dataset(dataset)
        self._fill_level_combos()
        if path is not None and columns:
            self.counts_note.setText("Counting the distinct values of each column…")
            worker = Worker(level_choices, path, columns, password_prompt=self.password_prompt(path)).connect_to(
                self, finished=partial(self._on_counted, path),
                failed=lambda message: self.counts_note.setText(f"Could not count the values: {message}"))
            self._count_worker = worker
            self.pool.start(worker)
        if kept_levels:  # the same data read again: its levels are read again
            self.set_levels(tuple(name for name in kept_levels if name in columns))

    def _show_dialect(self) -> None:
        """A CSV file's separator and decimal mark as the CDF mode's step 1 states them, with its Confirm (while
        they are only suggested: nothing is read before) and Change… (both read the file again)."""
        data_page = self.window_.data_page
        shown = data_page.dialect is not None
        self.dialect_label.setText(data_page.dialect_label.text())
        self.dialect_label.setToolTip(data_page.dialect_label.toolTip())
        self.dialect_label.setVisible(shown)
        self.dialect_change.setVisible(shown)
        self.dialect_confirm.setVisible(shown and not data_page.dialect_confirm.isHidden())

    def _offer_neighbours(self) -> None:
        """As the CDF's plan step: "N is public" only when the open data's row count may be public (for a query
        not stated public it is not available, a choice of it is switched, and the note says which happened)."""
        data = self.state_ws.state.data_path
        public = data is None or data_spec(data).row_count_may_be_public
        switched = offer_neighbours(self.neighbours, public)
        self._neighbours_switched: bool = not public and (switched or self._neighbours_switched)
        self.neighbours_note.setText("" if public else text.query_rows_private_note(self._neighbours_switched))
        self.neighbours_note.setVisible(not public)

    def password_prompt(self, data: Data) -> PasswordPrompt | None:
        """The session's password prompt for a database source (None for a file)."""
        if isinstance(data, Path) or data.kind == SourceKind.FILE:
            return None
        return self.window_.passwords.prompt_for(data)

    def _sync_dataset(self, dataset: str) -> None:
        if self.dataset_name.text() != dataset:
            self.dataset_name.blockSignals(True)
            self.dataset_name.setText(dataset)
            self.dataset_name.blockSignals(False)

    def _on_counted(self, path: Data, counts: tuple[tuple[str, int], ...]) -> None:
        self._count_worker = None
        if path != self.state_ws.state.data_path:
            return
        self.state_ws.update(column_counts=counts)
        self.counts_note.setText("The number after each column is its number of distinct values (categories).")
        self._fill_level_combos()
        self.person.set_columns([name for name, _ in counts])

    def _fill_level_combos(self) -> None:
        counts = dict(self.state_ws.state.column_counts or ())
        chosen = self.state_ws.state.choice.levels
        self._filling = True
        try:
            for number, combo in enumerate(self.level_combos):
                combo.clear()
                combo.addItem(NONE_ITEM, "")
                for name in self._columns:
                    if name in counts:
                        shown = f"{name}  ({counts[name]:,} value{'s' if counts[name] != 1 else ''})"
                    else:
                        shown = name
                    if name in self._numeric:
                        shown += " · numbers, used as labels"
                    combo.addItem(shown, name)
                if number < len(chosen):
                    combo.setCurrentIndex(max(combo.findData(chosen[number]), 0))
        finally:
            self._filling = False

    def chosen_levels(self) -> tuple[str, ...]:
        """The level columns as chosen, top first (empty choosers skipped)."""
        return tuple(str(c.currentData()) for c in self.level_combos if c.currentData())

    def set_levels(self, levels: tuple[str, ...]) -> None:
        """Choose the level columns (as the officer would in the choosers)."""
        self._filling = True
        try:
            for number, combo in enumerate(self.level_combos):
                name = levels[number] if number < len(levels) else ""
                combo.setCurrentIndex(max(combo.findData(name), 0))
        finally:
            self._filling = False
        self._on_levels_edited()

    def _on_levels_edited(self, *_: Any) -> None:
        if self._filling:
            return
        levels = self.chosen_levels()
        self.state_ws.update_choice(levels=levels)
        show_inline(self.levels_message, "")
        if len(levels) < 2:
            self.read_note.setText("")
            if levels:
                show_inline(self.levels_message, "A hierarchy needs at least 2 level columns: choose the column "
                                                 "nested in the first one as level 2 (e.g. region, then district).")
            return
        if len(set(levels)) != len(levels):
            show_inline(self.levels_message, "A column is chosen twice: choose each level column once.")
            return
        self.start_loading()

    def choose_prior(self) -> None:
        file = data_file(self.state_ws.state.data_path)
        start = str(file.parent) if file is not None else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self, "Choose a public prior file", start, "Tables (*.csv *.tsv *.parquet)")
        if path:
            self.set_prior(Path(path))

    def set_prior(self, path: Path | None) -> None:
        self._show_prior(path)
        self.state_ws.update_choice(prior_path=path)
        if len(self.chosen_levels()) >= 2:
            self.start_loading()

    def _show_prior(self, path: Path | None) -> None:
        self._shown_prior = path
        self.prior_label.setText("No prior file: the categories come from the data." if path is None
                                 else f"Prior: {path.name} (public; its categories are the ones published)")
        self.counts_from_data.setEnabled(path is None)
        self.categories_public.setVisible(path is None)  # a prior's categories are public by definition
        if path is not None:
            show_inline(self.categories_message, "")
        self.published_note.setText(CATEGORIES_PUBLISHED if path is None else
                                    "The list of categories is published: the categories of the prior file, each with "
                                    "a released count, zeros included. Every category in the data must be in it.")

    def _on_categories_public(self, on: bool) -> None:
        if on:
            show_inline(self.categories_message, "")
        self.state_ws.update_choice(categories_public=on)

    def _on_counts_from_data(self, on: bool) -> None:
        self._style_counts_warning()
        self.state_ws.update_choice(counts_from_data=on)
        if len(self.chosen_levels()) >= 2:
            self.start_loading()

    def _style_counts_warning(self) -> None:
        on = self.counts_from_data.isChecked()
        self.counts_warning.setStyleSheet("color: #B00020; font-weight: bold;" if on
                                          else "color: palette(placeholder-text);")

    def start_loading(self) -> None:
        """Read the chosen levels' tree on a worker (the previous reading, if any, is cancelled)."""
        state = self.state_ws.state
        if state.data_path is None:
            return
        if self._load_worker is not None:
            self._load_worker.cancel()
        self.read_note.setText("Reading the hierarchy from the file…" if data_file(state.data_path) is not None
                               else f"Counting the hierarchy in {data_name(state.data_path)}…")
        self.state_ws.update(busy="reading")
        worker = Worker(load_hierarchy, state.data_path, state.choice,
                        password_prompt=self.password_prompt(state.data_path))
        worker.connect_to(self, finished=partial(self._on_loaded, worker), failed=partial(self._on_load_failed, worker),
                          cancelled=partial(self._on_load_cancelled, worker))
        self._load_worker = worker
        self.pool.start(worker)

    def _on_load_cancelled(self, worker: Worker) -> None:
        if worker is self._load_worker:
            self._load_worker = None
            self.state_ws.update(busy="")

    def _on_load_failed(self, worker: Worker, message: str) -> None:
        if worker is not self._load_worker:
            return
        self._load_worker = None
        self.read_note.setText("")
        show_inline(self.levels_message, message + " Nothing was spent.")
        self.state_ws.update(loaded=None, planned=None, problem=message, busy="")

    def _on_loaded(self, worker: Worker, loaded: LoadedHierarchy) -> None:
        if worker is not self._load_worker:
            return
        self._load_worker = None
        if not loaded.matches(self.state_ws.state.data_path, self.state_ws.state.choice):
            self.state_ws.update(busy="")
            return
        hierarchy = loaded.hierarchy
        sizes = " → ".join(f"{n:,} {name}" for n, name in zip(hierarchy.level_sizes[1:], hierarchy.level_names))
        notes = " ".join(sentence(n) for n in loaded.notes)
        self.read_note.setText(f"Read {loaded.rows:,} rows: {sizes}. {notes}".strip())
        self.state_ws.update(loaded=loaded, problem="", busy="")
        self.start_planning()

    # ================================================================== step 3: downstream use
    def project_downstream(self, level: int, node: int) -> None:
        """Ko, Ziani & Fioretto §5 for the double-clicked node: a budget shared among its children in proportion to
        their released counts — the projected misallocation for log, linear and quadratic weights (needs
        counts: the prior's, or the confidential ones by the opt-in; simulated on a worker)."""
        state = self.state_ws.state
        loaded, planned = state.loaded, state.planned
        if loaded is None or planned is None or level >= loaded.hierarchy.n_levels:
            self.tree_view.downstream.setText("")
            return
        if loaded.prior_levels is None:
            self.tree_view.downstream.setText(
                "Downstream use (Ko, Ziani & Fioretto 2025, §5): needs counts — a public prior file, or the opt-in of step 1.")
            return
        if self._downstream_worker is not None:
            self._downstream_worker.cancel()
        self.tree_view.downstream.setText("Downstream use: simulating releases…")
        worker = Worker(downstream_task, loaded, planned.plan, level, node)
        worker.connect_to(self, finished=partial(self._on_downstream, worker),
                          failed=lambda message: self.tree_view.downstream.setText(f"Downstream use: {message}"))
        self._downstream_worker = worker
        self.pool.start(worker)

    def _on_downstream(self, worker: Worker, words: str) -> None:
        if worker is self._downstream_worker:
            self._downstream_worker = None
            self.tree_view.downstream.setText(words)

    # ================================================================== the state
    def _on_state(self, parts: frozenset[str]) -> None:
        state = self.state_ws.state
        if "data_path" in parts:  # what was read or searched in the previous data goes with it
            self.read_note.setText("")
            show_inline(self.levels_message, "")
            self.release_step.result_view.search.clear()
            if state.choice.records_estimate is None and self.records.isEnabled():  # an estimate of the old data's N
                self.records.set_text("")
        if "loaded" in parts or "planned" in parts:
            loaded = state.loaded
            plan = state.planned.plan if state.planned is not None else None
            self.tree_view.set_tree(None if loaded is None else loaded.hierarchy, plan)
            if "loaded" in parts:
                self.show_release_on_tree()
            self._show_plan()
        if "choice" in parts:  # a new file (nothing declared or chosen for it yet) or a project's choice
            for box, on in ((self.categories_public, state.choice.categories_public),
                            (self.counts_from_data, state.choice.counts_from_data)):
                if box.isChecked() != on:
                    box.blockSignals(True)
                    box.setChecked(on)
                    box.blockSignals(False)
            self._style_counts_warning()
            if self._shown_prior != state.choice.prior_path:
                self._show_prior(state.choice.prior_path)
        if "outcome" in parts:
            self.release_step.show_outcome()
        if "problem" in parts and state.problem:
            self.summary.setText("No plan: " + escape(state.problem))

    def show_release_on_tree(self) -> None:
        """The icicle shows the release's counts when it is drawing the release's own tree (a restored
        release: once the same tree is read from the file again). O(#nodes)."""
        state = self.state_ws.state
        outcome, loaded = state.outcome, state.loaded
        same = outcome is not None and loaded is not None and _same_tree(loaded.hierarchy, outcome.release.hierarchy)
        self.tree_view.set_release(outcome.release if outcome is not None and same else None)

    def apply_choice(self, choice: HierarchyChoice) -> None:
        """Show ``choice`` (from a project) in the steps' fields, as if typed; the tree is read and planned
        again on workers (nothing is released or spent). The typed budgets and weights are set last."""
        quiet = (self.noise, self.neighbours, self.allocation, self.consistency, self.records_per_person,
                 self.counts_from_data, self.categories_public)
        for widget in quiet:
            widget.blockSignals(True)
        try:
            self.epsilon.set_text(repr(choice.epsilon))
            self.delta.set_text(repr(choice.delta))
            self.alpha.set_text(repr(choice.alpha))
            if choice.target_mse is not None:
                self.target.set_text(repr(choice.target_mse))
            for combo, key in ((self.noise, choice.noise), (self.neighbours, choice.neighbours),
                               (self.allocation, choice.allocation), (self.consistency, choice.consistency)):
                combo.setCurrentIndex(max(combo.findData(key), 0))
            self.records_per_person.setValue(choice.records_per_person)
            self.counts_from_data.setChecked(choice.counts_from_data)
            self.categories_public.setChecked(choice.categories_public)
            if choice.neighbours != Neighbours.CHANGE:  # a typed estimate of N (under change the field shows N itself)
                self.records_label.setText("Published estimate of &N:")
                self.records.set_text(f"{choice.records_estimate:,}" if choice.records_estimate else "")
        finally:
            for widget in quiet:
                widget.blockSignals(False)
        self._on_plan_edited()
        self.set_prior(choice.prior_path)
        self._style_counts_warning()
        self.state_ws.update_choice(counts_from_data=choice.counts_from_data)
        self.set_levels(choice.levels)
        rest = {f.name: getattr(choice, f.name) for f in fields(choice) if f.name != "levels"}  # as chosen, exactly
        self.state_ws.update_choice(**rest)
        self._offer_neighbours()  # saved under "N is public" for a query whose row count is private: switched, said

    def levels_text(self) -> str:
        return self.levels_message.text() if not self.levels_message.isHidden() else ""

    # ================================================================== the mode (dpgui/app/mode.py)
    def steps(self) -> QWidget:
        return self

    def has_release(self) -> bool:
        return self.state_ws.state.outcome is not None

    def is_releasing(self) -> bool:
        return self.release_step.release_worker is not None

    def release(self) -> None:
        self.release_step.release()

    def export_bundle(self) -> None:
        self.release_step.export_bundle()

    def export_csv(self) -> None:
        self.release_step.export_csv()

    def show_outcome(self) -> None:
        """Step 4 shows the mode's outcome (after a project or the session's list put one in the state)."""
        self.release_step.show_outcome()

    def data_opened(self) -> None:
        """Take the open data (its columns; which are numbers) and the dataset's name: a file is read on this
        computer; a database or Spark counts the paths where the data lives."""
        source = self.workspace.state.source
        if source is None:
            self.set_source(None, (), frozenset(), self.workspace.state.dataset)
            return
        columns = tuple(c.name for c in source.table.columns)
        numeric = frozenset(c.name for c in source.table.columns if c.kind == "numeric")
        self.set_source(source.read_as, columns, numeric, self.workspace.state.dataset)

    def shutdown(self) -> None:
        self.pool.cancel_all()

    # the session's releases
    def watch_releases(self, listener: Callable[[], None]) -> None:
        self.state_ws.subscribe(lambda parts: listener() if parts & {"releases", "outcome"} else None)

    def session_releases(self) -> tuple[SessionRelease, ...]:
        """The mode's releases, of the data it read (the open data if it read none)."""
        state = self.state_ws.state
        outcome = state.outcome
        spec = data_spec(state.data_path) if state.data_path is not None else open_data(self.workspace)
        entries = []
        for record in state.releases:
            shown = outcome if outcome is not None and outcome.release_id == record.release_id else None
            entries.append(SessionRelease(self.kind, record, record.dataset, record.subject, spec,
                                          made_here=shown is not None and not shown.restored, shown=shown))
        return tuple(entries)

    def take_releases(self, entries: tuple[SessionRelease, ...], chosen: bool) -> None:
        """The mode not chosen reads the open data when it is (:meth:`data_opened`); until then it holds none."""
        if not chosen:
            self.set_source(None, (), frozenset(), self.workspace.state.dataset)
        self.state_ws.update(outcome=None, releases=tuple(
            e.record for e in entries if isinstance(e.record, ProjectHierarchyRelease)))

    def releases_on_screen(self) -> set[str]:
        state = self.state_ws.state
        return {r.release_id for r in state.releases} | ({state.outcome.release_id} if state.outcome is not None else set())

    def show_again(self, entry: SessionRelease) -> object:
        outcome = entry.shown if isinstance(entry.shown, HierarchyOutcome) else restored_outcome(
            cast(ProjectHierarchyRelease, entry.record))  # the session lists it under its own kind
        if "outcome" not in self.state_ws.update(outcome=outcome):
            self.show_outcome()
        return outcome

    def exports_changed(self, release_id: str) -> None:
        outcome = self.state_ws.state.outcome
        if outcome is not None and outcome.release_id == release_id:
            self.show_outcome()

    # the mode's part of a project file
    def project_section(self) -> ProjectSection | None:
        """The choices (None while all are the defaults) and the workspace's hierarchy releases."""
        state = self.state_ws.state
        return ProjectSection(settings_of_choice(state.choice), state.releases)

    def release_count(self) -> int:
        return len(self.state_ws.state.releases)

    def on_project_change(self, react: Callable[[], None]) -> None:
        self.state_ws.subscribe(lambda parts: react() if parts & {"choice", "releases"} else None)

    def restore_project(self, project: Project, data_name: str) -> list[str]:
        """The project's hierarchy choices (read and planned again on workers), its releases and the last one
        shown (checked against the budget ledger: a project file is not evidence)."""
        part = project.section(self.kind)
        problems = [part.problem] if part.problem else []
        if self.workspace.state.source is not None and (part.settings is not None or part.releases
                                                        or project.mode == self.kind):
            self.data_opened()  # the open data's columns and dataset, for the choices below
        if part.settings is not None:
            try:
                self.apply_choice(choice_of_settings(part.settings))
            except DpguiError as err:
                problems.append(f"The hierarchy choices were not restored: {text.friendly(err)}")
        elif self.state_ws.state.choice != HierarchyChoice():  # the previous workspace's choices go
            self.apply_choice(HierarchyChoice())
        releases = part.releases
        outcome = restored_outcome(releases[-1]) if releases else None
        self.state_ws.update(releases=releases, outcome=outcome)
        return problems
