"""The human-readable PDF of a hierarchy release (counts over 2–4 nested categorical columns).

A4 pages drawn with the reports' page furniture (:mod:`dpgui.pdf.page`: the writer, footer and
test-noise strip) and their shared words (:mod:`dpgui.pdf.markup`: styles, privacy wording and
verification commands): (1) what was released, the parameters and the projected error per level —
the 95 % margin of one count, the product's one stated error, with how it compares with the counts
(:func:`dpgui.core.hierarchy_errors.plan_errors`, the figures the plan page and ``dpgui hierarchy
plan`` stated) and a warning for levels that are mostly noise; (2) how to read it, with the
verification commands; (3…) every released count, all levels, each category followed by its
children in the release's order, with its 95 % interval, paginated (drawn row by row, not as one
document). Public values only: the released counts and intervals, the node list, the plan and its
projection (at a public prior's counts, the plan's assumed records or the noise alone, never the
confidential counts), the :class:`~dpgui.report.hierarchy.bundle.HierarchyReleaseInfo` labels.
Works headless (:func:`dpgui.pdf.page.ensure_gui_application`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPdfWriter, QPen

from dpgui.core.hierarchy_errors import LevelErrors, mostly_noise_warnings, released_mostly_noise
from dpgui.core.margins import MARGIN_NAME
from dpgui.core.privacy_unit import privacy_unit_words, unit_of_source
from dpgui.formatting import (
    format_delta, format_epsilon, format_level_budget, format_level_margin, format_number, format_relative_margin,
    format_share_whole, format_significant,
)
from dpgui.pdf.markup import (
    CONVERSION_WORDS, HTML_STYLE, HTML_TABLE, MINISIGN_COMMAND, VERIFY_COMMAND, delta_meaning, html_code, html_rows,
    html_text, privacy_budget_text, seeded_noise_banner_html, utc_text,
)
from dpgui.pdf.page import (
    ALERT, GREY, GRID, INK, RESOLUTION, Canvas, Footer, PdfDrawing, draw_html, draw_test_banner, footer_top,
    release_footer, test_banner_height,
)
from dpgui.report.bundle import source_text
from dpgui.report.hierarchy.bundle import NODE_LIST_FROM_PRIOR, HierarchyReleaseInfo
from dpgui.vocabulary import Allocation, HierarchyConsistency, Noise, PriorSource
from dpgui.workspace.words import NEIGHBOURS_LABELS

if TYPE_CHECKING:
    from dpgui.core.hierarchy import Hierarchy, HierarchyPlan, HierarchyRelease

__all__ = ["TEXT_PAGES", "MAX_TABLE_ROWS", "hierarchy_drawing", "hierarchy_section", "render_hierarchy_pdf", "tree_order"]

TEXT_PAGES = 2  # pages 1–2; the table of every released count follows
PDF_TITLE = "Differentially private counts over a hierarchy"
#: The table lists every category up to this many (about 330 pages, a few seconds); beyond, the first ones and a note that
#: the CSV holds all (a bigger PDF would be too slow to write and to open).
MAX_TABLE_ROWS = 20_000
TABLE_POINTS = 8.0  # the table's font size
NOISE_WORDS: dict[str, str] = {
    Noise.LAPLACE: "Exact discrete Laplace noise (whole numbers), one budget ε per level (Ko, Ziani & Fioretto 2025)",
    Noise.GAUSSIAN: "Exact discrete Gaussian noise (whole numbers), one budget ρ per level "
                    "(zCDP; Ghazi et al. 2023, Corollary 2.7)",
    Noise.MULTIPLICATIVE: "Sparse vector with truncated Laplace noise, multiplicative and additive guarantee "
                          "(Ghazi et al. 2023, Algorithms 1–2)",
}
ALLOCATION_WORDS: dict[str, str] = {
    Allocation.UNIFORM: "equal budget on every level",
    Allocation.OPTIMAL: "least weighted error within the budget (Ko, Ziani & Fioretto 2025, program 6)",
    Allocation.TARGET: "least budget that meets a target error (Ko, Ziani & Fioretto 2025, program 7)",
    Allocation.CUSTOM: "set by hand by the privacy officer",
}
CONSISTENCY_WORDS: dict[str, str] = {
    HierarchyConsistency.TOPDOWN: "Top-down: from the root, each node's children were made non-negative whole numbers "
                                  "that add up exactly to their parent's released count (Ko, Ziani & Fioretto 2025, "
                                  "program 8)",
    HierarchyConsistency.GLS: "Generalised least squares on the whole tree (the best linear unbiased estimate), then "
                              "made non-negative whole numbers adding up exactly to their parent, top-down",
    HierarchyConsistency.NONE: "None: each node is its own noisy count, clamped at 0 (parents need not equal the sum "
                               "of their children)",
}
MULTIPLICATIVE_CONSISTENCY = ("None: each node is the mechanism's own estimate (making the counts consistent would "
                              "void its multiplicative guarantee; parents need not equal the sum of their children)")
MULTIPLICATIVE_BUDGET = ("none: the mechanism spends its whole budget over the rounds of Ghazi et al. 2023 (noisy comparisons "
                         "of every node with a ladder of thresholds), not level by level")


def _no_counts_words(plan: HierarchyPlan) -> str:
    """The "Counts for the budgets" cell when the plan used no counts, by what set its budgets."""
    if plan.noise == Noise.MULTIPLICATIVE:
        return "none (the mechanism needs no counts)"
    if plan.allocation == Allocation.CUSTOM:
        return "none (the level budgets were set by hand)"
    return "none (uniform budgets need no counts)"


def _interval_words(release: HierarchyRelease) -> str:
    """What the 95 % intervals guarantee (:func:`dpgui.core.hierarchy.release_hierarchy`): per node for
    clamped and multiplicative releases; on average over a level's nodes for consistent ones (a
    parametric bootstrap), which must not be worded as a per-node guarantee."""
    plan = release.plan
    if plan.noise != Noise.MULTIPLICATIVE and plan.consistency in (HierarchyConsistency.TOPDOWN, HierarchyConsistency.GLS):
        return ("the 95 % interval of a node holds its true count in about 95 % of cases on average over the nodes "
                "of its level (estimated by simulation; not guaranteed for each node)")
    return "the 95 % interval of each node holds its true count with at least 95 % probability"


def _consistency_words(plan: HierarchyPlan) -> str:
    if plan.noise == Noise.MULTIPLICATIVE:
        return MULTIPLICATIVE_CONSISTENCY
    return CONSISTENCY_WORDS.get(plan.consistency, plan.consistency)


def _privacy_text(plan: HierarchyPlan) -> str:
    """The privacy budget in words: the CDF report's wording for Laplace and Gaussian noise (it reads
    only the plan's noise and privacy), its own sentence for the multiplicative mechanism."""
    privacy = plan.privacy
    if plan.noise == Noise.MULTIPLICATIVE:
        return (f"ε = {format_epsilon(privacy.epsilon)} and δ = {format_delta(privacy.delta)} ((ε, δ)-differential "
                "privacy by the composition of the Algorithms 1–2 of Ghazi et al. 2023)")
    return privacy_budget_text(plan)


def _delta_words(plan: HierarchyPlan) -> str:
    if plan.noise == Noise.MULTIPLICATIVE:
        delta = format_delta(plan.privacy.delta)
        return (f"δ = {delta}: beyond the factor e^ε, the probability of any published result may differ by at most "
                f"{delta} between two tables that differ in one person's records.")
    return delta_meaning(plan)


def _budget_cell(plan: HierarchyPlan, level: int) -> str:
    budgets = plan.level_budgets
    if not budgets:
        return "—"
    budget = float(budgets[level])
    name = "ρ" if plan.noise == Noise.GAUSSIAN else "ε"
    if budget <= 0:
        return "0 (exact: N is public)" if level == 0 and plan.privacy.root_public else "0 (not released)"
    return f"{name} = {format_level_budget(budget)}"


def _level_rows(release: HierarchyRelease, projection: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row per level: the level, its categories, its budget, the 95 % margin of one count (records),
    the middle category's count, the margin as a share of it, and the share of categories below the margin
    (the plan page's and ``dpgui hierarchy plan``'s figures, worded alike)."""
    names = ("all records", *release.hierarchy.level_names)
    rows: list[tuple[str, ...]] = []
    for entry in projection["levels"]:
        figures = LevelErrors.from_json(entry)
        level = figures.level
        median = "—" if figures.median_count is None else format_number(round(figures.median_count))
        rows.append((html_text(f"{level} · {names[level] if level < len(names) else level}"),
                     format_number(figures.categories), html_text(_budget_cell(release.plan, level)),
                     _unbroken(format_level_margin(figures.margin95, unit=False)), median,
                     _unbroken(format_relative_margin(figures.relative)), _unbroken(format_share_whole(figures.mostly_noise))))
    return rows


def _unbroken(text: str) -> str:
    """A figure with its unit kept on one line ("± 37.8 records")."""
    return f'<span style="white-space: nowrap">{html_text(text)}</span>'


def _warnings(release: HierarchyRelease, projection: dict[str, Any]) -> tuple[str, ...]:
    levels = [LevelErrors.from_json(entry) for entry in projection["levels"]]
    return mostly_noise_warnings(levels, release.hierarchy.level_names)


def _page1_html(release: HierarchyRelease, info: HierarchyReleaseInfo, projection: dict[str, Any],
                key_id: str | None) -> str:
    plan = release.plan
    privacy = plan.privacy
    hierarchy = release.hierarchy
    root = int(np.asarray(release.counts[0])[0])
    total = (f"{format_number(root)} (public, published exactly)" if privacy.root_public
             else f"{format_number(root)} (released with noise: N is private)")
    counts_source: dict[str, str] = {
        PriorSource.FILE: "a public prior file" + (f" ({html_text(info.prior_name)})" if info.prior_name else ""),
        PriorSource.CONFIDENTIAL: "the confidential data: the officer opted in, and this is recorded in the manifest",
        PriorSource.NONE: _no_counts_words(plan),
    }
    facts = [
        ("Data set", html_text(info.dataset)),
        ("Released", html_text(utc_text(info.created_utc)) + " (when the noise was drawn)"),
        ("Release id", html_text(info.release_id)),
        ("Signed by", f"key {html_text(key_id)}" if key_id else "not signed (the files' origin cannot be checked)"),
    ]
    if info.source is not None:  # where the data was read and who counted it
        facts.append(("Data source", html_text(source_text(info.source))))
    parameters = [
        ("Levels", " &gt; ".join(html_text(n) for n in hierarchy.level_names) + " ("
         + ", ".join(format_number(int(n)) for n in hierarchy.level_sizes[1:]) + " categories)"),
        ("Node list", "from a public prior file" if info.node_list_source == NODE_LIST_FROM_PRIOR else
         "from the data: the officer declared its categories public (e.g. an official list), and they are published"),
        ("Counts for the budgets", counts_source.get(plan.prior_source, html_text(plan.prior_source))),
        ("Noise", html_text(NOISE_WORDS.get(plan.noise, plan.noise)) + (
            "" if info.secure else " — seeded test generator, NOT secure")),
        ("Privacy budget", html_text(_privacy_text(plan))),
        ("Budgets per level", html_text(MULTIPLICATIVE_BUDGET) if plan.noise == Noise.MULTIPLICATIVE else
         html_text(ALLOCATION_WORDS.get(plan.allocation, f"{plan.allocation} allocation"))
         + (f" (target weighted MSE {format_significant(plan.target_mse, 3)})" if plan.target_mse else "")
         + "; weights " + ", ".join(format_significant(float(w), 3) for w in plan.weights)),
        ("Protection model", html_text(NEIGHBOURS_LABELS.get(privacy.neighbours, privacy.neighbours))
         + "; " + html_text(privacy_unit_words(unit_of_source(info.source), privacy.records_per_person))),
        ("Consistency", html_text(_consistency_words(plan))),
        ("Number of records N", total),
    ]
    out = ["<html>", HTML_STYLE, "<body>", seeded_noise_banner_html(info.secure), f"<h1>{html_text(PDF_TITLE)}</h1>",
           '<table width="100%" cellpadding="3" cellspacing="0">']
    out += [f'<tr><td width="22%" class="key">{k}</td><td>{v}</td></tr>' for k, v in facts]
    out.append("</table><h2>What was released</h2>")
    path = " &gt; ".join(html_text(n) for n in hierarchy.level_names)
    out.append(f"<p>The number of records in every category of the hierarchy {path}"
               f" ({format_number(hierarchy.n_nodes)} nodes, the root included), each with random noise added to "
               "protect the people in the data; the CSV file of this bundle lists every node with its 95 % "
               "interval. The parameters, all fixed before the noise was drawn:</p>")
    out.append(HTML_TABLE)
    out += html_rows(parameters, "26%")
    out.append("</table><h2>Projected error per level</h2>")
    out.append(f"<p>The {MARGIN_NAME} of one published count of each level, as planned before the noise was drawn: "
               "the count is within this many records of the true count in about 95 of 100 cases, counted over the "
               "level's categories (at least 95 for every category when the counts are only clamped at 0). Computed "
               f"at {html_text(projection.get('counts', 'the counts'))}; method: {html_text(projection.get('method', ''))}. "
               "The median count is the middle category's; the margin is also given as a share of it, and the last "
               "column gives the share of categories with fewer records than the margin: their published counts are "
               "mostly noise. Weighted mean squared error across levels (what the budget split minimises): "
               f"{format_significant(float(projection.get('weighted_mse', 0.0)), 4)} records².</p>")
    out.append('<table width="100%" cellpadding="4" cellspacing="0"><tr><th>Level</th>'
               '<th align="right">Categories</th><th align="right">Budget</th>'
               f'<th align="right">{MARGIN_NAME} (records)</th><th align="right">Median count</th>'
               '<th align="right">Margin ÷ count</th><th align="right">Below the margin</th></tr>')
    out += html_rows(_level_rows(release, projection), "", 1)
    out.append("</table>")
    for warning in _warnings(release, projection):
        out.append(f'<p class="banner">{html_text(warning)}</p>')
    out.append(f"<p>From page {TEXT_PAGES + 1} on, every released count with its 95 % interval; "
               f"{html_text(_interval_words(release))}.</p>")
    if info.notes:
        out.append("<h2>Notes</h2>" + "".join(f"<p>{html_text(note)}</p>" for note in info.notes))
    out.append("</body></html>")
    return "".join(out)


def _page2_html(release: HierarchyRelease, key_id: str | None) -> str:
    plan = release.plan
    privacy = plan.privacy
    meaning = html_text(_delta_words(plan)).replace("e^ε", "e<sup>ε</sup>")
    adding = ("Each release about the same people spends budget: dpgui's budget ledger adds them up"
              + (f" (this release counts as ρ = {format_significant(privacy.rho, 4)}, {CONVERSION_WORDS})"
                 if plan.noise == Noise.GAUSSIAN and privacy.rho is not None else "") + ".")
    signed = (f"It was signed with the key whose id is <b>{html_text(key_id)}</b>; the public key file (KEY.pub) you check "
              "it with must show the same id." if key_id else "<b>This release was not signed.</b>")
    out = ["<html>", HTML_STYLE, "<body>", "<h1>How to read this release</h1>"]
    out.append(
        "<p>Every count was made with <b>differential privacy</b>: whatever one person's records are (see the "
        "protection model), the probability of any published result changes by at most a factor of "
        f"e<sup>ε</sup> with ε = {format_epsilon(privacy.epsilon)}. Smaller ε means stronger protection and more "
        f"noise. {meaning} {adding}</p>")
    out.append("<h2>Every published count is noisy on purpose</h2>")
    if plan.multiplicative is not None:  # bucketed upper estimates, not noisy counts: its own words
        floor = format_number(math.floor(plan.multiplicative.bucket_zero))
        out.append(
            "<p>Each published count is one of a fixed ladder of values (the buckets of Ghazi et al. 2023, found with noisy "
            "comparisons), an upper estimate of the true count: a large count is within a factor "
            f"1 ± {format_significant(plan.multiplicative.alpha, 3)} of its true value, and every count below about "
            f"{format_number(math.ceil(plan.multiplicative.tau_min))} is published as {floor}, however small it is "
            "(even 0). The table on page 1 shows the error to expect on each level. In the CSV, "
            f"{html_text(_interval_words(release))} (on the mechanism's success event).</p>")
    else:
        out.append(
            "<p>Random whole numbers were added to the counts before publication, so a published count is close to, "
            "but usually not equal to, the true count. The budget was split between the levels of the hierarchy; the "
            "table on page 1 shows the error to expect on each level. A count is never negative: where the noise "
            "would make it negative it is 0, which biases small counts slightly upwards (the manifest gives the "
            "projected bias of each level). In the "
            f"CSV, {html_text(_interval_words(release))}.</p>")
    out.append("<h2>Parents and children</h2>")
    out.append(
        f"<p>{html_text(_consistency_words(plan))}. This uses the published numbers only, "
        "so it costs no privacy.</p>")
    out.append("<h2>The list of categories</h2>")
    out.append(
        "<p>Every category in the node list gets a count, zeros included, so the list itself is published. It came "
        "from a public file, or from the data when the officer declared its categories public (page 1 says "
        "which).</p>")
    out.append("<h2>Checking that the files are genuine</h2>")
    out.append(
        "<p>The bundle holds this PDF, the CSV file (one row per node: level, level name, path, released count, "
        "95 % interval), a manifest (NAME.manifest.json) with every parameter and the SHA-256 hash of each file, "
        f"and a signature of the manifest (NAME.manifest.json.minisig). {signed} To check the bundle, run</p>")
    out.append(f'<p class="command">{html_code(VERIFY_COMMAND)}</p>')
    out.append("<p>or, without dpgui, check the signature with</p>")
    out.append(f'<p class="command">{html_code(MINISIGN_COMMAND)}</p>')
    out.append("<p>and compare the SHA-256 hashes of the CSV and of this PDF with those in the manifest. If any check "
               "fails, the files were changed after they were signed and must not be trusted.</p></body></html>")
    return "".join(out)


def tree_order(hierarchy: Hierarchy, limit: int | None = None) -> list[tuple[int, int]]:
    """(level, index) of the root and every category, each followed by its children (depth first, children in
    the release's order), the first ``limit`` if given. O(nodes)."""
    ranges = [hierarchy.child_ranges(level) for level in range(hierarchy.n_levels)]
    out: list[tuple[int, int]] = []
    stack = [(0, 0)]
    while stack and (limit is None or len(out) < limit):
        level, node = stack.pop()
        out.append((level, node))
        if level < hierarchy.n_levels:
            start, end = ranges[level]
            stack.extend((level + 1, child) for child in range(int(end[node]) - 1, int(start[node]) - 1, -1))
    return out


# The table's columns: (header, share of the page width, right-aligned)
_COLUMNS = (("Category", 0.38, False), ("Level", 0.15, False), ("Released count", 0.16, True),
            ("95 % interval", 0.19, True), ("Mostly noise", 0.12, True))
_INDENT_MM = 3.5  # each level below the first is indented by this much
_NOISE_MARK = "●"
STRIPE = QColor("#F1F4F8")  # the HTML tables' stripe


def _table_intro(release: HierarchyRelease, shown: int) -> str:
    total = release.hierarchy.n_nodes
    first = "" if shown >= total else (f" The first {format_number(shown)} of {format_number(total)} categories are "
                                       "listed; the CSV file of this bundle holds every one.")
    return ("Each category is followed by its children, in the order of the release (the CSV file has the same "
            f"counts). {_NOISE_MARK} marks a count whose 95 % interval reaches 0: it is no larger than its margin, "
            f"the data may hold no records there, and the count is mostly noise.{first}")


class _TablePages:
    """The paginated table of every released count: rows per page, drawn with the painter row by row."""

    def __init__(self, c: Canvas, release: HierarchyRelease, secure: bool, bottom: float) -> None:
        self.c, self.release, self.secure = c, release, secure
        self.font, self.bold = c.font(TABLE_POINTS), c.font(TABLE_POINTS, bold=True)
        self.row_h = c.line_height(self.font) * 1.3
        self.rows = tree_order(release.hierarchy, MAX_TABLE_ROWS)
        self.intro = _table_intro(release, len(self.rows))
        self.banner_h = 0.0 if secure else test_banner_height(c)
        title_h = c.line_height(c.font(12.5, bold=True)) * 1.5
        intro_h = c.wrapped_height(c.font(9), c.width, self.intro) + 0.3 * self.row_h
        usable = bottom - self.banner_h - self.row_h  # the header row on every page
        self.first_rows = max(1, int((usable - title_h - intro_h) // self.row_h))
        self.later_rows = max(1, int((usable - title_h) // self.row_h))
        rest = max(0, len(self.rows) - self.first_rows)
        self.pages = 1 + -(-rest // self.later_rows)
        self.noise = [released_mostly_noise(release, level) for level in range(len(release.counts))]

    def draw(self, page: int) -> None:
        """Draw table page ``page`` (0-based)."""
        c = self.c
        y = 0.0
        if self.banner_h:
            draw_test_banner(c, self.banner_h)
            y = self.banner_h
        title = "Every released count" + (" (continued)" if page else "")
        y += c.wrapped(c.font(12.5, bold=True), QRectF(0, y, c.width, 1e6), title) * 1.5 / 1.25
        if page == 0:
            y += c.wrapped(c.font(9), QRectF(0, y, c.width, 1e6), self.intro) + 0.3 * self.row_h
            first, count = 0, self.first_rows
        else:
            first, count = self.first_rows + (page - 1) * self.later_rows, self.later_rows
        self._row(y, [h for h, _, _ in _COLUMNS], header=True)
        y += self.row_h
        for i, (level, node) in enumerate(self.rows[first: first + count]):
            if i % 2 == 0:
                c.p.fillRect(QRectF(0, y, c.width, self.row_h), STRIPE)
            self._row(y, self._cells(level, node), indent=max(level - 1, 0))
            y += self.row_h

    def _cells(self, level: int, node: int) -> list[str]:
        release = self.release
        hierarchy = release.hierarchy
        label = "All records" if level == 0 else hierarchy.labels[level - 1][node]
        name = "(total)" if level == 0 else hierarchy.level_names[level - 1]
        low, high = int(release.lower[level][node]), int(release.upper[level][node])
        mark = _NOISE_MARK if bool(self.noise[level][node]) and level > 0 else ""
        return [label, name, format_number(int(release.counts[level][node])),
                f"{format_number(low)} – {format_number(high)}", mark]

    def _row(self, y: float, cells: list[str], header: bool = False, indent: int = 0) -> None:
        c = self.c
        pad = 0.02 * RESOLUTION
        x = 0.0
        c.p.setFont(self.bold if header else self.font)
        for (_, share, right), text in zip(_COLUMNS, cells):
            width = share * c.width
            shift = indent * _INDENT_MM / 25.4 * RESOLUTION if x == 0.0 else 0.0
            rect = QRectF(x + pad + shift, y, width - 2 * pad - shift, self.row_h)
            c.p.setPen(GREY if header else (ALERT if text == _NOISE_MARK else INK))
            align = (Qt.AlignmentFlag.AlignRight if right else Qt.AlignmentFlag.AlignLeft) | Qt.AlignmentFlag.AlignVCenter
            c.p.drawText(rect, int(align), c.elide(self.bold if header else self.font, text, rect.width()))
            x += width
        if header:
            c.p.setPen(QPen(GRID, 0.004 * RESOLUTION))
            c.p.drawLine(QPointF(0, y + self.row_h), QPointF(c.width, y + self.row_h))


def render_hierarchy_pdf(release: HierarchyRelease, info: HierarchyReleaseInfo, projection: dict[str, Any],
                         key_id: str | None) -> bytes:
    """The hierarchy release as an A4 PDF (bytes) of :func:`hierarchy_drawing`. No QApplication needed."""
    return hierarchy_drawing(release, info, projection, key_id).write()


def hierarchy_drawing(release: HierarchyRelease, info: HierarchyReleaseInfo, projection: dict[str, Any],
                      key_id: str | None) -> PdfDrawing:
    """The hierarchy release's A4 pages: two pages of text, then the table of every released count. Public
    values only.

    ``projection``: :func:`dpgui.report.hierarchy.bundle.errors_json` of the plan's stated errors
    (:func:`dpgui.core.hierarchy_errors.plan_errors`: at a public prior's counts, the plan's assumed
    records, or the noise alone); ``key_id``: the signer's key id (None: not signed). O(nodes).
    """
    pages = (_page1_html(release, info, projection, key_id), _page2_html(release, key_id))

    def draw_pages(c: Canvas, writer: QPdfWriter, footer: Footer) -> None:
        table = _TablePages(c, release, info.secure, footer_top(c))
        total = TEXT_PAGES + table.pages
        for page, source in enumerate(pages, start=1):
            if page > 1:
                writer.newPage()
            bottom = footer(c, page, total)
            draw_html(c, writer, 0.0, bottom, source)
        for page in range(table.pages):
            writer.newPage()
            footer(c, TEXT_PAGES + 1 + page, total)
            table.draw(page)

    return PdfDrawing(PDF_TITLE, release_footer(info.release_id, info.dataset), draw_pages)


def hierarchy_section(release: Any, info: Any, key_id: str | None, extra: dict[str, Any] | None) -> PdfDrawing:
    """The report as :data:`dpgui.pdf.sections.SECTIONS` draws it (its signature is :data:`~dpgui.pdf.sections.PdfSection`)."""
    if extra is None:  # a bug: the report states the plan's errors, as the manifest's projection does
        raise TypeError("a hierarchy report needs the plan's stated errors (errors_json)")
    return hierarchy_drawing(release, info, extra, key_id)
