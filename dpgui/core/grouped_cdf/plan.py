"""The plan of a grouped CDF: one public group list and ONE tree plan shared by every group
(docs/privacy-model.md, "A CDF for each group").

Every released group (:attr:`GroupList.released`) gets a tree of the same shape, noised at the same
level scales and estimated with the same estimator as a single CDF (:mod:`dpgui.core.mechanism`). The
shared plan is made from public parameters only — the bins, the bounds, (ε, δ), the neighbour model,
``records_per_person`` L — never from the data.

The root of every group's tree (the group's size) is released WITH noise under both neighbour models:
under ``change`` the table's N is public, but one record may change its group, so a group's size is not
(:class:`GroupTreePrivacy`, whose ``root_public`` is False).

Sensitivity of level l (0 = the roots, the group sizes), with at most L records per person in the whole
table: the released vector is every group's level-l node counts, (group × node). One record lies in at
most one group's tree and, there, in one node of each level (a dropped row in none). So

* ``addremove``: adding (removing) one person's ≤ L records raises (lowers) at most L entries of the
  vector by one in total: L1 ≤ L, squared L2 ≤ L² (all L records in one node);
* ``change``: each of the ≤ L changed records leaves at most one (group, node) and enters at most one
  (another group's node when its group changes): L1 ≤ 2L, squared L2 ≤ L² + L² = 2L² (all leave one
  node and all enter one other);

the bounds are reached (all records of the person in one group and bin), and they are exactly those of
one tree's level (:attr:`dpgui.core.plan.PrivacySpec.sensitivity`): :func:`level_sensitivities` takes
them from there. Since the whole (group × node) vector of a level is noised at the level's scale, the
groups compose in parallel: the grouped release costs the shared plan's budget once
(:meth:`GroupedPlan.ledger_charge`), however many groups are listed. Brute-force check over every
neighbour of small tables: tests/unit/core/test_grouped_cdf_sensitivity.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from dpgui.core.grouped_cdf.groups import GroupList
from dpgui.vocabulary import OtherGroups
from dpgui.core.noise_mechanisms import Sensitivity
from dpgui.core.plan import Plan, PrivacySpec
from dpgui.core.planner import auto_plan
from dpgui.errors import ParameterError

__all__ = ["GroupTreePrivacy", "GroupedPlan", "level_sensitivities", "plan_grouped"]


@dataclass(frozen=True)
class GroupTreePrivacy(PrivacySpec):
    """The privacy of each group's tree in a grouped release: the officer's ε, δ, neighbour model, L and
    imputation, with the root never public (a group's size is private under ``change`` too, one record may
    change its group). Everything that reads :attr:`root_public` — the plan's noised levels and budgets,
    the noise, the estimator, the projected errors, the planner — then treats the root as a noised level;
    the sensitivity of every level is the single tree's (module docstring)."""

    @classmethod
    def of(cls, privacy: PrivacySpec) -> GroupTreePrivacy:
        """``privacy``'s figures, for a group's tree."""
        return cls(privacy.epsilon, privacy.neighbours, privacy.records_per_person, privacy.delta, privacy.impute)

    @property
    def root_public(self) -> bool:
        return False

    def with_epsilon(self, epsilon: float) -> GroupTreePrivacy:
        return GroupTreePrivacy.of(super().with_epsilon(epsilon))

    def pure(self) -> GroupTreePrivacy:
        return GroupTreePrivacy.of(super().pure())


def level_sensitivities(tree: Plan) -> tuple[Sensitivity, ...]:
    """The sensitivity of the (group × node) vector of each level 0..h of a grouped release with the shared
    ``tree`` plan: at every level the single tree's (:attr:`PrivacySpec.sensitivity`: Δ₁ = L under
    add/remove, 2L under change; Δ₂² = L², 2L²), the root included (module docstring). O(h)."""
    return (tree.privacy.sensitivity,) * (tree.shape.height + 1)


@dataclass(frozen=True)
class GroupedPlan:
    """The public plan of a grouped CDF: the groups and the one tree plan every group's tree is noised and
    estimated with. ``tree.privacy`` must be a :class:`GroupTreePrivacy` (ParameterError otherwise: a plan
    with a public root would publish each group's exact size under ``change``)."""

    groups: GroupList
    tree: Plan

    def __post_init__(self) -> None:
        if not isinstance(self.groups, GroupList):
            raise ParameterError("a grouped plan needs the public list of groups", "give a GroupList")
        if not isinstance(self.tree, Plan) or not isinstance(self.tree.privacy, GroupTreePrivacy):
            raise ParameterError("the shared tree plan of a grouped CDF must noise every group's size (the root)",
                                 "make the tree plan with GroupTreePrivacy.of(privacy), e.g. by plan_grouped")

    @property
    def labels(self) -> tuple[str, ...]:
        """The released groups, in order (:attr:`GroupList.released`)."""
        return self.groups.released

    @property
    def level_sensitivities(self) -> tuple[Sensitivity, ...]:
        """Per level 0..h, the sensitivity of all groups' node counts (:func:`level_sensitivities`)."""
        return level_sensitivities(self.tree)

    def ledger_charge(self) -> tuple[float, float, float]:
        """(ε, δ, ρ) charged for the whole grouped release: the shared plan's charge, once (the groups compose
        in parallel: module docstring), :meth:`Plan.ledger_charge`."""
        return self.tree.ledger_charge()

    def epsilon_spent(self) -> Fraction:
        """ε of the whole grouped release: the shared plan's (:meth:`Plan.epsilon_spent`)."""
        return self.tree.epsilon_spent()

    def rho_spent(self) -> Fraction:
        """zCDP ρ of the whole grouped release: the shared plan's (:meth:`Plan.rho_spent`)."""
        return self.tree.rho_spent()

    def to_json(self) -> dict[str, Any]:
        """The plan as a manifest records it: the groups, the policy for the others and the shared tree plan
        (:meth:`Plan.to_json`; its ``levels`` start at 0, the noised group sizes)."""
        data: dict[str, Any] = {"groups": list(self.groups.labels), "other_groups": self.groups.other,
                                "released_groups": list(self.labels), "group_sizes": "noised", "tree": self.tree.to_json()}
        if self.groups.from_data:  # only then: a plan of a listed set of groups is recorded as it always was
            data["groups_from_data"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GroupedPlan:
        """The plan :meth:`to_json` wrote (ParameterError if its groups or tree do not check)."""
        groups = GroupList(tuple(data["groups"]), OtherGroups(str(data["other_groups"])),
                           data.get("groups_from_data") is True)
        return cls(groups, Plan.from_json(data["tree"], GroupTreePrivacy))


def plan_grouped(groups: GroupList, bins: int, privacy: PrivacySpec, **options: Any) -> GroupedPlan:
    """The grouped plan with the shared tree :func:`dpgui.core.planner.auto_plan` gives for ``bins`` and
    ``privacy`` with every group's root noised (``options``: auto_plan's shape, budgets, estimator,
    objective, locked, noise, focus; explicit ``budgets`` list the root's first). Public parameters only:
    nothing here sees the data. Cost: one auto_plan."""
    return GroupedPlan(groups, auto_plan(bins, GroupTreePrivacy.of(privacy), **options))

