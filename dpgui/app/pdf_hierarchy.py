"""The human-readable PDF of a hierarchy release (counts over 2–4 nested categorical columns).

Two A4 pages, drawn with the CDF report's PDF writer (:mod:`dpgui.app.pdf_report`, whose
page layout, footer, styles, privacy wording and verification text are reused): (1) what was released,
the parameters and the projected error per level (bias², variance and MSE, budgets), the top
level's released counts with their 95 % intervals; (2) how to read it, with the verification
commands. Public values only: the released counts and intervals, the node list, the plan and its
projection (computed at a public prior's counts or at the released counts), the
:class:`~dpgui.report.hierarchy_bundle.HierarchyReleaseInfo` labels. Works headless.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtGui import QPdfWriter

from dpgui.app.pdf_charts import Canvas
from dpgui.app.pdf_report import (
    CONVERSION_WORDS, HTML_STYLE, HTML_TABLE, MINISIGN_COMMAND, VERIFY_COMMAND, delta_meaning, draw_footer, draw_html,
    html_code, html_rows, html_text, privacy_budget_text, seeded_noise_banner_html, utc_text, write_pdf,
)
from dpgui.app.text import NEIGHBOURS_LABELS
from dpgui.formatting import format_delta, format_epsilon, format_level_budget, format_number, format_significant
from dpgui.report.bundle import source_text
from dpgui.report.hierarchy_bundle import HierarchyReleaseInfo

if TYPE_CHECKING:
    from dpgui.core.hierarchy import HierarchyPlan, HierarchyRelease

__all__ = ["HIERARCHY_PAGE_COUNT", "render_hierarchy_pdf"]

HIERARCHY_PAGE_COUNT = 2
PDF_TITLE = "Differentially private counts over a hierarchy"
TOP_LEVEL_ROWS = 30  # the top level's nodes listed on page 1 (the CSV holds every node)
NOISE_WORDS = {
    "laplace": "Exact discrete Laplace noise (whole numbers), one budget ε per level (Ko, Ziani & Fioretto 2025)",
    "gaussian": "Exact discrete Gaussian noise (whole numbers), one budget ρ per level (zCDP; Ghazi et al. 2023, Corollary 2.7)",
    "multiplicative": "Sparse vector with truncated Laplace noise, multiplicative and additive guarantee "
                      "(Ghazi et al. 2023, Algorithms 1–2)",
}
ALLOCATION_WORDS = {
    "uniform": "equal budget on every level",
    "optimal": "least weighted error within the budget (Ko, Ziani & Fioretto 2025, program 6)",
    "target": "least budget that meets a target error (Ko, Ziani & Fioretto 2025, program 7)",
    "custom": "set by hand by the privacy officer",
}
CONSISTENCY_WORDS = {
    "topdown": "Top-down: from the root, each node's children were made non-negative whole numbers that add up "
               "exactly to their parent's released count (Ko, Ziani & Fioretto 2025, program 8)",
    "gls": "Generalised least squares on the whole tree (the best linear unbiased estimate), then made non-negative "
           "whole numbers adding up exactly to their parent, top-down",
    "none": "None: each node is its own noisy count, clamped at 0 (parents need not equal the sum of their children)",
}
MULTIPLICATIVE_CONSISTENCY = ("None: each node is the mechanism's own estimate (making the counts consistent would "
                              "void its multiplicative guarantee; parents need not equal the sum of their children)")


MULTIPLICATIVE_BUDGET = ("none: the mechanism spends its whole budget over the rounds of Ghazi et al. 2023 (noisy comparisons "
                         "of every node with a ladder of thresholds), not level by level")


def _no_counts_words(plan: HierarchyPlan) -> str:
    """The "Counts for the budgets" cell when the plan used no counts, by what set its budgets."""
    if plan.noise == "multiplicative":
        return "none (the mechanism needs no counts)"
    if plan.allocation == "custom":
        return "none (the level budgets were set by hand)"
    return "none (uniform budgets need no counts)"


def _interval_words(release: HierarchyRelease) -> str:
    """What the 95 % intervals guarantee (:func:`dpgui.core.hierarchy.release_hierarchy`): per node for
    clamped and multiplicative releases; on average over a level's nodes for consistent ones (a
    parametric bootstrap), which must not be worded as a per-node guarantee."""
    plan = release.plan
    if plan.noise != "multiplicative" and plan.consistency in ("topdown", "gls"):
        return ("the 95 % interval of a node holds its true count in about 95 % of cases on average over the nodes "
                "of its level (estimated by simulation; not guaranteed for each node)")
    return "the 95 % interval of each node holds its true count with at least 95 % probability"


def _consistency_words(plan: HierarchyPlan) -> str:
    if plan.noise == "multiplicative":
        return MULTIPLICATIVE_CONSISTENCY
    return CONSISTENCY_WORDS.get(plan.consistency, plan.consistency)


def _privacy_text(plan: HierarchyPlan) -> str:
    """The privacy budget in words: the CDF report's wording for Laplace and Gaussian noise (it reads
    only the plan's noise and privacy), its own sentence for the multiplicative mechanism."""
    privacy = plan.privacy
    if plan.noise == "multiplicative":
        return (f"ε = {format_epsilon(privacy.epsilon)} and δ = {format_delta(privacy.delta)} ((ε, δ)-differential "
                "privacy by the composition of the Algorithms 1–2 of Ghazi et al. 2023)")
    return privacy_budget_text(plan)


def _delta_words(plan: HierarchyPlan) -> str:
    if plan.noise == "multiplicative":
        delta = format_delta(plan.privacy.delta)
        return (f"δ = {delta}: beyond the factor e^ε, the probability of any published result may differ by at most "
                f"{delta} between two tables that differ in one person's records.")
    return delta_meaning(plan)


def _budget_cell(plan: HierarchyPlan, level: int) -> str:
    budgets = plan.level_budgets
    if not budgets:
        return "—"
    budget = float(budgets[level])
    name = "ρ" if plan.noise == "gaussian" else "ε"
    if budget <= 0:
        return "0 (exact: N is public)" if level == 0 and plan.privacy.root_public else "0 (not released)"
    return f"{name} = {format_level_budget(budget)}"


def _level_rows(release: HierarchyRelease, projection: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row per level: level, name, nodes, budget, projected bias², variance, MSE (sums over the
    level's nodes) and the root-mean-square error of one node."""
    names = ("all records", *release.hierarchy.level_names)
    rows: list[tuple[str, ...]] = []
    for entry in projection["levels"]:
        level, nodes = int(entry["level"]), int(entry["nodes"])
        rms = math.sqrt(max(float(entry["mse"]), 0.0) / max(nodes, 1))
        rows.append((str(level), html_text(names[level] if level < len(names) else level), format_number(nodes),
                     html_text(_budget_cell(release.plan, level)), format_significant(float(entry["bias2"]), 3),
                     format_significant(float(entry["variance"]), 3), format_significant(float(entry["mse"]), 3),
                     "± " + format_significant(rms, 3)))
    return rows


def _top_level_rows(release: HierarchyRelease) -> list[tuple[str, ...]]:
    counts = np.asarray(release.counts[1])
    lower, upper = np.asarray(release.lower[1]), np.asarray(release.upper[1])
    labels = release.hierarchy.labels[0]
    return [(html_text(labels[i]), format_number(int(counts[i])), f"{format_number(float(lower[i]))} – "
             f"{format_number(float(upper[i]))}") for i in range(min(len(labels), TOP_LEVEL_ROWS))]


def _page1_html(release: HierarchyRelease, info: HierarchyReleaseInfo, projection: dict[str, Any],
                key_id: str | None) -> str:
    plan = release.plan
    privacy = plan.privacy
    hierarchy = release.hierarchy
    root = int(np.asarray(release.counts[0])[0])
    total = (f"{format_number(root)} (public, published exactly)" if privacy.root_public
             else f"{format_number(root)} (released with noise: N is private)")
    counts_source = {"prior file": "a public prior file" + (f" ({html_text(info.prior_name)})" if info.prior_name else ""),
                     "confidential data (opted in)": "the confidential data: the officer opted in, and this is "
                     "recorded in the manifest", "none": _no_counts_words(plan)}
    facts = [
        ("Data set", html_text(info.dataset)),
        ("Released", html_text(utc_text(info.created_utc)) + " (when the noise was drawn)"),
        ("Release id", html_text(info.release_id)),
        ("Signed by", f"key {html_text(key_id)}" if key_id else "not signed (the files' origin cannot be checked)"),
    ]
    if info.source is not None:  # where the data was read and who counted it (manifest schema version 4)
        facts.append(("Data source", html_text(source_text(info.source))))
    parameters = [
        ("Levels", " &gt; ".join(html_text(n) for n in hierarchy.level_names) + " ("
         + ", ".join(format_number(int(n)) for n in hierarchy.level_sizes[1:]) + " categories)"),
        ("Node list", "from a public prior file" if info.node_list_source == "prior file" else
         "from the data: the officer declared its categories public (e.g. an official list), and they are published"),
        ("Counts for the budgets", counts_source.get(plan.prior_source, html_text(plan.prior_source))),
        ("Noise", html_text(NOISE_WORDS.get(plan.noise, plan.noise)) + (
            "" if info.secure else " — seeded test generator, NOT secure")),
        ("Privacy budget", html_text(_privacy_text(plan))),
        ("Budgets per level", html_text(MULTIPLICATIVE_BUDGET) if plan.noise == "multiplicative" else
         html_text(ALLOCATION_WORDS.get(plan.allocation, f"{plan.allocation} allocation"))
         + (f" (target weighted MSE {format_significant(plan.target_mse, 3)})" if plan.target_mse else "")
         + "; weights " + ", ".join(format_significant(float(w), 3) for w in plan.weights)),
        ("Protection model", html_text(NEIGHBOURS_LABELS.get(privacy.neighbours, privacy.neighbours))
         + (f"; up to {privacy.records_per_person} records per person" if privacy.records_per_person > 1 else "")),
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
    out.append(f"<p>Sums over each level's nodes, in records² (computed at {html_text(projection.get('counts', 'the counts'))}"
               f"; {html_text(projection.get('method', ''))}): the squared bias of the non-negativity clamp, the variance "
               "of the noise, their sum (the mean squared error, MSE), and the typical error of one node (the square "
               f"root of the MSE per node). Weighted MSE across levels: "
               f"{format_significant(float(projection.get('weighted_mse', 0.0)), 4)}.</p>")
    out.append('<table width="100%" cellpadding="4" cellspacing="0"><tr><th>Level</th><th>Name</th>'
               '<th align="right">Nodes</th><th align="right">Budget</th><th align="right">Bias²</th>'
               '<th align="right">Variance</th><th align="right">MSE</th><th align="right">Per node</th></tr>')
    out += html_rows(_level_rows(release, projection), "", 2)
    out.append("</table>")
    top = hierarchy.level_sizes[1]
    out.append(f"<h2>Released counts of {html_text(hierarchy.level_names[0])}</h2>")
    out.append(f"<p>{'The first ' + str(TOP_LEVEL_ROWS) + ' of ' if top > TOP_LEVEL_ROWS else ''}"
               f"{format_number(int(top))} categories; {html_text(_interval_words(release))}.</p>")
    out.append('<table width="70%" cellpadding="4" cellspacing="0"><tr><th>Category</th>'
               '<th align="right">Released count</th><th align="right">95 % interval</th></tr>')
    out += html_rows(_top_level_rows(release), "", 1)
    out.append("</table>")
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
                 if plan.noise == "gaussian" and privacy.rho is not None else "") + ".")
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
            "would make it negative it is 0, which biases small counts slightly upwards (the bias² column). In the "
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


def render_hierarchy_pdf(release: HierarchyRelease, info: HierarchyReleaseInfo, projection: dict[str, Any],
                         key_id: str | None) -> bytes:
    """The hierarchy release as a two-page A4 PDF (bytes). Public values only; no QApplication needed.

    ``projection``: :func:`dpgui.report.hierarchy_bundle.projection_json` of the plan's projection (at
    a public prior's counts or at the released counts); ``key_id``: the signer's key id (None: not
    signed). O(levels + the top level's first rows).
    """
    pages = (_page1_html(release, info, projection, key_id), _page2_html(release, key_id))

    def draw_pages(c: Canvas, writer: QPdfWriter) -> None:
        for page, source in enumerate(pages, start=1):
            if page > 1:
                writer.newPage()
            bottom = draw_footer(c, info.release_id, info.dataset, page, HIERARCHY_PAGE_COUNT)
            draw_html(c, writer, 0.0, bottom, source)

    return write_pdf(PDF_TITLE, draw_pages)
