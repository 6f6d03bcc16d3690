"""The window's "CDF for each group" mode (:class:`~dpgui.app.mode.StatisticMode`): one page to choose the
number column and the group column, state the public groups (typed, or loaded from a text file) and what
becomes of the rows of other groups, the public bounds and bins, ε, δ and the neighbour model, read the
projected error before anything is spent, release through the budget ledger (budget check, first cap,
confirmation with the cost — once for all groups; the count, the spend and the noise on a worker by
:func:`dpgui.workspace.grouped_cdf.run_grouped_release`), see each group's released size, median and mean (with
their 95 % intervals) and quartiles, and export them (signed bundle, CSV only).

The groups are never read from the data: a listed group absent from the data is released too (zeros plus
noise), and each group's size is released with noise only. Planning the shared tree runs on the GUI thread
(milliseconds at the bins this page allows). GUI thread only; the mode reaches the window through
:class:`~dpgui.app.simple_mode.OnePageWindow`; what it shares with the other one-page mode (the page's frame,
the release on a worker, the exports, the session and project methods) is
:class:`~dpgui.app.simple_mode.OnePageMode`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QLabel, QPlainTextEdit, QSpinBox, QTableWidgetItem

from dpgui.app import text
from dpgui.app.grouped_cdf.export_dialog import GroupedExportDialog
from dpgui.app.simple_mode import OnePageMode, OnePageWindow
from dpgui.app.widgets.fields import (
    ValidatedField, inline_message, parse_delta, parse_epsilon, parse_number, show_inline,
)
from dpgui.core.cdf_moments import NO_MEAN, group_summaries
from dpgui.core.grouped_cdf import GroupedPlan, GroupList
from dpgui.vocabulary import AUTO, Neighbours, Noise, OtherGroups, StatisticKind
from dpgui.core.plan import PrivacySpec
from dpgui.core.quantiles import noise_margin, quantiles
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import DpguiError, ParameterError
from dpgui.formatting import format_fixed, moment_decimals, moment_words, value_decimals
from dpgui.report.grouped_cdf.project import GroupedCdfSettings, ProjectGroupedRelease
from dpgui.workspace.grouped_cdf import (
    NOISE_MESSAGE, GroupedOutcome, GroupedRequest, check_grouped_budget, confirmation_words, parse_groups,
    read_groups, run_grouped_release, set_grouped_first_cap,
)
from dpgui.workspace.release import BudgetCheck
from dpgui.workspace.statistic import Planned
from dpgui.workspace.statistics.grouped_cdf import GROUPED_CDF, GroupedCdfPlanRequest, GroupedCdfSpend
from dpgui.workspace.words import escape

RESULT_HEADERS = ("Group", "Released size", "Median (95 % interval)", "Mean (95 % interval)", "25 % quantile",
                  "75 % quantile")
RESULT_TIPS = ("A group of your public list, in its order ('other': the rows of the groups not listed).",
               "The group's number of records with noise: what is published (never the exact size).",
               "Half of the group's values lie below it (from the released CDF); the group's true median lies in the "
               "interval in at least 95 of 100 releases.",
               "The average of the group's values, each taken at the middle of its bin (from the released CDF, no "
               "extra budget); the group's true average lies in the interval in at least 95 of 100 releases, which "
               "allows for the noise and for half a bin of binning. Values outside the bounds count as the nearest "
               "bound. Hover over a cell for the details.",
               "A quarter of the group's values lie below it (from the released CDF).",
               "Three quarters of the group's values lie below it (from the released CDF).")
#: the most bins this page plans with (the plan is made on the GUI thread)
MAX_BINS = 4096
OTHER_LABELS = {OtherGroups.DROP: "Leave them out", OtherGroups.OTHER: "Count them in one group 'other'"}


def _with_interval(value: float, low: float, high: float, decimals: int) -> str:
    """A results cell: ``215 (210 to 220)``."""
    return f"{format_fixed(value, decimals)} ({format_fixed(low, decimals)} to {format_fixed(high, decimals)})"


def _bound(raw: str) -> float:
    return float(parse_number(raw, "the bound", "0 or 100"))


class GroupedCdfMode(OnePageMode[GroupedRequest, GroupedOutcome, ProjectGroupedRelease]):
    """The CDF of a number column for each group of a public list, as one page of the window (module doc)."""

    kind = StatisticKind.GROUPED_CDF
    release_tip = "Spend the budget and publish the CDF of each group"
    noise_message = NOISE_MESSAGE

    def __init__(self, host: OnePageWindow) -> None:
        super().__init__(host, ProjectGroupedRelease, GroupedOutcome)
        self.groups_path = ""  # the public list's file, if loaded from one
        self.build_page(
            "<b>CDF for each group</b>: publish the distribution of one number column for each group of a "
            "categorical column (e.g. delays for each airline), each with noise, for one budget. The list of groups "
            "is <b>public</b>: you type it or load it from a file; it is never read from your data. Each group's "
            "size is published with noise only.", (self._build_what_box, self._build_privacy_box), RESULT_HEADERS,
            RESULT_TIPS,
            "Every group's CDF carries the noise; its median and mean are read from it, with their 95 % intervals "
            "(the PDF gives the other quantiles, the CSV the cumulative counts at every bin edge).")
        self.update_projection()

    # ------------------------------------------------------------------ the page
    def _build_what_box(self) -> QGroupBox:
        box = QGroupBox("What to release")
        form = QFormLayout(box)
        self.column = QComboBox()
        self.column.setToolTip("The number column whose distribution is released for each group.")
        self.column.currentIndexChanged.connect(self.update_projection)
        form.addRow("Nu&mber column:", self.column)
        self.group_column = QComboBox()
        self.group_column.setToolTip("The column whose values name the groups (e.g. an airline, a region).")
        self.group_column.currentIndexChanged.connect(self.update_projection)
        form.addRow("&Group column:", self.group_column)
        self.groups = QPlainTextEdit()
        self.groups.setPlaceholderText("One group per line, e.g.\nAA\nDL")
        self.groups.setToolTip("The public list of groups, one per line (or separated by commas), written exactly as "
                               "they appear in the group column. Every one is published, absent ones included.")
        self.groups.setMaximumHeight(110)
        self.groups.textChanged.connect(self._on_groups_typed)
        self.add_public_list_row(form, "G&roups (public):", self.groups, "Read the groups from a text file (UTF-8, one "
                                 "per line): a public list — never the data file itself.", self.choose_groups_file)
        self.other = QComboBox()
        for token in OtherGroups:
            self.other.addItem(OTHER_LABELS[token], str(token))
        self.other.setToolTip("What becomes of a row whose group is not in the list (or is missing): your choice, "
                              "never the data's.")
        self.other.currentIndexChanged.connect(self.update_projection)
        form.addRow("Rows of other group&s:", self.other)
        self.groups_note = text.plain_text(QLabel(""))
        self.groups_note.setWordWrap(True)
        form.addRow("", self.groups_note)
        self.groups_message = inline_message(self)
        form.addRow("", self.groups_message)
        self.lower_bound = ValidatedField(_bound, "e.g. 0", "The public lower bound of the number column (values below "
                                    "it are counted in the first bin).")
        self.upper_bound = ValidatedField(_bound, "e.g. 100", "The public upper bound (values at or above it are counted "
                                    "in the last bin).")
        for field in (self.lower_bound, self.upper_bound):
            field.edited.connect(self.update_projection)
        self.lower_bound.set_text("0")
        self.upper_bound.set_text("100")
        form.addRow("Lo&wer bound:", self.lower_bound)
        form.addRow("&Upper bound:", self.upper_bound)
        self.bins = QSpinBox()
        self.bins.setRange(2, MAX_BINS)
        self.bins.setValue(32)
        self.bins.setToolTip("The number of equal-width bins between the bounds, the same for every group.")
        self.bins.valueChanged.connect(self.update_projection)
        form.addRow("&Bins:", self.bins)
        return box

    def _build_privacy_box(self) -> QGroupBox:
        box = QGroupBox("Privacy")
        form = QFormLayout(box)
        self.add_epsilon_row(form, "The privacy budget ε this release spends, once for all groups: smaller is more "
                                   "private and noisier.")
        self.delta = ValidatedField(parse_delta, "0", "δ: 0 for pure ε-DP (Laplace noise); a small probability such "
                                    "as 1e-9 lets the planner choose Gaussian noise when it is more accurate.")
        self.delta.set_text("0")
        self.delta.edited.connect(self.update_projection)
        form.addRow("&δ:", self.delta)
        self.add_protection_rows(form, "What the release protects against. Changing one record may move it to another "
                                       "group: each group's size is released with noise under both.")
        self.projection = QLabel("")
        self.projection.setWordWrap(True)
        self.projection.setToolTip("Known before anything is spent: it depends on the bins, ε, δ, the protection and "
                                   "the records per person only, never on the data; the same for every group.")
        form.addRow("Projected error:", self.projection)
        return box

    def _on_groups_typed(self) -> None:
        if self.groups.hasFocus():
            self.groups_path = ""  # typed over: no longer the file's list
        self.update_projection()

    def choose_groups_file(self) -> None:
        path = self.choose_list_file("Load the public list of groups")
        if path is not None:
            self.load_groups(path)

    def load_groups(self, path: Path) -> bool:
        """Put the groups of the public list ``path`` in the field (a message on the page if it cannot)."""
        groups = self.read_public_list(path, read_groups, self.groups_message, "groups")
        if groups is None:
            return False
        self.groups.setPlainText("\n".join(groups.labels))
        self.groups_path = str(path.absolute())
        self.update_projection()
        return True

    def stated_groups(self) -> GroupList:
        return parse_groups(self.groups.toPlainText(), OtherGroups(self.other.currentData()))

    def planned(self) -> Planned[GroupedPlan, GroupedPlan]:
        """The shared plan of the page's choices and its margin (DpguiError with what to fix)."""
        delta = parse_delta(self.delta.text())
        privacy = PrivacySpec(parse_epsilon(self.epsilon.text()), Neighbours(self.neighbours.currentData()),
                              self.records.value(), delta)
        request = GroupedCdfPlanRequest(self.stated_groups(), self.bins.value(), privacy,
                                        AUTO if delta > 0 else Noise.LAPLACE)
        return GROUPED_CDF.plan(request)

    def spend(self) -> GroupedCdfSpend:
        """What the page's choices release (DpguiError with what to fix)."""
        lower, upper = _bound(self.lower_bound.text()), _bound(self.upper_bound.text())
        if not lower < upper:
            raise ParameterError(f"the lower bound {lower:g} is not below the upper bound {upper:g}",
                                 "give a lower bound below the upper one")
        if not self.column.currentText() or not self.group_column.currentText():
            raise ParameterError("the number column or the group column is not chosen", "choose both columns")
        if self.column.currentText() == self.group_column.currentText():
            raise ParameterError("the number column is also the group column", "choose another group column")
        return GroupedCdfSpend(self.column.currentText(), self.group_column.currentText(), lower, upper,
                               self.planned().plan, privacy_unit=self.privacy_unit())

    def update_projection(self, *_: object) -> None:
        """The projected error (and the groups' note) for the current choices."""
        try:
            groups = self.stated_groups()
            extra = " and 'other'" if groups.other is OtherGroups.OTHER else ""
            self.groups_note.setText(f"{len(groups.labels):,} groups stated{extra}; each one's CDF and size is "
                                     "published." + (f" From {Path(self.groups_path).name}." if self.groups_path else ""))
            show_inline(self.groups_message, "")
        except DpguiError as err:
            self.groups_note.setText("")
            show_inline(self.groups_message, "" if not self.groups.toPlainText().strip() else text.friendly(err))
        try:
            planned = self.planned()
        except DpguiError as err:
            self.projection.setText(f"No projection: {text.friendly(err)}")
            return
        self.projection.setText(
            f"Each released cumulative count of every group is within ±{planned.margin95:,.0f} records of the true "
            "count in 95 % of releases (at the least precise point), whatever the data. The budget is spent once "
            "for all groups: one record is in one group.")

    # ------------------------------------------------------------------ release
    def request_of(self, spec: SourceSpec, dataset: str) -> GroupedRequest:
        return GroupedRequest(spec, self.spend(), dataset)

    def column_combos(self) -> tuple[QComboBox, ...]:
        return (self.column, self.group_column)

    def confirmation(self, request: GroupedRequest) -> str:
        return confirmation_words(request, self.planned().margin95)

    def budget_check(self, request: GroupedRequest, similar: tuple[str, ...]) -> BudgetCheck:
        return check_grouped_budget(request, similar)

    def set_first_cap(self, request: GroupedRequest, cap: float, delta: float) -> BudgetCheck:
        return set_grouped_first_cap(request, cap, delta)

    def release_task(self) -> Callable[..., GroupedOutcome]:
        return run_grouped_release

    def released_message(self, request: GroupedRequest) -> str:
        return f"Released the CDF of {request.spend.column} for each group."

    def record_of(self, outcome: GroupedOutcome) -> ProjectGroupedRelease:
        return ProjectGroupedRelease.from_release(outcome.release, outcome.info)

    def outcome_of(self, record: ProjectGroupedRelease) -> GroupedOutcome:
        return GroupedOutcome(*record.to_release())

    def show_results(self, outcome: GroupedOutcome, restored: bool) -> str:
        """One row per group: its released size, median and mean with their 95 % intervals and its quartiles, all
        read from its CDF (:func:`dpgui.core.cdf_moments.group_summaries`); the banner's words."""
        release, info = outcome.release, outcome.info
        size_margin = float(noise_margin(release.total_std_error))
        self.results.setRowCount(len(release.labels))
        tree = release.plan.tree
        width = (release.releases[0].upper - release.releases[0].lower) / tree.shape.bins if release.releases else 1.0
        decimals = value_decimals(width)
        for row, (summary, group) in enumerate(zip(group_summaries(release.labels, release.releases),
                                                   release.releases)):
            quartiles = [f"{q.value:,.4g}" for q in quantiles(group, (0.25, 0.75))]
            median = summary.median
            median_text = "—" if median is None else _with_interval(median.value, median.low, median.high, decimals)
            mean, tip = summary.moments.mean, NO_MEAN
            mean_text = "—"
            if mean is not None:
                places = moment_decimals(mean.noise_margin, mean.binning)
                mean_text = _with_interval(mean.value, mean.low, mean.high, places)
                tip = "Mean " + moment_words(mean.value, mean.noise_margin, mean.binning, mean.low, mean.high, places)
            cells = (summary.label, f"{group.total:,.0f} ± {size_margin:,.0f}", median_text, mean_text, *quartiles)
            for col, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if col:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if col == 3:
                    item.setToolTip(tip)
                self.results.setItem(row, col, item)
        spent = f"ε = {release.plan.tree.privacy.epsilon:g}"
        what = f"the CDF of <b>{escape(info.column)}</b> for {len(release.labels):,} groups of {escape(info.group_column)}"
        if restored:
            words = (f"Restored the release of {what} made {info.created_utc:%Y-%m-%d %H:%M} UTC ({spent} from dataset "
                     f"'{escape(info.dataset)}'). Nothing was released or spent now; exporting checks it against the "
                     "budget ledger.")
        else:
            noise = "secure noise" if release.secure else "TEST NOISE (seeded, not secure — do not publish)"
            words = (f"Released {what}: {spent} spent once from dataset '{escape(info.dataset)}' (recorded in the "
                     f"budget ledger), {noise}.")
        return words

    # ------------------------------------------------------------------ exports
    def export_dialog_of(self, outcome: GroupedOutcome, folder: str) -> GroupedExportDialog:
        return GroupedExportDialog(outcome, folder, self.window())

    def csv_file(self, outcome: GroupedOutcome) -> tuple[str, str]:
        """Every group's released CDF (one row per group and bin edge), unsigned."""
        info = outcome.info
        return f"{info.dataset}-{info.column}-by-{info.group_column}.csv", "Export the released CDFs"

    def csv_text(self, outcome: GroupedOutcome) -> str:
        return GROUPED_CDF.csv_text(outcome.release)

    # ------------------------------------------------------------------ project files
    def settings(self) -> GroupedCdfSettings | None:
        """The page's choices for a project file (None: nothing chosen yet)."""
        typed = tuple(line.strip() for line in self.groups.toPlainText().replace(",", "\n").splitlines()
                      if line.strip())
        if not typed and not self.releases:
            return None
        epsilon, delta = self.epsilon.value(), self.delta.value()
        lower, upper = self.lower_bound.value(), self.upper_bound.value()
        return GroupedCdfSettings(self.column.currentText(), self.group_column.currentText(), typed, self.groups_path,
                                  OtherGroups(self.other.currentData()), 0.0 if lower is None else lower,
                                  1.0 if upper is None else upper, self.bins.value(),
                                  1.0 if epsilon is None else epsilon, 0.0 if delta is None else delta,
                                  Neighbours(self.neighbours.currentData()), self.records.value(),
                                  self.person.column())

    def restore(self, settings: GroupedCdfSettings | None, releases: tuple[ProjectGroupedRelease, ...]) -> None:
        """A project's grouped choices and releases (the last one shown, as restored: not marked secure)."""
        if settings is not None:
            for combo, name in ((self.column, settings.column), (self.group_column, settings.group_column)):
                if name:
                    combo.setCurrentIndex(max(0, combo.findText(name)))
            self.groups.setPlainText("\n".join(settings.groups))
            self.groups_path = settings.groups_path
            self.other.setCurrentIndex(max(0, self.other.findData(str(settings.other_groups))))
            self.lower_bound.set_text(f"{settings.lower:g}")
            self.upper_bound.set_text(f"{settings.upper:g}")
            self.bins.setValue(settings.bins)
            self.epsilon.set_text(f"{settings.epsilon:g}")
            self.delta.set_text(f"{settings.delta:g}")
            self.neighbours.setCurrentIndex(max(0, self.neighbours.findData(str(settings.neighbours))))
            self.records.setValue(settings.records_per_person)
            self.person.choose(settings.person_column)
        self.restore_releases(releases)

