"""The app's words: error messages made readable, and the plain-language explanations of each
privacy setting (kept in one place so the wording stays consistent across screens)."""

from __future__ import annotations

from dpgui.errors import DpguiError


def sentence(text: str) -> str:
    """Capitalise the first letter and end with a full stop."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def friendly(err: BaseException) -> str:
    """A DpguiError as two sentences (what is wrong. What to do.); anything else as its text."""
    if isinstance(err, DpguiError):
        return " ".join(s for s in (sentence(err.problem), sentence(err.fix)) if s)
    return sentence(str(err) or type(err).__name__)


def format_number(value: float) -> str:
    """A readable number: thousands separators, no needless decimals."""
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.6g}" if abs(value) >= 1e-3 else f"{value:.6g}"


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
NEIGHBOURS_LABELS = {
    "change": "One person's record may change (the number of records N is public)",
    "addremove": "One person may be added or removed (N itself is kept private)",
}
NEIGHBOURS_HELP = {
    "change": "Protects the value of each person's record. The total number of records is published exactly.",
    "addremove": "Also hides whether a person is in the table at all. The total is released with noise.",
}
NEIGHBOURS_TOOLTIP = (
    "Which two tables must look alike: tables that differ in one person's value (N public), or "
    "tables that differ by one person being present or absent (N private). The second is "
    "stronger; under it the app estimates N from the released counts."
)
RECORDS_PER_PERSON_HELP = (
    "The most rows any single person can have in the table. Noise grows in proportion."
)
RECORDS_PER_PERSON_TOOLTIP = (
    "If one person can appear in up to L rows (e.g. several visits), the release must hide all L "
    "of them together, so every level's noise is multiplied by L. Use 1 if each person has one row."
)
PRESETS = (("Strict", 0.1), ("Moderate", 1.0), ("Loose", 4.0))
PRESET_TOOLTIP = "Sets ε to {eps:g}. You can change the value afterwards."

BRANCHING_HELP = (
    "How the bins are grouped into a tree: 'auto' lets the app choose; '16' splits each node into "
    "16; '4x16x16' sets each level."
)
ESTIMATOR_LABELS = {
    "gls": "Best combination of all levels (recommended)",
    "covering": "Fewest nodes per count (paper 000)",
}
ESTIMATOR_TOOLTIP = (
    "How the noisy node counts are combined into each cumulative count. The recommended one uses "
    "every level optimally (least variance); the other adds up the fewest nodes, as in paper 000."
)
CONSISTENCY_LABELS = {
    "l2": "Least-squares (recommended)",
    "l1": "Least absolute deviation",
    "none": "None (unbiased, may go down)",
}
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
LOCK_TOOLTIP = "Keep this level's budget fixed when other levels change or when you auto-optimize."
ACCURACY_HELP = (
    "Say how much error you accept and the app finds the smallest ε (the least privacy spent) "
    "that achieves it. The error is a 95 % margin: the half-width of the 95 % band published with each "
    "count, which holds the true count at least 95 times out of 100."
)
MISSING_LABELS = {
    "drop": "Leave them out (N counts only the rows that have a value)",
    "error": "Stop with an error if any value is missing",
}
MISSING_HELP = "Missing values must be handled the same way every time, so choose one."
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
