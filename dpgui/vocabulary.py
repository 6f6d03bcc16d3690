"""The product's domain words, once: every noise, neighbour model, estimator, consistency method, prior
source and kind of statistic that a plan, a project file, a manifest, the ledger or the command line
names. Standard library only, so every layer (the engine included) may import it.

Each enum is a :class:`Name`: a ``str`` equal to its *wire token* (the token of ``Noise.GAUSSIAN`` is ``gaussian``), the
word that files and ``--options`` have always held, so a value read from a file compares equal to the
member and is written back unchanged. Code compares with the members (``plan.noise is Noise.GAUSSIAN`` or
``== Noise.GAUSSIAN``), never with a quoted word; the words shown to people live in :attr:`Name.words`
apart from the tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Final

__all__ = [
    "AUTO",
    "CDF_NOISES",
    "HIERARCHY_NOISES",
    "AccuracyWhere",
    "Allocation",
    "CdfConsistency",
    "Charge",
    "Engine",
    "Estimator",
    "HierarchyConsistency",
    "Name",
    "Neighbours",
    "Noise",
    "Objective",
    "PriorSource",
    "SourceKind",
    "StatisticKind",
    "choices",
]

#: "Let the planner choose": accepted where a noise or a consistency method may be left to the plan
#: (``--noise auto``); never a plan's own value.
AUTO: Final = "auto"


class Name(str, Enum):
    """Base of the product's word enums (no members of its own): ``str(x)``, ``f"{x}"`` and ``repr(x)``
    give the wire token, e.g. ``drop`` and ``'drop'``, never ``MissingRule.DROP``."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __repr__(self) -> str:  # messages quote the word
        return repr(self.value)

    @property
    def words(self) -> str:
        """The member as people read it (the window, the PDF, messages); the token unless a subclass says
        otherwise in its ``_WORDS``."""
        table: dict[str, str] = getattr(type(self), "_WORDS", {})  # a plain class attribute, not a member
        return table.get(str(self.value), str(self.value))


def choices(*options: Name | str) -> tuple[str, ...]:
    """The tokens of ``options`` as plain strings, e.g. for ``argparse`` ``choices=``:
    ``choices(AUTO, *Noise)`` → ``("auto", "laplace", "gaussian", "multiplicative")``."""
    return tuple(str(option) for option in options)


class Noise(Name):
    """The noise added to released counts."""

    LAPLACE = "laplace"  # discrete Laplace (two-sided geometric), pure ε-DP
    GAUSSIAN = "gaussian"  # discrete Gaussian (Canonne, Kamath & Steinke 2020), ρ-zCDP → (ε, δ)
    MULTIPLICATIVE = "multiplicative"  # hierarchies only: Laplace noise scaled to each level's prior size

    @property
    def is_zcdp(self) -> bool:
        """Whether its charge is a zCDP ρ (composed by ρ, converted to (ε, δ)) rather than a pure ε."""
        return self is Noise.GAUSSIAN


Noise._WORDS = {"laplace": "Laplace", "gaussian": "Gaussian", "multiplicative": "multiplicative"}  # type: ignore[attr-defined]

#: The noises of a CDF release, and of a hierarchy's counts.
CDF_NOISES: Final = (Noise.LAPLACE, Noise.GAUSSIAN)
HIERARCHY_NOISES: Final = (Noise.LAPLACE, Noise.GAUSSIAN, Noise.MULTIPLICATIVE)


class Neighbours(Name):
    """The neighbour models (docs/privacy-model.md, "Neighbours and what is public")."""

    CHANGE = "change"  # one record's value changes: N is the same in both tables, public
    ADDREMOVE = "addremove"  # one record more or less: N is private


Neighbours._WORDS = {"change": "change one record", "addremove": "add or remove one record"}  # type: ignore[attr-defined]


class Estimator(Name):
    """How a CDF's prefix counts are estimated from the noisy tree."""

    GLS = "gls"  # generalised least squares over the whole tree (Hay et al. 2010; Honaker 2015)
    COVERING = "covering"  # the sum of the nodes that cover the prefix (Dwork et al. 2010)


class Objective(Name):
    """What the planner minimises over the CDF's points."""

    TOTAL = "total"  # the sum of the prefix variances
    MAX = "max"  # the largest prefix variance


class AccuracyWhere(Name):
    """Where an accuracy target must hold: at every CDF point or on average over them."""

    EVERY = "every"
    AVERAGE = "average"


class CdfConsistency(Name):
    """How a CDF's released prefix counts are made monotone."""

    L2 = "l2"  # isotonic regression (pool adjacent violators)
    L1 = "l1"  # the L1 isotonic fit
    NONE = "none"


class HierarchyConsistency(Name):
    """How a hierarchy's released counts are made to add up level to level."""

    TOPDOWN = "topdown"  # Ko, Ziani & Fioretto's top-down post-processing
    GLS = "gls"  # weighted least squares on the tree (Hay et al. 2010)
    NONE = "none"


class Allocation(Name):
    """How a hierarchy's budget is split over its levels."""

    UNIFORM = "uniform"
    OPTIMAL = "optimal"  # the weighted-MSE optimum (Ko, Ziani & Fioretto)
    TARGET = "target"  # the least budget that reaches a stated error
    CUSTOM = "custom"  # set by hand (never planned)


class PriorSource(Name):
    """Where the counts a hierarchy plan was optimised and projected on came from."""

    NONE = "none"
    FILE = "prior file"
    CONFIDENTIAL = "confidential data (opted in)"


PriorSource._WORDS = {"prior file": "the prior's counts",  # type: ignore[attr-defined]
                      "confidential data (opted in)": "the data's counts (opted in)"}


class StatisticKind(Name):
    """The kinds of statistic a release publishes (project files' ``mode``, the ledger's records)."""

    CDF = "cdf"
    HIERARCHY = "hierarchy"
    COUNTS = "counts"  # the counts of the categories of one column
    GROUPED_CDF = "grouped_cdf"  # the CDF of a numeric column for each group of a categorical column


class OtherGroups(Name):
    """What becomes of a row whose group value is not in a CDF for each group's public list, or is missing."""

    DROP = "drop"  # left out of every group: a neighbour-independent rule (no group released for it)
    OTHER = "other"  # counted in one extra released group, named "other"


OtherGroups._WORDS = {"drop": "dropped", "other": "counted in one group 'other'"}  # type: ignore[attr-defined]


class ReleaseKind(Name):
    """A release that is not one statistic (the ledger's and the manifest's ``kind``, beside a
    :class:`StatisticKind`): a release plan of several statistics under one budget."""

    PLAN = "plan"


class Engine(Name):
    """Where the counting runs."""

    LOCAL = "local"
    SPARK = "spark"


class SourceKind(Name):
    """Where the confidential data lives (a data source's ``kind`` in project files and manifests): a file
    or a folder of Parquet files on this computer, an SQL database, a dataset read by Spark."""

    FILE = "file"
    DATABASE = "database"
    SPARK = "spark"


@dataclass(frozen=True)
class Charge:
    """What one release costs, as the budget ledger is asked to spend it (``Ledger.spend``): ε and δ under
    basic composition, and its zCDP ρ — the planned or spent ρ of Gaussian noise, ε²/2 of pure ε-DP noise
    (Bun & Steinke 2016, Prop. 1.4) — or None when the release has no zCDP figure (then its dataset counts
    by basic composition). ε > 0, 0 ≤ δ < 1, ρ > 0 or None; checked on creation (ValueError), so no
    release is charged nothing. The ledger reads its recorded rows, which older ledgers may hold with
    ε = 0 or ρ = 0, as its own row type, not as charges."""

    epsilon: float
    delta: float = 0.0
    rho: float | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise ValueError(f"a charge's ε must be a finite number > 0, got {self.epsilon!r}")
        if not (math.isfinite(self.delta) and 0 <= self.delta < 1):
            raise ValueError(f"a charge's δ must be a probability below 1, got {self.delta!r}")
        if self.rho is not None and not (math.isfinite(self.rho) and self.rho > 0):
            raise ValueError(f"a charge's ρ must be a finite number > 0 or None, got {self.rho!r}")

    def ledger_charge(self) -> tuple[float, float, float | None]:
        """(ε, δ, ρ): a charge is what the ledger's words take of a plan (``report.publish.Chargeable``)."""
        return self.epsilon, self.delta, self.rho
