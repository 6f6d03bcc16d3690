"""The PDF report of the CDF of a numeric column for each group (:mod:`dpgui.core.grouped_cdf`): a first
page with what was released, the shared plan, the groups and the privacy statement, then the released groups,
:data:`GROUPS_PER_PAGE` a page, each a table of its noisy size, a few quantiles
(:func:`dpgui.core.quantiles.quantiles`) and its mean and sum (:func:`dpgui.core.cdf_moments.cdf_moments`) with
their 95 % intervals, drawn on the reports' page furniture (:mod:`dpgui.pdf.page`) with their shared words
(:mod:`dpgui.pdf.markup`). Public values only; works headless; O(groups × K).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QPdfWriter

from dpgui.core.cdf_moments import NO_MEAN, MomentEstimate, cdf_moments
from dpgui.core.grouped_cdf import GroupedRelease
from dpgui.core.planner import margin95
from dpgui.core.privacy_unit import privacy_unit_words, unit_of_source
from dpgui.core.quantiles import noise_margin, quantiles
from dpgui.formatting import format_fixed, moment_decimals
from dpgui.pdf.markup import (
    HTML_STYLE, HTML_TABLE, VERIFY_COMMAND, html_code, html_rows, html_text, privacy_budget_text,
    seeded_noise_banner_html,
)
from dpgui.pdf.page import Canvas, Footer, PdfDrawing, draw_html, release_footer
from dpgui.report.grouped_cdf.bundle import GROUP_SIZES_WORDS, GroupedReleaseInfo
from dpgui.vocabulary import AccuracyWhere, Neighbours

__all__ = ["GROUPS_PER_PAGE", "grouped_cdf_drawing", "grouped_cdf_section", "render_grouped_cdf_pdf"]

PDF_TITLE = "Differentially private CDF for each group"
#: The groups' tables on one page after the first (each a heading and eight rows).
GROUPS_PER_PAGE = 5
#: The quantiles each group's table shows.
PROBABILITIES = (0.1, 0.25, 0.5, 0.75, 0.9)


def _first_page_html(release: GroupedRelease, info: GroupedReleaseInfo, key_id: str | None) -> str:
    plan = release.plan
    tree = plan.tree
    privacy = tree.privacy
    first = release.releases[0]
    signer = f"Signed by key {html_text(key_id)}." if key_id else "Not signed."
    groups = ", ".join(html_text(label) for label in plan.groups.labels)
    return "".join([
        HTML_STYLE, seeded_noise_banner_html(info.secure),
        f"<h1>{html_text(PDF_TITLE)}</h1>",
        f"<p>Dataset {html_text(info.dataset)}: the CDF of column {html_text(info.column)} for each group of column "
        f"{html_text(info.group_column)}; release {html_text(info.release_id)}.</p>",
        f"<p>The groups, {html_text(plan.groups.source_words)}: {groups}. Rows whose group is not listed "
        f"(or missing) are {html_text(plan.groups.other.words)}. A listed group absent from the data is released "
        f"too (zeros plus noise).</p>",
        f"<p>Every group's CDF is released with one shared plan: {tree.shape.bins:,} bins on "
        f"[{first.lower:g}, {first.upper:g}), a tree of height {tree.shape.height}, {html_text(tree.noise)} noise. "
        f"{html_text(GROUP_SIZES_WORDS[0].upper() + GROUP_SIZES_WORDS[1:])}.</p>",
        f"<p>Privacy: {html_text(privacy_budget_text(tree))}, protecting against: "
        f"{html_text(Neighbours(privacy.neighbours).words)}. "
        f"{html_text(privacy_unit_words(unit_of_source(info.source), privacy.records_per_person))}. "
        "One record is in one group's tree, so the groups compose in parallel: this budget is spent once for all "
        f"groups. 95 % of cumulative counts lie within ±{margin95(tree, AccuracyWhere.EVERY):,.0f} records of the "
        "true count (at the least precise point of every group).</p>",
        "<p>Each group's mean and sum are of its values, each taken at the middle of its bin (where inside its bin "
        "a value lies is not released), values outside the bounds at the nearest bound; they are read from the "
        "group's released CDF at no extra privacy. “noise ± …” is what the noise can move them by (95 %); binning "
        "moves the mean by at most half a bin (the sum by half a bin per value); the 95 % interval allows for both "
        "and holds the group's true mean (sum) in at least 95 of 100 releases.</p>",
        f"<p>{signer} Check it with {html_code(VERIFY_COMMAND)}.</p>",
    ])


def _moment_text(estimate: MomentEstimate, half: float, per_value: bool) -> str:
    """A group's mean or sum as its quantiles are written, with the noise's 95 % margin and what binning can add
    (``half``: half a bin; ``per_value`` for a sum): ``77.4 (95 %: 68.3 to 94.0; noise ± 11.6, binning ± 5.0)``."""
    places = moment_decimals(estimate.noise_margin, estimate.binning)
    binning = format_fixed(half, max(places, moment_decimals(half))) + (" per value" if per_value else "")
    return (f"{format_fixed(estimate.value, places)} (95 %: {format_fixed(estimate.low, places)} to "
            f"{format_fixed(estimate.high, places)}; noise ± {format_fixed(estimate.noise_margin, places)}, "
            f"binning ± {binning})")


def _groups_html(release: GroupedRelease, start: int, stop: int) -> str:
    parts = [HTML_STYLE]
    for label, group in zip(release.labels[start:stop], release.releases[start:stop]):
        rows = [("Released size", f"{group.total:,.0f} (± {float(noise_margin(release.total_std_error)):,.0f}, 95 %)")]
        rows += [(f"{q.probability:.0%} quantile", f"{q.value:,.4g} (95 %: {q.low:,.4g} to {q.high:,.4g})")
                 for q in quantiles(group, PROBABILITIES)]
        moments = cdf_moments(group)
        half = moments.per_value
        rows.append(("Mean", NO_MEAN if moments.mean is None else _moment_text(moments.mean, half, False)))
        rows.append(("Sum", _moment_text(moments.sum, half, True)))
        parts += [f"<h2>Group {html_text(label)}</h2>", HTML_TABLE,
                  *html_rows([(html_text(a), html_text(b)) for a, b in rows], "40%"), "</table>"]
    return "".join(parts)


def render_grouped_cdf_pdf(release: GroupedRelease, info: GroupedReleaseInfo, key_id: str | None) -> bytes:
    """The grouped release as an A4 PDF (bytes) of :func:`grouped_cdf_drawing`."""
    return grouped_cdf_drawing(release, info, key_id).write()


def grouped_cdf_drawing(release: GroupedRelease, info: GroupedReleaseInfo, key_id: str | None) -> PdfDrawing:
    """The grouped release's A4 pages: the first page, then :data:`GROUPS_PER_PAGE` groups a page.
    ``key_id``: the signer's key id (None: not signed)."""
    count = len(release.labels)
    starts = list(range(0, count, GROUPS_PER_PAGE))
    pages = 1 + len(starts)

    def draw_pages(c: Canvas, writer: QPdfWriter, footer: Footer) -> None:
        bottom = footer(c, 1, pages)
        draw_html(c, writer, 0.0, bottom, _first_page_html(release, info, key_id))
        for number, start in enumerate(starts, start=2):
            writer.newPage()
            bottom = footer(c, number, pages)
            draw_html(c, writer, 0.0, bottom, _groups_html(release, start, start + GROUPS_PER_PAGE))

    return PdfDrawing(PDF_TITLE, release_footer(info.release_id, info.dataset), draw_pages)


def grouped_cdf_section(release: Any, info: Any, key_id: str | None, extra: dict[str, Any] | None) -> PdfDrawing:
    """The report as :data:`dpgui.pdf.sections.SECTIONS` draws it (its signature is :data:`~dpgui.pdf.sections.PdfSection`)."""
    if extra is not None:  # a bug: a grouped CDF report has no section of its own besides the release
        raise TypeError("a grouped CDF report takes no extra section")
    return grouped_cdf_drawing(release, info, key_id)
