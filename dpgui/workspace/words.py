"""Words shared by the window, the PDF report and the release flow, with no Qt: names made safe
for rich text, errors as sentences, and the labels of the privacy settings (one
wording everywhere). :mod:`dpgui.app.text` re-exports them beside the Qt helpers."""

from __future__ import annotations

import html

from dpgui.errors import DpguiError


def escape(value: object) -> str:
    """User text (a file, column, dataset or project name; a path; an error that quotes one) made
    safe to put inside rich text: it shows literally, so a name like ``<b>x</b><!--`` can neither
    format nor hide what follows it. Every name that lands in rich text goes through here."""
    return html.escape(str(value))


def sentence(text: str) -> str:
    """Capitalise the first letter and end with a full stop. A Greek letter stays as it is: it names
    a parameter (ε, δ, ρ), and "Ε" or "Δ" would be another symbol."""
    text = text.strip()
    if not text:
        return text
    if not "\u0370" <= text[0] <= "\u03ff":
        text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def friendly(err: BaseException) -> str:
    """A DpguiError as two sentences (what is wrong. What to do.); anything else as its text."""
    if isinstance(err, DpguiError):
        from dpgui.workspace.ledger_words import worded  # (the ledger only when an error is shown)

        err = worded(err)  # a ledger refusal's facts in words
        return " ".join(s for s in (sentence(err.problem), sentence(err.fix)) if s)
    return sentence(str(err) or type(err).__name__)


NEIGHBOURS_LABELS = {
    "change": "One person's record may change (the number of records N is public)",
    "addremove": "One person may be added or removed (N itself is kept private)",
}
ESTIMATOR_LABELS = {
    "gls": "Best combination of all levels (recommended)",
    "covering": "Fewest nodes per count (Rameshwar et al. 2024)",
}
CONSISTENCY_LABELS = {
    "l2": "Least-squares (recommended)",
    "l1": "Least absolute deviation",
    "none": "None (unbiased, may go down)",
}
