"""The PDF report of a release of any kind: one table from the statistic's kind
(:class:`~dpgui.vocabulary.StatisticKind`, :attr:`dpgui.workspace.statistic.Statistic.kind`) to the function
that draws its pages (a :class:`~dpgui.pdf.page.PdfDrawing`), and :func:`report_pdf`, which the window's
export dialogs, the command line and the self-test call. A release plan's PDF (:mod:`dpgui.pdf.plan`) draws
each part's pages from the same table. A new statistic adds its drawing module here
(``dpgui/pdf/<statistic>.py``) and one line of :data:`SECTIONS`.

The table lives in the PDF layer, not in the statistic seam (:mod:`dpgui.workspace.statistics`): the
workspace runs without Qt and never imports dpgui.pdf (the layers of pyproject's ``[tool.importlinter]``).
Public values only; no widgets (QtGui); any thread that may paint (the window's GUI thread, or the command
line's one thread under a bare QGuiApplication).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpgui.pdf.cdf import cdf_section
from dpgui.pdf.counts import counts_section
from dpgui.pdf.grouped_cdf import grouped_cdf_section
from dpgui.pdf.hierarchy import hierarchy_section
from dpgui.pdf.page import PdfDrawing
from dpgui.vocabulary import StatisticKind

__all__ = ["SECTIONS", "PdfSection", "report_pdf"]

#: Draws one kind's report: (release, its info, the signer's key id or None, the kind's extra section or
#: None) → its pages (:class:`~dpgui.pdf.page.PdfDrawing`, whose ``write()`` makes the PDF). The extra section
#: is the one :meth:`Statistic.sign <dpgui.workspace.statistic.Statistic.sign>` puts in the manifest (a
#: hierarchy's stated errors).
PdfSection = Callable[[Any, Any, "str | None", "dict[str, Any] | None"], PdfDrawing]


#: Every statistic's report, by its kind.
SECTIONS: dict[StatisticKind, PdfSection] = {
    StatisticKind.CDF: cdf_section,
    StatisticKind.HIERARCHY: hierarchy_section,
    StatisticKind.COUNTS: counts_section,
    StatisticKind.GROUPED_CDF: grouped_cdf_section,
}


def report_pdf(kind: StatisticKind, release: Any, info: Any, key_id: str | None,
               extra: dict[str, Any] | None = None) -> bytes:
    """The A4 PDF report (bytes) of ``release`` of ``kind`` with its public ``info``, drawn by the kind's
    function in :data:`SECTIONS`. ``key_id``: the signer's key id (None: not signed); ``extra``: the kind's
    own section, as given to :meth:`Statistic.sign <dpgui.workspace.statistic.Statistic.sign>` (a hierarchy:
    :func:`~dpgui.report.hierarchy.bundle.errors_json` of the plan's stated errors; a CDF: None). No
    QApplication needed. Cost: the kind's drawing (a CDF O(K), a hierarchy O(nodes))."""
    return SECTIONS[kind](release, info, key_id, extra).write()
