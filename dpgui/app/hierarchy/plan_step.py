"""Step 2 of the "Counts over a hierarchy" mode, **Privacy and plan**: ε, δ, α, the noise, the neighbour
model, records per person and the records the projection assumes; the allocation (equal, least error within
ε, least ε for a target error), the level-budget editor (one row per level: nodes, weight, budget ε or ρ,
projected bias², variance, MSE and the stated errors), consistency (default: the lower projected error),
the margin curves and, with δ > 0, the noises side by side. The plan is made on a worker through the
statistic seam (:func:`plan_task`: :meth:`HierarchyStatistic.plan
<dpgui.workspace.statistics.hierarchy.HierarchyStatistic.plan>`); nothing here reads the data or spends.

:class:`HierarchyPlanStep` is the part of the mode's page (:class:`~dpgui.app.hierarchy.page.HierarchyMode`,
its subclass) that holds this step: its fields are the mode's own, as the window, a project's restore and
the tests address them (``mode.epsilon``, ``mode.table``…), and a change of level columns in step 1
re-plans here. GUI thread only.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox, QFormLayout, QGroupBox, QHeaderView, QLabel, QPushButton, QScrollArea, QSpinBox, QSplitter,
    QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from dpgui.app import text
from dpgui.app.hierarchy.errors_view import ERROR_HEADERS, ERROR_TIPS, MarginCurves, level_error_cells, plan_error_words
from dpgui.app.hierarchy.tree import level_unit
from dpgui.app.widgets.fields import (
    ValidatedField, inline_message, parse_delta, parse_epsilon, parse_number, set_buddy, show_inline,
)
from dpgui.app.widgets.person_column import PersonColumnRow
from dpgui.app.workers import Worker, WorkerPool
from dpgui.core.hierarchy import check_assumed_records
from dpgui.errors import DpguiError, ParameterError
from dpgui.formatting import format_delta, format_significant
from dpgui.vocabulary import Allocation, Neighbours, Noise, PriorSource
from dpgui.workspace.hierarchy import HierarchyWorkspace
from dpgui.workspace.hierarchy_planning import (
    ALLOCATION_LABELS, CONSISTENCY_LABELS, NOISE_LABELS, HierarchyPlanRequest, PlannedHierarchy, share_budget,
)
from dpgui.workspace.statistics.hierarchy import HIERARCHY
from dpgui.workspace.words import NEIGHBOURS_LABELS, escape

TABLE_HEADERS = ("Level", "Column", "Categories", "Weight", "Budget", "Bias²\n(records²)", "Variance\n(records²)",
                 "MSE\n(records²)", *ERROR_HEADERS)
TABLE_TIPS = (
    "Level 0 is the total of all records; level 1 the top column.",
    "The level column.",
    "How many categories (counts) this level publishes.",
    "How much this level's error counts in the total error the planner minimises (double-click to change).",
    "The level's share of the privacy budget (double-click to change; the shares add up to at most the total).",
    "Projected squared bias summed over the level's categories (the clamp at zero pushes small counts up), "
    "in records².",
    "Projected variance summed over the level's categories, in records².",
    "Projected mean squared error summed over the level's categories (bias² + variance), in records².",
    *ERROR_TIPS,
)
COL_WEIGHT, COL_BUDGET = 3, 4


def _parse_alpha(raw: str) -> float:
    value = float(parse_number(raw, "α", "0.1"))
    if not 0 < value < 1:
        raise ParameterError(f"α must be between 0 and 1, got {raw!r}", "enter e.g. 0.1 (a 10 % relative error)")
    return value


def _parse_records(raw: str) -> int | None:
    """A typed number of records (a published estimate of N), or None when the field is empty."""
    if not raw.strip():
        return None
    return check_assumed_records(int(parse_number(raw, "N", "12000", integer=True)))


def _parse_target(raw: str) -> float:
    value = float(parse_number(raw, "target error", "25"))
    if value <= 0:
        raise ParameterError(f"the target error must be above 0, got {raw!r}",
                             "enter e.g. 625 (records², summed over the categories)")
    return value


def plan_task(request: HierarchyPlanRequest, progress: Any, should_cancel: Any) -> PlannedHierarchy:
    """The plan of ``request`` through the statistic seam, with what the plan step shows (worker thread)."""
    return HIERARCHY.plan(request, progress, should_cancel).detail


def _fit_height(table: QTableWidget) -> None:
    """As tall as its rows (no empty area, no vertical scroll bar for a tree's 3 to 5 levels), and the
    horizontal scroll bar's height more while the columns are wider than the table (large text, 200 %)."""
    table.resizeRowsToContents()
    rows = sum(table.rowHeight(r) for r in range(table.rowCount()))
    bar = table.horizontalScrollBar()
    scrolling = bar.sizeHint().height() if bar.maximum() > 0 else 0
    table.setFixedHeight(table.horizontalHeader().sizeHint().height() + rows + 2 * table.frameWidth() + 2 + scrolling)


def help_label(words: str) -> QLabel:
    """A wrapped line of help in the placeholder colour."""
    label = QLabel(words)
    label.setWordWrap(True)
    label.setStyleSheet("color: palette(placeholder-text);")
    return label


class HierarchyPlanStep(QWidget):
    """Step 2's fields and their slots, a part of the mode's page (see the module doc). The page sets
    what is declared here before it builds the step (:meth:`_build_plan_page`)."""

    state_ws: HierarchyWorkspace
    pool: WorkerPool
    _replan: QTimer  # plans again a moment after the last edit
    _plan_worker: Worker | None
    _filling: bool  # the table is being filled: its edits are not the officer's

    def _build_plan_page(self) -> QWidget:
        privacy_box = self._build_privacy_box()
        plan_box = QGroupBox("Plan: how the budget is shared between the levels")
        plan_form = QFormLayout(plan_box)
        self.allocation = self._combo(ALLOCATION_LABELS, (
            "Equal: every level gets the same budget. Least error: the budgets that give the smallest total "
            "(weighted) error for your ε. Least ε: the smallest budget that meets your target error. The last two "
            "need counts: a public prior file, or the opt-in of step 1."))
        plan_form.addRow("&Allocation:", self.allocation)
        set_buddy(plan_form, self.allocation, self.allocation)
        self.target = ValidatedField(_parse_target, "e.g. 625", (
            "The error you accept: the weighted mean squared error, summed over every category of every level "
            "(each level times its weight), in records² — the figure the table's MSE column adds up. The plan's "
            "95 % margin of one count is then shown for each level."))
        self.target.set_text("625")
        self.target.setEnabled(False)  # for "least ε for a target error" only
        plan_form.addRow("&Target error (records²):", self.target)
        set_buddy(plan_form, self.target, self.target.edit)
        self.consistency = self._combo(CONSISTENCY_LABELS, (
            "Consistency makes the published counts whole numbers ≥ 0 where every parent is exactly the sum of "
            "its children. Automatic takes the method with the smaller projected error."))
        plan_form.addRow("&Consistency:", self.consistency)
        set_buddy(plan_form, self.consistency, self.consistency)
        self.reset_budgets = QPushButton("Reset &budgets and weights")
        self.reset_budgets.setToolTip("Forget the budgets and weights you typed: the allocation decides again.")
        self.reset_budgets.clicked.connect(self.reset_typed_budgets)
        plan_form.addRow(self.reset_budgets)
        self.plan_message = inline_message(self)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.addWidget(privacy_box)
        left_layout.addWidget(plan_box)
        left_layout.addWidget(self.plan_message)
        left_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(left)
        scroll.setMinimumWidth(460)

        right = self._build_plan_results()

        for field in (self.epsilon, self.delta, self.target, self.alpha, self.records):
            field.edited.connect(self._on_plan_edited)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(scroll)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([470, 860])
        return splitter

    def _build_privacy_box(self) -> QGroupBox:
        """Privacy: ε, δ, α, the noise, the neighbour model, records per person, the records the projection assumes."""
        privacy_box = QGroupBox("Privacy")
        form = QFormLayout(privacy_box)
        self.epsilon = ValidatedField(parse_epsilon, "e.g. 1", text.EPSILON_TOOLTIP)
        self.epsilon.set_text("1")
        form.addRow("Privacy budget &ε:", self.epsilon)
        set_buddy(form, self.epsilon, self.epsilon.edit)
        form.addRow(help_label(text.EPSILON_HELP))
        self.delta = ValidatedField(parse_delta, "e.g. 1e-9", text.DELTA_TOOLTIP)
        self.delta.set_text("0")
        form.addRow("&δ (failure probability):", self.delta)
        set_buddy(form, self.delta, self.delta.edit)
        self.alpha = ValidatedField(_parse_alpha, "e.g. 0.1", (
            "The multiplicative error α of Ghazi et al. 2023: a count may be off by α times itself (0.1 = 10 %) plus a small "
            "additive error. Used with δ > 0 to compare its mechanism with the Gaussian baseline, and by "
            "Multiplicative noise."))
        self.alpha.set_text("0.1")
        self.alpha.setEnabled(False)
        form.addRow("&α (relative error, δ > 0):", self.alpha)
        set_buddy(form, self.alpha, self.alpha.edit)
        self.noise = self._combo(NOISE_LABELS, "The kind of random noise added to each count. Laplace gives pure "
                                 "ε-DP; Gaussian and the multiplicative mechanism of Ghazi et al. 2023 need δ > 0. Automatic "
                                 "takes the one with the smaller projected error.")
        form.addRow("&Noise:", self.noise)
        set_buddy(form, self.noise, self.noise)
        self.neighbours = self._combo(NEIGHBOURS_LABELS, text.NEIGHBOURS_TOOLTIP)
        form.addRow("&Protect against:", self.neighbours)
        set_buddy(form, self.neighbours, self.neighbours)
        self.neighbours_note = text.plain_text(QLabel(""))  # a query whose row count is not public: what was done
        self.neighbours_note.setWordWrap(True)
        self.neighbours_note.setStyleSheet("font-weight: bold;")
        self.neighbours_note.setVisible(False)
        self._neighbours_switched = False
        form.addRow(self.neighbours_note)
        self.records_per_person = QSpinBox()
        self.records_per_person.setRange(1, 10_000)
        self.records_per_person.setToolTip(text.RECORDS_PER_PERSON_TOOLTIP)
        self.records_per_person.valueChanged.connect(self._on_plan_edited)
        form.addRow("&Records per person (max):", self.records_per_person)
        set_buddy(form, self.records_per_person, self.records_per_person)
        self.person = PersonColumnRow(form, self.neighbours, self.records_per_person,
                                      lambda: self.state_ws.update(person_column=self.person.column()))
        self.records = ValidatedField(_parse_records, "e.g. 12000", (
            "The number of records the projected errors assume, spread evenly over the categories (a prior file's "
            "counts are used instead when there is one). Under 'N is public' it is the file's row count; under "
            "'N is private' only a published estimate may be typed, never the file's count."))
        self.records_label = QLabel("")
        self.records_label.setBuddy(self.records.edit)
        form.addRow(self.records_label, self.records)
        self.records_help = help_label("")
        form.addRow(self.records_help)
        return privacy_box

    def _build_plan_results(self) -> QWidget:
        """The plan's right-hand side: the summary, warnings, the level table (budgets and projected errors), the
        margin curves and, with δ > 0, the comparison of the Gaussian and multiplicative noises."""
        self.summary = QLabel("Choose the level columns in step 1.")
        self.summary.setTextFormat(Qt.TextFormat.RichText)  # user text in it is escaped
        self.summary.setWordWrap(True)
        self.table = QTableWidget(0, len(TABLE_HEADERS))
        self.table.setAccessibleName("Level budgets and projected error")
        self.table.setHorizontalHeaderLabels(list(TABLE_HEADERS))
        for column, tip in enumerate(TABLE_TIPS):
            item = self.table.horizontalHeaderItem(column)
            if item is not None:
                item.setToolTip(tip)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemChanged.connect(self._on_table_edited)
        self.table_note = help_label("Double-click a weight or a budget to change it; the projection follows. Errors are "
                                "in records (squared errors in records²), projected before anything is released.")
        self.compare_label = QLabel("")
        self.compare_label.setTextFormat(Qt.TextFormat.RichText)
        self.compare_label.setWordWrap(True)
        self.compare = QTableWidget(0, 4)
        self.compare.setAccessibleName("Ghazi et al. 2023: Gaussian and multiplicative side by side")
        self.compare.setHorizontalHeaderLabels(["Level", "Categories", "Gaussian\nα-RMSE (records)",
                                                "Multiplicative\nα-RMSE (records)"])
        self.compare.verticalHeader().setVisible(False)
        self.compare.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.compare.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.compare.hide()
        self.compare_label.hide()
        self.warnings = QLabel("")
        self.warnings.setTextFormat(Qt.TextFormat.RichText)  # user text in it is escaped
        self.warnings.setWordWrap(True)
        self.warnings.setStyleSheet("color: #B00020;")
        self.warnings.hide()
        self.curves = MarginCurves()
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.summary)
        right_layout.addWidget(self.warnings)
        right_layout.addWidget(self.table)
        right_layout.addWidget(self.table_note)
        right_layout.addWidget(self.curves, 1)
        right_layout.addWidget(self.compare_label)
        right_layout.addWidget(self.compare)
        right_layout.addStretch(0)
        for table in (self.table, self.compare):
            _fit_height(table)
            table.horizontalScrollBar().rangeChanged.connect(partial(lambda t, *_: _fit_height(t), table))
        return right

    def _combo(self, labels: dict[str, str], tooltip: str) -> QComboBox:
        combo = QComboBox()
        for key, label in labels.items():
            combo.addItem(label, key)
        combo.setToolTip(tooltip)
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(18)  # long labels are elided; the whole label is in the list
        combo.currentIndexChanged.connect(self._on_plan_edited)
        return combo

    def _on_plan_edited(self, *_: Any) -> None:
        """A privacy or plan setting changed: validate it, write it into the choice and plan again."""
        values: dict[str, object] = {}
        epsilon, delta = self.epsilon.value(), self.delta.value()
        allocation = str(self.allocation.currentData())
        self.target.setEnabled(allocation == Allocation.TARGET)
        target = self.target.value() if allocation == Allocation.TARGET else None
        self.alpha.setEnabled(bool(delta))
        alpha = self.alpha.value() if delta else self.state_ws.state.choice.alpha
        if epsilon is None or delta is None or alpha is None or (allocation == Allocation.TARGET and target is None):
            self._replan.stop()
            self.state_ws.update(planned=None)
            self.summary.setText("No plan: a privacy or plan setting is not valid — see the red message on the left. "
                                 "Nothing is spent.")
            return
        neighbours = str(self.neighbours.currentData())
        self._show_records_field(neighbours)
        if neighbours != Neighbours.CHANGE:  # typed: a published estimate of N (under change N itself is used)
            values["records_estimate"] = self.records.value()
        values.update(epsilon=float(epsilon), delta=float(delta), noise=str(self.noise.currentData()),
                      neighbours=neighbours, records_per_person=self.records_per_person.value(),
                      allocation=allocation, target_mse=target, consistency=str(self.consistency.currentData()),
                      alpha=float(alpha))
        old = self.state_ws.state.choice
        if (values["epsilon"], values["delta"], values["noise"], values["neighbours"], values["records_per_person"]) != (
                old.epsilon, old.delta, old.noise, old.neighbours, old.records_per_person) or allocation != old.allocation:
            values["budgets"] = None  # typed budgets were shares of the old total
        self.state_ws.update_choice(**values)
        self._replan.start()

    def _show_records_field(self, neighbours: str) -> None:
        """Under change the field shows N, the file's row count (public), and cannot be edited; under add/remove
        it holds only what the officer typed (the file's count is never put there)."""
        state = self.state_ws.state
        public = neighbours == Neighbours.CHANGE
        self.records.setEnabled(not public)
        if public:
            rows = state.loaded.rows if state.loaded is not None else None
            self.records.set_text(f"{rows:,}" if rows else "")
            self.records.clear_error()
        elif self.records_label.text().startswith("Records N"):  # from change: the row count shown goes
            typed = state.choice.records_estimate
            self.records.set_text(f"{typed:,}" if typed else "")
        self.records_label.setText("Records N (public):" if public else "Published estimate of &N:")
        self.records_help.setText(
            "N is public under this protection: the errors are projected at N records spread evenly over the "
            "categories (a prior file's counts are used when there is one)." if public else
            "N is private under this protection, so the file's row count is never used here. Type a published "
            "estimate of N to see how useful the small counts will be (or give a prior file).")

    def reset_typed_budgets(self) -> None:
        self.state_ws.update_choice(budgets=None, weights=None)
        self.start_planning()

    def _on_table_edited(self, item: QTableWidgetItem) -> None:
        """A weight or a level budget typed in the table: plan again with it (a budget keeps its typed value,
        the other levels share the rest of the total in their current proportions)."""
        if self._filling or item.column() not in (COL_WEIGHT, COL_BUDGET):
            return
        planned = self.state_ws.state.planned
        if planned is None:
            return
        show_inline(self.plan_message, "")
        try:
            value = float(parse_number(item.text(), "the value", "0.25"))
            if item.column() == COL_WEIGHT:
                weights = list(planned.plan.weights)
                if value < 0:
                    raise ParameterError(f"the weight {value:g} of level {item.row()} is negative",
                                         "give every level a weight ≥ 0")
                weights[item.row()] = value
                if not any(w > 0 for w in weights):
                    raise ParameterError("every weight is 0", "give at least one level a weight above 0")
                self.state_ws.update_choice(weights=tuple(weights))
            else:
                self.state_ws.update_choice(budgets=share_budget(planned.plan, item.row(), value))
        except DpguiError as err:
            show_inline(self.plan_message, text.friendly(err) + " The plan is unchanged.")
            self._show_plan()  # the table shows the plan's values again
            return
        self.start_planning()

    def start_planning(self) -> None:
        """Plan and project on a worker (the previous planning, if any, is cancelled)."""
        self._replan.stop()
        state = self.state_ws.state
        if state.loaded is None or not state.loaded.matches(state.data_path, state.choice):
            return
        if self._plan_worker is not None:
            self._plan_worker.cancel()
        show_inline(self.plan_message, "")
        self.summary.setText("Planning…")
        self.state_ws.update(busy="planning")
        worker = Worker(plan_task, HierarchyPlanRequest(state.loaded, state.choice))
        worker.connect_to(self, finished=partial(self._on_planned, worker), failed=partial(self._on_plan_failed, worker),
                          cancelled=partial(self._on_plan_cancelled, worker))
        self._plan_worker = worker
        self.pool.start(worker)

    def _on_plan_cancelled(self, worker: Worker) -> None:
        if worker is self._plan_worker:
            self._plan_worker = None
            self.state_ws.update(busy="")

    def _on_plan_failed(self, worker: Worker, message: str) -> None:
        if worker is not self._plan_worker:
            return
        self._plan_worker = None
        show_inline(self.plan_message, message)
        self.summary.setText("No plan: see the red message on the left.")
        self.state_ws.update(planned=None, busy="")

    def _on_planned(self, worker: Worker, planned: PlannedHierarchy) -> None:
        if worker is not self._plan_worker:
            return
        self._plan_worker = None
        self.state_ws.update(planned=planned, busy="")

    def is_busy(self) -> bool:
        return bool(self.state_ws.state.busy) or self._replan.isActive()

    def _show_plan(self) -> None:
        state = self.state_ws.state
        planned, loaded = state.planned, state.loaded
        self._filling = True
        try:
            self.table.setRowCount(0)
            self._show_records_field(str(self.neighbours.currentData()))
            if planned is None or loaded is None:
                self.compare.hide()
                self.compare_label.hide()
                self.warnings.hide()
                self.curves.set_planned(None, None)
                if loaded is None and not state.problem:  # no tree (e.g. other data): no plan, nor its words
                    self.summary.setText("No plan yet: choose the level columns in step 1.")
                return
            plan = planned.plan
            unit = level_unit(plan)
            header = self.table.horizontalHeaderItem(COL_BUDGET)
            if header is not None:
                header.setText(f"Budget {unit}" if unit else "Budget")
            sizes = plan.level_sizes
            projection = planned.projection
            self.table.setRowCount(len(sizes))
            for level, nodes in enumerate(sizes):
                name = "all records" if level == 0 else loaded.hierarchy.level_names[level - 1]
                cells: list[str] = [str(level), name, f"{nodes:,}", format_significant(plan.weights[level], 4)]
                if not unit:
                    cells.append("—")
                elif level == 0 and plan.privacy.root_public:
                    cells.append("exact (N public)")
                else:
                    cells.append(format_significant(plan.level_budgets[level], 4))
                if projection is not None:
                    lp = projection.levels[level]
                    cells += [format_significant(lp.bias2), format_significant(lp.variance), format_significant(lp.mse)]
                elif not unit:  # multiplicative, no counts: no per-level noise variance to show
                    cells += ["—"] * 3
                else:  # no counts: the noise's own variance (before the clamp and the consistency step)
                    variance = nodes * plan.level_noise_variances()[level]
                    cells += ["—", format_significant(variance), "—"]
                errors = planned.errors
                cells += level_error_cells(errors.levels[level]) if errors is not None else ["—"] * len(ERROR_HEADERS)
                for column, value in enumerate(cells):
                    item = QTableWidgetItem(value)
                    editable = column == COL_WEIGHT or (column == COL_BUDGET and bool(unit)
                                                        and not (level == 0 and plan.privacy.root_public))
                    flags = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled
                    if editable:
                        flags |= Qt.ItemFlag.ItemIsEditable
                        item.setToolTip(TABLE_TIPS[column])
                    item.setFlags(flags)
                    if column >= 2:
                        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    self.table.setItem(level, column, item)
            self._show_comparison(planned)
        finally:
            self._filling = False
            for table in (self.table, self.compare):
                _fit_height(table)
        self.summary.setText(self.summary_text(planned))
        _, warnings = plan_error_words(planned, loaded.hierarchy.level_names)
        self.warnings.setText(warnings)
        self.warnings.setVisible(bool(warnings))
        self.curves.set_planned(planned, loaded)

    def summary_text(self, planned: PlannedHierarchy) -> str:
        plan = planned.plan
        epsilon, delta, _ = plan.ledger_charge()
        cost = f"ε = {epsilon:g}" + (f", δ = {format_delta(delta)}" if delta > 0 else "")
        noise = {"laplace": "Laplace", "gaussian": "Gaussian", "multiplicative": "multiplicative (Ghazi et al. 2023)"}[plan.noise]
        words = (f"<b>Plan, before anything is released:</b> {sum(plan.level_sizes):,} counts over "
                 f"{len(plan.level_sizes) - 1} levels; {noise} noise; cost {cost}; "
                 f"consistency: {escape(CONSISTENCY_LABELS[plan.consistency].split(' (')[0].lower())}.")
        projection = planned.projection
        loaded = self.state_ws.state.loaded
        words += plan_error_words(planned, loaded.hierarchy.level_names if loaded is not None else ())[0]
        if projection is not None:
            words += f" (Weighted MSE {projection.weighted_mse:,.0f} records², {escape(projection.method)}.)"
            if len(planned.projections) > 1:
                others = ", ".join(f"{CONSISTENCY_LABELS[m].split(' (')[0].lower()} {p.weighted_mse:,.0f}"
                                   for m, p in planned.projections.items())
                words += f" Consistency chosen for the lower projected error ({others})."
        else:
            words += f" {escape(planned.note)}"
        counts = {PriorSource.FILE: "the public prior file's counts",
                  PriorSource.CONFIDENTIAL: "the CONFIDENTIAL counts (your opt-in, recorded in the manifest)",
                  PriorSource.NONE: "no counts"}.get(plan.prior_source, plan.prior_source)
        used = f" The projection and the automatic choices use {counts}." if plan.prior_source != PriorSource.NONE else ""
        if plan.noise == Noise.MULTIPLICATIVE:  # Ghazi et al.'s (2023) rounds: no level budgets
            return words + " No level budgets: the mechanism spends its budget over the rounds of Ghazi et al. 2023." + used
        if plan.allocation == Allocation.CUSTOM:
            return words + " Level budgets set by hand." + used
        if plan.allocation == Allocation.UNIFORM:
            return words + " Equal budget on every noised level (no counts needed)." + used
        return words + f" Budgets chosen with {counts}."

    def _show_comparison(self, planned: PlannedHierarchy) -> None:
        """With δ > 0: Ghazi et al.'s (2023) projected α-mRMSE per level of the multiplicative mechanism and the Gaussian
        baseline, side by side, and which is lower."""
        alpha = planned.alpha
        visible = alpha is not None
        self.compare.setVisible(visible)
        self.compare_label.setVisible(visible)
        if alpha is None:
            return
        gaussian, multiplicative = alpha
        better = "multiplicative" if multiplicative.alpha_mrmse < gaussian.alpha_mrmse else "Gaussian"
        words = (f"<b>The comparison of Ghazi et al. 2023 at your ε and δ</b>: the error beyond a {gaussian.alpha:.0%} relative "
                 f"error (α-mRMSE, records; the worst category of each level). Lower is better; the lower of these "
                 f"two is <b>{better}</b> ({format_significant(gaussian.alpha_mrmse)} Gaussian, "
                 f"{format_significant(multiplicative.alpha_mrmse)} multiplicative). "
                 f"{escape(multiplicative.note.rstrip('.'))}.")
        others = {k: v for k, v in planned.alternatives.items() if k != planned.plan.noise}
        for noise, projection in others.items():
            words += (f" With {noise} noise instead the weighted MSE would be {projection.weighted_mse:,.0f} records² "
                      f"(this plan: {planned.alternatives[planned.plan.noise].weighted_mse:,.0f}).")
        self.compare_label.setText(words)
        self.compare.setRowCount(len(gaussian.levels))
        names = ["all records", *(self.state_ws.state.loaded.hierarchy.level_names
                                  if self.state_ws.state.loaded is not None else ())]
        for row, (g, m) in enumerate(zip(gaussian.levels, multiplicative.levels)):
            cells = [f"{row} · {names[row] if row < len(names) else ''}", f"{g.nodes:,}",
                     format_significant(g.alpha_rmse), format_significant(m.alpha_rmse)]
            for column, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if column >= 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.compare.setItem(row, column, item)
