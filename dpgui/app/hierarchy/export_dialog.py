"""Export a hierarchy release as a signed bundle: the CDF's Export dialog (folder, name, key,
passphrase; :mod:`dpgui.app.dialogs.export`) writing the hierarchy's CSV (one row per node), PDF and
manifest through the release flow's last step (:meth:`dpgui.workspace.flow.ReleaseFlow.sign` with the
hierarchy statistic) — only a release the budget ledger confirms is signed, and the ledger points to the
bundle. Exporting spends no budget.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtWidgets import QWidget

from dpgui.app.dialogs.export import BundleExportDialog
from dpgui.core.hierarchy_errors import plan_errors
from dpgui.report.bundle import BundlePaths
from dpgui.report.hierarchy.bundle import default_hierarchy_bundle_name, errors_json
from dpgui.report.signing import SecretKey
from dpgui.workspace.flow import ReleaseFlow
from dpgui.workspace.hierarchy import HierarchyOutcome
from dpgui.workspace.statistics.hierarchy import HIERARCHY


class HierarchyExportDialog(BundleExportDialog):
    """The Export dialog for a :class:`~dpgui.workspace.hierarchy.HierarchyOutcome`."""

    def __init__(self, outcome: HierarchyOutcome, folder: str, parent: QWidget | None = None,
                 public_prior_levels: tuple[np.ndarray, ...] | None = None) -> None:
        super().__init__(folder, default_hierarchy_bundle_name(outcome.info, outcome.release.hierarchy.level_names),
                         parent)
        self.setWindowTitle("Export signed bundle — counts over a hierarchy")
        self.outcome = outcome
        self.release_id, self.dataset = outcome.release_id, outcome.dataset
        self.public_prior_levels = public_prior_levels

    def published_projection(self) -> dict[str, Any]:
        """The projected errors the bundle publishes: the plan's own (:func:`dpgui.core.hierarchy_errors.plan_errors`,
        the figures the plan page and ``dpgui hierarchy plan`` stated) at the public prior's counts, else at
        the plan's assumed records, else the noise's alone — never at the confidential counts (as the CLI)."""
        release = self.outcome.release
        return errors_json(plan_errors(release.plan, release.hierarchy, self.public_prior_levels))

    def sign_bundle(self, flow: ReleaseFlow, folder: str, name: str, key: SecretKey) -> BundlePaths:
        """The PDF with the published projection, then :meth:`ReleaseFlow.sign` with the hierarchy statistic."""
        from dpgui.pdf.sections import report_pdf

        release, info = self.outcome.release, self.outcome.info
        projection = self.published_projection()
        pdf = report_pdf(HIERARCHY.kind, release, info, key.public_key.key_id_hex, projection)
        return flow.sign(HIERARCHY, folder, name, release, info, pdf, key, projection)
