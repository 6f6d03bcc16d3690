"""``dpgui ledger show`` and ``dpgui ledger cap``: the budget ledger through
:mod:`dpgui.workspace.budget` (public values only).
"""

from __future__ import annotations

import argparse

from dpgui.cli.rendering import _one_line, _print
from dpgui.cli.requests import LedgerCapRequest, LedgerShowRequest, ledger_request
from dpgui.core.accounting import Accounting


def cmd_ledger(args: argparse.Namespace) -> int:
    """``dpgui ledger show|cap``: an adapter of :func:`set_cap_command` or :func:`show_ledger_command`."""
    request = ledger_request(args)
    if isinstance(request, LedgerCapRequest):
        return set_cap_command(request)
    return show_ledger_command(request)


def set_cap_command(request: LedgerCapRequest) -> int:
    """A dataset's cap set or changed (logged with its reason), and its totals printed."""
    from dpgui.workspace.budget import set_cap

    totals = set_cap(request.dataset, request.epsilon, request.delta, request.reason)
    print(f"dataset {request.dataset!r}: cap ε = {totals.cap_epsilon:g}, δ = {totals.cap_delta:g}; "
          f"spent ε = {totals.epsilon_spent:g}; left ε = {totals.epsilon_remaining:g}")
    return 0


def show_ledger_command(request: LedgerShowRequest) -> int:
    """Budget spent and left per dataset, its cap history and the releases (public values only)."""
    from dataclasses import asdict

    from dpgui.formatting import printable_text
    from dpgui.workspace.budget import ledger_view, release_words

    view = ledger_view(request.dataset)
    datasets, releases, history = view.totals, view.releases, view.cap_history
    if request.json:
        _print({"datasets": [asdict(t) for t in datasets], "releases": [asdict(r) for r in releases],
                "cap_history": {d: [asdict(c) for c in changes] for d, changes in history.items()}}, True)
        return 0
    if not datasets:
        print("the ledger is empty: set a dataset's budget with 'dpgui ledger cap ID EPSILON'")
    for t in datasets:
        print(f"{t.dataset_id}: spent ε = {t.epsilon_spent:g} of {t.cap_epsilon:g} (left {t.epsilon_remaining:g}), "
              f"δ = {t.delta_spent:g} of {t.cap_delta:g}, {t.releases} release(s)"
              + (f"; by zCDP accounting (ρ = {t.rho_spent:.4g}) ε = {t.zcdp_epsilon:g} at δ = {t.cap_delta:g}"
                 if t.accounting is Accounting.ZCDP and t.zcdp_epsilon is not None and t.rho_spent is not None else ""))
        for c in history[t.dataset_id]:
            change = (f"cap set to ε = {c.new_epsilon:g}, δ = {c.new_delta:g}" if c.old_epsilon is None else
                      f"cap changed from ε = {c.old_epsilon:g}, δ = {c.old_delta:g} to ε = {c.new_epsilon:g}, "
                      f"δ = {c.new_delta:g}")
            print(f"  {c.changed_utc}  {change}"
                  + (f"  reason: {printable_text(c.reason)}" if c.reason else "  (no reason given)"))
    if releases:
        print("releases (newest first):")
    for r in releases:
        charge = (f"ε = {r.epsilon:g}" + (f", δ = {r.delta:g}" if r.delta > 0 else "")  # δ even without a ρ
                  + (f", ρ = {r.rho:.4g}" if r.delta > 0 and r.rho is not None else ""))
        print(f"  {r.created_utc}  {r.dataset_id}  {charge}  release {r.release_id}"
              + (f"  bundle {printable_text(r.bundle)}" if r.bundle else ""))
        print(f"      {_one_line(release_words(r.description))}")
    return 0
