"""The one release method (dpgui/workspace/flow.py, ReleaseFlow.release) for any statistic: the steps in
their order, the refusals before the data is opened, the counts handed to the statistic's release only,
and a hierarchy release that counts the data at the moment of the spend."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from dpgui.core.noise import SeededRandom
from dpgui.errors import Cancelled
from dpgui.report.ledger import Ledger, NoCapSet
from dpgui.vocabulary import Charge
from dpgui.workspace.flow import ReleaseFlow
from dpgui.workspace.hierarchy import HierarchyRequest, load_hierarchy, run_hierarchy_release
from dpgui.workspace.hierarchy_planning import HierarchyChoice, plan_and_project


@dataclass
class ToyStatistic:
    """A statistic of none of the registry's kinds: it counts a fixed object and records what it is given."""

    events: list[str] = field(default_factory=list)
    released_counts: list[object] = field(default_factory=list)
    counts: object = field(default_factory=object)

    def plan_of(self, spend: str) -> str:
        return spend

    def charge(self, plan: str) -> Charge:
        return Charge(0.5)

    def count(self, source: Any, spend: str, progress: Any = None, should_cancel: Any = None) -> object:
        self.events.append("count")
        return self.counts

    def release(self, ledger: Ledger, dataset: str, spend: str, counts: object, noise: Any, *,
                release_id: str | None = None, source_record: dict[str, Any] | None = None) -> tuple[str, str]:
        self.events.append("release")
        self.released_counts.append(counts)
        return "released", f"info of {release_id}"


class ToySource:
    def public_record(self) -> dict[str, Any]:
        return {"kind": "toy"}


def _release(flow: ReleaseFlow, statistic: ToyStatistic, should_cancel: bool = False) -> Any:
    @contextmanager
    def open_data() -> Any:
        statistic.events.append("open")
        yield ToySource()

    def noise() -> SeededRandom:
        statistic.events.append("noise")
        return SeededRandom(1)

    return flow.release(statistic, open_data, "toy spend", noise, release_id="r" * 32,
                        should_cancel=lambda: should_cancel,
                        counted=lambda source, counts: statistic.events.append("counted"))


def test_a_statistic_of_any_kind_is_checked_counted_and_spent_in_that_order():
    toy = ToyStatistic()
    with ReleaseFlow.open("toys") as flow:
        with pytest.raises(NoCapSet):  # no cap: refused before the data is opened
            _release(flow, toy)
        assert toy.events == []
        flow.ledger.set_cap("toys", 1.0, 0.0, "test")
        with pytest.raises(Cancelled):  # cancelled after counting: no noise, no release
            _release(flow, toy, should_cancel=True)
        assert toy.events == ["open", "count", "counted"]
        toy.events.clear()
        done = _release(flow, toy)
    assert toy.events == ["open", "count", "counted", "noise", "release"]
    assert toy.released_counts == [toy.counts] and done.counts is toy.counts
    assert (done.release, done.info) == ("released", "info of " + "r" * 32)


def test_a_hierarchy_release_counts_the_data_at_the_moment_of_the_spend(tmp_path: Path):
    """The window's release counts the data again through the flow (the counts read for the plan are not
    released): rows added after the levels were read are in the released total (N public under change)."""
    data = tmp_path / "schools.csv"
    data.write_text("region,district\n" + "North,N1\n" * 30 + "South,S1\n" * 20)
    choice = HierarchyChoice(levels=("region", "district"), epsilon=1.0)
    loaded = load_hierarchy(data, choice)
    request = HierarchyRequest(loaded, plan_and_project(loaded, choice).plan, "schools", categories_public=True)
    assert loaded.rows == 50
    data.write_text("region,district\n" + "North,N1\n" * 31 + "South,S1\n" * 22)
    with Ledger() as ledger:
        ledger.set_cap("schools", 2.0, 0.0, "test")
    outcome = run_hierarchy_release(request, lambda: SeededRandom(1), lambda fraction, message: None, lambda: False)
    assert int(outcome.release.counts[0][0]) == 53 and outcome.release.plan.privacy.root_public
