"""Export a released plan as one signed bundle: the shared Export dialog (folder, name, key, passphrase;
:mod:`dpgui.app.dialogs.export`) writing one CSV per statistic, the summary CSV, the plan's PDF (a summary page
and each statistic's pages, :func:`dpgui.pdf.plan.plan_report_pdf`) and one manifest through
:func:`~dpgui.workspace.release_plan.sign_plan` — every part confirmed against the plan's ONE budget ledger
entry, and the entry pointed at the bundle. Exporting spends no budget. GUI thread.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from dpgui.app.dialogs.export import BundleExportDialog
from dpgui.report.bundle import BundlePaths
from dpgui.report.signing import SecretKey
from dpgui.workspace.flow import ReleaseFlow
from dpgui.workspace.plan_spec import PlanSpec
from dpgui.workspace.release_plan import ReleasedPlan, plan_summary, sign_plan

__all__ = ["PlanExportDialog"]


class PlanExportDialog(BundleExportDialog):
    """The Export dialog of a released plan (``plan``, released as ``spec`` states it: its whole budget and privacy
    unit, ``privacy_unit`` in words)."""

    def __init__(self, plan: ReleasedPlan, spec: PlanSpec, privacy_unit: str, folder: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(folder, f"{plan.dataset}-plan-{plan.created_utc:%Y%m%d-%H%M%S}", parent)
        self.setWindowTitle("Export signed bundle — release plan")
        self.name.setToolTip("The files are called NAME.csv (the summary), NAME.part1.csv, NAME.part2.csv, … (one per "
                             "statistic), NAME.pdf, NAME.manifest.json and NAME.manifest.json.minisig.")
        self.plan, self.spec, self.privacy_unit = plan, spec, privacy_unit
        self.release_id, self.dataset = plan.plan_id, plan.dataset

    def sign_bundle(self, flow: ReleaseFlow, folder: str, name: str, key: SecretKey) -> BundlePaths:
        """The plan's PDF with ``key``'s id, then :func:`sign_plan` on ``flow``'s ledger (only a plan the ledger
        confirms, part by part, is signed)."""
        from dpgui.pdf.plan import plan_report_pdf

        summary = plan_summary(self.plan, self.spec.epsilon, self.spec.delta, self.privacy_unit, self.spec.unit)
        pdf = plan_report_pdf(self.plan, summary, key.public_key.key_id_hex, name)
        return sign_plan(flow.ledger, self.plan, summary, folder, name, pdf, key)
