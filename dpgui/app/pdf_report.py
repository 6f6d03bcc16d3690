"""The human-readable PDF of a release, drawn with Qt's own PDF writer (no widgets, no screenshots).

Three A4 pages: (1) what was released and with which parameters, with a small quantile table;
(2) the released CDF with its 95 % band and the released records per bin, drawn with QPainter;
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
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor, QFont, QGuiApplication, QPageLayout, QPageSize, QPainter, QPdfWriter, QPen, QPolygonF, QTextDocument,
    QTextOption,
)

from dpgui import __version__
from dpgui.app.result_view import band_envelope
from dpgui.app.text import CONSISTENCY_LABELS, ESTIMATOR_LABELS, NEIGHBOURS_LABELS, format_number
from dpgui.core.mechanism import Release
from dpgui.core.projection import interval_variance
from dpgui.core.quantiles import cumulative_interval95, missing_interval95, noise_margin, quantiles
from dpgui.report.bundle import ReleaseInfo

__all__ = ["render_release_pdf", "ensure_gui_application", "PAGE_COUNT", "TEST_BANNER"]

PAGE_COUNT = 3
RESOLUTION = 300  # dots per inch of the PDF's drawing coordinates
MARGIN_MM = 16.0
MAX_BARS = 200  # the per-bin plot shows at most this many bars; more bins are summed into groups
CURVE_COLUMNS = 1200  # long curves are thinned to per-column min/max over this many columns
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
NOISE_TEST = "Seeded test generator: NOT secure, for testing only"
VERIFY_COMMAND = "dpgui verify NAME.manifest.json --pubkey KEY.pub"
MINISIGN_COMMAND = "minisign -Vm NAME.manifest.json -p KEY.pub"
CONSISTENCY_WORDS = {"l2": "a least-squares fit", "l1": "a least-absolute-deviation fit"}
def missing_text(release: Release, rule: str) -> str:
    """What happened to missing values, in words (docs/design.md "Missing values"), with the released
    missing count and its 95 % margin under the bucket rule."""
    if rule == "bucket" and release.missing is not None:
        low, high = missing_interval95(release)  # type: ignore[misc]  # not None: the release has the leaf
        return (f"Counted in a noised 'missing' bucket; N = all rows. Released number of missing values: "
                f"{format_number(round(release.missing))} (the true number lies between {format_number(math.floor(low))} "
                f"and {format_number(math.ceil(high))} with at least 95 % probability). The CDF and the "
                "quantiles are those of the values (out of the released number of values, N minus the missing "
                "count).")
    if rule == "drop" and not release.plan.privacy.root_public:
        return ("Dropped (a neighbour under add/remove: a value turning into a missing one is the removal of "
                "one record); N is the released, noisy number of values.")
    if rule == "drop":
        return "Rows without a value were left out before counting (a release of an older version of dpgui)."
    if rule == "error":
        return "The release would have stopped at a missing value (a retired policy of an older version of dpgui)."
    return f"Rule {rule!r}"

# Colours that print well and stay distinguishable (Okabe–Ito blue, as in the app's plots).
INK = QColor("#1A1A1A")
GREY = QColor("#666666")
GRID = QColor("#DDDDDD")
CURVE = QColor("#0072B2")
BAND = QColor(0, 114, 178, 70)
BAR = QColor("#56B4E9")
BAR_EDGE = QColor("#2C7FB8")
ALERT = QColor("#B00020")


# ----------------------------------------------------------------------------------------------
# the application Qt needs for fonts and painting

_APP: QGuiApplication | None = None  # keeps a QGuiApplication we created alive


def ensure_gui_application() -> QGuiApplication:
    """The running QGuiApplication/QApplication, or a new one.

    With no display (no DISPLAY or WAYLAND_DISPLAY on Linux and other X11/Wayland systems) and no
    QT_QPA_PLATFORM chosen, Qt's "offscreen" platform is used, so the CLI renders on a headless
    server. Windows and macOS always have their own platform and are left alone.

    The new application is a QApplication (a QGuiApplication that can also show widgets): a process
    can hold only one application, and a bare QGuiApplication made here would break any widget
    shown later in the same process (a test session, or the app exporting before its window opens).
    Call it from the main thread when no application exists yet.
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
    from PySide6.QtWidgets import QApplication

    _APP = QApplication([sys.argv[0] if sys.argv and sys.argv[0] else "dpgui"])
    return _APP


# ----------------------------------------------------------------------------------------------
# numbers in words

def _eps(value: float) -> str:
    return f"{value:g}"


def _budget(value: float) -> str:
    return f"{value:.4g}"


def _value_decimals(width: float) -> int:
    """Decimals that show a value to the precision of one bin (0 for bins ≥ 1 wide, at most 6)."""
    if not (width > 0 and math.isfinite(width)):
        return 0
    return int(min(6, max(0, math.ceil(-math.log10(width) - 1e-9))))


def _fixed(value: float, decimals: int) -> str:
    """Thousands separators and fixed decimals; never '-0'."""
    text = f"{value:,.{decimals}f}"
    if text.startswith("-") and float(text[1:].replace(",", "")) == 0:
        text = text[1:]
    return text


def _percent(p: float) -> str:
    return f"{p * 100:g} %"


def _utc(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _e(text: object) -> str:
    return html.escape(str(text))


def _margins(release: Release) -> np.ndarray:
    """Half-width of the 95 % band (noise_margin of the standard error) of every cumulative count, records."""
    return noise_margin(release.std_error)


# ----------------------------------------------------------------------------------------------
# page 1: what was released

def _level_budgets(release: Release) -> str:
    plan = release.plan
    first = plan.privacy.first_noised_level()
    nodes = 1
    counts = [1]
    for b in plan.shape.branching:
        nodes *= b
        counts.append(nodes)
    parts = []
    for offset, eps in enumerate(plan.level_epsilons):
        level = first + offset
        where = "the total" if level == 0 else f"{counts[level]:,} node{'s' if counts[level] != 1 else ''}"
        value = f"ε = {_budget(eps)}" if eps > 0 else "0 (not released)"
        parts.append(f"level {level} ({where}): {value}")
    return "; ".join(parts)


def _parameter_rows(release: Release, details: ReleaseInfo) -> list[tuple[str, str]]:
    plan = release.plan
    privacy = plan.privacy
    k = plan.shape.bins
    width = (release.upper - release.lower) / k
    n = release.total
    if privacy.root_public:
        n_text = (f"{format_number(n)} (all rows, missing values included; published exactly)"
                  if plan.shape.missing_leaf else f"{format_number(n)} (published exactly)")
    else:
        n_text = f"{format_number(n)} (estimated from the noisy counts; the true N is not published)"
    spent = float(plan.epsilon_spent())
    eps_text = f"ε = {_eps(privacy.epsilon)} and δ = 0 (pure ε-differential privacy)"
    if abs(spent - privacy.epsilon) > 1e-9 * privacy.epsilon:
        eps_text += f"; the noise scales were rounded up, so slightly less is spent: ε = {spent:.6g}"
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
    margins = _margins(release)
    worst = float(margins.max()) if margins.size else 0.0
    typical = float(np.sqrt(np.mean(margins ** 2))) if margins.size else 0.0
    accuracy = (f"± {format_number(round(typical))} records on average, ± {format_number(round(worst))} at the "
                f"least precise point (half-widths of the 95 % band of the cumulative counts)")
    if n > 0:
        accuracy += f"; that is ± {100 * typical / n:.2g} % and ± {100 * worst / n:.2g} % of N"
    missing = missing_text(release, details.missing)
    return [
        ("Column", _e(details.column)),
        ("Bounds", f"from {_e(format_number(release.lower))} to {_e(format_number(release.upper))} (chosen from "
                   "public knowledge; values outside are counted in the first or last bin)"),
        ("Bins", f"K = {k:,} equal bins, each {_e(format_number(width))} wide"),
        ("Number of records N", _e(n_text)),
        ("Privacy budget", _e(eps_text)),
        ("Protection model", _e(NEIGHBOURS_LABELS.get(privacy.neighbours, privacy.neighbours))),
        ("Records per person", _e(rpp_text)),
        ("Tree of counts (branching)", _e(tree)),
        ("Budget per level", _e(_level_budgets(release))),
        ("Estimator", _e(ESTIMATOR_LABELS.get(plan.estimator, plan.estimator))),
        ("Consistency", _e(CONSISTENCY_LABELS.get(release.consistency, release.consistency))),
        ("Noise", _e(NOISE_SECURE if release.secure else NOISE_TEST)),
        ("Missing values", _e(missing)),
        ("Expected accuracy", _e(accuracy)),
    ]


def _quantile_rows(release: Release) -> list[tuple[str, str, str]]:
    """Quantile, value, 95 % interval: to the precision of a bin, or one decimal finer when an
    interval would otherwise read "32 to 32" (the interval lies within one bin)."""
    base = _value_decimals((release.upper - release.lower) / release.plan.shape.bins)
    found = quantiles(release, QUANTILE_PROBABILITIES)
    collapsed = any(_fixed(q.low, base) == _fixed(q.high, base) for q in found if q.low < q.high)
    decimals = base + 1 if collapsed else base
    rows = []
    for q in found:
        name = QUANTILE_NAMES.get(round(q.probability, 6))
        label = _percent(q.probability) + (f" ({name})" if name else "")
        rows.append((label, _fixed(q.value, decimals), f"{_fixed(q.low, decimals)} to {_fixed(q.high, decimals)}"))
    return rows


_STYLE = """
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
_TABLE = '<table width="100%" cellpadding="4" cellspacing="0">'
_STRIPE = "#F1F4F8"


def _rows(rows: list[tuple[str, ...]], first_width: str, align_right_from: int = 99) -> list[str]:
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


def _code(text: str) -> str:
    """A command kept on one line (spaces do not break)."""
    return "<code>" + _e(text).replace(" ", "&nbsp;") + "</code>"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _banner_html(release: Release) -> str:
    if release.secure:
        return ""
    return (f'<table width="100%" cellpadding="6" cellspacing="0" bgcolor="#FDECEE">'
            f'<tr><td><p class="banner" style="font-size: 13pt;">{_e(TEST_BANNER)}</p>'
            f'<p>{_e(TEST_BANNER_DETAIL)}</p></td></tr></table>')


def _page1_html(release: Release, details: ReleaseInfo, key_id: str | None) -> str:
    signer = (f"key {_e(key_id)}" if key_id
              else "not signed (no signature: the files' origin cannot be checked)")
    facts = [
        ("Data set", _e(details.dataset)),
        ("Released", _e(_utc(details.created_utc)) + " (when the noise was drawn)"),
        ("Release id", _e(details.release_id)),
        ("Signed by", signer),
    ]
    out = ["<html>", _STYLE, "<body>", _banner_html(release),
           f"<h1>Differentially private release: cumulative distribution of {_e(details.column)}</h1>",
           '<table width="100%" cellpadding="3" cellspacing="0">']
    out += [f'<tr><td width="22%" class="key">{k}</td><td>{v}</td></tr>' for k, v in facts]
    out.append("</table>")
    out.append("<h2>What was released</h2>")
    out.append(f"<p>For each of the K = {release.plan.shape.bins:,} bins of <b>{_e(details.column)}</b>: how many "
               "records have a value at or below the bin's upper edge (the cumulative counts of the CSV file of "
               "this bundle), each with random noise added to protect the people in the data. The parameters, "
               "all fixed before the data were read:</p>")
    out.append(_TABLE)
    out += _rows(_parameter_rows(release, details), "26%")
    out.append("</table>")
    out.append("<h2>Released quantiles</h2>")
    width = (release.upper - release.lower) / release.plan.shape.bins
    out.append(f"<p>Values of {_e(details.column)} below which the given share of the records lies, read from the "
               "released CDF (this costs no extra privacy). The estimate is a linear interpolation inside the bin "
               f"where the released CDF reaches the share (bins are {_e(format_number(width))} wide; the records "
               "are taken to be spread evenly inside it), so the true quantile need not be near it. With at least "
               "95 % confidence the true quantile of the data lies in the interval, which runs between bin edges "
               "and allows both for the noise and for where inside its bin the true value lies (values outside the "
               "bounds count as the nearest bound).</p>")
    out.append('<table width="70%" cellpadding="5" cellspacing="0"><tr><th>Quantile</th>'
               '<th align="right">Estimate (interpolated)</th><th align="right">95 % interval</th></tr>')
    out += _rows(_quantile_rows(release), "", 1)
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
    column = _e(details.column)
    margins = _margins(release)
    typical = float(np.sqrt(np.mean(margins ** 2))) if margins.size else 0.0
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
    signed = (f"It was signed with the key whose id is <b>{_e(key_id)}</b>; the public key file "
              "(KEY.pub) you check it with must show the same id."
              if key_id else
              "<b>This release was not signed</b>, so nobody can check who made it; the SHA-256 hashes in the "
              "manifest still show whether a file was changed after it was written.")
    out = ["<html>", _STYLE, "<body>", "<h1>How to read this release</h1>"]
    out.append(
        f"<p>This release describes how the values of <b>{column}</b> are spread: for every bin edge, how many "
        "records have a value at or below it (a cumulative distribution, or CDF). It was made with "
        "<b>differential privacy</b>, a guarantee about what the published numbers can reveal about any single "
        "person in the data.</p>")
    out.append("<h2>What ε (epsilon) means here</h2>")
    out.append(
        f"<p>The privacy budget of this release is <b>ε = {_eps(eps)}</b>. Whatever one person's records are, or "
        f"whether they are in the table at all (see the protection model below), the probability of any published "
        f"result changes by at most a factor of e<sup>ε</sup> = {factor_text}. So anyone looking at the release, "
        "whatever else they know, learns almost nothing more about that person than they would have without their "
        "data. Smaller ε means stronger protection and more noise. <b>δ = 0</b> here: the guarantee holds "
        "always, with no small chance of failure (\"pure\" differential privacy). Each release about the same "
        "people spends budget: the ε of several releases add up.</p>")
    out.append("<h2>Every published count is noisy on purpose</h2>")
    out.append(
        "<p>Random whole numbers were added to the counts before publication. The noise is what protects people, "
        "and nobody, not even the person who made the release, knows its values. So a published count is close "
        f"to, but usually not equal to, the true count: in this release the 95 % band of a cumulative count "
        f"typically reaches ± {format_number(round(typical))} records. Counts derived from the release "
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
        f"<p>Besides the noise: the bounds from {_e(format_number(release.lower))} to "
        f"{_e(format_number(release.upper))} were fixed from public knowledge, not from the data, and values "
        "outside them were counted in the first bin (values below the lower bound) or the last bin (values at or "
        "above the upper bound), never dropped. The first and last bins can therefore hold more records than "
        f"their range suggests. Missing values: {_lower_first(_e(missing_text(release, details.missing)))}"
        "</p>")
    out.append(f"<p>{consistency}</p>")
    out.append(f"<p>{neighbour}</p>")
    out.append("<h2>Checking that the files are genuine</h2>")
    out.append(
        "<p>The bundle holds this PDF, a CSV file with the released numbers, a manifest (NAME.manifest.json) that "
        "lists every parameter and the SHA-256 hash of each file, and a signature of the manifest "
        f"(NAME.manifest.json.minisig), where NAME is the bundle's name. {signed} To check the bundle, run</p>")
    out.append(f'<p class="command">{_code(VERIFY_COMMAND)}</p>')
    out.append(
        "<p>which checks the signature and the hashes of the files. Without dpgui, check the signature "
        "with</p>")
    out.append(f'<p class="command">{_code(MINISIGN_COMMAND)}</p>')
    out.append(
        "<p>and then compare the SHA-256 hash of the CSV and of this PDF with the hashes listed in the manifest "
        f"(for example with {_code('sha256sum FILE')} on Linux, {_code('shasum -a 256 FILE')} on macOS or "
        f"{_code('certutil -hashfile FILE SHA256')} on Windows). If any check fails, the files were changed "
        "after they were signed and must not be trusted.</p></body></html>")
    return "".join(out)


# ----------------------------------------------------------------------------------------------
# page 2: plots

def _nice_step(span: float, target: int) -> float:
    raw = span / max(1, target)
    if not (raw > 0 and math.isfinite(raw)):
        return 1.0
    magnitude = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        if m * magnitude >= raw * (1 - 1e-12):
            return m * magnitude
    return 10.0 * magnitude


def _nice_ticks(lo: float, hi: float, target: int) -> tuple[list[float], int]:
    """Round tick values in [lo, hi] about ``target`` apart, and the decimals their labels need."""
    step = _nice_step(hi - lo, target)
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    ticks = [i * step for i in range(first, last + 1)]
    decimals = 0
    while decimals < 10 and abs(round(step, decimals) - step) > 1e-9 * step:
        decimals += 1
    return ticks, decimals


def _tick_label(value: float, decimals: int) -> str:
    if abs(value) >= 1e15:
        return f"{value:.3g}"
    return _fixed(value, decimals)


def _thin_curve(x: np.ndarray, y: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """A polyline of at most ~2·columns points that passes through every column's min and max."""
    if x.size <= 2 * columns:
        return x, y
    group = math.ceil(x.size / columns)
    starts = np.arange(0, x.size, group)
    ends = np.minimum(starts + group, x.size) - 1
    mins = np.minimum.reduceat(y, starts)
    maxs = np.maximum.reduceat(y, starts)
    rising = y[ends] >= y[starts]
    first = np.where(rising, mins, maxs)
    second = np.where(rising, maxs, mins)
    return np.column_stack([x[starts], x[ends]]).ravel(), np.column_stack([first, second]).ravel()


def _polygon(px: np.ndarray, py: np.ndarray) -> QPolygonF:
    return QPolygonF([QPointF(float(a), float(b)) for a, b in zip(px, py)])


class _Canvas:
    """Page geometry and fonts at the writer's resolution."""

    def __init__(self, painter: QPainter, width: float, height: float) -> None:
        self.p = painter
        self.width = width
        self.height = height
        self.base = QFont(QGuiApplication.font())

    def font(self, points: float, bold: bool = False) -> QFont:
        f = QFont(self.base)
        f.setPointSizeF(points)
        f.setBold(bold)
        return f

    def text_width(self, font: QFont, text: str) -> float:
        self.p.setFont(font)
        return self.p.fontMetrics().horizontalAdvance(text)

    def line_height(self, font: QFont) -> float:
        self.p.setFont(font)
        return float(self.p.fontMetrics().height())

    def elide(self, font: QFont, text: str, width: float) -> str:
        self.p.setFont(font)
        return self.p.fontMetrics().elidedText(text, Qt.TextElideMode.ElideMiddle, int(width))

    def wrapped(self, font: QFont, rect: QRectF, text: str, colour: QColor = INK) -> float:
        """Draw word-wrapped text at the top of ``rect``; returns the height used."""
        self.p.setFont(font)
        self.p.setPen(colour)
        flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop) | int(Qt.TextFlag.TextWordWrap)
        bound = self.p.boundingRect(rect, flags, text)
        self.p.drawText(rect, flags, text)
        return bound.height()

    def wrapped_height(self, font: QFont, width: float, text: str) -> float:
        self.p.setFont(font)
        flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop) | int(Qt.TextFlag.TextWordWrap)
        return self.p.boundingRect(QRectF(0, 0, width, 1e6), flags, text).height()


@dataclass
class _Axes:
    """A data rectangle on the page and the linear map from data to page coordinates."""

    rect: QRectF
    x0: float
    x1: float
    y0: float
    y1: float

    def px(self, x: np.ndarray | float) -> np.ndarray:
        return self.rect.left() + (np.asarray(x, dtype=float) - self.x0) / (self.x1 - self.x0) * self.rect.width()

    def py(self, y: np.ndarray | float) -> np.ndarray:
        return self.rect.bottom() - (np.asarray(y, dtype=float) - self.y0) / (self.y1 - self.y0) * self.rect.height()


def _x_ticks(c: _Canvas, font: QFont, lo: float, hi: float, width: float) -> tuple[list[float], int]:
    """As many round ticks as fit without their labels touching."""
    gap = c.text_width(font, "  ")
    for target in (8, 6, 5, 4, 3, 2, 1):
        ticks, decimals = _nice_ticks(lo, hi, target)
        if len(ticks) < 2:
            continue
        spacing = width * (ticks[1] - ticks[0]) / (hi - lo)
        widest = max(c.text_width(font, _tick_label(t, decimals)) for t in ticks)
        if widest + gap <= spacing:
            return ticks, decimals
    return _nice_ticks(lo, hi, 1)


def _y_ticks(lo: float, hi: float, height: float, spacing: float, target: int = 6) -> tuple[list[float], int]:
    """Round ticks at least ``spacing`` apart on an axis ``height`` long (fewer when it is short)."""
    for t in range(target, 0, -1):
        ticks, decimals = _nice_ticks(lo, hi, t)
        if len(ticks) < 2 or height * (ticks[1] - ticks[0]) / (hi - lo) >= spacing:
            return ticks, decimals
    return _nice_ticks(lo, hi, 1)


def _draw_axes_frame(c: _Canvas, outer: QRectF, x_range: tuple[float, float], y_range: tuple[float, float],
                     x_label: str, y_label: str, right: tuple[str, float] | None = None) -> _Axes:
    """Axes with gridlines, round ticks with thousands separators and labels; returns the data map.

    ``right`` = (label, scale) adds a percentage axis on the right: 100 % at y = scale (ticks 0–100 %).
    """
    p = c.p
    tick_font = c.font(8.5)
    label_font = c.font(9.5)
    tick_len = 0.012 * RESOLUTION
    pad = 0.03 * RESOLUTION
    label_h = c.line_height(label_font)
    tick_h = c.line_height(tick_font)
    bottom = tick_len + pad + tick_h + pad + label_h
    height = outer.height() - bottom - 0.5 * tick_h
    y_ticks, y_dec = _y_ticks(y_range[0], y_range[1], height, 2.2 * tick_h)
    y_labels = [_tick_label(t, y_dec) for t in y_ticks]
    left = label_h + pad + max(c.text_width(tick_font, s) for s in y_labels) + tick_len + pad
    right_w = 0.15 * RESOLUTION
    right_ticks: list[tuple[float, str]] = []
    if right is not None:
        scale = right[1]
        lo_pct = max(0.0, 100 * y_range[0] / scale)
        hi_pct = min(100.0, 100 * y_range[1] / scale)
        pct_height = height * (hi_pct - lo_pct) * scale / 100 / (y_range[1] - y_range[0])
        pct, pct_dec = _y_ticks(lo_pct, hi_pct, pct_height, 2.2 * tick_h, 5)
        right_ticks = [(v * scale / 100, f"{_fixed(v, pct_dec)} %") for v in pct]
        right_w = tick_len + pad + max([c.text_width(tick_font, s) for _, s in right_ticks] + [0.0]) + pad + label_h
    rect = QRectF(outer.left() + left, outer.top() + 0.5 * tick_h, outer.width() - left - right_w, height)
    axes = _Axes(rect, x_range[0], x_range[1], y_range[0], y_range[1])
    x_ticks, x_dec = _x_ticks(c, tick_font, x_range[0], x_range[1], rect.width())

    p.setPen(QPen(GRID, 0.004 * RESOLUTION))
    for t in y_ticks:
        y = float(axes.py(t))
        p.drawLine(QPointF(rect.left(), y), QPointF(rect.right(), y))
    for t in x_ticks:
        x = float(axes.px(t))
        p.drawLine(QPointF(x, rect.top()), QPointF(x, rect.bottom()))

    p.setPen(QPen(INK, 0.006 * RESOLUTION))
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawRect(rect)
    p.setFont(tick_font)
    fm = p.fontMetrics()
    for t, s in zip(y_ticks, y_labels):
        y = float(axes.py(t))
        p.drawLine(QPointF(rect.left() - tick_len, y), QPointF(rect.left(), y))
        w = fm.horizontalAdvance(s)
        p.drawText(QPointF(rect.left() - tick_len - pad - w, y + (fm.ascent() - fm.descent()) / 2), s)
    for t in x_ticks:
        x = float(axes.px(t))
        s = _tick_label(t, x_dec)
        p.drawLine(QPointF(x, rect.bottom()), QPointF(x, rect.bottom() + tick_len))
        w = fm.horizontalAdvance(s)
        x_text = min(max(x - w / 2, outer.left()), outer.right() - w)
        p.drawText(QPointF(x_text, rect.bottom() + tick_len + pad + fm.ascent()), s)
    if right is not None:
        for value, s in right_ticks:
            y = float(axes.py(value))
            p.drawLine(QPointF(rect.right(), y), QPointF(rect.right() + tick_len, y))
            p.drawText(QPointF(rect.right() + tick_len + pad, y + (fm.ascent() - fm.descent()) / 2), s)

    p.setFont(label_font)
    fm = p.fontMetrics()
    text = fm.elidedText(x_label, Qt.TextElideMode.ElideMiddle, int(rect.width()))
    p.drawText(QPointF(rect.center().x() - fm.horizontalAdvance(text) / 2, outer.bottom() - fm.descent()), text)
    for side, label in (("left", y_label), ("right", right[0] if right is not None else None)):
        if label is None:
            continue
        text = fm.elidedText(label, Qt.TextElideMode.ElideMiddle, int(rect.height()))
        p.save()
        if side == "left":
            p.translate(outer.left() + fm.ascent(), rect.center().y() + fm.horizontalAdvance(text) / 2)
            p.rotate(-90)
        else:
            p.translate(outer.right() - fm.ascent(), rect.center().y() - fm.horizontalAdvance(text) / 2)
            p.rotate(90)
        p.drawText(QPointF(0, 0), text)
        p.restore()
    return axes


def _legend(c: _Canvas, x: float, y: float, width: float, entries: list[tuple[str, str]]) -> float:
    """A row of legend entries (kind: 'line', 'band' or 'bar'); returns its height."""
    p = c.p
    font = c.font(8.5)
    p.setFont(font)
    fm = p.fontMetrics()
    swatch = 0.25 * RESOLUTION
    gap = 0.06 * RESOLUTION
    h = fm.height()
    cx, cy = x, y
    for kind, text in entries:
        need = swatch + gap + fm.horizontalAdvance(text) + 2 * gap
        if cx > x and cx + need > x + width:
            cx, cy = x, cy + h * 1.2
        mid = cy + h / 2
        if kind == "line":
            p.setPen(QPen(CURVE, 0.008 * RESOLUTION))
            p.drawLine(QPointF(cx, mid), QPointF(cx + swatch, mid))
        elif kind == "band":
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(BAND)
            p.drawRect(QRectF(cx, mid - h * 0.3, swatch, h * 0.6))
        elif kind == "bar":
            p.setPen(QPen(BAR_EDGE, 0.003 * RESOLUTION))
            p.setBrush(BAR)
            p.drawRect(QRectF(cx + swatch * 0.25, mid - h * 0.35, swatch * 0.5, h * 0.7))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(INK)
        p.drawText(QPointF(cx + swatch + gap, cy + fm.ascent()), text)
        cx += need
    return cy + h - y


def _plot_heading(c: _Canvas, outer: QRectF, title: str, legend: list[tuple[str, str]]) -> float:
    """Draw a plot's title and legend at the top of ``outer``; return the y where the axes start."""
    p = c.p
    title_font = c.font(11, bold=True)
    p.setFont(title_font)
    p.setPen(INK)
    p.drawText(QPointF(outer.left(), outer.top() + p.fontMetrics().ascent()), c.elide(title_font, title, outer.width()))
    y = outer.top() + c.line_height(title_font) * 1.15
    return y + _legend(c, outer.left(), y, outer.width(), legend) + 0.04 * RESOLUTION


def _plot_cdf(c: _Canvas, outer: QRectF, release: Release, column: str) -> None:
    p = c.p
    n = float(release.total)
    lower_edges, upper_edges = release.bin_edges()
    edges = np.append(lower_edges, upper_edges[-1])
    cum = np.concatenate(([0.0], np.asarray(release.cumulative, dtype=float)))
    ci_low, ci_high = cumulative_interval95(release)
    low, high = np.concatenate(([0.0], ci_low)), np.concatenate(([0.0], ci_high))
    top = max(n, 1.0)
    y_min = min(0.0, float(cum.min()))
    y_max = max(top, float(cum.max())) * 1.03
    y = _plot_heading(c, outer, f"Released cumulative distribution (CDF) of {column}",
                      [("line", "Released cumulative count"),
                       ("band", "95 % band: holds the true count with at least 95 % confidence")])
    right = None
    if n > 0:
        right = ("Fraction of all records", n)
    frame = QRectF(outer.left(), y, outer.width(), outer.bottom() - y)
    axes = _draw_axes_frame(c, frame, (release.lower, release.upper),
                            (y_min, y_max), column, "Records at or below the value", right)
    columns = max(100, min(CURVE_COLUMNS, int(axes.rect.width())))
    xb, lows, highs = band_envelope(edges, low, high, 2 * columns)
    xc, yc = _thin_curve(edges, cum, columns)
    p.save()
    p.setClipRect(axes.rect.adjusted(-2, -2, 2, 2))
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    band = np.concatenate([axes.px(xb), axes.px(xb)[::-1]]), np.concatenate([axes.py(highs), axes.py(lows)[::-1]])
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(BAND)
    p.drawPolygon(_polygon(*band))
    p.setBrush(Qt.BrushStyle.NoBrush)
    pen = QPen(CURVE, 0.008 * RESOLUTION)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    p.setPen(pen)
    p.drawPolyline(_polygon(axes.px(xc), axes.py(yc)))
    p.restore()


def _bars(release: Release) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Released records per bin (or per group of bins): x from, x to, count, half-width of the 95 % interval
    of the true count (noise_margin of the range's standard error); group size."""
    k = release.plan.shape.bins
    per_bin = np.diff(np.concatenate(([0.0], np.asarray(release.cumulative, dtype=float))))
    group = max(1, math.ceil(k / MAX_BARS))
    starts = np.arange(0, k, group)
    stops = np.minimum(starts + group, k)
    counts = np.add.reduceat(per_bin, starts)
    margins = noise_margin(np.array([math.sqrt(max(0.0, interval_variance(release.plan, int(a), int(b))))
                                     for a, b in zip(starts, stops)]))
    lower_edges, upper_edges = release.bin_edges()
    return lower_edges[starts], upper_edges[stops - 1], counts, margins, group


def _plot_bars(c: _Canvas, outer: QRectF, release: Release, column: str,
               bars: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]) -> None:
    p = c.p
    x0, x1, counts, margins, group = bars
    y_min = min(0.0, float(counts.min()))
    y_max = max(float(counts.max()), 1.0) * 1.05
    if y_min < 0:
        y_min *= 1.05
    what = "bin" if group == 1 else f"group of {group:,} bins"
    y = _plot_heading(c, outer, f"Released records per {what}", [("bar", f"Released records per {what} (noisy)")])
    y_label = "Records per bin" if group == 1 else "Records per group"
    frame = QRectF(outer.left(), y, outer.width(), outer.bottom() - y)
    axes = _draw_axes_frame(c, frame, (release.lower, release.upper),
                            (y_min, y_max), column, y_label, None)
    p.save()
    p.setClipRect(axes.rect)
    left, right = axes.px(x0), axes.px(x1)
    top, base = axes.py(np.maximum(counts, 0.0)), axes.py(np.minimum(counts, 0.0))
    thin = float(np.min(right - left)) < 0.02 * RESOLUTION
    p.setPen(Qt.PenStyle.NoPen if thin else QPen(BAR_EDGE, 0.003 * RESOLUTION))
    p.setBrush(BAR)
    for a, b, t, u in zip(left, right, top, base):
        p.drawRect(QRectF(float(a), float(t), float(b - a), float(u - t)))
    if y_min < 0:
        p.setPen(QPen(INK, 0.004 * RESOLUTION))
        z = float(axes.py(0.0))
        p.drawLine(QPointF(axes.rect.left(), z), QPointF(axes.rect.right(), z))
    p.restore()


def _cdf_caption(release: Release) -> str:
    return ("The curve is the released number of records with a value at or below each point; it is drawn "
            "straight within each bin. The shaded band holds, at each point, the true count with at least 95 % "
            "confidence (on average at least 19 of 20 bins have the truth inside). Where the band is too thin to see, the release "
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
    text = (f"{what}. The bars carry the privacy noise, so neighbouring bars differ partly by chance: the 95 % "
            f"interval of a bar's true count (as the range counter computes it) typically reaches "
            f"± {format_number(round(typical))} records. ")
    if release.consistency == "none":
        text += "No consistency step was applied, so a bar can be negative: that is noise, not data."
    else:
        text += ("Effects that look negative (fewer than zero records) are impossible and were removed by the "
                 "consistency step, which can make some bars exactly zero.")
    return text


def _draw_page2(c: _Canvas, top: float, bottom: float, release: Release, details: ReleaseInfo) -> None:
    p = c.p
    heading = c.font(15, bold=True)
    p.setFont(heading)
    p.setPen(INK)
    y = top + p.fontMetrics().ascent()
    p.drawText(QPointF(0, y), c.elide(heading, f"The release in pictures: {details.column}", c.width))
    y = top + c.line_height(heading) * 1.4
    caption_font = c.font(9)
    bars = _bars(release)
    cap1, cap2 = _cdf_caption(release), _bars_caption(release, bars[4], bars[3])
    h1 = c.wrapped_height(caption_font, c.width, cap1)
    h2 = c.wrapped_height(caption_font, c.width, cap2)
    gap = 0.12 * RESOLUTION
    room = bottom - y - h1 - h2 - 3 * gap
    cdf_h = room * 0.56
    _plot_cdf(c, QRectF(0, y, c.width, cdf_h), release, details.column)
    y += cdf_h + gap * 0.5
    y += c.wrapped(caption_font, QRectF(0, y, c.width, h1 + 10), cap1, GREY) + gap * 1.5
    bars_h = bottom - y - h2 - gap * 0.5
    _plot_bars(c, QRectF(0, y, c.width, bars_h), release, details.column, bars)
    y += bars_h + gap * 0.5
    c.wrapped(caption_font, QRectF(0, y, c.width, h2 + 10), cap2, GREY)


# ----------------------------------------------------------------------------------------------
# pages, header and footer

def _draw_html(c: _Canvas, writer: QPdfWriter, top: float, bottom: float, source: str) -> None:
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


def _draw_header(c: _Canvas, release: Release) -> float:
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


def _draw_footer(c: _Canvas, details: ReleaseInfo, page: int) -> float:
    """Release id and page number at the foot of the page; returns the top of the footer."""
    font = c.font(7.5)
    h = c.line_height(font)
    y = c.height - h
    c.p.setFont(font)
    c.p.setPen(QPen(GRID, 0.004 * RESOLUTION))
    c.p.drawLine(QPointF(0, y - 0.03 * RESOLUTION), QPointF(c.width, y - 0.03 * RESOLUTION))
    c.p.setPen(GREY)
    left = c.elide(font, f"Release {details.release_id} · {details.dataset} · made with dpgui {__version__}",
                   c.width * 0.8)
    c.p.drawText(QRectF(0, y, c.width, h), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), left)
    c.p.drawText(QRectF(0, y, c.width, h), int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                 f"Page {page} of {PAGE_COUNT}")
    return y - 0.1 * RESOLUTION


def render_release_pdf(release: Release, details: ReleaseInfo, key_id: str | None) -> bytes:
    """The release as a three-page A4 PDF (bytes). Public values only; no QApplication needed.

    ``details``: the release's public labels; ``key_id``: the signer's key id (None: not signed).
    Drawing cost is O(K) numpy work plus a few thousand drawn points, whatever K (long curves are
    thinned per column to their min and max, so the 95 % band is never drawn narrower).
    """
    ensure_gui_application()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setResolution(RESOLUTION)
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait,
                                     QMarginsF(MARGIN_MM, MARGIN_MM, MARGIN_MM, MARGIN_MM),
                                     QPageLayout.Unit.Millimeter))
    writer.setTitle(PDF_TITLE)
    writer.setCreator(PDF_CREATOR)
    painter = QPainter()
    if not painter.begin(writer):
        raise RuntimeError("could not start drawing the PDF")
    try:
        c = _Canvas(painter, float(writer.width()), float(writer.height()))
        for page in range(1, PAGE_COUNT + 1):
            if page > 1:
                writer.newPage()
            top = _draw_header(c, release)
            bottom = _draw_footer(c, details, page)
            if page == 1:
                _draw_html(c, writer, top, bottom, _page1_html(release, details, key_id))
            elif page == 2:
                _draw_page2(c, top, bottom, release, details)
            else:
                _draw_html(c, writer, top, bottom, _page3_html(release, details, key_id))
    finally:
        painter.end()
    buffer.close()
    return bytes(data.data())
