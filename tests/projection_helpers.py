"""The projected error the plots and projections must show, computed in the tests independently of
dpgui.core.projection_curves: the 95 % margin 2.2·SE + 1 record (docs/design.md, "Count intervals")."""

from __future__ import annotations

import math

import numpy as np

from dpgui.core.plan import Plan
from dpgui.core.projection import last_prefix, total_sq_error


def band_margin(sd: float | np.ndarray) -> float | np.ndarray:
    """The 95 % margin of a count with standard error ``sd``: 2.2·SE + 1 record (0 if exact)."""
    sd = np.asarray(sd, dtype=float)
    out = np.where(sd > 0, 2.2 * sd + 1.0, 0.0)
    return float(out) if out.ndim == 0 else out


def rms(plan: Plan) -> float:
    """The margin of the root-mean-square standard error over the released prefixes."""
    return float(band_margin(math.sqrt(total_sq_error(plan) / last_prefix(plan.shape, plan.privacy.root_public))))
