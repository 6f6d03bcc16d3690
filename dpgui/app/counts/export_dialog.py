"""Export a counts release as a signed bundle: the shared Export dialog (folder, name, key, passphrase;
:mod:`dpgui.app.dialogs.export`) writing the counts' CSV (one row per category), PDF and manifest through
the release flow's :meth:`~dpgui.workspace.flow.ReleaseFlow.sign` — only a release the budget ledger confirms
is signed, and the ledger points to the bundle. Exporting spends no budget. GUI thread.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from dpgui.app.dialogs.export import BundleExportDialog
from dpgui.report.bundle import BundlePaths
from dpgui.report.counts.bundle import default_counts_bundle_name
from dpgui.report.signing import SecretKey
from dpgui.workspace.counts import CountsOutcome
from dpgui.workspace.flow import ReleaseFlow
from dpgui.workspace.statistics.counts import COUNTS


class CountsExportDialog(BundleExportDialog):
    """The Export dialog for a :class:`~dpgui.workspace.counts.CountsOutcome`."""

    def __init__(self, outcome: CountsOutcome, folder: str, parent: QWidget | None = None) -> None:
        info = outcome.info
        super().__init__(folder, default_counts_bundle_name(info), parent)
        self.setWindowTitle("Export signed bundle — counts of one column")
        self.outcome = outcome
        self.release_id, self.dataset = info.release_id, info.dataset

    def sign_bundle(self, flow: ReleaseFlow, folder: str, name: str, key: SecretKey) -> BundlePaths:
        """The release as the ledger confirms it (its secure flag: a restored release's PDF is drawn as
        secure only then), its PDF with ``key``'s id, then :meth:`ReleaseFlow.sign` with the counts statistic."""
        from dpgui.pdf.sections import report_pdf

        release, info = COUNTS.authenticate(flow.ledger, self.outcome.release, self.outcome.info)
        pdf = report_pdf(COUNTS.kind, release, info, key.public_key.key_id_hex)
        return flow.sign(COUNTS, folder, name, release, info, pdf, key)
