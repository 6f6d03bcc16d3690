"""The "Counts over a hierarchy" mode in project files (no Qt): the officer's choices to and from
:class:`~dpgui.report.project_hierarchy.HierarchySettings`, and a saved release back as an outcome
the results step shows and Export signs.

A restored release is checked against the budget ledger (the same check as at export,
:func:`dpgui.report.hierarchy_publish.authenticate_hierarchy_release`): a project file is not
evidence. Restoring never spends budget and never reads the data.
"""

from __future__ import annotations

from pathlib import Path

from dpgui.errors import DpguiError
from dpgui.report.hierarchy_publish import authenticate_hierarchy_release
from dpgui.report.ledger import Ledger
from dpgui.report.project_hierarchy import HierarchySettings, ProjectHierarchyRelease
from dpgui.workspace.hierarchy import HierarchyChoice, HierarchyOutcome

__all__ = ["choice_of_settings", "restored_outcome", "settings_of_choice"]


def settings_of_choice(choice: HierarchyChoice) -> HierarchySettings | None:
    """The choices as a project stores them; None while they are all the defaults (nothing chosen)."""
    if choice == HierarchyChoice():
        return None
    return HierarchySettings(
        levels=choice.levels, prior_path="" if choice.prior_path is None else str(choice.prior_path.absolute()),
        counts_from_data=choice.counts_from_data, epsilon=choice.epsilon, delta=choice.delta,
        neighbours=choice.neighbours, records_per_person=choice.records_per_person, noise=choice.noise,
        allocation=choice.allocation, weights=choice.weights, target_mse=choice.target_mse,
        consistency=choice.consistency, budgets=choice.budgets, alpha=choice.alpha,
        categories_public=choice.categories_public)


def choice_of_settings(settings: HierarchySettings) -> HierarchyChoice:
    """The choices again (ParameterError with the fix for a value the mode does not take)."""
    return HierarchyChoice(
        levels=settings.levels, prior_path=Path(settings.prior_path) if settings.prior_path else None,
        counts_from_data=settings.counts_from_data, epsilon=settings.epsilon, delta=settings.delta,
        neighbours=settings.neighbours, records_per_person=settings.records_per_person, noise=settings.noise,
        allocation=settings.allocation, weights=settings.weights, target_mse=settings.target_mse,
        consistency=settings.consistency, budgets=settings.budgets, alpha=settings.alpha,
        categories_public=settings.categories_public)


def restored_outcome(record: ProjectHierarchyRelease) -> HierarchyOutcome:
    """``record`` as the results step shows it: confirmed by the budget ledger (``secure`` from the
    ledger's record) or with the reason it may not be signed. Reads the ledger only. O(#nodes)."""
    release, info = record.to_release()
    try:
        with Ledger() as ledger:
            confirmed = authenticate_hierarchy_release(ledger, release, info)
    except DpguiError as err:
        return HierarchyOutcome(release, info, info.dataset, info.release_id, False, restored=True, problem=err.problem)
    return HierarchyOutcome(release, confirmed, confirmed.dataset, confirmed.release_id, confirmed.secure, restored=True)
