"""Export a hierarchy release as a signed bundle: the CDF's Export dialog (folder, name, key,
passphrase; :mod:`dpgui.app.export_dialog`) writing the hierarchy's CSV (one row per node), PDF and
manifest through :func:`dpgui.report.hierarchy_publish.sign_hierarchy_release` — only a release the
budget ledger confirms is signed, and the ledger points to the bundle. Exporting spends no budget.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget

from dpgui.app.export_dialog import ExportDialog
from dpgui.app.fields import show_inline
from dpgui.app.text import friendly
from dpgui.core.hierarchy import project_hierarchy
from dpgui.errors import DpguiError
from dpgui.report.bundle import BundlePaths, check_bundle_name, check_bundle_target
from dpgui.report.hierarchy_bundle import default_hierarchy_bundle_name, projection_json
from dpgui.report.keystore import load_secret_key
from dpgui.report.ledger import Ledger
from dpgui.report.publish import BundleNotRecorded
from dpgui.workspace.hierarchy import HierarchyOutcome


class HierarchyExportDialog(ExportDialog):
    """The Export dialog for a :class:`~dpgui.workspace.hierarchy.HierarchyOutcome`."""

    def __init__(self, outcome: HierarchyOutcome, folder: str, parent: QWidget | None = None,
                 public_prior_levels: tuple[np.ndarray, ...] | None = None) -> None:
        info = outcome.info
        levels = outcome.release.hierarchy.level_names
        # the base dialog only reads these labels of its ``info`` (for its default bundle name)
        labels = SimpleNamespace(dataset=info.dataset, column="-".join(levels), created_utc=info.created_utc,
                                 release_id=info.release_id)
        super().__init__(outcome.release, labels, folder, parent)  # type: ignore[arg-type]
        self.setWindowTitle("Export signed bundle — counts over a hierarchy")
        self.outcome = outcome
        self.public_prior_levels = public_prior_levels
        self.name.setText(default_hierarchy_bundle_name(info, levels))

    def published_projection(self) -> dict[str, Any]:
        """The projected error per level that the bundle publishes: at the public prior's counts, else at the
        released counts (public, post-processing) — never at the confidential counts (as the CLI)."""
        release = self.outcome.release
        prior = self.public_prior_levels
        counts = release.counts if prior is None else prior
        projection = project_hierarchy(release.plan, counts, hierarchy=release.hierarchy)
        return projection_json(projection, "the released counts" if prior is None else "the prior's counts")

    def export(self) -> BundlePaths | None:
        """Decrypt the key, render the PDF and write the bundle; on failure say why inline."""
        from dpgui.app.pdf_hierarchy import render_hierarchy_pdf
        from dpgui.report.hierarchy_publish import sign_hierarchy_release

        show_inline(self.message, "")
        if not self._keys:
            show_inline(self.message, "There is no signing key yet. Create one in Tools → Signing keys.")
            return None
        entry = self._keys[self.key.currentIndex()]
        assert entry.secret_path is not None
        release, info = self.outcome.release, self.outcome.info
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            name = check_bundle_name(self.name.text().strip())
            check_bundle_target(self.folder.text().strip(), name)
            key = load_secret_key(entry.secret_path, self.passphrase.text())
            projection = self.published_projection()
            pdf = render_hierarchy_pdf(release, info, projection, key.public_key.key_id_hex)
            with Ledger() as ledger:
                self.paths = sign_hierarchy_release(ledger, self.folder.text().strip(), name, release, info, pdf, key,
                                                    projection)
        except (DpguiError, OSError) as err:
            written = "" if isinstance(err, BundleNotRecorded) else " Nothing was written."
            show_inline(self.message, friendly(err) + written)
            return None
        finally:
            QApplication.restoreOverrideCursor()
        self.passphrase.clear()
        return self.paths
