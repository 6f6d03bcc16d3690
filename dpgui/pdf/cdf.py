"""The human-readable PDF of a release, drawn with Qt's own PDF writer (no widgets, no screenshots).

Three A4 pages: (1) what was released and with which parameters, with a small table of quantiles, the mean
and the sum (:func:`dpgui.core.cdf_moments.cdf_moments`);
(2) the released CDF with its 95 % band and the released records per bin (the charts are drawn by
:mod:`dpgui.pdf.cdf_charts`; this module lays out the page and writes the captions);
(3) "How to read this release" in plain language, with the verification commands. The page
furniture (A4 writer, test-noise strip, footer) is :mod:`dpgui.pdf.page`'s, the HTML style and the
privacy wording shared with the hierarchy report :mod:`dpgui.pdf.markup`'s.

Only public values are drawn: the fields of :class:`~dpgui.core.mechanism.Release` (released
cumulative counts, N as published or released, standard errors that depend only on the plan, the
plan itself) and the public labels of :class:`~dpgui.report.cdf.bundle.ReleaseInfo`. The confidential histogram is never
accepted here. :func:`render_release_pdf` returns the PDF's bytes and works headless (the CLI
calls it): :func:`dpgui.pdf.page.ensure_gui_application` starts an offscreen QGuiApplication when needed.
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QPdfWriter

from dpgui.core.cdf_moments import NO_MEAN, cdf_moments
from dpgui.core.margins import MARGIN_NAME, CdfMargins, cdf_margins
from dpgui.core.mechanism import Release
from dpgui.core.missing import MissingRule
from dpgui.core.plan import Plan, PrivacySpec
from dpgui.core.privacy_unit import privacy_unit_words, unit_of_source
from dpgui.core.quantiles import WholeNumbers, missing_interval95, noise_margin, quantiles, whole_number_step
from dpgui.formatting import (
    cdf_margin_words, format_delta, format_epsilon, format_fixed, format_level_budget, format_margin_records,
    format_number, format_percent, format_significant, moment_decimals, value_decimals,
)
from dpgui.pdf.cdf_charts import plot_bars, plot_cdf, release_bars
from dpgui.pdf.markup import (
    HTML_STYLE, HTML_TABLE, MINISIGN_COMMAND, VERIFY_COMMAND, delta_meaning, html_code, html_rows, html_text,
    privacy_budget_text, seeded_noise_banner_html, utc_text,
)
from dpgui.pdf.page import (
    GREY, INK, RESOLUTION, Canvas, Footer, PdfDrawing, draw_html, draw_test_banner, release_footer, test_banner_height,
)
from dpgui.report.bundle import source_text
from dpgui.report.cdf.bundle import ReleaseInfo, focus_json
from dpgui.vocabulary import CdfConsistency, Neighbours, Noise
from dpgui.workspace.words import CONSISTENCY_LABELS, ESTIMATOR_LABELS, NEIGHBOURS_LABELS

__all__ = ["PAGE_COUNT", "cdf_section", "release_drawing", "render_release_pdf"]

PAGE_COUNT = 3
QUANTILE_PROBABILITIES = (0.1, 0.25, 0.5, 0.75, 0.9)
QUANTILE_NAMES = {0.25: "lower quartile", 0.5: "median", 0.75: "upper quartile"}

PDF_TITLE = "Differentially private release"
NOISE_SECURE = "Exact discrete Laplace noise (whole numbers) from the operating system's secure random source"
NOISE_SECURE_GAUSSIAN = "Exact discrete Gaussian noise (whole numbers) from the operating system's secure random source"
NOISE_TEST = "Seeded test generator: NOT secure, for testing only"
CONSISTENCY_WORDS: dict[str, str] = {
    CdfConsistency.L2: "a least-squares fit", CdfConsistency.L1: "a least-absolute-deviation fit",
}


def missing_text(release: Release, rule: str) -> str:
    """What happened to missing values, in words (docs/privacy-model.md "Missing values"), with the released
    missing count and its 95 % margin under the bucket rule."""
    if rule == MissingRule.BUCKET and release.missing is not None:
        interval = missing_interval95(release)
        assert interval is not None, "a release with a missing count has the missing values' leaf"
        low, high = interval
        return (f"Counted in a noised 'missing' bucket; N = all rows. Released number of missing values: "
                f"{format_number(round(release.missing))} (the true number lies between {format_number(math.floor(low))} "
                f"and {format_number(math.ceil(high))} with at least 95 % probability). The CDF and the "
                "quantiles are those of the values (out of the released number of values, N minus the missing "
                "count).")
    if rule == MissingRule.IMPUTE and release.plan.privacy.impute is not None:
        return (f"Counted as the value {format_number(release.plan.privacy.impute)}, chosen before the release "
                "(imputed; a value outside the bounds is counted in the first or last bin like any other); N = all "
                "rows. The number of missing values is not published on its own.")
    if rule == MissingRule.DROP and not release.plan.privacy.root_public:
        return ("Dropped (a neighbour under add/remove: a value turning into a missing one is the removal of "
                "one record); N is the released, noisy number of values.")
    if rule == MissingRule.DROP:
        return "Rows without a value were left out before counting (a release of an older version of dpgui)."
    if rule == MissingRule.ERROR:
        return "The release would have stopped at a missing value (a retired policy of an older version of dpgui)."
    return f"Rule {rule!r}"

# ----------------------------------------------------------------------------------------------
# the application Qt needs for fonts and painting


# ----------------------------------------------------------------------------------------------
# numbers in words


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
        if plan.noise == Noise.GAUSSIAN and scale is not None:
            value += f", σ = {format_significant(math.sqrt(float(scale)))}"
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
    rpp_text = privacy_unit_words(unit_of_source(details.source), privacy.records_per_person)
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
        ("Noise", html_text((NOISE_SECURE_GAUSSIAN if plan.noise == Noise.GAUSSIAN else NOISE_SECURE) if release.secure
                     else NOISE_TEST + (" (Gaussian)" if plan.noise == Noise.GAUSSIAN else " (Laplace)"))),
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


def _moment_rows(release: Release, whole_numbers: bool = False) -> tuple[list[tuple[str, str, str]], str]:
    """The mean and the sum as rows of the quantile table (estimate, the interval that holds the true figure of
    the values) and the sentence under it: what the noise and binning each add."""
    moments = cdf_moments(release, whole_numbers)
    half = moments.per_value
    rows, parts = [], []
    if moments.mean is None:
        parts.append(NO_MEAN[0].upper() + NO_MEAN[1:] + ".")
    else:
        mean = moments.mean
        places = moment_decimals(mean.noise_margin, half)
        rows.append(("Mean", format_fixed(mean.value, places),
                     f"{format_fixed(mean.low, places)} to {format_fixed(mean.high, places)}"))
        parts.append(f"The noise moves the mean by at most ± {format_fixed(mean.noise_margin, places)} (95 %)"
                     + (f" and binning by at most ± {format_fixed(half, max(places, moment_decimals(half)))}." if half
                        else "; binning moves nothing (each bin holds one whole number)."))
    total = moments.sum
    places = moment_decimals(total.noise_margin, total.binning)
    rows.append(("Sum", format_fixed(total.value, places),
                 f"{format_fixed(total.low, places)} to {format_fixed(total.high, places)}"))
    parts.append(f"The sum: ± {format_fixed(total.noise_margin, places)} (95 %)"
                 + (f" and ± {format_fixed(half, moment_decimals(half))} per value." if half else "."))
    note = ("Mean and sum: of the values, each taken at the middle of its bin (where inside its bin a value lies is not "
            "released), values outside the bounds at the nearest bound; read from the released CDF at no extra privacy. "
            + " ".join(parts) + " The interval allows for both: it holds the true mean (sum) of the values in at "
            "least 95 of 100 releases.")
    return rows, note


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _page1_html(release: Release, details: ReleaseInfo, key_id: str | None) -> str:
    signer = (f"key {html_text(key_id)}" if key_id
              else "not signed (no signature: the files' origin cannot be checked)")
    facts = [
        ("Data set", html_text(details.dataset)),
        ("Released", html_text(utc_text(details.created_utc)) + " (when the noise was drawn)"),
        ("Release id", html_text(details.release_id)),
        ("Signed by", signer),
    ]
    if details.source is not None:  # where the data was read and who counted it
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
    out.append("<h2>Released quantiles, mean and sum</h2>")
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
    moment_rows, moment_note = _moment_rows(release, details.whole_numbers is not None)
    out += html_rows(rows + moment_rows, "", 1)
    out.append(f"</table><p>{html_text(moment_note)}</p></body></html>")
    return "".join(out)


# ----------------------------------------------------------------------------------------------
# page 3: how to read it

def _protection_html(privacy: PrivacySpec) -> str:
    """The protection model in words: what the neighbour model hides, and the rows per person."""
    if privacy.neighbours == Neighbours.CHANGE:
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
    return neighbour


def _consistency_html(release: Release) -> str:
    """Why the curve never goes down (the consistency step), or that it may (none)."""
    if release.consistency == CdfConsistency.NONE:
        return ("<b>The curve may go down in places.</b> No consistency step was applied, so the counts are "
                "the unbiased noisy estimates: they can decrease slightly, fall below 0 or rise above N. Such "
                "dips are noise, not data.")
    return ("<b>Why the curve never goes down.</b> After the noise was added, the counts were adjusted to "
            "the closest whole numbers that never decrease, stay between 0 and N and end at N "
            f"({CONSISTENCY_WORDS.get(release.consistency, release.consistency)}). A true "
            "cumulative count can never decrease, so this only removes impossible results of the noise "
            "(such as negative records in a bin). It uses the published numbers only, so it costs no "
            "privacy.")


def _budget_html(plan: Plan) -> str:
    """The section on what ε (and δ, when allowed) mean for this release, and how releases add up."""
    privacy = plan.privacy
    eps = privacy.epsilon
    factor = math.exp(eps)
    factor_text = f"{factor:.3g}" if factor < 1000 else format_number(round(factor))
    gaussian = plan.noise == Noise.GAUSSIAN
    out = ["<h2>What ε (epsilon) and δ (delta) mean here</h2>" if gaussian or privacy.delta > 0
           else "<h2>What ε (epsilon) means here</h2>"]
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
    return "".join(out)


def _checking_html(key_id: str | None) -> str:
    """The section on checking the bundle: who signed it, and the commands that verify it."""
    signed = (f"It was signed with the key whose id is <b>{html_text(key_id)}</b>; the public key file "
              "(KEY.pub) you check it with must show the same id."
              if key_id else
              "<b>This release was not signed</b>, so nobody can check who made it; the SHA-256 hashes in the "
              "manifest still show whether a file was changed after it was written.")
    out = ["<h2>Checking that the files are genuine</h2>"]
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
        "after they were signed and must not be trusted.</p>")
    return "".join(out)


def _page3_html(release: Release, details: ReleaseInfo, key_id: str | None) -> str:
    """Page 3, "How to read this release": ε and δ, the noise and its 95 % intervals, what else makes a
    count differ from the truth, and how to check the bundle."""
    column = html_text(details.column)
    margins = stated_margins(release)
    out = ["<html>", HTML_STYLE, "<body>", "<h1>How to read this release</h1>"]
    out.append(
        f"<p>This release describes how the values of <b>{column}</b> are spread: for every bin edge, how many "
        "records have a value at or below it (a cumulative distribution, or CDF). It was made with "
        "<b>differential privacy</b>, a guarantee about what the published numbers can reveal about any single "
        "person in the data.</p>")
    out.append(_budget_html(release.plan))
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
    out.append(f"<p>{_consistency_html(release)}</p>")
    out.append(f"<p>{_protection_html(release.plan.privacy)}</p>")
    out.append(_checking_html(key_id))
    out.append("</body></html>")
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
    if release.consistency == CdfConsistency.NONE:
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


def _draw_header(c: Canvas, release: Release) -> float:
    """A red 'test release' strip on every page of an insecure release; returns the height used."""
    if release.secure:
        return 0.0
    h = test_banner_height(c)
    draw_test_banner(c, h)
    return h + 0.08 * RESOLUTION


def render_release_pdf(release: Release, details: ReleaseInfo, key_id: str | None) -> bytes:
    """The release as a three-page A4 PDF (bytes) of :func:`release_drawing`. No QApplication needed."""
    return release_drawing(release, details, key_id).write()


def release_drawing(release: Release, details: ReleaseInfo, key_id: str | None) -> PdfDrawing:
    """The release's three A4 pages. Public values only.

    ``details``: the release's public labels; ``key_id``: the signer's key id (None: not signed).
    Drawing cost is O(K) numpy work plus a few thousand drawn points, whatever K (long curves are
    thinned per column to their min and max, so the 95 % band is never drawn narrower).
    """

    def draw_pages(c: Canvas, writer: QPdfWriter, footer: Footer) -> None:
        for page in range(1, PAGE_COUNT + 1):
            if page > 1:
                writer.newPage()
            top = _draw_header(c, release)
            bottom = footer(c, page, PAGE_COUNT)
            if page == 1:
                draw_html(c, writer, top, bottom, _page1_html(release, details, key_id))
            elif page == 2:
                _draw_page2(c, top, bottom, release, details)
            else:
                draw_html(c, writer, top, bottom, _page3_html(release, details, key_id))

    return PdfDrawing(PDF_TITLE, release_footer(details.release_id, details.dataset), draw_pages)


def cdf_section(release: Any, info: Any, key_id: str | None, extra: dict[str, Any] | None) -> PdfDrawing:
    """The report as :data:`dpgui.pdf.sections.SECTIONS` draws it (its signature is :data:`~dpgui.pdf.sections.PdfSection`)."""
    if extra is not None:  # a bug: a CDF's report has no section of its own besides the release
        raise TypeError("a CDF report takes no extra section")
    return release_drawing(release, info, key_id)
