"""What the front ends use of the publishing modules (:mod:`dpgui.report.bundle`,
:mod:`dpgui.report.hierarchy.bundle`, :mod:`dpgui.report.publish`) besides the release flow: the checks of a
bundle's folder and name before the spend, the JSON and words of a release's
charge, projection and missing values, the hierarchy's CSV, the software versions (a bundle is verified
through :func:`dpgui.workspace.statistics.verify`).

The command line reaches the publishing modules and the budget ledger only through the workspace (a
contract in pyproject's ``[tool.importlinter]``): spending and signing through
:class:`~dpgui.workspace.flow.ReleaseFlow`, the ledger through :mod:`dpgui.workspace.budget`, and these
through this module. No Qt; none of them spends. Confidential data: none goes in or out (public release
values, plans and paths only).
"""

from __future__ import annotations

from dpgui.report.bundle import check_bundle_folder, check_bundle_target, software_versions
from dpgui.report.cdf.bundle import missing_values_json
from dpgui.report.hierarchy.bundle import charge_json, errors_json, projection_json, write_hierarchy_csv
from dpgui.report.publish import charge_text

__all__ = [
    "charge_json", "charge_text", "check_bundle_folder", "check_bundle_target", "errors_json", "missing_values_json",
    "projection_json", "software_versions", "write_hierarchy_csv",
]
