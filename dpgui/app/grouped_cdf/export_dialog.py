"""Export a grouped CDF release as a signed bundle: the shared Export dialog (folder, name, key, passphrase;
:mod:`dpgui.app.dialogs.export`) writing the CSV (one row per group and bin edge), PDF and manifest through the
release flow's :meth:`~dpgui.workspace.flow.ReleaseFlow.sign` — only a release the budget ledger confirms is
signed, and the ledger points to the bundle. Exporting spends no budget. GUI thread.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from dpgui.app.dialogs.export import BundleExportDialog
from dpgui.report.bundle import BundlePaths
from dpgui.report.signing import SecretKey
from dpgui.workspace.flow import ReleaseFlow
from dpgui.workspace.grouped_cdf import GroupedOutcome
from dpgui.workspace.statistics.grouped_cdf import GROUPED_CDF


class GroupedExportDialog(BundleExportDialog):
    """The Export dialog for a :class:`~dpgui.workspace.grouped_cdf.GroupedOutcome`."""

    def __init__(self, outcome: GroupedOutcome, folder: str, parent: QWidget | None = None) -> None:
        info = outcome.info
        super().__init__(folder, GROUPED_CDF.bundle_name(outcome.release, info), parent)
        self.setWindowTitle("Export signed bundle — CDF for each group")
        self.outcome = outcome
        self.release_id, self.dataset = info.release_id, info.dataset

    def sign_bundle(self, flow: ReleaseFlow, folder: str, name: str, key: SecretKey) -> BundlePaths:
        """The release as the ledger confirms it (its secure flag: a restored release's PDF is drawn as secure
        only then), its PDF with ``key``'s id, then :meth:`ReleaseFlow.sign` with the grouped statistic."""
        from dpgui.pdf.sections import report_pdf

        release, info = GROUPED_CDF.authenticate(flow.ledger, self.outcome.release, self.outcome.info)
        pdf = report_pdf(GROUPED_CDF.kind, release, info, key.public_key.key_id_hex)
        return flow.sign(GROUPED_CDF, folder, name, release, info, pdf, key)
