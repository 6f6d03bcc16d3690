"""Step 2 — privacy and plan: ε and δ with presets, the noise (automatic, Laplace or Gaussian),
neighbour model, records per person; the bin tree's
branching and each level's budget (linked, with locks); estimator, consistency, objective;
auto-optimize; where the officer needs accuracy (a region of the range the plan is optimised for, used
only when it lowers the 95 % margin there by ≥ 5 %; :mod:`dpgui.app.cdf.focus_panel`); the missing-value rule
(:mod:`dpgui.app.cdf.missing_rule`); accuracy first (the smallest ε for an error you accept, in the region when
one is chosen, and said so); the projected error — all before any budget is spent. Planning is
data-independent: it never reads the file. The level budgets are :mod:`dpgui.app.cdf.budget_editor`, the
plan's sentences :mod:`dpgui.app.cdf.plan_words`.

Accuracy first's box is :mod:`dpgui.app.cdf.accuracy_first`; its search runs here, on the page's planning
worker, from the page's settings."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QPushButton, QScrollArea, QSpinBox, QSplitter, QVBoxLayout,
    QWidget,
)

from dpgui.app import text
from dpgui.app.binding import WorkspaceBinding
from dpgui.app.cdf.accuracy_first import AccuracyFirstBox
from dpgui.app.cdf.budget_editor import BudgetEditor
from dpgui.app.cdf.focus_panel import FocusControls, focus_words
from dpgui.app.cdf.missing_rule import MissingRuleControls
from dpgui.app.cdf.plan_words import noise_words, plan_words
from dpgui.app.cdf.projection_plots import ProjectionPlots
from dpgui.app.widgets.fields import (
    ValidatedField, compact_combo, inline_message, offer_neighbours, parse_delta, parse_epsilon, set_buddy, show_inline,
)
from dpgui.app.widgets.person_column import PersonColumnRow
from dpgui.app.workers import Worker, WorkerPool
from dpgui.core.focus import FocusChoice, FocusOffer
from dpgui.core.margins import MARGIN_NAME
from dpgui.core.plan import Plan, PrivacySpec
from dpgui.core.planner import margin95, plan_for_accuracy
from dpgui.core.projection_curves import ProjectedCurves
from dpgui.core.tree import TreeShape
from dpgui.errors import DpguiError, ParameterError
from dpgui.formatting import cdf_margin_words
from dpgui.vocabulary import AUTO, AccuracyWhere, Neighbours, Noise
from dpgui.workspace.planning import PlanRequest, other_noise_plan
from dpgui.workspace.state import DataContext, PlanChoice
from dpgui.workspace.statistics.cdf import CDF


def _format_delta(delta: float) -> str:
    """δ as the field shows it: '0', '1e-9', or the exact value when 6 digits would round it."""
    shown = text.format_delta(delta)
    return shown if float(shown) == delta else repr(delta)


@dataclass(frozen=True)
class Planned:
    """What a planning worker returns: the plan, the accepted error of accuracy first (records), and the
    answer for the region the officer needs accurate (``offer``, with the region in words) if one is chosen."""

    plan: Plan
    wanted: float | None = None
    offer: FocusOffer | None = None
    region: str = ""


def _parse_branching(raw: str, bins: int | None) -> str:
    """'auto' or a branching that fits K bins (checked against K once K is known)."""
    cleaned = raw.strip().lower()
    if cleaned in ("", "auto", "automatic"):
        return "auto"
    TreeShape.parse(bins or 2, cleaned)
    return cleaned


class PlanPage(QWidget):
    """Privacy settings, plan editor, accuracy first, and the projection plots.

    Takes its data context (K, the value axis, the file's row count) from the workspace and writes
    step 2 into it (``plan``: a :class:`~dpgui.workspace.state.PlanChoice`) whenever it changes: as
    the officer edits, as plans arrive, and when a project sets it (:meth:`apply_plan`). It reads
    only its own widgets."""

    busyChanged = Signal(bool)

    def __init__(self, binding: WorkspaceBinding, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._workspace = binding.workspace
        self.pool = WorkerPool()
        self.plan: Plan | None = None
        self._context = DataContext()  # from step 1; its n_rows is used only where N is public
        self._generation = 0
        self._computing = False  # a plan of the current generation is being computed
        self.alternative: Plan | None = None  # the best plan of the other noise at the plan's (ε, δ)
        self._region_words = ""  # the region the projected error is also given for ("" for none)
        self._alternative_made_for: tuple[Any, ...] | None = None  # the settings it was planned for
        self._alternative_generation = 0
        self._replan_timer = QTimer(self)
        self._replan_timer.setSingleShot(True)
        self._replan_timer.setInterval(150)
        self._replan_timer.timeout.connect(self.replan)

        self.accuracy = AccuracyFirstBox(self._help, self.accuracy_first, self._on_public_n_typed)
        accuracy = self.accuracy
        self.target, self.target_unit, self.target_where = accuracy.target, accuracy.target_unit, accuracy.target_where
        self.public_n, self.accuracy_result = accuracy.public_n, accuracy.result
        boxes = (self._build_privacy_box(), self._build_plan_box(), accuracy)
        # ---- projection summary and plots
        self.summary = QLabel("Load data and choose a column to see the projected error.")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.plots = ProjectionPlots()
        self.plots.projected.connect(self._on_projected)
        self._lay_out(boxes)

        for changed in (self.epsilon.edit.textChanged, self.delta.edit.textChanged, self.noise.currentIndexChanged,
                        self.neighbours.currentIndexChanged,
                        self.records_per_person.valueChanged, self.branching.edit.textChanged,
                        self.consistency.currentIndexChanged, self.objective.currentIndexChanged,
                        self.budgets.locksChanged):
            changed.connect(self._publish)
        binding.changed.connect(self._on_workspace)
        self._publish()

    def _build_privacy_box(self) -> QGroupBox:
        """Privacy: ε (and its presets), δ, the noise, the neighbour model, missing values, records per person."""
        privacy_box = QGroupBox("Privacy")
        privacy_form = QFormLayout(privacy_box)
        presets = QHBoxLayout()
        self.preset_buttons: dict[str, QPushButton] = {}
        for name, eps in text.PRESETS:
            button = QPushButton(f"{name} {eps:g}")
            button.setToolTip(text.PRESET_TOOLTIP.format(eps=eps))
            button.clicked.connect(lambda _=False, e=eps: self.set_epsilon(e))
            presets.addWidget(button)
            self.preset_buttons[name] = button
        privacy_form.addRow("Presets:", presets)
        self.epsilon = ValidatedField(parse_epsilon, "e.g. 1", text.EPSILON_TOOLTIP)
        self.epsilon.set_text("1")
        self.epsilon.edited.connect(self.schedule_replan)
        privacy_form.addRow("Privacy budget &ε:", self.epsilon)
        set_buddy(privacy_form, self.epsilon, self.epsilon.edit)
        privacy_form.addRow(self._help(text.EPSILON_HELP))
        delta_presets = QHBoxLayout()
        self.delta_buttons: dict[str, QPushButton] = {}
        for name, value in text.DELTA_PRESETS:
            button = QPushButton(name)
            button.setToolTip(text.DELTA_PRESET_TOOLTIP.format(delta=text.format_delta(value)))
            button.setAccessibleName(f"δ = {text.format_delta(value)}")
            button.clicked.connect(lambda _=False, d=value: self.set_delta(d))
            delta_presets.addWidget(button)
            self.delta_buttons[name] = button
        privacy_form.addRow("δ presets:", delta_presets)
        self.delta = ValidatedField(parse_delta, "e.g. 1e-9", text.DELTA_TOOLTIP)
        self.delta.set_text("0")
        self.delta.edited.connect(self._on_delta)
        privacy_form.addRow("&δ (failure probability):", self.delta)
        set_buddy(privacy_form, self.delta, self.delta.edit)
        self.delta_help = self._help(text.delta_help(0.0))
        self.delta_help.setTextFormat(Qt.TextFormat.RichText)
        privacy_form.addRow(self.delta_help)
        self.noise = self._combo(text.NOISE_LABELS, text.NOISE_TOOLTIP)
        self.noise.currentIndexChanged.connect(self._on_noise)
        privacy_form.addRow("&Noise:", self.noise)
        set_buddy(privacy_form, self.noise, self.noise)
        self.noise_message = inline_message(self)
        privacy_form.addRow(self.noise_message)
        self.noise_note = self._help("")
        self.noise_note.setTextFormat(Qt.TextFormat.RichText)
        privacy_form.addRow(self.noise_note)
        self.neighbours = QComboBox()
        for key, label in text.NEIGHBOURS_LABELS.items():
            self.neighbours.addItem(label, key)
        self.neighbours.setToolTip(text.NEIGHBOURS_TOOLTIP)
        compact_combo(self.neighbours)
        self.neighbours_help = self._help(text.NEIGHBOURS_HELP["change"])
        self.neighbours.currentIndexChanged.connect(self._on_neighbours)
        privacy_form.addRow("&Protect against:", self.neighbours)
        set_buddy(privacy_form, self.neighbours, self.neighbours)
        privacy_form.addRow(self.neighbours_help)
        self.neighbours_note = self._help("")  # a query whose row count is not public: what was done, and why
        self.neighbours_note.setStyleSheet("font-weight: bold;")
        self.neighbours_note.setVisible(False)
        self._neighbours_switched = False
        privacy_form.addRow(self.neighbours_note)
        self.missing_rule = MissingRuleControls(privacy_form, self, self._help, self.schedule_replan)
        self.records_per_person = QSpinBox()
        self.records_per_person.setRange(1, 10_000)
        self.records_per_person.setToolTip(text.RECORDS_PER_PERSON_TOOLTIP)
        self.records_per_person.valueChanged.connect(self.schedule_replan)
        privacy_form.addRow("&Records per person (max):", self.records_per_person)
        set_buddy(privacy_form, self.records_per_person, self.records_per_person)
        privacy_form.addRow(self._help(text.RECORDS_PER_PERSON_HELP))
        self.person = PersonColumnRow(privacy_form, self.neighbours, self.records_per_person, self._publish)
        return privacy_box

    def _build_plan_box(self) -> QGroupBox:
        """Plan: branching, estimator, consistency, objective, the region of accuracy, the level budgets."""
        plan_box = QGroupBox("Plan: how the budget is spent")
        plan_form = QFormLayout(plan_box)
        self.branching = ValidatedField(lambda raw: _parse_branching(raw, self._context.bins), "auto",
                                        text.BRANCHING_HELP)
        self.branching.set_text("auto")
        self.branching.edited.connect(self.schedule_replan)
        plan_form.addRow("&Branching:", self.branching)
        set_buddy(plan_form, self.branching, self.branching.edit)
        self.estimator = self._combo(text.ESTIMATOR_LABELS, text.ESTIMATOR_TOOLTIP)
        self.estimator.currentIndexChanged.connect(self.schedule_replan)
        plan_form.addRow("&Estimator:", self.estimator)
        self.consistency = self._combo(text.CONSISTENCY_LABELS, text.CONSISTENCY_TOOLTIP)
        plan_form.addRow("&Consistency:", self.consistency)
        self.objective = self._combo(text.OBJECTIVE_LABELS, text.OBJECTIVE_TOOLTIP)
        self.objective.currentIndexChanged.connect(self.schedule_replan)
        plan_form.addRow("&Optimise for:", self.objective)
        for widget in (self.estimator, self.consistency, self.objective):
            set_buddy(plan_form, widget, widget)
        self.focus_controls = FocusControls(plan_form, self, self._help, self._on_focus)
        region = self.focus_controls
        self.focus, self.focus_from, self.focus_to = region.combo, region.low, region.high
        self.focus_between, self.focus_message, self.focus_note = region.between, region.message, region.note
        self.budgets = BudgetEditor()
        self.budgets.budgetsEdited.connect(self._on_budgets_edited)
        plan_form.addRow(self.budgets)
        self.auto_button = QPushButton("&Auto-optimize")
        self.auto_button.setToolTip("Choose the branching and every level's budget for the least projected "
                                    "error (locked levels stay as they are).")
        self.auto_button.clicked.connect(self.auto_optimize)
        plan_form.addRow(self.auto_button)
        self.plan_message = inline_message(self)
        plan_form.addRow(self.plan_message)
        return plan_box

    def _lay_out(self, boxes: tuple[QGroupBox, ...]) -> None:
        """The setting boxes in a scrolled column on the left; the summary and the plots on the right."""
        controls = QWidget()
        controls_layout = QVBoxLayout(controls)
        for box in boxes:
            controls_layout.addWidget(box)
        controls_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidget(controls)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(400)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.summary)
        right_layout.addWidget(self.plots, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(scroll)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([470, 800])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

    # ---------------------------------------------------------------- helpers
    @staticmethod
    def _help(message: str) -> QLabel:
        label = QLabel(message)
        label.setWordWrap(True)
        font = label.font()
        font.setPointSizeF(font.pointSizeF() * 0.92)
        label.setFont(font)
        return label

    @staticmethod
    def _combo(labels: dict[str, str], tooltip: str) -> QComboBox:
        combo = QComboBox()
        for key, label in labels.items():
            combo.addItem(label, key)
        combo.setToolTip(tooltip)
        compact_combo(combo)
        return combo

    def _on_neighbours(self) -> None:
        self.neighbours_help.setText(text.NEIGHBOURS_HELP[self.neighbours.currentData()])
        self.missing_rule.set_neighbours(self.neighbours.currentData())
        self._fill_public_n()
        self._update_delta_help()
        self.accuracy.show_unit()
        self.schedule_replan()

    def _offer_neighbours(self) -> None:
        """Offer "N is public" only when the open data's row count may be public: for a query not stated public
        it is not available, a plan under it is switched to "N is private" (planned again), and the note
        under the choice says which of the two happened (:func:`~dpgui.app.widgets.fields.offer_neighbours`)."""
        source = self._workspace.state.source
        public = source is None or source.source_spec.row_count_may_be_public
        switched = offer_neighbours(self.neighbours, public)
        self._neighbours_switched = not public and (switched or self._neighbours_switched)
        self.neighbours_note.setText("" if public else text.query_rows_private_note(self._neighbours_switched))
        self.neighbours_note.setVisible(not public)

    def _n_is_public(self) -> bool:
        return bool(self.neighbours.currentData() == Neighbours.CHANGE)

    def _fill_public_n(self) -> None:
        """The public N of accuracy first: the file's row count under 'N is public' (:mod:`dpgui.app.cdf.accuracy_first`)."""
        self.accuracy.fill_public_n(self._n_is_public(), self._context.n_rows)

    def _on_public_n_typed(self) -> None:
        if self.plan is not None:
            self._show_plan(self.plan)

    # ---------------------------------------------------------------- inputs from the data step
    def _on_workspace(self, parts: frozenset[str]) -> None:
        """After a change of step 1 (the source or the column choice): take K, the axis of the
        plots and the public N (if the neighbour model makes N public); re-plan if K changed."""
        if not parts & {"source", "column"}:
            return
        context = self._workspace.state.data_context()
        bins_changed = context.bins != self._context.bins
        bounds_changed = (context.lower, context.upper) != (self._context.lower, self._context.upper)
        self._context = context
        self.focus_controls.set_context(context)
        focused = self.focus.currentData() != "everywhere"
        if "source" in parts and focused:  # a region belongs to the data it was chosen for
            self.focus_controls.reset()
        if "source" in parts:
            source = self._workspace.state.source
            self.person.set_columns([] if source is None else [c.name for c in source.table.columns])
            self._offer_neighbours()
        self._fill_public_n()
        self._update_delta_help()
        if bins_changed or (bounds_changed and focused) or ("source" in parts and focused):
            self.schedule_replan()
        elif self.plan is not None and not self._bounds_valid():
            self._show_not_planned()  # the last plan is not redrawn on the placeholder axis 0 to 1
        elif self.plan is not None:
            self._show_plan(self.plan)

    def _bounds_valid(self) -> bool:
        choice = self._workspace.state.column
        return choice.lower is not None and choice.upper is not None and choice.lower < choice.upper

    # ---------------------------------------------------------------- what the page writes to the workspace
    def _privacy_as_typed(self) -> PrivacySpec | None:
        """The privacy settings, or None while ε or δ does not parse (read quietly: the fields show why)."""
        try:
            return PrivacySpec(parse_epsilon(self.epsilon.text()), self.neighbours.currentData(),
                               self.records_per_person.value(), parse_delta(self.delta.text()),
                               self.missing_rule.impute())
        except DpguiError:
            return None

    def noise_choice(self) -> str:
        """The noise asked for: "auto", "laplace" or "gaussian"."""
        return str(self.noise.currentData())

    def _plan_matches(self, privacy: PrivacySpec | None) -> bool:
        """Does the current plan fit the δ and noise as typed? (A plan for another δ, or Laplace while
        Gaussian is asked for, must never be released; ε is checked by re-planning as before.)"""
        plan, noise = self.plan, self.noise_choice()
        if plan is None or privacy is None or plan.privacy.delta != privacy.delta:
            return False
        return noise == AUTO or plan.noise == noise

    def _publish(self, *_: object) -> None:
        privacy = self._privacy_as_typed()
        self._workspace.update(plan=PlanChoice(
            privacy=privacy, plan=self.plan if self._plan_matches(privacy) else None,
            consistency=self.consistency.currentData(),
            branching=self.branching.text(), objective=self.objective.currentData(),
            locked_levels=tuple(self.budgets.locked()),
            planning=self._computing or self._replan_timer.isActive(), noise=self.noise_choice(),
            focus=self.focus_choice(), person_column=self.person.column()))

    def set_epsilon(self, epsilon: float) -> None:
        self.epsilon.set_text(f"{epsilon:g}")
        self.schedule_replan()

    def set_delta(self, delta: float) -> None:
        """Set δ as if typed (0: pure ε-DP) and re-plan."""
        self.delta.set_text(_format_delta(delta))
        self._on_delta()

    def set_noise(self, noise: str) -> None:
        """Ask for a noise ("auto", "laplace" or "gaussian") as if chosen in the list."""
        index = self.noise.findData(noise)
        if index < 0:
            raise ParameterError(f"unknown noise {noise!r}", "use auto, laplace or gaussian")
        self.noise.setCurrentIndex(index)

    def _on_delta(self) -> None:
        self._update_delta_help()
        self._check_noise()
        self.schedule_replan()

    def _on_noise(self) -> None:
        self._check_noise()
        self.schedule_replan()

    def _update_delta_help(self) -> None:
        try:
            delta: float | None = parse_delta(self.delta.text())
        except DpguiError:
            delta = None
        n = self._context.n_rows if self._n_is_public() else self.accuracy.typed_n_estimate()
        self.delta_help.setText(text.delta_help(delta, n))

    def _check_noise(self) -> bool:
        """Say next to the noise list when the noise asked for cannot be used (Gaussian at δ = 0)."""
        try:
            delta = parse_delta(self.delta.text())
        except DpguiError:
            show_inline(self.noise_message, "")
            return True
        problem = self.noise_choice() == Noise.GAUSSIAN and delta <= 0
        show_inline(self.noise_message, text.GAUSSIAN_NEEDS_DELTA if problem else "")
        if problem:
            self.noise_note.setText("")
        return not problem

    def privacy(self) -> PrivacySpec | None:
        epsilon = self.epsilon.value()
        delta = self.delta.value()
        try:
            impute = self.missing_rule.impute()
        except DpguiError:  # the value's field says why
            return None
        if epsilon is None or delta is None:
            return None
        try:
            return PrivacySpec(epsilon, self.neighbours.currentData(), self.records_per_person.value(), delta, impute)
        except DpguiError as err:
            self.epsilon.show_error(text.friendly(err))
            return None

    def consistency_method(self) -> str:
        return str(self.consistency.currentData())

    # ---------------------------------------------------------------- planning (on a worker)
    def schedule_replan(self, *_: Any) -> None:
        self._replan_timer.start()
        self._publish()

    def replan(self, keep_budgets: bool = True) -> None:
        """Live re-planning after a change: same branching setting; locked levels kept."""
        self._plan_async(locked=self.budgets.locked() if keep_budgets else {})
        self._publish()

    def auto_optimize(self) -> None:
        self._replan_timer.stop()
        self._plan_async(locked=self.budgets.locked())
        self._publish()

    def _on_focus(self) -> None:
        self.accuracy.set_region(self.focus_controls.words())
        self.schedule_replan()

    def focus_choice(self) -> FocusChoice | None:
        """The region chosen (None while a typed one is not valid)."""
        return self.focus_controls.typed_choice()

    def keep_focus(self, choice: FocusChoice | None) -> None:
        """Choose ``choice`` again after the same data was read again (a CSV's dialect confirmed or changed:
        opening it put the region back to everywhere), and plan for it."""
        if choice is not None and choice != self.focus_choice():
            self.focus_controls.set_choice(choice)
            self._on_focus()

    def _focus_span(self, bins: int) -> tuple[tuple[int, int] | None, str]:
        """(the CDF points of the chosen region, its words), (None, "") for everywhere or a region that is not
        valid (the message under the list says why)."""
        return self.focus_controls.span(bins)

    def _shape(self, bins: int, privacy: PrivacySpec) -> TreeShape | None:
        """The typed branching for K bins (and, under change, the leaf for missing values), or None (auto)."""
        branching = self.branching.value()
        if branching is None:
            raise ParameterError("the branching is not valid", "fix it (see the message under it)")
        if branching == AUTO:
            return None
        try:
            return TreeShape.parse(bins, branching, privacy.missing_leaf)
        except DpguiError as err:
            self.branching.show_error(text.friendly(err))
            raise

    def _plan_async(self, locked: dict[int, float]) -> None:
        show_inline(self.plan_message, "")
        privacy = self.privacy()
        bins = self._context.bins
        if privacy is None or bins is None or not self._check_noise():
            self._show_not_planned()
            return
        try:
            shape = self._shape(bins, privacy)
        except DpguiError:
            self._show_not_planned()
            return
        if shape is not None and self.plan is not None and shape.height != self.plan.shape.height:
            locked = {}
        if shape is None and self.plan is not None:
            locked = {}  # levels may change under 'auto'
        if self.plan is None or privacy.neighbours != self.plan.privacy.neighbours:
            locked = {}
        noise = self.noise_choice()
        if locked and self.plan is not None:
            # Locked budgets are in the current plan's unit (ε or ρ): Automatic keeps that noise (the
            # noise note says so), and an explicit switch to the other noise unlocks them.
            if noise == AUTO:
                noise = self.plan.noise
            elif noise != self.plan.noise:
                locked = {}
                self.budgets.set_locks(())
        estimator = self.estimator.currentData()
        objective = self.objective.currentData()
        span, region = self._focus_span(bins)

        def task(progress: Any, should_cancel: Any) -> Planned:
            planned = CDF.plan(PlanRequest(bins, privacy, shape, "auto", estimator, objective, noise, locked, span),
                               progress).detail
            return Planned(planned.plan, offer=planned.offer, region=region if planned.offer else "")

        self._run(task)

    def _show_not_planned(self) -> None:
        """The summary while a setting of step 1 or 2 is not valid: no plan is made for the settings shown, and
        the figures still on screen are the last plan's (never presented as the plan of what is typed)."""
        if self.plan is not None or self._data_ready():
            self.summary.setText("<b>No plan for these settings:</b> fix what is marked in red in step 1 (bounds, "
                                 "bins) or here. Until then the figures below are those of the last plan made, "
                                 "and nothing can be released.")

    def _data_ready(self) -> bool:
        return self._workspace.state.source is not None and bool(self._workspace.state.column.column)

    def _run(self, task: Any, on_done: Any = None) -> None:
        self._generation += 1
        generation = self._generation

        def finished(plan: Any) -> None:
            self._on_planned(generation, plan, on_done)

        def failed(message: str) -> None:
            self._on_plan_failed(generation, message)

        worker = Worker(task).connect_to(self, finished=finished, failed=failed)
        self._computing = True
        self.busyChanged.emit(True)
        self.pool.start(worker)
        self._publish()

    def _on_planned(self, generation: int, result: Any, on_done: Any) -> None:
        if generation != self._generation:
            return
        self._computing = False
        self.busyChanged.emit(False)
        planned = result if isinstance(result, Planned) else Planned(result)
        if on_done is not None:
            on_done(planned)
        self.set_plan(planned.plan)
        self.focus_note.setText("" if planned.offer is None else focus_words(planned.offer, planned.region))

    def _on_plan_failed(self, generation: int, message: str) -> None:
        if generation != self._generation:
            return
        self._computing = False
        self.busyChanged.emit(False)
        show_inline(self.plan_message, message)
        if self.accuracy_result.text() == "Searching…":
            self.accuracy_result.setText("")
        self._publish()

    def is_planning(self) -> bool:
        return self.pool.busy() or self._replan_timer.isActive()

    def set_plan(self, plan: Plan, alternative: Plan | None = None) -> None:
        """Show ``plan`` and, with δ > 0, the best plan of the other noise (drawn beside it in the
        plots and compared in the noise note): ``alternative`` if given, else the one the planner made
        with ``plan`` (``plan.noise_choice.alternative``), else the one already made for the same
        settings, else one planned on a worker (:meth:`_plan_alternative`)."""
        self.plan = plan
        if alternative is None and plan.noise_choice is not None:
            alternative = plan.noise_choice.alternative
        key = self._alternative_key(plan)
        if alternative is not None:
            self.alternative, self._alternative_made_for = alternative, key
        elif key is None or key != self._alternative_made_for:
            self.alternative = None
            if key is not None:
                self._plan_alternative(plan, key)
        self.budgets.set_plan(plan)
        if self.branching.value() == AUTO:
            self.branching.edit.setPlaceholderText(f"auto (now {'x'.join(map(str, plan.shape.branching))})")
        self._show_plan(plan)
        self._publish()

    def _alternative_key(self, plan: Plan) -> tuple[Any, ...] | None:
        """What the other noise's best plan depends on (None when δ = 0: there is none)."""
        if plan.privacy.delta <= 0:
            return None
        shape = None if self.branching.value() == AUTO else plan.shape
        return (plan.privacy, plan.shape.bins, plan.estimator, shape, self.objective.currentData(), plan.noise)

    def _plan_alternative(self, plan: Plan, key: tuple[Any, ...]) -> None:
        """Plan the other noise at ``plan``'s (ε, δ) on a worker (about as long as the plan took), so
        the plan shows at once and the comparison follows; a result for older settings is dropped."""
        self._alternative_generation += 1
        generation = self._alternative_generation
        shape, objective = key[3], key[4]

        def task(progress: Any, should_cancel: Any) -> Plan | None:
            progress(0.0, "Planning the other noise, for comparison…")
            return other_noise_plan(plan, shape, objective)

        def arrived(other: Plan | None) -> None:
            if generation != self._alternative_generation or other is None or self.plan is None:
                return
            if self._alternative_key(self.plan) != key:
                return
            self.alternative, self._alternative_made_for = other, key
            self._show_plan(self.plan)

        self.pool.start(Worker(task).connect_to(self, finished=arrived, failed=lambda _message: None))

    def _on_budgets_edited(self) -> None:
        if self.plan is None:
            return
        try:
            plan = Plan(self.plan.shape, self.plan.privacy, self.budgets.exact_budgets(), self.plan.estimator,
                        self.plan.noise)
        except DpguiError as err:
            show_inline(self.plan_message, text.friendly(err))
            return
        show_inline(self.plan_message, "")
        self.plan = plan
        if self.focus_note.text():
            self.focus_note.setText("The budgets were changed by hand, so the plan is no longer the one made for "
                                    "the region (Auto-optimize makes it again).")
        self._show_plan(plan)
        self._publish()

    def _show_plan(self, plan: Plan) -> None:
        """Show the plan's tree at once and its projected error when the plots' worker has it."""
        context = self._context
        self.summary.setText(f"<b>Projected {MARGIN_NAME}, before anything is released:</b> computing… "
                             f"{plan_words(plan)}")
        # Under 'N is private' the file's count is never shown nor used: % of N only of a typed estimate.
        n = context.n_rows if plan.privacy.root_public else self.accuracy.typed_n_estimate()
        self.noise_note.setText(self.noise_words(plan))
        region, self._region_words = (None, "") if context.bins != plan.shape.bins else self._focus_span(context.bins)
        self.accuracy.set_region(self.focus_controls.words())
        self.plots.set_plan(plan, context.lower, context.upper, context.label, n, alternative=self.alternative,
                            region=region)

    def noise_words(self, plan: Plan, projection: ProjectedCurves | None = None) -> str:
        """The noise note for ``plan`` with the noise and objective chosen on this page (:func:`noise_words`)."""
        return noise_words(plan, self.noise_choice(), self.objective.currentData(), projection)

    def _on_projected(self, projection: ProjectedCurves) -> None:
        plan = projection.plan
        worst, average = projection.worst, projection.rms  # cdf_margins(plan): margin95 'every' and 'average'
        n = self.plots.n_public
        of_n = "N" if plan.privacy.root_public else "your estimate of N"
        words = (f"<b>Projected {MARGIN_NAME}, before anything is released:</b> "
                 f"{cdf_margin_words(worst, average, n, of_n)}.")
        if projection.region_worst is not None and projection.region_rms is not None and self._region_words:
            region = cdf_margin_words(projection.region_worst, projection.region_rms, n, of_n).replace(" of the CDF", "")
            words += f" In {self._region_words}: {region}."
        words += f" {plan_words(plan)}"
        if math.isinf(worst):
            words += " <b>Some counts cannot be estimated: give the levels that 'fewest nodes' needs some budget.</b>"
        self.summary.setText(words)
        if plan is self.plan:
            self.noise_note.setText(self.noise_words(plan, projection))

    # ---------------------------------------------------------------- accuracy first
    def accuracy_first(self) -> None:
        target = self.target.value()
        delta = self.delta.value()
        bins = self._context.bins
        if target is None:
            return
        if delta is None:
            self.accuracy_result.setText("Fix δ first (see the message under it).")
            return
        if not self._check_noise():
            self.accuracy_result.setText(text.GAUSSIAN_NEEDS_DELTA)
            return
        try:
            impute = self.missing_rule.impute()
        except DpguiError as err:
            self.accuracy_result.setText(text.friendly(err))
            return
        privacy_template = PrivacySpec(1.0, self.neighbours.currentData(), self.records_per_person.value(), delta,
                                       impute)
        noise = self.noise_choice()
        if bins is None:
            self.accuracy_result.setText("Choose the column and bins in step 1 first.")
            return
        margin = self.accuracy.accepted_margin(target, self._n_is_public())
        if margin is None:
            return
        where = self.target_where.currentData()
        try:
            shape = self._shape(bins, privacy_template)
        except DpguiError:
            return
        estimator = self.estimator.currentData()
        span, words = self._focus_span(bins)  # the accepted error is then for the chosen region, and said so

        def task(progress: Any, should_cancel: Any) -> Planned:
            progress(0.0, "Finding the smallest ε…")
            plan = plan_for_accuracy(bins, privacy_template, margin, where, shape=shape, estimator=estimator,
                                     noise=noise, focus=span)
            return Planned(plan, margin)

        def done(result: Planned) -> None:
            plan, wanted = result.plan, result.wanted
            assert wanted is not None
            self.epsilon.set_text(f"{plan.privacy.epsilon:g}")
            region = words if span is not None else ("the CDF" if where == AccuracyWhere.EVERY else "the CDF points")
            self.accuracy.show_answer(plan, margin95(plan, where, span), wanted, region)

        self.accuracy_result.setText("Searching…")
        self._run(task, done)

    # ---------------------------------------------------------------- project files (dpgui/app/shell/project.py)
    def apply_plan(self, plan: Plan | None, consistency: str, branching: str = "auto", objective: str = "total",
                   locked_levels: Sequence[int] = (), delta: float | None = None, noise: str = "auto",
                   impute: float | None = None, focus: FocusChoice | None = None) -> None:
        """Show a saved plan exactly as it was (from a project file), with its locked levels, δ, the
        noise asked for (``delta`` None: the plan's δ, or 0 without a plan), the value missing values are
        counted as (``impute``; the plan's when it has one) and the region chosen (``focus``; None: the
        plan's, if it was made for one): no re-planning, nothing spent. With ``plan`` None only the
        settings are set, no level stays locked, and the app plans as usual."""
        self._replan_timer.stop()
        self._generation += 1  # a plan still being computed is dropped when it arrives
        self._computing = False
        if plan is not None and noise != AUTO and noise != plan.noise:
            noise = plan.noise  # the plan says which noise it uses
        combos: tuple[tuple[QComboBox, str], ...] = ((self.consistency, consistency), (self.objective, objective),
                                                     (self.noise, noise))
        if plan is not None:
            combos += ((self.neighbours, plan.privacy.neighbours), (self.estimator, plan.estimator))
        for combo, key in combos:
            index = combo.findData(key)
            if index >= 0:
                combo.blockSignals(True)
                combo.setCurrentIndex(index)
                combo.blockSignals(False)
        self.neighbours_help.setText(text.NEIGHBOURS_HELP[self.neighbours.currentData()])
        self._offer_neighbours()
        if plan is not None and plan.privacy.neighbours != self.neighbours.currentData():
            plan = None  # saved under "N is public" for a query whose row count is private: planned again, said
        self._fill_public_n()
        self.accuracy.show_unit()
        self.branching.set_text(branching or "auto")
        self.delta.set_text(_format_delta(plan.privacy.delta if plan is not None else (delta or 0.0)))
        self._update_delta_help()
        self._check_noise()
        self.missing_rule.set_neighbours(self.neighbours.currentData())
        self.missing_rule.set_impute(plan.privacy.impute if plan is not None else impute)
        if plan is None:
            self.focus_controls.set_choice(focus)
            self.budgets.set_locks(())
            self.schedule_replan()  # writes the settings to the workspace
            return
        self.records_per_person.blockSignals(True)
        self.records_per_person.setValue(plan.privacy.records_per_person)
        self.records_per_person.blockSignals(False)
        epsilon = plan.privacy.epsilon
        self.epsilon.set_text(f"{epsilon:g}" if float(f"{epsilon:g}") == epsilon else repr(epsilon))
        self.busyChanged.emit(False)
        self.focus_controls.show_saved(plan, focus)
        self.set_plan(plan)  # the other noise is planned again for the comparison; the plan stays as saved
        self.budgets.set_locks(locked_levels)
        self._publish()
