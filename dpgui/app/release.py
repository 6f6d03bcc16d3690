"""The release job (run on a worker thread) and the words of its confirmation.

Order: read the column (cancellable) → point of no return: record the spend in the budget ledger
(refused if the dataset's cap would be exceeded) → draw the noise and post-process. Cancelling
before that point spends nothing; once the spend is recorded the release completes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

from dpgui.app.text import CONSISTENCY_LABELS, ESTIMATOR_LABELS, NEIGHBOURS_LABELS, escape
from dpgui.core.mechanism import Release
from dpgui.core.noise import RandomSource
from dpgui.core.plan import MISSING_RULE_TEXT, Plan
from dpgui.data.histogram import ColumnHistogram, column_histogram
from dpgui.errors import Cancelled, DpguiError
from dpgui.formatting import format_number
from dpgui.report.bundle import ReleaseInfo
from dpgui.report.ledger import Ledger
from dpgui.report.publish import spend_and_release
from dpgui.workspace.state import ColumnSettings

READ_SHARE = 0.85  # fraction of the progress bar used by reading the file
NOISE_MESSAGE = "Adding noise and estimating (cannot be cancelled now)…"


@dataclass(frozen=True)
class ReleaseOutcome:
    """A finished release, with the confidential histogram kept only for the officer's own check."""

    release: Release
    histogram: ColumnHistogram  # CONFIDENTIAL: never exported
    settings: ColumnSettings
    consistency: str
    info: ReleaseInfo  # public labels: dataset, column, ledger release id, time, missing policy

    @property
    def released_at(self) -> datetime:
        return self.info.created_utc

    @property
    def release_id(self) -> str:
        return self.info.release_id


def run_release(settings: ColumnSettings, plan: Plan, consistency: str, source: Callable[[], RandomSource],
                progress: Callable[[float, str], None], should_cancel: Callable[[], bool],
                release_id: str | None = None) -> ReleaseOutcome:
    """Histogram of the column, the ledger spend, then one ε-DP release of its CDF. Time O(rows + K·h).

    The ledger (``$DPGUI_HOME``) is opened on the calling (worker) thread, as SQLite requires.
    ``release_id``: the ledger id to record, so that after a failure the caller can ask the ledger
    whether anything was spent (:func:`spent_on`).
    """
    name = settings.path.name
    progress(0.0, f"Reading '{settings.column}' from {name}…")
    histogram = column_histogram(
        settings.path, settings.column, settings.lower, settings.upper, settings.bins,
        progress=lambda fraction: progress(READ_SHARE * fraction, f"Reading '{settings.column}' from {name}…"),
        should_cancel=should_cancel,
    )
    if should_cancel():
        raise Cancelled("the release was cancelled before any noise was drawn", "nothing was spent")
    progress(READ_SHARE, NOISE_MESSAGE)
    with Ledger() as ledger:
        result, info = spend_and_release(ledger, settings.dataset_id, settings.column, settings.missing,
                                         histogram.counts, plan, source(), settings.lower, settings.upper, consistency,
                                         n_missing=histogram.n_missing, release_id=release_id)
    progress(1.0, "Released.")
    return ReleaseOutcome(result, histogram, settings, consistency, info)


def new_release_id() -> str:
    """A fresh ledger id for a release (the one format: 32 hex digits)."""
    return uuid.uuid4().hex


def spent_on(release_id: str) -> bool | None:
    """Does the ledger hold ``release_id``? None if the ledger cannot be read (then nobody may claim
    that nothing was spent)."""
    try:
        with Ledger() as ledger:
            return ledger.release(release_id) is not None
    except Exception:  # noqa: BLE001 — any failure means "unknown", never "nothing was spent"
        return None


def failure_budget_sentence(release_id: str) -> str:
    """What a failed release cost, as the ledger says: the only ground for "Nothing was spent"."""
    spent = spent_on(release_id)
    if spent is False:
        return " Nothing was spent."
    if spent:
        return (f" The budget of this release was recorded in the ledger (release {release_id}) and stays spent; "
                "nothing was published.")
    return f" Check Tools → Budget Ledger for release {release_id}: the ledger could not be read to tell whether it was spent."


def _lower_first(label: str) -> str:
    return label[:1].lower() + label[1:]


def confirmation_text(settings: ColumnSettings, plan: Plan, consistency: str) -> str:
    """What will be published and what it costs, in plain words (rich text)."""
    privacy = plan.privacy
    branching = " × ".join(map(str, plan.shape.branching))
    if privacy.root_public:
        total = ("The total number of records N (all rows, missing values included) is published exactly "
                 "(it is public under this model).")
    else:
        total = "The total number of records is not published exactly; it is estimated from noisy counts."
    missing = f"Missing values: {MISSING_RULE_TEXT[privacy.missing_rule]}."
    return (
        f"<p>You are about to publish the <b>cumulative distribution (CDF)</b> of <b>{escape(settings.column)}</b> "
        f"from <b>{escape(settings.path.name)}</b>: {settings.bins:,} cumulative counts, one at each bin edge from "
        f"{format_number(settings.lower)} to {format_number(settings.upper)} "
        f"(values outside are counted in the first or last bin). {missing}</p>"
        f"<p><b>Cost: ε = {privacy.epsilon:g}</b> of privacy budget, spent for good. "
        f"Protection: {_lower_first(NEIGHBOURS_LABELS[privacy.neighbours])}; "
        f"up to {privacy.records_per_person} record{'s' if privacy.records_per_person > 1 else ''} per person. "
        f"{total}</p>"
        f"<p>Method: a tree of noisy counts (branching {branching}), exact discrete Laplace noise from "
        f"the system's secure random source; estimator: {_lower_first(ESTIMATOR_LABELS[plan.estimator])}; "
        f"consistency: {_lower_first(CONSISTENCY_LABELS[consistency])}.</p>"
    )


def budget_sentence(dataset: str, epsilon: float) -> str:
    """The dataset's budget before and after this release, for the confirmation (rich text)."""
    try:
        with Ledger() as ledger:
            totals = ledger.totals(dataset)
    except DpguiError:
        return ""
    after = totals.epsilon_spent + epsilon
    return (f"<p><b>Budget of dataset '{escape(dataset)}':</b> ε = {totals.epsilon_spent:g} of "
            f"{totals.cap_epsilon:g} spent so far ({totals.releases} release{'' if totals.releases == 1 else 's'}); "
            f"after this release: ε = {after:g} of {totals.cap_epsilon:g}. The spend is recorded in the budget "
            "ledger before the noise is drawn.</p>")
