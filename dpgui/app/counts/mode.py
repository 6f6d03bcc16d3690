"""The window's "Counts of one column" mode (:class:`~dpgui.app.mode.StatisticMode`): one page to choose
the column, state its public categories (typed, or loaded from a text file), set ε and the neighbour model,
read the projected error of each count before anything is spent, release through the budget ledger
(budget check, first cap, confirmation with the cost; the count, the spend and the noise on a worker by
:func:`dpgui.workspace.counts.run_counts_release`), see the released counts and export them (signed
bundle, CSV only).

The noise is Laplace (pure ε-DP; no δ): the page says so. The categories are never read from the data: a
value of the column that is not stated stops the release before anything is spent. GUI thread only; the
mode reaches the window through :class:`~dpgui.app.simple_mode.OnePageWindow`; what it shares with the other
one-page mode (the page's frame, the release on a worker, the exports, the session and project methods) is
:class:`~dpgui.app.simple_mode.OnePageMode`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QLabel, QPlainTextEdit, QTableWidgetItem

from dpgui.app import text
from dpgui.app.counts.export_dialog import CountsExportDialog
from dpgui.app.simple_mode import OnePageMode, OnePageWindow
from dpgui.app.widgets.fields import inline_message, parse_epsilon, show_inline
from dpgui.core.counts import CountsPlan
from dpgui.data.source_spec import SourceSpec
from dpgui.errors import DpguiError
from dpgui.report.counts.bundle import counts_csv_text
from dpgui.report.counts.project import CountsSettings, ProjectCountsRelease
from dpgui.vocabulary import Neighbours, StatisticKind
from dpgui.workspace.counts import (
    NOISE_MESSAGE, CountsOutcome, CountsRequest, check_counts_budget, confirmation_words, counts_plan,
    parse_categories, read_categories, run_counts_release, set_counts_first_cap,
)
from dpgui.workspace.release import BudgetCheck
from dpgui.workspace.words import escape

RESULT_HEADERS = ("Category", "Released count", "95 % margin (± records)")
RESULT_TIPS = ("A category of your public list, in its order.",
               "The category's count with Laplace noise added: what is published (it may be below 0 or "
               "differ from the true count by a few records).",
               "95 % of released counts lie within this many records of the true count.")


class CountsMode(OnePageMode[CountsRequest, CountsOutcome, ProjectCountsRelease]):
    """The counts of one column's stated categories, as one page of the window (see the module doc)."""

    kind = StatisticKind.COUNTS
    release_tip = "Spend the budget and publish the count of each category"
    noise_message = NOISE_MESSAGE

    def __init__(self, host: OnePageWindow) -> None:
        super().__init__(host, ProjectCountsRelease, CountsOutcome)
        self.categories_path = ""  # the public list's file, if loaded from one
        self.build_page(
            "<b>Counts of one column</b>: publish how many records fall in each category of one column, each count "
            "with noise. The list of categories is <b>public</b>: you type it or load it from a file; it is never "
            "read from your data, and every value of the column must be in it (otherwise the release stops before "
            "anything is spent).", (self._build_what_box, self._build_privacy_box), RESULT_HEADERS, RESULT_TIPS,
            "The released counts carry the noise: one may differ from the true count by a few records, or be below 0 "
            "for a rare category. They are not rounded or clamped, so they stay unbiased; the PDF and the CSV say the "
            "same.")
        self.update_projection()

    # ------------------------------------------------------------------ the page
    def _build_what_box(self) -> QGroupBox:
        box = QGroupBox("What to count")
        form = QFormLayout(box)
        self.column = QComboBox()
        self.column.setToolTip("The column whose categories are counted (e.g. a region, a status, a type).")
        self.column.currentIndexChanged.connect(self.update_projection)
        form.addRow("&Column:", self.column)
        self.categories = QPlainTextEdit()
        self.categories.setPlaceholderText("One category per line, e.g.\nNorth\nSouth")
        self.categories.setToolTip("The public list of categories, one per line (or separated by commas), written "
                                   "exactly as they appear in the column. Every one is published, zeros included; a "
                                   "value of the column that is not listed stops the release before anything is spent.")
        self.categories.setMaximumHeight(120)
        self.categories.textChanged.connect(self._on_categories_typed)
        self.add_public_list_row(form, "Ca&tegories (public):", self.categories, "Read the categories from a text file "
                                 "(UTF-8, one per line): a public list, such as an official classification — never the "
                                 "data file itself.", self.choose_categories_file)
        self.categories_note = text.plain_text(QLabel(""))
        self.categories_note.setWordWrap(True)
        form.addRow("", self.categories_note)
        self.categories_message = inline_message(self)
        form.addRow("", self.categories_message)
        return box

    def _build_privacy_box(self) -> QGroupBox:
        box = QGroupBox("Privacy")
        form = QFormLayout(box)
        self.add_epsilon_row(form, "The privacy budget ε this release spends: smaller is more private and noisier.")
        self.add_protection_rows(form, "What the release protects against. Changing one record moves it between two "
                                       "categories (twice the noise of adding or removing one).")
        noise = QLabel("Laplace (pure ε-DP, δ = 0). Gaussian noise is not offered for the counts of one column.")
        noise.setWordWrap(True)
        form.addRow("Noise:", noise)
        self.projection = QLabel("")
        self.projection.setWordWrap(True)
        self.projection.setToolTip("Known before anything is spent: it depends on ε, the protection and the records "
                                   "per person only, never on the data.")
        form.addRow("Projected error:", self.projection)
        return box

    def _on_categories_typed(self) -> None:
        if self.categories.hasFocus():
            self.categories_path = ""  # typed over: no longer the file's list
        self.update_projection()

    def choose_categories_file(self) -> None:
        path = self.choose_list_file("Load the public list of categories")
        if path is not None:
            self.load_categories(path)

    def load_categories(self, path: Path) -> bool:
        """Put the categories of the public list ``path`` in the field (a message on the page if it cannot)."""
        categories = self.read_public_list(path, read_categories, self.categories_message, "categories")
        if categories is None:
            return False
        self.categories.setPlainText("\n".join(categories))
        self.categories_path = str(path.absolute())
        self.update_projection()
        return True

    def stated_categories(self) -> tuple[str, ...]:
        return parse_categories(self.categories.toPlainText())

    def plan(self) -> CountsPlan:
        """The plan of the page's choices (DpguiError with what to fix)."""
        epsilon = parse_epsilon(self.epsilon.text())
        return counts_plan(self.stated_categories(), epsilon, Neighbours(self.neighbours.currentData()),
                           self.records.value())

    def update_projection(self, *_: object) -> None:
        """The projected error of each count (and the categories' note) for the current choices."""
        try:
            categories = self.stated_categories()
            self.categories_note.setText(f"{len(categories):,} categories stated; each one's count is published."
                                         + (f" From {Path(self.categories_path).name}." if self.categories_path else ""))
            show_inline(self.categories_message, "")
        except DpguiError as err:
            show_inline(self.categories_message, text.friendly(err))
        try:
            plan = self.plan()
        except DpguiError as err:
            self.projection.setText(f"No projection: {text.friendly(err)}")
            return
        self.projection.setText(
            f"Each released count is within ±{plan.margin:,} records of the true count in 95 % of releases "
            f"(standard error {plan.std_error:.3g} records), whatever the data.")

    # ------------------------------------------------------------------ release
    def request_of(self, spec: SourceSpec, dataset: str) -> CountsRequest | str:
        if not self.column.currentText():
            return "Choose the column to count."
        return CountsRequest(spec, self.column.currentText(), self.plan(), dataset, self.privacy_unit())

    def column_combos(self) -> tuple[QComboBox, ...]:
        return (self.column,)

    def confirmation(self, request: CountsRequest) -> str:
        return confirmation_words(request)

    def budget_check(self, request: CountsRequest, similar: tuple[str, ...]) -> BudgetCheck:
        return check_counts_budget(request, similar)

    def set_first_cap(self, request: CountsRequest, cap: float, delta: float) -> BudgetCheck:
        return set_counts_first_cap(request, cap)  # the counts spend no δ

    def release_task(self) -> Callable[..., CountsOutcome]:
        return run_counts_release

    def released_message(self, request: CountsRequest) -> str:
        return f"Released the counts of {request.column}."

    def record_of(self, outcome: CountsOutcome) -> ProjectCountsRelease:
        return ProjectCountsRelease.from_release(outcome.release, outcome.info)

    def outcome_of(self, record: ProjectCountsRelease) -> CountsOutcome:
        return CountsOutcome(*record.to_release())

    def show_results(self, outcome: CountsOutcome, restored: bool) -> str:
        """One row per category: its released count and the 95 % margin; the banner's words."""
        release, info = outcome.release, outcome.info
        margin = f"± {release.plan.margin:,}"
        self.results.setRowCount(len(release.plan.labels))
        for row, (label, count) in enumerate(zip(release.plan.labels, release.counts.tolist())):
            for col, value in enumerate((label, f"{int(count):,}", margin)):
                item = QTableWidgetItem(value)
                if col:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.results.setItem(row, col, item)
        spent = f"ε = {release.plan.privacy.epsilon:g}"
        if restored:
            words = (f"Restored the release of {len(release.counts):,} counts of <b>{escape(info.column)}</b> made "
                     f"{info.created_utc:%Y-%m-%d %H:%M} UTC ({spent} from dataset '{escape(info.dataset)}'). Nothing "
                     "was released or spent now; exporting checks it against the budget ledger.")
        else:
            noise = "secure noise" if release.secure else "TEST NOISE (seeded, not secure — do not publish)"
            words = (f"Released {len(release.counts):,} counts of <b>{escape(info.column)}</b>: {spent} spent from "
                     f"dataset '{escape(info.dataset)}' (recorded in the budget ledger), {noise}.")
        return words

    # ------------------------------------------------------------------ exports
    def export_dialog_of(self, outcome: CountsOutcome, folder: str) -> CountsExportDialog:
        return CountsExportDialog(outcome, folder, self.window())

    def csv_file(self, outcome: CountsOutcome) -> tuple[str, str]:
        """The released counts (one row per category), unsigned."""
        info = outcome.info
        return f"{info.dataset}-{info.column}-counts.csv", "Export the released counts"

    def csv_text(self, outcome: CountsOutcome) -> str:
        return counts_csv_text(outcome.release)

    # ------------------------------------------------------------------ project files
    def settings(self) -> CountsSettings | None:
        """The page's choices for a project file (None: nothing chosen yet)."""
        try:
            categories = self.stated_categories()
        except DpguiError:
            categories = ()
        epsilon = parse_epsilon(self.epsilon.text()) if self.epsilon.value() is not None else 1.0
        if not categories and not self.releases:
            return None
        return CountsSettings(self.column.currentText(), categories, self.categories_path, epsilon,
                              Neighbours(self.neighbours.currentData()), self.records.value(), self.person.column())

    def restore(self, settings: CountsSettings | None, releases: tuple[ProjectCountsRelease, ...]) -> None:
        """A project's counts choices and releases (the last one shown, as restored: not marked secure)."""
        if settings is not None:
            if settings.column:
                self.column.setCurrentIndex(max(0, self.column.findText(settings.column)))
            self.categories.setPlainText("\n".join(settings.categories))
            self.categories_path = settings.categories_path
            self.epsilon.set_text(f"{settings.epsilon:g}")
            self.neighbours.setCurrentIndex(max(0, self.neighbours.findData(str(settings.neighbours))))
            self.records.setValue(settings.records_per_person)
            self.person.choose(settings.person_column)
        self.restore_releases(releases)

