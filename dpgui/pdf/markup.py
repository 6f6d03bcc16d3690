"""The HTML and the sentences both PDF reports print (no Qt): the page style, striped tables, commands
kept on one line, the test-noise banner, and the privacy budget and δ in words for a plan with Laplace or
Gaussian noise. :mod:`dpgui.pdf.page` lays the HTML out on the page."""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Protocol

from dpgui.core.plan import PrivacySpec
from dpgui.formatting import format_delta, format_epsilon, format_odds, format_significant
from dpgui.vocabulary import Noise

__all__ = [
    "CONVERSION_WORDS", "HTML_STYLE", "HTML_TABLE", "MINISIGN_COMMAND", "TEST_BANNER", "VERIFY_COMMAND", "NoisedPlan",
    "delta_meaning", "html_code", "html_rows", "html_text", "privacy_budget_text", "seeded_noise_banner_html",
    "utc_text",
]

TEST_BANNER = "TEST RELEASE — NOT FOR PUBLICATION"
TEST_BANNER_DETAIL = (
    "The noise of this release came from a reproducible test generator, not from a secure random source, "
    "so the confidential numbers could be reconstructed from it. Do not publish or share it."
)
CONVERSION_WORDS = "converted to ε and δ with the bound of Canonne, Kamath and Steinke (2020)"
VERIFY_COMMAND = "dpgui verify NAME.manifest.json --pubkey KEY.pub"
MINISIGN_COMMAND = "minisign -Vm NAME.manifest.json -p KEY.pub"


def utc_text(moment: datetime) -> str:
    """``moment`` in UTC, e.g. "2026-11-25 10:42:01 UTC" (a naive time is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def html_text(text: object) -> str:
    """``text`` escaped for the PDF's HTML."""
    return html.escape(str(text))


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


def seeded_noise_banner_html(secure: bool) -> str:
    """The red "test noise" box at the top of page 1 of a release drawn with test noise ("" if ``secure``)."""
    if secure:
        return ""
    return (f'<table width="100%" cellpadding="6" cellspacing="0" bgcolor="#FDECEE">'
            f'<tr><td><p class="banner" style="font-size: 13pt;">{html_text(TEST_BANNER)}</p>'
            f'<p>{html_text(TEST_BANNER_DETAIL)}</p></td></tr></table>')


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
    if plan.noise == Noise.GAUSSIAN:
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
    if plan.noise == Noise.GAUSSIAN:
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
