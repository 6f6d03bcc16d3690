"""The PDF reports of a release, painted with Qt's GUI module (QPdfWriter, QPainter, QTextDocument):
no widgets, so the command line draws them on a headless server with a bare QGuiApplication, and the
window with its own QApplication. Public values only: the released numbers, the plan and the
release's labels.

:mod:`dpgui.pdf.cdf` draws a CDF release (its charts: :mod:`dpgui.pdf.cdf_charts`),
:mod:`dpgui.pdf.hierarchy` the counts over a hierarchy; both on :mod:`dpgui.pdf.page` (the
application, A4 writer, canvas, footer, test-noise strip) with the words of :mod:`dpgui.pdf.markup`.
:func:`dpgui.pdf.sections.report_pdf` draws a release of any kind, from one table keyed by the
statistic's kind (:data:`dpgui.pdf.sections.SECTIONS`): the export dialogs, the command line and the
self-test call it. Each kind's section gives its pages (:class:`dpgui.pdf.page.PdfDrawing`), so
:func:`dpgui.pdf.plan.plan_report_pdf` draws a release plan's one PDF: a summary page, then each part's pages.
"""
