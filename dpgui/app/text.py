"""The app's words: error messages made readable, and the plain-language explanations of each
privacy setting (kept in one place so the wording stays consistent across screens)."""

from __future__ import annotations

import math
from typing import TypeVar

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox

# Qt-free words shared with the release flow; the app reads them from here too (explicit re-exports).
from dpgui.workspace.words import CONSISTENCY_LABELS as CONSISTENCY_LABELS
from dpgui.workspace.words import ESTIMATOR_LABELS as ESTIMATOR_LABELS
from dpgui.workspace.words import NEIGHBOURS_LABELS as NEIGHBOURS_LABELS
from dpgui.workspace.words import escape as escape
from dpgui.workspace.words import friendly as friendly
from dpgui.workspace.words import sentence as sentence


def literal_tooltip(plain: str) -> str:
    """A tooltip that shows ``plain`` literally: Qt guesses rich text from tags in a tooltip, so the
    text is escaped and marked as rich text explicitly."""
    return f"<p>{escape(plain)}</p>"


_TextWidget = TypeVar("_TextWidget", QLabel, QMessageBox)


def plain_text(widget: _TextWidget) -> _TextWidget:
    """Show a label's or message box's text literally (Qt's default guesses rich text from tags):
    for widgets whose messages are plain sentences that may quote user text."""
    widget.setTextFormat(Qt.TextFormat.PlainText)
    return widget


APP_NAME = "dpgui"
TAGLINE = "Publish statistics from a confidential table without revealing anyone in it."

EPSILON_HELP = (
    "ε (epsilon) is the privacy budget of this release: smaller means more noise and stronger "
    "protection. Typical values: 0.1 (strict) to 4 (loose)."
)
EPSILON_TOOLTIP = (
    "ε bounds how much the published numbers can change when one person's data changes: at most "
    "by a factor e^ε in probability. ε = 1 means a factor of about 2.7. The budget is spent when "
    "you release and cannot be recovered."
)
NEIGHBOURS_HELP = {
    "change": "Protects the value of each person's record. The total number of records is published exactly.",
    "addremove": "Also hides whether a person is in the table at all. The total is released with noise.",
}
NEIGHBOURS_TOOLTIP = (
    "Which two tables must look alike: tables that differ in one person's value (N public), or "
    "tables that differ by one person being present or absent (N private). The second is "
    "stronger; under it the app estimates N from the released counts."
)
QUERY_ROWS_PUBLIC_LABEL = "The number of rows this query returns is &public"
QUERY_ROWS_PUBLIC_HELP = (
    "Tick this only if the number of rows that this query selects may be published, for example because it is "
    "in an official table already. With it, you may protect against one person's record changing, and the "
    "release then publishes that number exactly. Without it, dpgui keeps the number private: a query selects a "
    "group (e.g. one region), and the group's size is not public just because the table's size is."
)


def query_rows_private_note(switched: bool) -> str:
    """Under "Protect against" for a query whose row count was not stated public: what the window did."""
    tick = f"If it is public, tick “{QUERY_ROWS_PUBLIC_LABEL.replace('&', '')}” in File → Connect to a Database"
    if switched:
        return ("Switched to “One person may be added or removed”: this data is a query, and the number of rows "
                f"it returns is not public. {tick}.")
    return ("“One person's record may change” is not offered: it would publish the number of rows this query "
            f"returns, which is not public. {tick}.")


RECORDS_PER_PERSON_HELP = (
    "The most rows any single person can have in the table. Noise grows in proportion."
)
RECORDS_PER_PERSON_TOOLTIP = (
    "If one person can appear in up to L rows (e.g. several visits), the release must hide all L "
    "of them together, so every level's noise is multiplied by L. Use 1 if each person has one row."
)
PERSON_COLUMN_TOOLTIP = (
    "The column that identifies the person of each row (e.g. a patient number, a tail number). With one, dpgui "
    "keeps at most 'Records per person' rows of each person, chosen at random (not by their values), so that "
    "number is enforced, and protects against adding or removing one person. With none, the records per person "
    "are your declaration, not checked."
)
PRESETS = (("Strict", 0.1), ("Moderate", 1.0), ("Loose", 4.0))
PRESET_TOOLTIP = "Sets ε to {eps:g}. You can change the value afterwards."

BRANCHING_HELP = (
    "How the bins are grouped into a tree: 'auto' lets the app choose; '16' splits each node into "
    "16; '4x16x16' sets each level."
)
ESTIMATOR_TOOLTIP = (
    "How the noisy node counts are combined into each cumulative count. The recommended one uses "
    "every level optimally (least variance); the other adds up the fewest nodes (the covering sum of Rameshwar et al. 2024)."
)
CONSISTENCY_TOOLTIP = (
    "After the noise, the counts are adjusted so that the CDF never goes down and ends at N. This "
    "uses only released numbers, so it costs no privacy."
)
OBJECTIVE_LABELS = {
    "total": "Smallest error on average",
    "max": "Smallest error at the worst point",
}
OBJECTIVE_TOOLTIP = (
    "What the optimiser minimises: the sum of variances over all CDF points, or the largest "
    "variance of any single CDF point."
)
FOCUS_LABELS = {
    "everywhere": "Everywhere (default)",
    "lower": "Lowest 10 % of the range between the bounds",
    "upper": "Highest 10 % of the range between the bounds",
    "middle": "Middle 20 % of the range between the bounds",
    "between": "Between … and …",
}
FOCUS_TOOLTIP = (
    "If some values matter more to you (for example the youngest ages, or the tails of a distribution), the "
    "app can shape the tree and split the budget so that the counts there are more accurate, at the price of "
    "the others. The lowest, highest and middle parts are parts of the range between the bounds of step 1, "
    "not of the data. A plan made for the region is only used when it makes the 95 % error margin there at "
    "least 5 % smaller; privacy is the same (the same ε is spent)."
)
FOCUS_BETWEEN_TOOLTIP = "The region you need accurate, in the column's own units (between the bounds of step 1)."
LOCK_TOOLTIP = "Keep this level's budget fixed when other levels change or when you auto-optimize."
PUBLIC_N_TOOLTIP = (
    "A public number of records, to turn an error in % into records. Under 'N is public' it is the "
    "file's row count; under 'N is private' only a figure already published (an estimate) may be used."
)
PUBLIC_N_HELP = {
    "change": "N is public under this protection: the file's row count is used.",
    "addremove": "N is private under this protection, so the file's row count is never used here. Type a "
                 "published estimate of N to work in % of N, or give the error in records.",
}
PUBLIC_N_NEEDED = ("N is private: type a published estimate of N (not the file's count), or give the "
                   "accepted error in records.")
ACCURACY_HELP = (
    "Say how much error you accept and the app finds the smallest ε (the least privacy spent) "
    "that achieves it. The error is a 95 % margin: the half-width of the 95 % band published with each "
    "count, which holds the true count at least 95 times out of 100."
)
MISSING_HELP = (
    "Missing values (empty cells, NA, NaN; in a one-column CSV, blank lines) follow a rule of step 2, never "
    "the data: under “change one record” a noised “missing” count or a value you choose, N = all rows; under "
    "“add or remove one record” they are left out (a neighbour)."
)
WHOLE_NUMBERS_TOOLTIP = (
    "Tick this if the column can only hold whole numbers (counts, minutes, years of age), as you know from "
    "what it means: your statement, never read from the data. The app then offers bins centred on whole "
    "numbers and shows quantiles as whole numbers; the statement is recorded in the report."
)
WHOLE_NUMBERS_BY_TYPE = "The file's declared type says so: {reason}"
MISSING_RULE_LABELS = {
    "bucket": "Counted apart, with noise (default)",
    "impute": "Counted as a value I choose",
}
MISSING_RULE_TOOLTIP = (
    "Under “change one record” N = all rows is published, so missing values must be counted somewhere. "
    "By default they get a noised count of their own (one more leaf of the tree). Or they are counted as a "
    "value you choose before the release (e.g. 0), like any other value: no count of their own, and the "
    "tree is exactly the one for the K bins. Either way one value turning missing changes one record."
)
MISSING_RULE_HELP = {
    "bucket": "Missing values are counted apart, with noise; the CDF is that of the values.",
    "impute": "Missing values are counted as this value (clamped into the bounds); the CDF includes them there.",
    "addremove": "Missing values are left out: under “add or remove one record” a missing row is a removed "
                 "record, which this protection already covers.",
}
BOUNDS_HELP = (
    "Bounds must come from public knowledge (what the column means), never from the data. "
    "Values outside are counted in the first or last bin."
)
CONFIDENTIAL_BANNER = (
    "Showing confidential data for your checking only. It is not part of the release."
)
DATASET_HELP = (
    "Releases about the same people share one privacy budget. Use the same name for every file "
    "that holds these people's data."
)
DATASET_TOOLTIP = (
    "The name under which the budget ledger adds up the ε spent on this data (Tools → Budget "
    "Ledger). The first release asks you for the dataset's total budget."
)

# ---- δ and the noise: (ε, δ)-DP with Laplace or discrete Gaussian noise
DELTA_PRESETS = (("0 (pure)", 0.0), ("10⁻⁶", 1e-6), ("10⁻⁹", 1e-9))
DELTA_PRESET_TOOLTIP = "Sets δ to {delta}. You can change the value afterwards."
DELTA_TOOLTIP = (
    "δ (delta) is the probability that the ε guarantee fails. δ = 0 is pure ε-DP: the guarantee holds "
    "always. A δ > 0 (e.g. 1e-9) allows Gaussian noise, which can give smaller errors for trees with "
    "many levels. Choose δ well below 1/N, N being the number of records; never above (above 0.001 it is "
    "refused)."
)
NOISE_LABELS = {
    "auto": "Automatic (recommended)",
    "laplace": "Laplace (pure ε-DP)",
    "gaussian": "Gaussian (needs δ > 0)",
}
NOISE_TOOLTIP = (
    "The kind of random noise added to each count. Laplace noise gives pure ε-DP and does not use δ. "
    "Gaussian noise needs δ > 0; its privacy is accounted with zCDP (ρ) and converted to (ε, δ). "
    "Automatic plans both and keeps the one with the smaller projected error."
)
GAUSSIAN_NEEDS_DELTA = ("Gaussian noise needs δ > 0 (with δ = 0 only pure ε-DP Laplace noise is possible). "
                        "Set δ, e.g. 1e-9, or choose Automatic or Laplace noise.")
NOISE_NAMES = {"laplace": "Laplace", "gaussian": "Gaussian"}


def format_delta(delta: float) -> str:
    """δ in plain digits: '0', '1e-9', '1e-6', '0.001', '2.5e-10' (6 significant digits, no
    leading zeros in the exponent)."""
    shown = f"{delta:g}"
    if "e" in shown:
        mantissa, exponent = shown.split("e")
        shown = f"{mantissa}e{int(exponent)}"
    return shown


def _one_in(delta: float) -> str:
    """'one in a million' for 1e-6, 'one in a billion' for 1e-9, else 'one in 12,345'."""
    words = {1e-3: "a thousand", 1e-6: "a million", 1e-9: "a billion", 1e-12: "a trillion"}
    for value, word in words.items():
        if math.isclose(delta, value, rel_tol=1e-9):
            return f"one in {word}"
    return f"one in {1 / delta:,.0f}" if 1 / delta < 1e15 else f"{delta:.3g}"


def delta_help(delta: float | None, n_public: int | None = None) -> str:
    """One plain sentence on what this δ means (None: δ is not valid, nothing to say). With a public
    number of records N, says when δ is not well below 1/N."""
    if delta is None:
        return ""
    if delta == 0:
        return "δ = 0: pure ε-DP, the guarantee holds always."
    words = (f"δ = {format_delta(delta)}: the ε guarantee may fail with a probability of at most {_one_in(delta)}; "
             "choose δ well below 1/N (N = number of records).")
    if n_public and delta * n_public > 0.01:
        words += (f" <b>This δ is not well below 1/N = {1 / n_public:.2g} (N = {n_public:,}): "
                  "choose a smaller δ, e.g. 1e-9.</b>")
    return words
EPSILON_COLUMN_TOOLTIP = "Each level's share of ε (Laplace noise): the shares add up to your ε."
RHO_COLUMN_TOOLTIP = (
    "With Gaussian noise each level's budget is a ρ (rho, zero-concentrated DP): the levels' ρ add up to "
    "the ρ that your (ε, δ) allows, so the whole release is (ε, δ)-DP. Smaller ρ means more noise."
)
