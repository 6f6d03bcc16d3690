"""The table of §VI of Rameshwar, Tandon and Sharma (optimal tree-based mechanisms for DP approximate
CDFs), reproduced by the command a user types:

    dpgui simulate --synthetic uniform --n 900 --bins 997 --epsilon 0.1 --branching 997 \\
        --estimator covering --consistency l1 --missing impute:0 --trials R

K = 997 bins, N = 900 uniform points, ε = 0.1, the flat tree (F_hist) with the covering sum, before
consistency (``none``) and after ℓ1 and ℓ2 consistency; errors of F = C/N. The paper averages 100 runs,
so its figures carry their own Monte-Carlo error: ours must lie within 3 standard errors of the
difference of the two means (ours over R runs, the paper's over 100, both from our per-run SD).
With the missing leaf of the change model the forced branching 997 became a 997 × 997 tree;
``--missing impute:0`` gives the paper's flat tree again.
"""

from __future__ import annotations

import json
import math

import pytest

from cli_helpers import run_cli

COMMAND = ["simulate", "--synthetic", "uniform", "--n", "900", "--bins", "997", "--epsilon", "0.1",
           "--branching", "997", "--estimator", "covering", "--missing", "impute:0"]
TRIALS = 1000
PAPER_RUNS = 100
#: (consistency, norm) → the paper's 100-run average (§VI, ε = 0.1)
PAPER = {("none", "l1"): 502.81, ("l1", "l1"): 286.43, ("none", "l2"): 18.54, ("l2", "l2"): 10.72}


@pytest.mark.slow
@pytest.mark.parametrize("consistency", ["none", "l1", "l2"])
def test_simulate_reproduces_the_table_of_section_vi(consistency, capsys):
    code, out, err = run_cli([*COMMAND, "--consistency", consistency, "--trials", str(TRIALS), "--seed", "2024",
                              "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["plan"]["branching"] == [997] and data["plan"]["padded_bins"] == 997  # the paper's flat tree
    assert data["plan"]["missing_leaf"] is False and data["n"] == 900 and data["trials"] == TRIALS
    cdf = data["cdf"]
    for (wanted, norm), paper in PAPER.items():
        if wanted != consistency:
            continue
        mean, se = cdf[f"mean_{norm}"], cdf[f"se_{norm}"]
        sd = se * math.sqrt(TRIALS)
        tolerance = 3 * math.sqrt(se**2 + (sd / math.sqrt(PAPER_RUNS)) ** 2)
        assert abs(mean - paper) <= tolerance, (consistency, norm, mean, se, paper, tolerance)
    if consistency != "none":  # consistency lowers both errors, as the paper reports
        _, raw, _ = run_cli([*COMMAND, "--consistency", "none", "--trials", "200", "--seed", "2024", "--json"], capsys)
        before = json.loads(raw)["cdf"]
        assert cdf["mean_l1"] < before["mean_l1"] and cdf["mean_l2"] < before["mean_l2"]


def test_the_acceptance_command_as_typed_prints_the_l1_figure(capsys):
    """The command exactly as a person types it (no --trials: 100 releases, the paper's count; no --seed:
    fresh noise each run), and the figure they read: the CDF column of the 'L1 norm' row with its
    standard error. Unseeded, so the tolerance is 4 standard errors of the difference of the two means
    (a false alarm about once in 16,000 runs)."""
    code, out, err = run_cli([*COMMAND, "--consistency", "l1"], capsys)
    assert code == 0, err
    assert out.startswith("Simulated 100 releases") and "branching 997," in out and "consistency l1" in out
    row = next(line for line in out.splitlines() if line.strip().startswith("L1 norm"))
    cdf_mean = float(row.split()[-3])
    cdf_se = float(row.split()[-1])
    assert abs(cdf_mean - PAPER[("l1", "l1")]) <= 4 * math.sqrt(cdf_se**2 + cdf_se**2), (cdf_mean, cdf_se)
