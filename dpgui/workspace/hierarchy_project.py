"""The "Counts over a hierarchy" mode in project files (no Qt): the officer's choices to and from
:class:`~dpgui.report.hierarchy.project.HierarchySettings`, and a saved release back as an outcome
the results step shows and Export signs.

A restored release is checked against the budget ledger (the same check as at export,
:func:`dpgui.report.hierarchy.publish.authenticate_hierarchy_release`): a project file is not
evidence. Restoring never spends budget and never reads the data.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

from dpgui.errors import DpguiError

from dpgui.report.ledger import Ledger
from dpgui.report.hierarchy.project import HierarchySettings, ProjectHierarchyRelease
from dpgui.vocabulary import StatisticKind
from dpgui.workspace.hierarchy import HierarchyOutcome
from dpgui.workspace.hierarchy_planning import HierarchyChoice
from dpgui.workspace.statistics import statistic

__all__ = ["choice_of_settings", "restored_outcome", "settings_of_choice"]


def _shared_fields(source: HierarchyChoice | HierarchySettings) -> dict[str, Any]:
    """The choice's fields by name: the two classes hold the same fields (the report layer cannot import
    the workspace's class), only the prior's path differs in type, so a new field is added to both and
    copied here without a change."""
    return {f.name: getattr(source, f.name) for f in fields(HierarchySettings) if f.name != "prior_path"}


def settings_of_choice(choice: HierarchyChoice) -> HierarchySettings | None:
    """The choices as a project stores them; None while they are all the defaults (nothing chosen)."""
    if choice == HierarchyChoice():
        return None
    prior = "" if choice.prior_path is None else str(choice.prior_path.absolute())
    return HierarchySettings(prior_path=prior, **_shared_fields(choice))


def choice_of_settings(settings: HierarchySettings) -> HierarchyChoice:
    """The choices again (ParameterError with the fix for a value the mode does not take)."""
    prior = Path(settings.prior_path) if settings.prior_path else None
    return HierarchyChoice(prior_path=prior, **_shared_fields(settings))


def restored_outcome(record: ProjectHierarchyRelease) -> HierarchyOutcome:
    """``record`` as the results step shows it: confirmed by the budget ledger (``secure`` from the
    ledger's record) or with the reason it may not be signed. Reads the ledger only. O(#nodes)."""
    hierarchy = statistic(StatisticKind.HIERARCHY)
    release, info = hierarchy.from_record(record, record.dataset)
    try:
        with Ledger() as ledger:
            _, confirmed = hierarchy.authenticate(ledger, release, info)
    except DpguiError as err:
        return HierarchyOutcome(release, info, info.dataset, info.release_id, False, restored=True, problem=err.problem)
    return HierarchyOutcome(release, confirmed, confirmed.dataset, confirmed.release_id, confirmed.secure, restored=True)
