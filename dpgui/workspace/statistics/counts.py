"""The counts of the stated categories of one column as a :class:`~dpgui.workspace.statistic.Statistic`:
its engine in :mod:`dpgui.core.counts`, its counting the data layer's one-level path counts
(:meth:`dpgui.data.source.DataSource.path_counts`: a file streamed here, a database or Spark counts with one
GROUP BY), its report code in :mod:`dpgui.report.counts`, to which every method delegates. Never imports
another statistic.

Cost O(rows) to count, O(categories) for the rest. Confidential data: only :meth:`CountsStatistic.count`
reads the column (the counts go to the release only); no Qt, any thread.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from dpgui.core.counts import CountsPlan, CountsRelease
from dpgui.core.plan import PrivacySpec
from dpgui.core.noise import RandomSource
from dpgui.core.privacy_unit import PrivacyUnit, with_privacy_unit
from dpgui.data.source import DataSource
from dpgui.errors import DataError
from dpgui.report.bundle import BundlePaths
from dpgui.report.counts.bundle import (
    COUNTS_SCHEMA, CountsReleaseInfo, build_counts_manifest, counts_csv_text, default_counts_bundle_name,
)
from dpgui.report.counts.project import ProjectCountsRelease
from dpgui.report.counts.publish import (
    authenticate_counts_release, counts_params, sign_counts_release, spend_and_release_counts,
)
from dpgui.report.ledger import Ledger
from dpgui.report.ledger.records import ReleaseRecords
from dpgui.report.publish import levels_sha256
from dpgui.report.signing import SecretKey
from dpgui.vocabulary import Charge, Neighbours, StatisticKind
from dpgui.workspace.statistic import (
    PlanProgress, Planned, Progress, ShouldCancel, bounding_of, check_privacy_unit,
)

__all__ = ["COUNTS", "CountsPlanRequest", "CountsSpend", "CountsStatistic"]


@dataclass(frozen=True)
class CountsSpend:
    """What a counts release publishes besides its counts, all public: the column, the plan and the privacy
    unit (None: records per person declared; else checked against the plan's privacy here)."""

    column: str
    plan: CountsPlan
    privacy_unit: PrivacyUnit | None = None

    def __post_init__(self) -> None:
        check_privacy_unit(self.privacy_unit, self.plan.privacy)


@dataclass(frozen=True)
class CountsPlanRequest:
    """What a counts plan is made of, all public: the stated categories, ε, the neighbour model and the
    records per person (Laplace noise only: no δ)."""

    categories: tuple[str, ...]
    epsilon: float
    neighbours: Neighbours = Neighbours.CHANGE
    records_per_person: int = 1

    def at_budget(self, epsilon: float, delta: float) -> CountsPlanRequest:
        """The same request at ``epsilon`` (every plan request's rule; Laplace only: δ is not one of its figures,
        and a δ given is not used, as a Laplace release charges δ = 0)."""
        return replace(self, epsilon=epsilon)

    def plan_at(self, epsilon: float) -> CountsPlan:
        """The plan at ``epsilon`` (ParameterError with the fix for choices no plan can have). O(categories)."""
        return CountsPlan(self.categories, PrivacySpec(epsilon, self.neighbours, self.records_per_person))


@dataclass(frozen=True)
class CountsStatistic:
    """The counts' answers to the statistic protocol (stateless; :data:`COUNTS` is the one instance)."""

    kind: StatisticKind = StatisticKind.COUNTS
    title: str = "counts of the categories of one column"
    manifest_schema: Path = COUNTS_SCHEMA

    pdf_section: str = str(StatisticKind.COUNTS)

    def release_title(self, subject: str) -> str:
        return f"Counts of {subject}"

    def bundle_name(self, release: CountsRelease, info: CountsReleaseInfo) -> str:
        return default_counts_bundle_name(info)

    def plan(self, request: CountsPlanRequest, progress: PlanProgress | None = None,
             should_cancel: ShouldCancel | None = None) -> Planned[CountsPlan, CountsPlan]:
        """The plan in closed form (scale 2L/ε or L/ε), its margin: the 95 % margin of each count; no
        alternative is offered (Laplace noise only). O(categories); nothing read, nothing spent."""
        plan = request.plan_at(request.epsilon)
        return Planned(plan, float(plan.margin), plan)

    def margin_at(self, request: CountsPlanRequest, epsilon: float, delta: float) -> float:
        """The 95 % margin of each count at ``epsilon`` (δ is not used: Laplace noise spends none). O(1)."""
        return float(request.plan_at(epsilon).margin)

    def plan_of(self, spend: CountsSpend) -> CountsPlan:
        return spend.plan

    def plan_from_json(self, data: dict[str, Any]) -> CountsPlan:
        return CountsPlan.from_json(data)

    def from_record(self, record: ProjectCountsRelease, dataset: str) -> tuple[CountsRelease, CountsReleaseInfo]:
        """The record's release; it names its own dataset (``dataset`` is the one that paid, the same)."""
        return record.to_release()

    def charge(self, plan: CountsPlan) -> Charge:
        return Charge(*plan.ledger_charge())

    def count(self, source: DataSource, spend: CountsSpend, progress: Progress | None = None,
              should_cancel: ShouldCancel | None = None) -> np.ndarray:
        """The number of rows of each stated category, in the plan's order (int64; CONFIDENTIAL). The hierarchy's
        rule: a value of the data that is not a stated category is a DataError that quotes none of them, and
        so is a missing value (the data layer's); both before anything is spent. With a privacy unit, of the rows
        it keeps (at most L a person, ordered by the stated categories)."""
        categories = spend.plan.categories
        bounding = bounding_of(spend.privacy_unit, {spend.column: categories})
        paths = source.path_counts([spend.column], bounding=bounding, progress=progress, should_cancel=should_cancel,
                                   min_levels=1)
        index = {label: i for i, label in enumerate(categories)}
        counts = np.zeros(len(categories), dtype=np.int64)
        unlisted = 0
        for (label,), count in zip(paths.paths, paths.counts.tolist()):
            if label in index:
                counts[index[label]] += count
            else:
                unlisted += 1
        if unlisted:
            raise DataError(f"{unlisted:,} value(s) of column {spend.column!r} are not among the stated categories "
                            "(not listed: values of the data are never quoted in a message)",
                            "add them to the public list of categories, or fix the data")
        return counts

    def release(self, ledger: ReleaseRecords, dataset: str, spend: CountsSpend, counts: np.ndarray, noise: RandomSource, *,
                release_id: str | None = None, source_record: dict[str, Any] | None = None
                ) -> tuple[CountsRelease, CountsReleaseInfo]:
        return spend_and_release_counts(ledger, dataset, spend.column, counts, spend.plan, noise,
                                        release_id=release_id,
                                        source_record=with_privacy_unit(source_record, spend.privacy_unit))

    def parameters(self, release: CountsRelease, info: CountsReleaseInfo) -> dict[str, Any]:
        return counts_params(release, info)

    def digest(self, release: CountsRelease) -> str:
        return levels_sha256(release.levels)

    def csv_text(self, release: CountsRelease) -> str:
        return counts_csv_text(release)

    def manifest(self, release: CountsRelease, info: CountsReleaseInfo, name: str, csv_bytes: bytes, pdf_bytes: bytes,
                 key_id: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        return build_counts_manifest(release, info, name, csv_bytes, pdf_bytes, key_id)

    def authenticate(self, ledger: ReleaseRecords, release: CountsRelease, info: CountsReleaseInfo
                     ) -> tuple[CountsRelease, CountsReleaseInfo]:
        return release, authenticate_counts_release(ledger, release, info)

    def sign(self, ledger: Ledger, folder: str | Path, name: str, release: CountsRelease, info: CountsReleaseInfo,
             pdf: bytes, key: SecretKey, extra: dict[str, Any] | None = None) -> BundlePaths:
        return sign_counts_release(ledger, folder, name, release, info, pdf, key)

    def ledger_words(self, description: dict[str, Any]) -> str:
        return f"counts of column {str(description.get('column'))!r}"


#: The counts statistic (registered in :data:`dpgui.workspace.statistics.STATISTICS`).
COUNTS = CountsStatistic()
