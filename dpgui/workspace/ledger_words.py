"""The budget ledger's refusals in words, for the command line and the window alike.

The ledger (:mod:`dpgui.report.ledger`) refuses with facts: :class:`~dpgui.report.ledger.BudgetExceeded`
(the dataset, what is short, the figures needed and remaining), :class:`~dpgui.report.ledger.NoCapSet`,
:class:`~dpgui.report.ledger.CapBelowSpent` and :class:`~dpgui.report.ledger.ReasonNeeded`. Here they
become a problem and a fix in plain numbers (:func:`worded`). The fixes name the ``dpgui ledger cap``
command, and the window's Ledger where both apply; the window follows the problem of a refused release
(:func:`refusal_problem`) with its own fix (:func:`window_fix`). Public figures only: caps, spends,
dataset names.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dpgui.core.accounting import RELATIVE_TOLERANCE, Accounting, Shortfall, within_cap
from dpgui.errors import DataError, DpguiError, ParameterError
from dpgui.formatting import format_figure as _num
from dpgui.report.ledger import BudgetExceeded, CapBelowSpent, NoCapSet, ReasonNeeded, Totals

__all__ = ["WINDOW_FIXES", "refusal_problem", "same_data_warning", "window_fix", "worded"]


def _shell_word(text: str) -> str:
    return text if text and all(c.isalnum() or c in "-_.:/@+" for c in text) else "'" + text.replace("'", "'\\''") + "'"


def _floor_digits(x: float, digits: int = 4) -> float:
    """``x`` ≥ 0 rounded down to ``digits`` significant digits (a limit quoted in a fix must fit)."""
    if not (x > 0 and math.isfinite(x)):
        return 0.0
    step = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return math.floor(x / step) * step


def _spent_phrase(t: Totals) -> str:
    text = f"ε = {_num(t.epsilon_spent)}"
    if t.delta_spent > 0 or t.cap_delta > 0:
        text += f", δ = {_num(t.delta_spent)}"
    if t.zcdp_epsilon is not None and t.releases:
        text += f" (with zCDP accounting ε = {_num(t.zcdp_epsilon)} at δ = {_num(t.cap_delta)})"
    return f"{text} in {t.releases} release(s)"


def _zcdp_refusal(err: BudgetExceeded, what: str, need: str, cap: str, raise_cap: str) -> tuple[str, str]:
    """Every release has a ρ, and neither basic composition nor zCDP holds with this one."""
    before, after, dlt = err.totals, err.after, err.charge.delta
    spent_eps = before.cap_epsilon - before.epsilon_remaining
    how = "zCDP accounting" if before.accounting is Accounting.ZCDP else "basic composition"
    problem = (f"{what} needs {need} (ρ = {_num(err.charge.rho or 0.0)}) but dataset {err.dataset_id!r} has spent "
               f"ε = {_num(spent_eps)} of its cap {cap} ({how} of {before.releases} release(s), "
               f"ρ = {_num(before.rho_spent or 0.0)}); with it the total would be ε = {_num(after.zcdp_epsilon or 0.0)} "
               f"under zCDP at δ = {_num(before.cap_delta)}")
    if not within_cap(after.delta, before.cap_delta):
        problem += f" (and Σδ = {_num(after.delta)} under basic composition)"
    else:
        problem += f" (and ε = {_num(after.epsilon)} under basic composition)"
    most = _floor_digits(err.largest_epsilon)
    if most > 0:
        at = f" at δ = {_num(dlt)}" if dlt > 0 else ""
        fix = f"ask for at most ε = {_num(most)}{at} (ρ = {_num(before.rho_remaining or 0.0)} is left), or {raise_cap}"
    else:
        fix = f"the budget is used up; {raise_cap}"
    return problem, fix


def _budget_words(err: BudgetExceeded) -> tuple[str, str]:
    """The refusal of a spend: what the release needs, what is spent, the cap, what remains, in plain numbers."""
    before, ds = err.totals, err.dataset_id
    eps, dlt = err.charge.epsilon, err.charge.delta
    what = "this release" if err.release_id is None else f"release {err.release_id!r}"
    raise_cap = f"raise the cap with `dpgui ledger cap {_shell_word(ds)} EPSILON` if your policy allows it"
    n = before.releases
    if err.short_of is Shortfall.CAP_DELTA:  # neither bound can hold: the cap allows pure ε-DP only
        problem = (f"{what} needs δ = {_num(dlt)} (Gaussian noise) but the cap of dataset {ds!r} has δ = 0, which "
                   "allows only pure ε-differential privacy (Laplace noise, δ = 0)")
        fix = (f"raise the cap's δ to at least {_num(dlt)} if your policy allows it (`dpgui ledger cap {_shell_word(ds)} "
               f"{_num(before.cap_epsilon)} --delta {_num(dlt)} --reason TEXT`, or in the Ledger window), "
               "or use Laplace noise")
        return problem, fix
    show_delta = dlt > 0 or before.cap_delta > 0 or before.delta_spent > 0
    eps_left = max(0.0, before.cap_epsilon - before.epsilon_spent)
    need = f"ε = {_num(eps)}" + (f", δ = {_num(dlt)}" if show_delta else "")
    cap = f"ε = {_num(before.cap_epsilon)}" + (f", δ = {_num(before.cap_delta)}" if show_delta else "")
    if err.after.zcdp_epsilon is not None:
        return _zcdp_refusal(err, what, need, cap, raise_cap)
    spent = f"ε = {_num(before.epsilon_spent)}" + (f", δ = {_num(before.delta_spent)}" if show_delta else "")
    left = f"ε = {_num(eps_left)}" + (f", δ = {_num(before.delta_remaining)}" if show_delta else "")
    if err.short_of is Shortfall.DELTA:
        problem = (f"not enough δ left: {what} needs δ = {_num(dlt)} but dataset {ds!r} has spent "
                   f"δ = {_num(before.delta_spent)} of its cap δ = {_num(before.cap_delta)} in {n} release(s), so "
                   f"δ = {_num(before.delta_remaining)} remains")
        if before.rho_spent is None and n:
            problem += (" (zCDP accounting, which counts δ once, does not apply: release(s) recorded by an earlier "
                        "dpgui carry no ρ)")
        fix = (f"raise the cap's δ if your policy allows it (`dpgui ledger cap {_shell_word(ds)} "
               f"{_num(before.cap_epsilon)} --delta D --reason TEXT`, or in the Ledger window), or use Laplace noise "
               "(δ = 0)")
        return problem, fix
    problem = (f"{what} needs {need} but dataset {ds!r} has spent {spent} of its cap {cap} "
               f"in {n} release(s), so {left} remains")
    if before.accounting is Accounting.ZCDP:
        problem += (" (basic composition: zCDP accounting, which gave ε = "
                    f"{_num(before.zcdp_epsilon or 0.0)}, applies only when every release has a ρ)")
    if before.accounting is Accounting.ZCDP and before.rho_remaining:
        fix = (f"a release without ρ does not fit, but a release with a ρ (any release of this dpgui) may still "
               f"spend up to ρ = {_num(before.rho_remaining)}; or {raise_cap}")
    elif eps_left <= before.cap_epsilon * RELATIVE_TOLERANCE or (dlt > 0 and before.delta_remaining <= 0):
        fix = f"the budget is used up; {raise_cap}"
    else:
        fix = f"ask for at most {left}, or {raise_cap}"
    return problem, fix


#: What to do in the window, by what a refused release lacks.
WINDOW_FIXES = {
    Shortfall.CAP_DELTA: ("Gaussian noise needs a budget with δ > 0. Raise the dataset's budget δ in Tools → Budget "
                          "Ledger (to at least the δ of step 2) if your organisation allows it, or choose Laplace noise "
                          "in step 2."),
    Shortfall.DELTA: ("Lower δ in step 2, choose Laplace noise (which spends no δ), or raise the budget's δ in "
                      "Tools → Budget Ledger if your organisation allows it."),
    Shortfall.EPSILON: "Lower ε in step 2, or raise the budget in Tools → Budget Ledger if your organisation allows it.",
}


def window_fix(err: BudgetExceeded) -> str:
    """What to do in the window about a refused release (by what it lacks: ε, δ, or a cap δ > 0)."""
    return WINDOW_FIXES[err.short_of]


def refusal_problem(err: BudgetExceeded) -> str:
    """What a refused spend lacks, in plain numbers (the window follows it with its own fix)."""
    return _budget_words(err)[0]


def worded(err: DpguiError) -> DpguiError:
    """A ledger refusal as an error with a problem and a fix in words (same class as ``err``'s base:
    :class:`~dpgui.errors.DpguiError`, :class:`~dpgui.errors.DataError` or :class:`~dpgui.errors.ParameterError`);
    any other error unchanged."""
    if isinstance(err, BudgetExceeded):
        return DpguiError(*_budget_words(err))
    if isinstance(err, NoCapSet):
        return DpguiError(f"no privacy budget is set for dataset {err.dataset_id!r}",
                          f"set a budget first: `dpgui ledger cap {_shell_word(err.dataset_id)} EPSILON`, "
                          "or in the Ledger window")
    if isinstance(err, CapBelowSpent):
        return DataError(f"cannot set the cap of dataset {err.dataset_id!r} to ε = {_num(err.epsilon)}, "
                         f"δ = {_num(err.delta)}: already spent {_spent_phrase(err.totals)}",
                         "a cap can be lowered only down to what is already spent; choose a larger cap")
    if isinstance(err, ReasonNeeded):
        (old_eps, old_delta), (new_eps, new_delta) = err.old, err.new
        return ParameterError(
            f"raising the cap of dataset {err.dataset_id!r} from ε = {_num(old_eps)}, δ = {_num(old_delta)} to "
            f"ε = {_num(new_eps)}, δ = {_num(new_delta)} needs a reason",
            "say why it is raised (e.g. --reason \"board decision 2026-03\"); it is kept in the cap history")
    return err


def same_data_warning(others: Sequence[str], dataset_id: str) -> str:
    """The sentence that says a new dataset name may be ledgered data under another name."""
    names = ", ".join(repr(o) for o in others)
    return (f"this file has the same column names and number of rows as dataset {names} in the budget "
            f"ledger; if it is the same data (a copy, a rename or a new version), releasing it as "
            f"{dataset_id!r} would give it a fresh budget")
