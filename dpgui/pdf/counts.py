"""The PDF report of the counts of one column (:mod:`dpgui.core.counts`): one A4 page with what was
released, its privacy, and the table of the released counts, drawn on the reports' page furniture
(:mod:`dpgui.pdf.page`) with their shared words (:mod:`dpgui.pdf.markup`). Public values only; works
headless; O(categories).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QPdfWriter

from dpgui.core.counts import CountsRelease
from dpgui.core.privacy_unit import privacy_unit_words, unit_of_source
from dpgui.pdf.markup import (
    HTML_STYLE, HTML_TABLE, VERIFY_COMMAND, html_code, html_rows, html_text, seeded_noise_banner_html,
)
from dpgui.pdf.page import Canvas, Footer, PdfDrawing, draw_html, release_footer
from dpgui.report.counts.bundle import CountsReleaseInfo
from dpgui.vocabulary import Neighbours

__all__ = ["counts_drawing", "counts_section", "render_counts_pdf"]

PDF_TITLE = "Differentially private counts of one column"


def _page_html(release: CountsRelease, info: CountsReleaseInfo, key_id: str | None) -> str:
    plan = release.plan
    rows = html_rows([(html_text(label), f"{int(count):,}") for label, count in zip(plan.labels, release.counts.tolist())],
                     "60%", align_right_from=1)
    signer = f"Signed by key {html_text(key_id)}." if key_id else "Not signed."
    return "".join([
        HTML_STYLE, seeded_noise_banner_html(info.secure),
        f"<h1>{html_text(PDF_TITLE)}</h1>",
        f"<p>Dataset {html_text(info.dataset)}, column {html_text(info.column)}; release {html_text(info.release_id)}.</p>",
        f"<p>Each count has discrete Laplace noise added (ε = {plan.privacy.epsilon:g}, pure ε-DP, protecting against: "
        f"{html_text(Neighbours(plan.privacy.neighbours).words)}; "
        f"{html_text(_unit_words(info.source, plan.privacy.records_per_person))}); its "
        f"standard error is {plan.std_error:.3g} records. The categories "
        f"were stated before the data was read (a public list); the data held no other value and no missing value "
        f"(a release of data that does is refused). 95 % of counts lie within ±{plan.margin:,} records of the true "
        f"count.</p>",
        HTML_TABLE, "<tr><th align=\"left\">Category</th><th align=\"right\">Released count</th></tr>", *rows, "</table>",
        f"<p>{signer} Check it with {html_code(VERIFY_COMMAND)}.</p>",
    ])


def render_counts_pdf(release: CountsRelease, info: CountsReleaseInfo, key_id: str | None) -> bytes:
    """The counts release as a one-page A4 PDF (bytes) of :func:`counts_drawing`."""
    return counts_drawing(release, info, key_id).write()


def counts_drawing(release: CountsRelease, info: CountsReleaseInfo, key_id: str | None) -> PdfDrawing:
    """The counts release's one A4 page. ``key_id``: the signer's key id (None: not signed)."""
    source = _page_html(release, info, key_id)

    def draw_pages(c: Canvas, writer: QPdfWriter, footer: Footer) -> None:
        bottom = footer(c, 1, 1)
        draw_html(c, writer, 0.0, bottom, source)

    return PdfDrawing(PDF_TITLE, release_footer(info.release_id, info.dataset), draw_pages)


def counts_section(release: Any, info: Any, key_id: str | None, extra: dict[str, Any] | None) -> PdfDrawing:
    """The report as :data:`dpgui.pdf.sections.SECTIONS` draws it (its signature is :data:`~dpgui.pdf.sections.PdfSection`)."""
    if extra is not None:  # a bug: a counts report has no section of its own besides the release
        raise TypeError("a counts report takes no extra section")
    return counts_drawing(release, info, key_id)


def _unit_words(source: dict[str, Any] | None, records_per_person: int) -> str:
    """The privacy unit in words (:func:`privacy_unit_words`), its first letter lower case: inside a sentence."""
    words = privacy_unit_words(unit_of_source(source), records_per_person)
    return words[0].lower() + words[1:]
