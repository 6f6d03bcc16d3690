"""The PDF of a release plan (several statistics of one table under one budget,
:mod:`dpgui.workspace.release_plan`): one A4 PDF whose first page sums the plan up for a reader who is not a
programmer — what was released and from which source, the whole budget and what the ledger was charged, the
privacy unit, why the budget was split as it was (the split's weighted 95 % margin beside the equal split's),
and a table of the parts with their shares and margins —, then each part's own pages as its kind's report
draws them (:data:`dpgui.pdf.sections.SECTIONS`), each page's footer naming the plan and the part.

:func:`plan_report_pdf` is what the front ends call with the released plan, before
:func:`~dpgui.workspace.release_plan.sign_plan` (which takes the PDF's bytes); :func:`plan_pdf` draws it
from the parts' public values (:class:`PlanReportPart`). Public values only: the plan's summary, each part's
released values and public parameters. A hierarchy part states its plan's errors at the plan's assumed
records, or the noise's alone (:func:`~dpgui.core.hierarchy_errors.plan_errors` without a prior), never at
the confidential counts. Any thread that may paint (as :func:`dpgui.pdf.sections.report_pdf`); no
QApplication needed. Cost: the parts' reports, plus O(parts) for the summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtGui import QPdfWriter

from dpgui import __version__
from dpgui.core.plan_split import SplitChoice
from dpgui.formatting import (
    format_delta, format_epsilon, format_figure, format_margin, format_number, format_share_whole,
)
from dpgui.pdf.markup import (
    CONVERSION_WORDS, HTML_STYLE, HTML_TABLE, VERIFY_COMMAND, html_code, html_rows, html_text, seeded_noise_banner_html, utc_text,
)
from dpgui.pdf.page import (
    RESOLUTION, Canvas, Footer, draw_footer_line, draw_html, draw_test_banner, test_banner_height, write_pdf,
)
from dpgui.pdf.sections import SECTIONS
from dpgui.report.bundle import source_text
from dpgui.report.plan.bundle import PlanSummary, part_csv_name
from dpgui.vocabulary import Charge, StatisticKind
from dpgui.workspace.release_plan import ReleasedPlan
from dpgui.workspace.statistics import STATISTICS

__all__ = ["PDF_TITLE", "PlanReportPart", "plan_pdf", "plan_report_parts", "plan_report_pdf"]

PDF_TITLE = "Differentially private release plan"
_BAR = "#4A78A8"  # the shares' bars
_BAR_BACK = "#E3E9F0"


@dataclass(frozen=True, eq=False)  # a release holds numpy arrays
class PlanReportPart:
    """One part of a plan as its PDF states it, all public: its statistic's ``kind``, ``title`` ("CDF of
    distance"), ``weight``, its share of the budget (``charge``: what its own statistic is charged), its
    projected 95 % margin (``margin95``, records), the released values and their info (``release``,
    ``info``), and ``extra``, the kind's own section as :data:`~dpgui.pdf.sections.PdfSection` takes it (a
    hierarchy's stated errors, :func:`~dpgui.report.hierarchy.bundle.errors_json`; None for the others)."""

    kind: StatisticKind
    title: str
    weight: float
    charge: Charge
    margin95: float
    release: Any
    info: Any
    extra: dict[str, Any] | None = None


def plan_report_parts(plan: ReleasedPlan) -> tuple[PlanReportPart, ...]:
    """The parts of a released plan as its PDF states them, in the plan's order, each with its own manifest
    section (:meth:`~dpgui.workspace.release_plan.PlanItem.extra`: a hierarchy's stated errors), as its manifest
    states it."""
    return tuple(PlanReportPart(part.item.part.statistic.kind, part.item.title, part.item.part.weight,
                                part.planned.charge, part.planned.margin95, part.release, part.info,
                                part.item.extra(part.release)) for part in plan.parts)


def plan_report_pdf(plan: ReleasedPlan, summary: PlanSummary, key_id: str | None, name: str | None = None) -> bytes:
    """The plan's PDF (bytes) for its bundle: :func:`plan_pdf` of ``plan``'s parts. ``summary``:
    :func:`~dpgui.workspace.release_plan.plan_summary` of ``plan``; ``key_id``: the signer's key id (None:
    not signed); ``name``: the bundle's name (its parts' CSV files are named after it), None if not known."""
    return plan_pdf(summary, plan_report_parts(plan), key_id, name)


def plan_pdf(summary: PlanSummary, parts: Sequence[PlanReportPart], key_id: str | None,
             name: str | None = None) -> bytes:
    """The plan as one A4 PDF (bytes): the summary page, then each part's pages drawn by its kind's report
    (:data:`~dpgui.pdf.sections.SECTIONS`), every footer naming the plan's release id, the part and the
    page ("Part 2 of 3 · page 1 of 2"). The summary page of a plan with test noise has the red test strip;
    each part's pages say it as its own report does. ``name``: the bundle's name (the table then names each
    part's CSV file, ``NAME.partI.csv``). No QApplication needed."""
    if not parts:
        raise ValueError("a release plan has at least one part")  # a bug: release_plan refuses an empty plan
    drawings = [SECTIONS[part.kind](part.release, part.info, key_id, part.extra) for part in parts]
    summary_html = _summary_html(summary, parts, key_id, name)
    left = f"Release plan {summary.release_id} · {summary.dataset} · made with dpgui {__version__}"

    def draw_pages(c: Canvas, writer: QPdfWriter) -> None:
        top = 0.0
        if not summary.secure:
            height = test_banner_height(c)
            draw_test_banner(c, height)
            top = height + 0.08 * RESOLUTION
        bottom = draw_footer_line(c, left, "Summary of the plan")
        draw_html(c, writer, top, bottom, summary_html)
        for number, drawing in enumerate(drawings, start=1):
            writer.newPage()
            drawing.draw_pages(c, writer, _part_footer(left, number, len(drawings)))

    return write_pdf(f"{PDF_TITLE} {summary.release_id}", draw_pages)


def _part_footer(left: str, part: int, parts: int) -> Footer:
    """The footer of part ``part`` (1-based) of ``parts``: the plan on the left, the part and page on the right."""

    def footer(c: Canvas, page: int, page_count: int) -> float:
        return draw_footer_line(c, left, f"Part {part} of {parts} · page {page} of {page_count}")

    return footer


def _budget_share(charge: Charge, whole: Charge) -> float:
    """A part's share of the plan's budget in [0, 1], in the unit the parts' budgets add up in: ρ when the plan
    spends δ (Gaussian parts, zCDP composition), else ε (Laplace parts, basic composition)."""
    if _gaussian(whole):
        assert whole.rho is not None and charge.rho is not None, "a Gaussian part is charged its ρ"
        return charge.rho / whole.rho
    return charge.epsilon / whole.epsilon


def _charge_words(charge: Charge) -> str:
    """ε, and δ and ρ where the charge spends δ: "ε = 0.4" or "ε = 0.4, δ = 1e-6, ρ = 0.0123"."""
    words = f"ε = {format_figure(charge.epsilon)}"
    if charge.delta > 0:
        words += f", δ = {format_delta(charge.delta)}"
        if charge.rho is not None:
            words += f", ρ = {format_figure(charge.rho)}"
    return words


def _gaussian(whole: Charge) -> bool:
    """Whether the plan's parts have Gaussian noise (their ρ add up), not Laplace (their ε add up): only
    Gaussian parts spend δ, and a plan never mixes the two (:mod:`dpgui.core.plan_split`)."""
    return whole.delta > 0 and whole.rho is not None


def _composition_words(summary: PlanSummary) -> str:
    """How the parts' shares make the plan's charge, in words."""
    if _gaussian(summary.charge):
        return ("Every statistic has Gaussian noise: their shares of ρ (zero-concentrated differential privacy) add "
                f"up to the plan's ρ, {CONVERSION_WORDS}, as the ledger does.")
    unused = (f" The δ = {format_delta(summary.delta)} allowed was not used: Laplace noise needs none."
              if summary.delta > 0 else "")
    return f"Every statistic has Laplace noise: their shares of ε add up to the plan's ε.{unused}"


def _split_words(summary: PlanSummary) -> str:
    """Why the budget was split as it was, with the two weighted margins (records)."""
    used, equal = f"{summary.weighted_margin:,.1f}", f"{summary.equal_weighted_margin:,.1f}"
    measure = ("The plan's error is measured as the sum over its statistics of weight × 95 % margin (in records): "
               "the weights say how much each statistic's error matters.")
    if SplitChoice(summary.split) is SplitChoice.OPTIMISED:
        return (f"{measure} The budget was divided to make that sum small: {used} records, against {equal} records "
                "had every statistic been given an equal share (shares the officer fixed kept as they were). A "
                "statistic whose error weighs more, or needs more budget for the same margin, gets a larger share.")
    return (f"{measure} Every statistic was given an equal share of the budget (shares the officer fixed kept as "
            f"they were): {used} records. Dividing it otherwise did not make the sum smaller.")


def _share_words(charge: Charge, whole: Charge) -> str:
    """A part's charge and its share of the plan's (HTML): "ε = 0.3 (30 %)", or for Gaussian noise
    "ε = 0.5, δ = 1e-6,<br/>ρ = 0.01 (25 %)", its share being of ρ."""
    share = f"({format_share_whole(_budget_share(charge, whole))})"
    if not _gaussian(whole):
        return html_text(f"ε = {format_figure(charge.epsilon)} {share}")
    assert charge.rho is not None, "a Gaussian part is charged its ρ"
    return (html_text(f"ε = {format_figure(charge.epsilon)}, δ = {format_delta(charge.delta)},") + "<br/>"
            + html_text(f"ρ = {format_figure(charge.rho)} {share}"))


def _share_bar(share: float) -> str:
    """A bar as long as ``share`` (in [0, 1]) of its cell, on a pale background."""
    cells = f'<td width="{max(1, round(100 * share))}%" bgcolor="{_BAR}">&nbsp;</td>'
    if share < 0.995:
        cells += f'<td bgcolor="{_BAR_BACK}">&nbsp;</td>'
    return f'<table width="100%" cellpadding="0" cellspacing="0"><tr>{cells}</tr></table>'


def _part_rows(summary: PlanSummary, parts: Sequence[PlanReportPart], name: str | None) -> list[tuple[str, ...]]:
    """The parts' table: number, statistic (its kind in words and its CSV file below), weight, share, margin."""
    rows: list[tuple[str, ...]] = []
    for i, part in enumerate(parts):
        share = _budget_share(part.charge, summary.charge)
        below = html_text(STATISTICS[part.kind].title)
        below += f"<br/>file {html_code(part_csv_name(name, i))}" if name is not None else ""
        rows.append((str(i + 1), f"{html_text(part.title)}<br/><small>{below}</small>", format_number(part.weight),
                     f"{_share_words(part.charge, summary.charge)}{_share_bar(share)}",
                     html_text(format_margin(part.margin95))))
    return rows


def _summary_html(summary: PlanSummary, parts: Sequence[PlanReportPart], key_id: str | None, name: str | None) -> str:
    signer = (f"key {html_text(key_id)}" if key_id
              else "not signed (no signature: the files' origin cannot be checked)")
    facts = [("Data set", html_text(summary.dataset)),
             ("Released", html_text(utc_text(summary.created_utc)) + " (when the noise was drawn)"),
             ("Release plan id", html_text(summary.release_id)),
             ("Signed by", signer)]
    if summary.source is not None:
        facts.append(("Data source", html_text(source_text(summary.source))))
    delta = f", δ = {format_delta(summary.delta)}" if summary.delta > 0 else " (δ = 0)"
    headings = [("Part", 6), ("Statistic", 37), ("Weight", 10), ("Share of the budget", 29),
                ("95 % margin (records)", 18)]
    files = (f"Each part's released values are in its own CSV file ({html_code(part_csv_name(name, 0))}, …) and "
             f"the table below in {html_code(name + '.csv')}." if name is not None
             else "Each part's released values are in its own CSV file of the bundle.")
    verify = VERIFY_COMMAND if name is None else VERIFY_COMMAND.replace("NAME", name)
    out = ["<html>", HTML_STYLE, "<body>", seeded_noise_banner_html(summary.secure),
           f"<h1>Release plan: {len(parts)} statistic{'s' if len(parts) > 1 else ''} of {html_text(summary.dataset)}"
           "</h1>", '<table width="100%" cellpadding="3" cellspacing="0">',
           *[f'<tr><td width="22%" class="key">{k}</td><td>{v}</td></tr>' for k, v in facts], "</table>",
           "<h2>What was released</h2>",
           f"<p>{len(parts)} statistics of one table, released together under one privacy budget, each with random "
           f"noise added to protect the people in the data. {files} The pages after this one are each part's own "
           "report.</p>",
           "<h2>Privacy</h2>",
           f"<p>The whole plan's budget: ε = {html_text(format_epsilon(summary.epsilon))}{html_text(delta)}. The budget "
           f"ledger was charged <b>{html_text(_charge_words(summary.charge))}</b> once for the whole plan. "
           f"{html_text(_composition_words(summary))}</p>",
           f"<p>Who is protected: {html_text(summary.privacy_unit)}</p>",
           "<h2>Why this split</h2>", f"<p>{html_text(_split_words(summary))}</p>",
           "<h2>The parts</h2>",
           "<p>A published value lies within its 95 % margin of the true value in about 95 of 100 releases. "
           f"{'Each share is of ρ (Gaussian noise).' if _gaussian(summary.charge) else ''}</p>",
           HTML_TABLE, "<tr>", *[f'<th width="{w}%">{h}</th>' for h, w in headings], "</tr>",
           *html_rows(_part_rows(summary, parts, name), "7%"), "</table>",
           f"<p>Check the bundle with {html_code(verify)}.</p>", "</body></html>"]
    return "".join(out)
