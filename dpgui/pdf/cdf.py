"""The human-readable PDF of a release, drawn with Qt's own PDF writer (no widgets, no screenshots).

Three A4 pages: (1) what was released and with which parameters, with a small quantile table;
(2) the released CDF with its 95 % band and the released records per bin (the charts are drawn by
:mod:`dpgui.pdf.cdf_charts`; this module lays out the page and writes the captions);
(3) "How to read this release" in plain language, with the verification commands.

Only public values are drawn: the fields of :class:`~dpgui.core.mechanism.Release` (released
cumulative counts, N as published or released, standard errors that depend only on the plan, the
plan itself) and the public labels of :class:`~dpgui.report.bundle.ReleaseInfo`. The confidential histogram is never
accepted here. :func:`render_release_pdf` returns the PDF's bytes and works headless (the CLI
calls it): :func:`ensure_gui_application` starts an offscreen QGuiApplication when needed.
"""

from __future__ import annotations

import html
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Protocol
from datetime import datetime, timezone

import numpy as np
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor, QGuiApplication, QPageLayout, QPageSize, QPainter, QPdfWriter, QPen, QTextDocument,
    QTextOption,
)

from dpgui import __version__
from dpgui.pdf.cdf_charts import ALERT, GREY, GRID, INK, RESOLUTION, Canvas, plot_bars, plot_cdf, release_bars
from dpgui.workspace.words import CONSISTENCY_LABELS, ESTIMATOR_LABELS, NEIGHBOURS_LABELS
from dpgui.core.mechanism import Release
from dpgui.core.plan import PrivacySpec
from dpgui.core.missing import MISSING_IMPUTE
from dpgui.core.margins import MARGIN_NAME, CdfMargins, cdf_margins
from dpgui.core.quantiles import WholeNumbers, missing_interval95, noise_margin, quantiles, whole_number_step
from dpgui.formatting import (
    cdf_margin_words, format_delta, format_epsilon, format_fixed, format_level_budget, format_margin_records,
    format_number, format_odds, format_percent, format_significant, value_decimals,
)
from dpgui.report.bundle import ReleaseInfo, focus_json, source_text

__all__ = [
    "render_release_pdf", "ensure_gui_application", "PAGE_COUNT", "TEST_BANNER",
    # shared with the hierarchy report (dpgui.pdf.hierarchy)
    "HTML_STYLE", "HTML_TABLE", "NoisedPlan", "delta_meaning", "draw_footer", "draw_html", "html_code", "html_rows",
    "html_text", "privacy_budget_text", "seeded_noise_banner_html", "utc_text", "write_pdf",
]

PAGE_COUNT = 3
MARGIN_MM = 16.0
QUANTILE_PROBABILITIES = (0.1, 0.25, 0.5, 0.75, 0.9)
QUANTILE_NAMES = {0.25: "lower quartile", 0.5: "median", 0.75: "upper quartile"}

PDF_TITLE = "Differentially private release"
PDF_CREATOR = f"dpgui {__version__}"
TEST_BANNER = "TEST RELEASE — NOT FOR PUBLICATION"
TEST_BANNER_DETAIL = (
    "The noise of this release came from a reproducible test generator, not from a secure random source, "
    "so the confidential numbers could be reconstructed from it. Do not publish or share it."
)
NOISE_SECURE = "Exact discrete Laplace noise (whole numbers) from the operating system's secure random source"
NOISE_SECURE_GAUSSIAN = "Exact discrete Gaussian noise (whole numbers) from the operating system's secure random source"
NOISE_TEST = "Seeded test generator: NOT secure, for testing only"
CONVERSION_WORDS = "converted to ε and δ with the bound of Canonne, Kamath and Steinke (2020)"
VERIFY_COMMAND = "dpgui verify NAME.manifest.json --pubkey KEY.pub"
MINISIGN_COMMAND = "minisign -Vm NAME.manifest.json -p KEY.pub"
CONSISTENCY_WORDS = {"l2": "a least-squares fit", "l1": "a least-absolute-deviation fit"}
def missing_text(release: Release, rule: str) -> str:
    """What happened to missing values, in words (docs/design.md "Missing values"), with the released
    missing count and its 95 % margin under the bucket rule."""
    if rule == "bucket" and release.missing is not None:
        interval = missing_interval95(release)
        assert interval is not None, "a release with a missing count has the missing values' leaf"
        low, high = interval
        return (f"Counted in a noised 'missing' bucket; N = all rows. Released number of missing values: "
                f"{format_number(round(release.missing))} (the true number lies between {format_number(math.floor(low))} "
                f"and {format_number(math.ceil(high))} with at least 95 % probability). The CDF and the "
                "quantiles are those of the values (out of the released number of values, N minus the missing "
                "count).")
    if rule == MISSING_IMPUTE and release.plan.privacy.impute is not None:
        return (f"Counted as the value {format_number(release.plan.privacy.impute)}, chosen before the release "
                "(imputed; a value outside the bounds is counted in the first or last bin like any other); N = all "
                "rows. The number of missing values is not published on its own.")
    if rule == "drop" and not release.plan.privacy.root_public:
        return ("Dropped (a neighbour under add/remove: a value turning into a missing one is the removal of "
                "one record); N is the released, noisy number of values.")
    if rule == "drop":
        return "Rows without a value were left out before counting (a release of an older version of dpgui)."
    if rule == "error":
        return "The release would have stopped at a missing value (a retired policy of an older version of dpgui)."
    return f"Rule {rule!r}"

# ----------------------------------------------------------------------------------------------
# the application Qt needs for fonts and painting

_APP: QGuiApplication | None = None  # keeps a QGuiApplication we created alive


def ensure_gui_application() -> QGuiApplication:
    """The running QGuiApplication (a QApplication is one), or a new bare QGuiApplication.

    Fonts and the PDF writer need a QGuiApplication, not the widgets. With no display (no DISPLAY or
    WAYLAND_DISPLAY on Linux and other X11/Wayland systems) and no QT_QPA_PLATFORM chosen, Qt's
    "offscreen" platform is used, so the CLI renders on a headless server. Windows and macOS always
    have their own platform and are left alone.

    A process holds one application: one that shows widgets (the window, the self-test, the test
    suite) makes its QApplication before its first PDF, since widgets cannot run under the bare
    QGuiApplication made here. Call it from the main thread when no application exists yet.
    """
    global _APP
    app = QGuiApplication.instance()
    if app is not None:
        if not isinstance(app, QGuiApplication):
            raise RuntimeError("a QCoreApplication is running; drawing a PDF needs a QGuiApplication")
        return app
    if (sys.platform not in ("win32", "darwin") and not os.environ.get("QT_QPA_PLATFORM")
            and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    _APP = QGuiApplication([sys.argv[0] if sys.argv and sys.argv[0] else "dpgui"])
    return _APP


# ----------------------------------------------------------------------------------------------
# numbers in words

def utc_text(moment: datetime) -> str:
    """``moment`` in UTC, e.g. "2026-11-25 10:42:01 UTC" (a naive time is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def html_text(text: object) -> str:
    """``text`` escaped for the PDF's HTML."""
    return html.escape(str(text))


def _margins(release: Release) -> np.ndarray:
    """Half-width of the 95 % band (noise_margin of the standard error) of every cumulative count, records."""
    return noise_margin(release.std_error)


def stated_margins(release: Release) -> CdfMargins:
    """The 95 % margins the PDF states: the plan's (:func:`~dpgui.core.margins.cdf_margins`, the figures
    the plan page and ``dpgui plan`` stated). A release restored from a project saved before padding
    leaves were known to be zero has larger standard errors than its plan: its own are used then (the
    worst, and the root-mean-square of the noised points)."""
    if release.padding_known:
        return cdf_margins(release.plan)
    se = np.asarray(release.std_error, dtype=float)
    noised = se[se > 0]
    if noised.size == 0:
        return CdfMargins(0.0, 0.0)
    return CdfMargins(float(noise_margin(noised.max())), float(noise_margin(math.sqrt(float(np.mean(noised ** 2))))))


# ----------------------------------------------------------------------------------------------
# page 1: what was released

def _level_budgets(release: Release) -> str:
    """Each noised level's budget: ε_l (Laplace) or ρ_l with the noise's standard deviation σ_l (Gaussian)."""
    plan = release.plan
    first = plan.privacy.first_noised_level()
    nodes = 1
    counts = [1]
    for b in plan.shape.branching:
        nodes *= b
        counts.append(nodes)
    parts = []
    for offset, budget in enumerate(plan.level_budgets):
        level = first + offset
        where = "the total" if level == 0 else f"{counts[level]:,} node{'s' if counts[level] != 1 else ''}"
        value = f"{plan.budget_name} = {format_level_budget(budget)}" if budget > 0 else "0 (not released)"
        scale = plan.scales[level]
        if plan.noise == "gaussian" and scale is not None:
            value += f", σ = {format_significant(math.sqrt(float(scale)))}"
        parts.append(f"level {level} ({where}): {value}")
    return "; ".join(parts)


class NoisedPlan(Protocol):
    """What the privacy wording reads of a plan: its noise ("laplace", "gaussian", …) and its
    :class:`~dpgui.core.plan.PrivacySpec` (a CDF :class:`~dpgui.core.plan.Plan` or a
    :class:`~dpgui.core.hierarchy.HierarchyPlan` with Laplace or Gaussian noise)."""

    @property
    def noise(self) -> str: ...

    @property
    def privacy(self) -> PrivacySpec: ...


def privacy_budget_text(plan: NoisedPlan) -> str:
    """The "Privacy budget" row: ε and δ, and in plain words what δ means for this release."""
    privacy = plan.privacy
    eps = format_epsilon(privacy.epsilon)
    if plan.noise == "gaussian":
        rho = privacy.rho
        assert rho is not None, "a Gaussian plan has δ > 0"
        return (f"ε = {eps} and δ = {format_delta(privacy.delta)} (δ: a chance of at most "
                f"{format_odds(privacy.delta)} beyond the ε guarantee); counted as zero-concentrated differential "
                f"privacy with ρ = {format_significant(rho, 4)}, {CONVERSION_WORDS}")
    text = f"ε = {eps} and δ = 0 (pure ε-differential privacy)"
    if privacy.delta > 0:
        text += f"; the δ = {format_delta(privacy.delta)} allowed in the plan was not used (Laplace noise needs none)"
    return text


def delta_meaning(plan: NoisedPlan) -> str:
    """What δ means for this release, in plain words (one or two sentences, plain text)."""
    privacy = plan.privacy
    if plan.noise == "gaussian":
        delta = format_delta(privacy.delta)
        return (f"δ = {delta}: beyond the factor e^ε, the probability of any published result may differ by at "
                f"most {delta} (a chance of at most {format_odds(privacy.delta)}) between two tables that differ in "
                f"one person's records. So the guarantee of ε = {format_epsilon(privacy.epsilon)} holds except for "
                "that tiny extra chance, which is what allows the Gaussian noise used here.")
    words = ("δ = 0 here: the guarantee holds always, with no small chance of failure (\"pure\" differential "
             "privacy).")
    if privacy.delta > 0:
        words += (f" A δ of {format_delta(privacy.delta)} was allowed in the plan but not used: the Laplace noise of "
                  "this release needs none, and none was spent.")
    return words


def _parameter_rows(release: Release, details: ReleaseInfo) -> list[tuple[str, str]]:
    plan = release.plan
    privacy = plan.privacy
    k = plan.shape.bins
    width = (release.upper - release.lower) / k
    n = release.total
    if privacy.root_public:
        n_text = (f"{format_number(n)} (all rows, missing values included; published exactly)"
                  if plan.shape.missing_leaf or privacy.impute is not None else f"{format_number(n)} (published exactly)")
    else:
        n_text = f"{format_number(n)} (estimated from the noisy counts; the true N is not published)"
    spent = float(plan.epsilon_spent())
    eps_text = privacy_budget_text(plan)
    if abs(spent - privacy.epsilon) > 1e-9 * privacy.epsilon:
        eps_text += f"; the noise scales were rounded up, so slightly less is spent: ε = {format_epsilon(spent)}"
    branching = " × ".join(str(b) for b in plan.shape.branching)
    padded = plan.shape.padded_bins
    tree = f"{branching} ({plan.shape.height} level{'s' if plan.shape.height != 1 else ''} below the total"
    leaves = plan.shape.leaves
    if plan.shape.missing_leaf:
        tree += f"; {padded:,} leaves: the K bins, then one that counts missing values"
        tree += f", then {padded - leaves:,} of empty padding)" if padded > leaves else ")"
    else:
        tree += f"; {padded:,} leaves, the last {padded - k:,} are empty padding)" if padded > k else ")"
    rpp = privacy.records_per_person
    rpp_text = ("1 (each person has at most one row)" if rpp == 1
                else f"{rpp} (each person has at most {rpp} rows; all of them are protected together)")
    margins = stated_margins(release)
    accuracy = (f"{MARGIN_NAME} of the cumulative counts (the half-width of their 95 % band): "
                f"{cdf_margin_words(margins.worst, margins.average, round(n) if n > 0 else None)}")
    missing = missing_text(release, details.missing)
    focus = focus_json(plan, release.lower, release.upper)
    region = [] if focus is None else [(
        "Region the plan was made for",
        html_text(f"the CDF points (bin edges) from {format_number(focus['from'])} to {format_number(focus['to'])}: "
                  "the tree and the budget per level were chosen to make the counts there more accurate, at the price "
                  "of the rest of the range (the same ε is spent)"))]
    return [
        ("Column", html_text(details.column)),
        ("Bounds", f"from {html_text(format_number(release.lower))} to {html_text(format_number(release.upper))} (chosen from "
                   "public knowledge; values outside are counted in the first or last bin)"),
        ("Bins", f"K = {k:,} equal bins, each {html_text(format_number(width))} wide"),
        ("Number of records N", html_text(n_text)),
        ("Privacy budget", html_text(eps_text)),
        ("Protection model", html_text(NEIGHBOURS_LABELS.get(privacy.neighbours, privacy.neighbours))),
        ("Records per person", html_text(rpp_text)),
        ("Tree of counts (branching)", html_text(tree)),
        ("Budget per level", html_text(_level_budgets(release))),
        *region,
        ("Estimator", html_text(ESTIMATOR_LABELS.get(plan.estimator, plan.estimator))),
        ("Consistency", html_text(CONSISTENCY_LABELS.get(release.consistency, release.consistency))),
        ("Noise", html_text((NOISE_SECURE_GAUSSIAN if plan.noise == "gaussian" else NOISE_SECURE) if release.secure
                     else NOISE_TEST + (" (Gaussian)" if plan.noise == "gaussian" else " (Laplace)"))),
        ("Missing values", html_text(missing)),
        ("Expected accuracy", html_text(accuracy)),
    ]


def _quantile_rows(release: Release, whole_numbers: bool = False) -> list[tuple[str, str, str]]:
    """Quantile, value, 95 % interval: to the precision of a bin, or one decimal finer when an
    interval would otherwise read "32 to 32" (the interval lies within one bin)."""
    base = value_decimals((release.upper - release.lower) / release.plan.shape.bins)
    found = quantiles(release, QUANTILE_PROBABILITIES, whole_numbers)
    if found and found[0].whole:
        base = 0
    collapsed = any(format_fixed(q.low, base) == format_fixed(q.high, base) for q in found if q.low < q.high)
    decimals = base + 1 if collapsed else base
    rows = []
    for q in found:
        name = QUANTILE_NAMES.get(round(q.probability, 6))
        label = format_percent(q.probability) + (f" ({name})" if name else "")
        interval = f"{format_fixed(q.low, decimals)} to {format_fixed(q.high, decimals)}"
        rows.append((label, format_fixed(q.value, decimals), interval))
    return rows


HTML_STYLE = """
<head><style>
h1 { font-size: 17pt; font-weight: bold; margin-bottom: 6px; }
h2 { font-size: 12.5pt; font-weight: bold; margin-top: 12px; margin-bottom: 4px; }
p { margin-top: 0px; margin-bottom: 6px; }
td, th { vertical-align: top; }
th { text-align: left; background-color: #E8EEF4; }
.key { color: #444444; }
.banner { color: #B00020; font-weight: bold; }
code { font-family: monospace; }
.command { font-family: monospace; margin-left: 24px; }
</style></head>
"""
HTML_TABLE = '<table width="100%" cellpadding="4" cellspacing="0">'
_STRIPE = "#F1F4F8"


def html_rows(rows: Sequence[tuple[str, ...]], first_width: str, align_right_from: int = 99) -> list[str]:
    """Table rows with alternating backgrounds (easier to follow across a wide table than lines)."""
    out = []
    for i, row in enumerate(rows):
        bg = f' bgcolor="{_STRIPE}"' if i % 2 == 0 else ""
        cells = []
        for j, cell in enumerate(row):
            width = f' width="{first_width}"' if j == 0 and first_width else ""
            align = ' align="right"' if j >= align_right_from else ""
            cls = ' class="key"' if j == 0 else ""
            cells.append(f"<td{width}{align}{cls}>{cell}</td>")
        out.append(f"<tr{bg}>{''.join(cells)}</tr>")
    return out


def html_code(text: str) -> str:
    """A command kept on one line (spaces do not break)."""
    return "<code>" + html_text(text).replace(" ", "&nbsp;") + "</code>"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def seeded_noise_banner_html(secure: bool) -> str:
    """The red "test noise" box at the top of page 1 of a release drawn with test noise ("" if ``secure``)."""
    if secure:
        return ""
    return (f'<table width="100%" cellpadding="6" cellspacing="0" bgcolor="#FDECEE">'
            f'<tr><td><p class="banner" style="font-size: 13pt;">{html_text(TEST_BANNER)}</p>'
            f'<p>{html_text(TEST_BANNER_DETAIL)}</p></td></tr></table>')


def _page1_html(release: Release, details: ReleaseInfo, key_id: str | None) -> str:
    signer = (f"key {html_text(key_id)}" if key_id
              else "not signed (no signature: the files' origin cannot be checked)")
    facts = [
        ("Data set", html_text(details.dataset)),
        ("Released", html_text(utc_text(details.created_utc)) + " (when the noise was drawn)"),
        ("Release id", html_text(details.release_id)),
        ("Signed by", signer),
    ]
    if details.source is not None:  # where the data was read and who counted it (manifest schema version 4)
        facts.append(("Data source", html_text(source_text(details.source))))
    out = ["<html>", HTML_STYLE, "<body>", seeded_noise_banner_html(release.secure),
           f"<h1>Differentially private release: cumulative distribution of {html_text(details.column)}</h1>",
           '<table width="100%" cellpadding="3" cellspacing="0">']
    out += [f'<tr><td width="22%" class="key">{k}</td><td>{v}</td></tr>' for k, v in facts]
    out.append("</table>")
    out.append("<h2>What was released</h2>")
    out.append(f"<p>For each of the K = {release.plan.shape.bins:,} bins of <b>{html_text(details.column)}</b>: how many "
               "records have a value at or below the bin's upper edge (the cumulative counts of the CSV file of "
               "this bundle), each with random noise added to protect the people in the data. The parameters, "
               "all fixed before the data were read:</p>")
    out.append(HTML_TABLE)
    out += html_rows(_parameter_rows(release, details), "26%")
    out.append("</table>")
    out.append("<h2>Released quantiles</h2>")
    width = (release.upper - release.lower) / release.plan.shape.bins
    rows = _quantile_rows(release, details.whole_numbers is not None)
    whole = details.whole_numbers is not None and whole_number_step(release.lower, release.upper,
                                                                    release.plan.shape.bins) is not None
    if whole:
        assert details.whole_numbers is not None
        out.append(f"<p>Values of {html_text(details.column)} at or below which the given share of the records lies, read "
                   f"from the released CDF (this costs no extra privacy). The values are whole numbers "
                   f"({html_text(WholeNumbers(details.whole_numbers).description)}) and each bin is centred on whole "
                   "numbers, so the estimate is the whole number where the released CDF reaches the share. With at "
                   "least 95 % confidence the true quantile of the data lies in the interval, both ends included "
                   "(values outside the bounds count as the nearest bound).</p>")
    else:
        out.append(f"<p>Values of {html_text(details.column)} below which the given share of the records lies, read "
                   "from the released CDF (this costs no extra privacy). The estimate is a linear interpolation inside "
                   f"the bin where the released CDF reaches the share (bins are {html_text(format_number(width))} wide; "
                   "the records are taken to be spread evenly inside it), so the true quantile need not be near it. "
                   "With at least 95 % confidence the true quantile of the data lies in the interval, which runs "
                   "between bin edges and allows both for the noise and for where inside its bin the true value lies "
                   "(values outside the bounds count as the nearest bound).</p>")
    out.append('<table width="70%" cellpadding="5" cellspacing="0"><tr><th>Quantile</th>'
               f'<th align="right">Estimate ({"whole number" if whole else "interpolated"})</th>'
               '<th align="right">95 % interval</th></tr>')
    out += html_rows(rows, "", 1)
    out.append("</table></body></html>")
    return "".join(out)


# ----------------------------------------------------------------------------------------------
# page 3: how to read it

def _page3_html(release: Release, details: ReleaseInfo, key_id: str | None) -> str:
    plan = release.plan
    privacy = plan.privacy
    eps = privacy.epsilon
    factor = math.exp(eps)
    factor_text = f"{factor:.3g}" if factor < 1000 else format_number(round(factor))
    column = html_text(details.column)
    margins = stated_margins(release)
    if privacy.neighbours == "change":
        neighbour = ("<b>Protection model: one person's record may change.</b> Any two tables that differ only in "
                     "the value of one person's record give almost the same chances to every published result, so "
                     "nobody can tell from the release what value a person has. The number of records N is treated "
                     "as public and published exactly.")
    else:
        neighbour = ("<b>Protection model: one person may be added or removed.</b> Any two tables that differ by one "
                     "person being present or absent give almost the same chances to every published result, so the "
                     "release does not even reveal whether a person is in the table. For this reason N is not "
                     "published exactly; the N shown is estimated from the noisy counts.")
    rpp = privacy.records_per_person
    if rpp > 1:
        neighbour += (f" A person may have up to {rpp} rows; all of them are protected together (the noise is "
                      f"{rpp} times larger than for one row per person).")
    if release.consistency == "none":
        consistency = ("<b>The curve may go down in places.</b> No consistency step was applied, so the counts are "
                       "the unbiased noisy estimates: they can decrease slightly, fall below 0 or rise above N. Such "
                       "dips are noise, not data.")
    else:
        consistency = ("<b>Why the curve never goes down.</b> After the noise was added, the counts were adjusted to "
                       "the closest whole numbers that never decrease, stay between 0 and N and end at N "
                       f"({CONSISTENCY_WORDS.get(release.consistency, release.consistency)}). A true "
                       "cumulative count can never decrease, so this only removes impossible results of the noise "
                       "(such as negative records in a bin). It uses the published numbers only, so it costs no "
                       "privacy.")
    signed = (f"It was signed with the key whose id is <b>{html_text(key_id)}</b>; the public key file "
              "(KEY.pub) you check it with must show the same id."
              if key_id else
              "<b>This release was not signed</b>, so nobody can check who made it; the SHA-256 hashes in the "
              "manifest still show whether a file was changed after it was written.")
    out = ["<html>", HTML_STYLE, "<body>", "<h1>How to read this release</h1>"]
    out.append(
        f"<p>This release describes how the values of <b>{column}</b> are spread: for every bin edge, how many "
        "records have a value at or below it (a cumulative distribution, or CDF). It was made with "
        "<b>differential privacy</b>, a guarantee about what the published numbers can reveal about any single "
        "person in the data.</p>")
    gaussian = plan.noise == "gaussian"
    out.append("<h2>What ε (epsilon) and δ (delta) mean here</h2>" if gaussian or privacy.delta > 0
               else "<h2>What ε (epsilon) means here</h2>")
    budget = f"<b>ε = {format_epsilon(eps)}</b>"
    if gaussian:
        budget += f" and <b>δ = {html_text(format_delta(privacy.delta))}</b>"
    meaning = html_text(delta_meaning(plan)).replace("e^ε", "e<sup>ε</sup>")
    first_words, rest = meaning.split(":", 1)
    if gaussian:
        adding = ("Each release about the same people spends budget. dpgui's budget ledger adds releases up with "
                  "zero-concentrated differential privacy when that costs less than adding up their ε (this release "
                  f"counts as ρ = {format_significant(privacy.rho, 4)}).")
    else:
        adding = "Each release about the same people spends budget: the ε of several releases add up."
    out.append(
        f"<p>The privacy budget of this release is {budget}. Whatever one person's records are, or "
        f"whether they are in the table at all (see the protection model below), the probability of any published "
        f"result changes by at most a factor of e<sup>ε</sup> = {factor_text}"
        + (", plus at most δ" if gaussian else "") + ". So anyone looking at the release, "
        "whatever else they know, learns almost nothing more about that person than they would have without their "
        f"data. Smaller ε means stronger protection and more noise. <b>{first_words}</b>:{rest} {adding}</p>")
    out.append("<h2>Every published count is noisy on purpose</h2>")
    out.append(
        "<p>Random whole numbers were added to the counts before publication. The noise is what protects people, "
        "and nobody, not even the person who made the release, knows its values. So a published count is close "
        f"to, but usually not equal to, the true count: in this release the {MARGIN_NAME} of a cumulative count "
        f"(the half-width of its 95 % band) is {format_margin_records(margins.average)} on average and "
        f"{format_margin_records(margins.worst)} at the worst point of the CDF. Counts derived from the release "
        "(the quantiles, the records per bin, any count between two values) carry the same noise; computing them "
        "costs no further privacy.</p>")
    out.append("<h2>How to read a 95 % interval</h2>")
    out.append(
        "<p>The shaded band around the curve and the quantile intervals are 95 % intervals. At each bin edge, "
        "the band covers the true cumulative count with at least 95 % probability: on average at least 19 of every "
        "20 bins hold the truth inside the band, and at most about 1 of 20 has it a little outside. The band is "
        "built around the unbiased count before the consistency step, with a margin of 2.2 standard errors plus "
        "one record (the noise is not normal: a plain 1.96 standard errors would cover less), and widened where "
        "needed to hold the published count. A quantile interval, for example "
        "of the median, gives the range of values in which the true quantile of the data lies with at least 95 % "
        "confidence; it is built from bin edges and the same margin, so it also holds "
        "when the true value sits anywhere inside its bin.</p>")
    out.append("<h2>Why counts can differ from the truth</h2>")
    out.append(
        f"<p>Besides the noise: the bounds from {html_text(format_number(release.lower))} to "
        f"{html_text(format_number(release.upper))} were fixed from public knowledge, not from the data, and values "
        "outside them were counted in the first bin (values below the lower bound) or the last bin (values at or "
        "above the upper bound), never dropped. The first and last bins can therefore hold more records than "
        f"their range suggests. Missing values: {_lower_first(html_text(missing_text(release, details.missing)))}"
        "</p>")
    out.append(f"<p>{consistency}</p>")
    out.append(f"<p>{neighbour}</p>")
    out.append("<h2>Checking that the files are genuine</h2>")
    out.append(
        "<p>The bundle holds this PDF, a CSV file with the released numbers, a manifest (NAME.manifest.json) that "
        "lists every parameter and the SHA-256 hash of each file, and a signature of the manifest "
        f"(NAME.manifest.json.minisig), where NAME is the bundle's name. {signed} To check the bundle, run</p>")
    out.append(f'<p class="command">{html_code(VERIFY_COMMAND)}</p>')
    out.append(
        "<p>which checks the signature and the hashes of the files. Without dpgui, check the signature "
        "with</p>")
    out.append(f'<p class="command">{html_code(MINISIGN_COMMAND)}</p>')
    out.append(
        "<p>and then compare the SHA-256 hash of the CSV and of this PDF with the hashes listed in the manifest "
        f"(for example with {html_code('sha256sum FILE')} on Linux, {html_code('shasum -a 256 FILE')} on macOS or "
        f"{html_code('certutil -hashfile FILE SHA256')} on Windows). If any check fails, the files were changed "
        "after they were signed and must not be trusted.</p></body></html>")
    return "".join(out)


# ----------------------------------------------------------------------------------------------
# page 2: plots (drawn by dpgui.pdf.cdf_charts) and their captions

def _cdf_caption(release: Release) -> str:
    return ("The curve is the released number of records with a value at or below each point; it is drawn "
            "straight within each bin. The shaded band holds, at each point, the true count with at least 95 % "
            "confidence (on average at least 19 of 20 bins have the truth inside). Where the band is too thin to see, "
            "the release "
            "is very precise there. Values outside the bounds are counted in the first or last bin.")


def _bars_caption(release: Release, group: int, margins: np.ndarray) -> str:
    k = release.plan.shape.bins
    if group == 1:
        what = "Each bar is the rise of the released CDF across one bin"
    else:
        bars = math.ceil(k / group)
        what = (f"The {k:,} bins are shown as {bars:,} bars of {group:,} neighbouring bins each"
                + ("" if k % group == 0 else " (the last bar has fewer)")
                + "; each bar is the rise of the released CDF across its bins")
    typical = float(np.median(margins)) if margins.size else 0.0
    text = (f"{what}. The bars carry the privacy noise, so neighbouring bars differ partly by chance: the {MARGIN_NAME} "
            f"of a bar's count (its 95 % interval as the range counter computes it) is {format_margin_records(typical)} "
            "for the middle bar (half the bars have a smaller margin, half a larger one). ")
    if release.consistency == "none":
        text += "No consistency step was applied, so a bar can be negative: that is noise, not data."
    else:
        text += ("Effects that look negative (fewer than zero records) are impossible and were removed by the "
                 "consistency step, which can make some bars exactly zero.")
    return text


def _draw_page2(c: Canvas, top: float, bottom: float, release: Release, details: ReleaseInfo) -> None:
    p = c.p
    heading = c.font(15, bold=True)
    p.setFont(heading)
    p.setPen(INK)
    y = top + p.fontMetrics().ascent()
    p.drawText(QPointF(0, y), c.elide(heading, f"The release in pictures: {details.column}", c.width))
    y = top + c.line_height(heading) * 1.4
    caption_font = c.font(9)
    bars = release_bars(release)
    cap1, cap2 = _cdf_caption(release), _bars_caption(release, bars[4], bars[3])
    h1 = c.wrapped_height(caption_font, c.width, cap1)
    h2 = c.wrapped_height(caption_font, c.width, cap2)
    gap = 0.12 * RESOLUTION
    room = bottom - y - h1 - h2 - 3 * gap
    cdf_h = room * 0.56
    plot_cdf(c, QRectF(0, y, c.width, cdf_h), release, details.column)
    y += cdf_h + gap * 0.5
    y += c.wrapped(caption_font, QRectF(0, y, c.width, h1 + 10), cap1, GREY) + gap * 1.5
    bars_h = bottom - y - h2 - gap * 0.5
    plot_bars(c, QRectF(0, y, c.width, bars_h), release, details.column, bars)
    y += bars_h + gap * 0.5
    c.wrapped(caption_font, QRectF(0, y, c.width, h2 + 10), cap2, GREY)


# ----------------------------------------------------------------------------------------------
# pages, header and footer

def draw_html(c: Canvas, writer: QPdfWriter, top: float, bottom: float, source: str) -> None:
    """Lay out simple HTML at the writer's resolution, shrinking the font until it fits."""
    height = bottom - top
    doc = QTextDocument()
    doc.documentLayout().setPaintDevice(writer)
    doc.setDocumentMargin(0)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    doc.setDefaultTextOption(option)
    points = 10.0
    while True:
        doc.setDefaultFont(c.font(points))
        doc.setHtml(_scale_points(source, points / 10.0))
        doc.setTextWidth(c.width)
        if doc.size().height() <= height or points <= 6.0:
            break
        points -= 0.25
    c.p.save()
    c.p.translate(0, top)
    doc.drawContents(c.p, QRectF(0, 0, c.width, height))
    c.p.restore()


def _scale_points(source: str, factor: float) -> str:
    """Scale every 'N pt' size in the HTML's styles (headings shrink with the body)."""
    return re.sub(r"(\d+(?:\.\d+)?)pt", lambda m: f"{float(m.group(1)) * factor:.2f}pt", source)


def _draw_header(c: Canvas, release: Release) -> float:
    """A red 'test release' strip on every page of an insecure release; returns the height used."""
    if release.secure:
        return 0.0
    font = c.font(10, bold=True)
    h = c.line_height(font) * 1.6
    c.p.save()
    c.p.setPen(Qt.PenStyle.NoPen)
    c.p.setBrush(ALERT)
    c.p.drawRect(QRectF(0, 0, c.width, h))
    c.p.setFont(font)
    c.p.setPen(QColor("white"))
    c.p.drawText(QRectF(0, 0, c.width, h), int(Qt.AlignmentFlag.AlignCenter), TEST_BANNER)
    c.p.restore()
    return h + 0.08 * RESOLUTION


FOOTER_POINTS = 7.5


def footer_top(c: Canvas) -> float:
    """The top of the footer :func:`draw_footer` draws: the page's content ends above it."""
    return c.height - c.line_height(c.font(FOOTER_POINTS)) - 0.1 * RESOLUTION


def draw_footer(c: Canvas, release_id: str, dataset: str, page: int, page_count: int) -> float:
    """Release id, dataset and page number at the foot of the page; returns the top of the footer
    (:func:`footer_top`)."""
    font = c.font(FOOTER_POINTS)
    h = c.line_height(font)
    y = c.height - h
    c.p.setFont(font)
    c.p.setPen(QPen(GRID, 0.004 * RESOLUTION))
    c.p.drawLine(QPointF(0, y - 0.03 * RESOLUTION), QPointF(c.width, y - 0.03 * RESOLUTION))
    c.p.setPen(GREY)
    left = c.elide(font, f"Release {release_id} · {dataset} · made with dpgui {__version__}", c.width * 0.8)
    c.p.drawText(QRectF(0, y, c.width, h), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), left)
    c.p.drawText(QRectF(0, y, c.width, h), int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                 f"Page {page} of {page_count}")
    return y - 0.1 * RESOLUTION


def write_pdf(title: str, draw_pages: Callable[[Canvas, QPdfWriter], None]) -> bytes:
    """An A4 portrait PDF (bytes) at :data:`RESOLUTION` with ``MARGIN_MM`` margins, titled ``title``,
    whose pages ``draw_pages(canvas, writer)`` draws (``writer.newPage()`` between pages). The one
    PDF writer of the CDF and hierarchy reports; no QApplication needed."""
    ensure_gui_application()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setResolution(RESOLUTION)
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait,
                                     QMarginsF(MARGIN_MM, MARGIN_MM, MARGIN_MM, MARGIN_MM),
                                     QPageLayout.Unit.Millimeter))
    writer.setTitle(title)
    writer.setCreator(PDF_CREATOR)
    painter = QPainter()
    if not painter.begin(writer):
        raise RuntimeError("could not start drawing the PDF")
    try:
        draw_pages(Canvas(painter, float(writer.width()), float(writer.height())), writer)
    finally:
        painter.end()
    buffer.close()
    return bytes(data.data())


def render_release_pdf(release: Release, details: ReleaseInfo, key_id: str | None) -> bytes:
    """The release as a three-page A4 PDF (bytes). Public values only; no QApplication needed.

    ``details``: the release's public labels; ``key_id``: the signer's key id (None: not signed).
    Drawing cost is O(K) numpy work plus a few thousand drawn points, whatever K (long curves are
    thinned per column to their min and max, so the 95 % band is never drawn narrower).
    """

    def draw_pages(c: Canvas, writer: QPdfWriter) -> None:
        for page in range(1, PAGE_COUNT + 1):
            if page > 1:
                writer.newPage()
            top = _draw_header(c, release)
            bottom = draw_footer(c, details.release_id, details.dataset, page, PAGE_COUNT)
            if page == 1:
                draw_html(c, writer, top, bottom, _page1_html(release, details, key_id))
            elif page == 2:
                _draw_page2(c, top, bottom, release, details)
            else:
                draw_html(c, writer, top, bottom, _page3_html(release, details, key_id))

    return write_pdf(PDF_TITLE, draw_pages)
