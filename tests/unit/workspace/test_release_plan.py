"""A release plan's release: one ledger entry for the whole plan, refused before the data is opened when it does
not fit (naming the part), nothing partial after a stop between parts (an error, and a SIGKILL in a child
process), one signed bundle whose verification names a part edited, removed or swapped."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpgui.core.noise import SecureRandom
from dpgui.data.source import open_source
from dpgui.data.source_spec import parse_source
from dpgui.errors import DpguiError
from dpgui.report.ledger import Ledger
from dpgui.report.signing import generate_key
from dpgui.workspace.plan_spec import PlanSpec, plan_items
from dpgui.workspace.plan_split import split_plan
from dpgui.workspace.release_plan import PlanOverBudget, check_whole_budget, plan_summary, release_plan, sign_plan
from dpgui.workspace.statistics import verify

GROUPS = ["north", "south", "east"]


def _table(folder: Path) -> Path:
    rng = np.random.default_rng(30)
    n = 4000
    frame = pd.DataFrame({"x": rng.uniform(0, 100, n), "region": rng.choice([*GROUPS, "west"], n),
                          "kind": rng.choice(["a", "b"], n)})
    path = folder / "table.parquet"
    frame.to_parquet(path)
    return path


def _spec(path: Path, epsilon: float = 1.0) -> PlanSpec:
    return PlanSpec.from_toml(textwrap.dedent(f"""
        dataset = "people"
        source = "{path.as_posix()}"
        epsilon = {epsilon}
        neighbours = "addremove"

        [[statistic]]
        kind = "cdf"
        column = "x"
        lower = 0
        upper = 100
        bins = 64

        [[statistic]]
        kind = "grouped_cdf"
        column = "x"
        group_column = "region"
        groups = {json.dumps(GROUPS)}
        other = "other"
        lower = 0
        upper = 100
        bins = 32
        weight = 4

        [[statistic]]
        kind = "counts"
        column = "kind"
        categories = ["a", "b"]
        """))


def _release(spec: PlanSpec, ledger: Ledger, **kwargs):
    with open_source(parse_source(spec.source)) as data:
        items = plan_items(spec, data)
    split = split_plan([i.part for i in items], spec.epsilon, spec.delta)
    opened = []

    @contextmanager
    def open_data():
        opened.append(True)
        with open_source(parse_source(spec.source)) as source:
            yield source

    released = release_plan(ledger, spec.dataset, items, split, open_data, SecureRandom, epsilon=spec.epsilon,
                            delta=spec.delta, **kwargs)
    return released, opened


def test_a_plan_is_one_ledger_entry_charged_the_sum_of_its_parts(tmp_path):
    spec = _spec(_table(tmp_path))
    with Ledger() as ledger:
        ledger.set_cap("people", 2.0)
        released, _ = _release(spec, ledger)
        entries = ledger.releases("people")
        assert [e.release_id for e in entries] == [released.plan_id]  # one entry, whatever the parts
        parts_epsilon = sum(p.planned.charge.epsilon for p in released.parts)  # each part's own statistic's charge
        assert entries[0].epsilon == pytest.approx(parts_epsilon, rel=1e-12)
        assert parts_epsilon <= spec.epsilon * (1 + 1e-12)
        assert ledger.totals("people").epsilon_spent == pytest.approx(parts_epsilon, rel=1e-12)
        recorded = entries[0].description["parts"]
        assert [p["release_id"] for p in recorded] == [p.release_id for p in released.parts]
        assert [p["title"] for p in recorded] == list(spec.titles())
        output = ledger.release_output(released.plan_id)
        assert output is not None and len(output.params["parts"]) == 3


def test_a_plan_over_the_budget_left_is_refused_before_the_data_is_opened_naming_the_part(tmp_path):
    spec = _spec(_table(tmp_path))
    with Ledger() as ledger:
        ledger.set_cap("people", 0.5)
        with pytest.raises(PlanOverBudget) as refused:
            check_whole_budget(ledger, "people", spec.epsilon, spec.delta, spec.titles(), [p.lock for p in spec.parts])
        assert refused.value.part == 1  # an equal third fits 0.5, two thirds do not
        assert "part 2 (CDF of x for each region)" in refused.value.problem
        with pytest.raises(PlanOverBudget) as split_refused:
            _release(spec, ledger)  # the split's own shares: the grouped part's weight 4 takes most
        assert "CDF of x for each region" in split_refused.value.problem
        assert ledger.releases("people") == []


def test_a_failure_between_parts_charges_the_plan_once_and_leaves_nothing_to_sign(tmp_path, monkeypatch):
    from dpgui.report.plan import records

    spec = _spec(_table(tmp_path))
    original = records.PlanPartRecords.record_output

    def fail_on_second(self, *args, **kwargs):
        if self.index == 1:
            raise RuntimeError("the power went out")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(records.PlanPartRecords, "record_output", fail_on_second)
    with Ledger() as ledger:
        ledger.set_cap("people", 2.0)
        with pytest.raises(DpguiError) as failed:
            _release(spec, ledger)
        assert "was spent" in failed.value.problem and "part 2" in failed.value.problem
        entries = ledger.releases("people")
        assert len(entries) == 1 and ledger.release_output(entries[0].release_id) is None


def test_a_plan_killed_between_parts_is_charged_once_and_nothing_of_it_is_recorded(tmp_path):
    table = _table(tmp_path)
    home = tmp_path / "home"
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from dpgui.report.plan import records
        original = records.PlanPartRecords.record_output
        def kill_on_second(self, *args, **kwargs):
            if self.index == 1:
                os.kill(os.getpid(), signal.SIGKILL)
            return original(self, *args, **kwargs)
        records.PlanPartRecords.record_output = kill_on_second
        from pathlib import Path
        from dpgui.report.ledger import Ledger
        from test_release_plan import _release, _spec
        with Ledger() as ledger:
            ledger.set_cap("people", 2.0)
            _release(_spec(Path({str(table)!r})), ledger)
        """)
    env = {**os.environ, "DPGUI_HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert child.returncode == -signal.SIGKILL, child.stderr
    os.environ["DPGUI_HOME"] = str(home)
    with Ledger() as ledger:
        entries = ledger.releases("people")
        assert len(entries) == 1 and entries[0].description["kind"] == "plan"
        assert ledger.release_output(entries[0].release_id) is None  # nothing of the plan can be signed
        assert ledger.totals("people").epsilon_spent == pytest.approx(entries[0].epsilon)


def _signed(tmp_path):
    spec = _spec(_table(tmp_path))
    key = generate_key()
    with Ledger() as ledger:
        ledger.set_cap("people", 2.0)
        released, _ = _release(spec, ledger)
        summary = plan_summary(released, spec.epsilon, spec.delta, "at most 1 record per person — declared")
        paths = sign_plan(ledger, released, summary, tmp_path, "plan", b"%PDF-1.4 a plan's pages", key)
    return paths, key


def test_a_signed_plan_verifies_and_names_a_part_edited_removed_or_swapped(tmp_path):
    paths, key = _signed(tmp_path)
    assert verify(paths.manifest, key.public_key).ok
    manifest = json.loads(paths.manifest.read_text())
    assert [p["kind"] for p in manifest["parts"]] == ["cdf", "grouped_cdf", "counts"]
    part2, part3 = tmp_path / "plan.part2.csv", tmp_path / "plan.part3.csv"
    kept2, kept3 = part2.read_bytes(), part3.read_bytes()

    part2.write_bytes(kept2.replace(b"north", b"nortH", 1))  # edited
    assert verify(paths.manifest, key.public_key).failure.startswith("part 2 (CDF of x for each region)")
    part2.unlink()  # removed
    assert verify(paths.manifest, key.public_key).failure.startswith("part 2 (CDF of x for each region)")
    part2.write_bytes(kept3)  # swapped
    part3.write_bytes(kept2)
    assert verify(paths.manifest, key.public_key).failure.startswith("part 2 (CDF of x for each region)")
    part2.write_bytes(kept2)
    assert verify(paths.manifest, key.public_key).failure.startswith("part 3 (Counts of kind)")
    part3.write_bytes(kept3)
    assert verify(paths.manifest, key.public_key).ok


def test_a_plan_is_signed_only_as_the_ledger_recorded_it(tmp_path):
    spec = _spec(_table(tmp_path))
    key = generate_key()
    with Ledger() as ledger:
        ledger.set_cap("people", 2.0)
        released, _ = _release(spec, ledger)
        summary = plan_summary(released, spec.epsilon, spec.delta, "declared")
        first = released.parts[0]
        moved = dataclasses.replace(first.info, column="y")  # a part's parameter differs from what was recorded
        edited = dataclasses.replace(released, parts=(dataclasses.replace(first, info=moved), *released.parts[1:]))
        with pytest.raises(DpguiError, match="column of release"):
            sign_plan(ledger, edited, summary, tmp_path, "plan", b"%PDF", key)
        assert not (tmp_path / "plan.manifest.json").exists()


def test_a_plan_file_reads_back_what_it_writes_and_names_a_bad_key(tmp_path):
    spec = _spec(tmp_path / "t.parquet")
    assert PlanSpec.from_toml(spec.to_toml()) == spec
    assert spec.titles() == ("CDF of x", "CDF of x for each region", "Counts of kind")
    bad = spec.to_toml().replace("bins = 64", "bins = 0")
    with pytest.raises(DpguiError, match="statistic 1: 'bins' must be a whole number"):
        PlanSpec.from_toml(bad)
    with pytest.raises(DpguiError, match="statistic 3: 'colour' is not a setting"):
        PlanSpec.from_toml(spec.to_toml() + 'colour = "red"\n')
    with pytest.raises(DpguiError, match="'lower' must be less than 'upper'"):
        PlanSpec.from_toml(spec.to_toml().replace("upper = 100\nbins = 64", "upper = -1\nbins = 64"))
    with pytest.raises(DpguiError, match="not valid TOML"):
        PlanSpec.from_toml("epsilon = = 1")


def test_a_gaussian_plan_is_one_entry_charged_the_sum_of_its_parts_rho(tmp_path):
    path = _table(tmp_path)
    spec = PlanSpec.from_dict({
        "dataset": "people", "source": str(path), "epsilon": 1.0, "delta": 1e-6, "neighbours": "addremove",
        "statistic": [{"kind": "cdf", "column": "x", "lower": 0, "upper": 100, "bins": 64, "noise": "gaussian"},
                      {"kind": "grouped_cdf", "column": "x", "group_column": "region", "groups": GROUPS,
                       "lower": 0, "upper": 100, "bins": 32, "noise": "gaussian", "weight": 2}]})
    with Ledger() as ledger:
        ledger.set_cap("people", 2.0, 1e-5)
        released, _ = _release(spec, ledger)
        (entry,) = ledger.releases("people")
    rhos = [p.planned.charge.rho for p in released.parts]
    assert all(p.planned.charge.delta > 0 for p in released.parts)  # both parts Gaussian
    assert entry.rho == pytest.approx(sum(rhos), rel=1e-12)  # ρ adds up across the parts (zCDP composition)
    assert entry.delta == pytest.approx(1e-6)
    # the plan's whole ρ converts to at most (ε, δ) = (1, 1e-6), by Canonne, Kamath & Steinke's (2020)
    # conversion computed here on a grid of α: δ = inf_α exp((α−1)(αρ−ε)) / α · (1 − 1/α)^(α−1)
    rho, alpha = sum(rhos), np.linspace(1.001, 400, 400_000)
    log_delta = (alpha - 1) * (alpha * rho - 1.0) - np.log(alpha) + (alpha - 1) * np.log1p(-1 / alpha)
    delta = float(np.exp(np.min(log_delta)))
    assert delta <= 1e-6 * (1 + 1e-6)


def test_what_a_plan_publishes_besides_its_noisy_values_is_the_same_on_neighbouring_tables(tmp_path):
    """Two tables that differ in one record (add/remove): the split, every part's charge and margin, and the
    plan's recorded description are the same; only the noisy values may differ."""
    rng = np.random.default_rng(31)
    n = 3000
    frame = pd.DataFrame({"x": rng.uniform(0, 100, n), "region": rng.choice(GROUPS, n),
                          "district": rng.choice(["d1", "d2"], n), "kind": rng.choice(["a", "b"], n)})
    frame["district"] = frame["region"] + "-" + frame["district"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    frame.to_parquet(tmp_path / "a" / "t.parquet")
    frame.iloc[1:].to_parquet(tmp_path / "b" / "t.parquet")  # one record removed
    seen = []
    for folder in ("a", "b"):
        spec = PlanSpec.from_dict({
            "dataset": "people", "source": str(tmp_path / folder / "t.parquet"), "epsilon": 1.0,
            "neighbours": "addremove",
            "statistic": [{"kind": "cdf", "column": "x", "lower": 0, "upper": 100, "bins": 64},
                          {"kind": "hierarchy", "levels": ["region", "district"], "nodes": "data",
                           "records_estimate": 3000},
                          {"kind": "counts", "column": "kind", "categories": ["a", "b"]}]})
        os.environ["DPGUI_HOME"] = str(tmp_path / folder / "home")
        with Ledger() as ledger:
            ledger.set_cap("people", 1.0)
            released, _ = _release(spec, ledger)
            (entry,) = ledger.releases("people")
        parts = [{k: v for k, v in p.items() if k != "release_id"} for p in entry.description["parts"]]
        seen.append(([(p.budget, p.margin95, p.charge) for p in released.split.parts], parts, entry.epsilon,
                     released.split.chosen))
    assert seen[0] == seen[1]


def test_a_plan_with_a_person_column_counts_at_most_l_rows_of_each_person_in_every_part(tmp_path):
    rng = np.random.default_rng(32)
    n = 3000
    person = rng.integers(0, 400, n).astype(str)
    person[:1000] = "heavy"  # one person with 1,000 rows
    frame = pd.DataFrame({"x": rng.uniform(0, 100, n), "kind": rng.choice(["a", "b"], n), "person": person})
    frame.to_parquet(tmp_path / "t.parquet")
    data = {"dataset": "people", "source": str(tmp_path / "t.parquet"), "epsilon": 1.0, "records_per_person": 3,
            "person_column": "person",
            "statistic": [{"kind": "cdf", "column": "x", "lower": 0, "upper": 100, "bins": 16},
                          {"kind": "counts", "column": "kind", "categories": ["a", "b"]}]}
    with pytest.raises(DpguiError, match="person-ID column protects one person added or removed"):
        PlanSpec.from_dict({**data, "neighbours": "change"})
    spec = PlanSpec.from_dict(data)
    assert spec.neighbours == "addremove" and "enforced" in spec.unit_words()
    with Ledger() as ledger:
        ledger.set_cap("people", 1.0)
        released, _ = _release(spec, ledger)
    kept = frame.groupby("person").size().clip(upper=3).sum()  # at most 3 rows of each person
    assert int(released.parts[1].counts.sum()) == kept  # the counts part counted the kept rows only
    assert released.parts[0].counts.counts.sum() == kept
    assert all(p.info.source["privacy_unit"]["person_column"] == "person" for p in released.parts)


def test_a_plan_may_take_its_groups_from_the_data_declared_public_and_says_so(tmp_path):
    path = _table(tmp_path)
    spec = PlanSpec.from_dict({
        "dataset": "people", "source": str(path), "epsilon": 1.0, "neighbours": "addremove",
        "statistic": [{"kind": "grouped_cdf", "column": "x", "group_column": "region", "groups": "data",
                       "lower": 0, "upper": 100, "bins": 16}]})
    key = generate_key()
    with Ledger() as ledger:
        ledger.set_cap("people", 1.0)
        released, _ = _release(spec, ledger)
        summary = plan_summary(released, spec.epsilon, spec.delta, spec.unit_words(), spec.unit)
        paths = sign_plan(ledger, released, summary, tmp_path, "plan", b"%PDF-1.4", key)
    plan = released.parts[0].release.plan
    assert plan.groups.labels == ("east", "north", "south", "west") and plan.groups.from_data
    part = json.loads(paths.manifest.read_text())["parts"][0]
    assert "declared public" in part["manifest"]["groups_source"]
    assert part["settings"]["groups"] == "data"  # a plan made like it reads next year's groups again
    assert verify(paths.manifest, key.public_key).ok
    listed = _spec(Path(str(path)))  # a plan of listed groups records no groups_source
    with open_source(parse_source(listed.source)) as data:
        item = plan_items(listed, data)[1]
    assert not split_plan([item.part], 1.0).parts[0].planned.plan.groups.from_data
