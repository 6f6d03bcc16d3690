"""dpgui.formatting: each purpose writes numbers its one way (the texts the window, the PDF and the
messages show)."""

from __future__ import annotations

import math

from dpgui import formatting as f


def test_plain_numbers():
    assert f.format_number(1234.0) == "1,234" and f.format_number(0.5) == "0.5"
    assert f.format_number(12345.678) == "12,345.7" and f.format_number(0.000123456789) == "0.000123457"
    assert f.format_bound(1234.0) == "1,234" and f.format_bound(12345.5) == "12345.5" and f.format_bound(math.inf) == "inf"
    assert f.format_count(1234) == "1,234" and f.format_count(-3.0) == "-3" and f.format_count(2.25) == "2.2"
    assert f.format_significant(0.3131994) == "0.313" and f.format_significant(0.31, 2) == "0.31"
    assert f.format_significant(1234.4) == "1,234" and f.format_significant(None) == "—"
    assert f.format_parameter(0.7) == "0.7" and f.format_parameter(1.23456) == "1.235"
    assert f.format_parameter(123456.0) == "1.23e+05" and f.format_parameter(math.inf) == "∞"
    assert f.format_epsilon(0.5) == "0.5" and f.format_epsilon(1.0000001) == "1"
    assert f.format_level_budget(0.123456) == "0.1235"
    assert f.format_budget(0.75) == "0.75" and f.format_budget(2.0) == "2" and f.format_budget(1e-6) == "1e-6"
    assert f.format_percent(0.25) == "25 %" and f.format_percent(0.025) == "2.5 %"
    assert f.format_percent_of(51.0, 10_000) == "0.51 %"
    assert f.format_margin_records(1234.56) == "± 1,234.6 records"


def test_values_in_column_units():
    assert f.value_decimals(10.0) == 0 and f.value_decimals(0.25) == 1 and f.value_decimals(math.nan) == 0
    assert f.edge_decimals(0.0, 0.25) == 2 and f.edge_decimals(100.0, 10.0) == 0
    assert f.format_fixed(12345.678, 1) == "12,345.7" and f.format_fixed(-0.001, 0) == "0"
    assert f.format_fixed(1_000_000, 0) == "1,000,000"
    assert f.format_edge(1000.0, 4) == "1,000" and f.format_edge(2.5, 2) == "2.5"
    assert f.format_node_edge(120.0, 120.0) == "120" and f.format_node_edge(312.5, 312.5) == "312.5"
    assert f.format_node_edge(2000.96133, 0.0763) == "2,000.96133" and f.format_node_edge(-0.0001, 1.0) == "0"


def test_axis_ticks():
    assert [f.format_log_tick(v) for v in (0.05, 2.0, 1000.0, 1e6, 2.5)] == ["0.05", "2", "1,000", "1,000,000", "2.5"]
    assert f.format_linear_tick(2500.0, 0) == "2,500" and f.format_linear_tick(0.25, 2) == "0.25"
    assert f.format_linear_tick(2e15, 0) == "2e+15"


def test_budgets_from_a_ten_thousandth_to_a_thousandth_are_written_out():
    """From 1e-4 up Python writes ``:.3g`` without an exponent: ε = 0.0005 in the ledger dialog must
    show as such (it raised ValueError), and every value below 0.001 keeps 3 significant digits."""
    assert f.format_budget(0.0005) == "0.0005" and f.format_budget(0.000123456) == "0.000123"
    assert f.format_budget(9.99e-5) == "9.99e-5" and f.format_budget(-0.0005) == "-0.0005"
    for value in (1e-4, 2.5e-4, 9.99e-4, 3e-7):
        assert float(f.format_budget(value)) == float(f"{value:.3g}")


def test_moment_words_state_the_margin_the_binning_and_the_interval():
    from dpgui.formatting import moment_decimals, moment_words

    assert moment_decimals(12.3, 5.0) == 1 and moment_decimals(0.93, 5.0) == 2 and moment_decimals(21_099.6) == 0
    assert moment_decimals(0.0, float("nan")) == 0 and moment_decimals(1e-12) == 6
    assert moment_words(1234.5, 12.34, 5.0, 1217.16, 1251.84, 1) == (
        "1,234.5 ± 12.3 (95 %), binning adds at most ± 5.0: 1,217.2 to 1,251.8")
    assert moment_words(-0.01, 3.0, 0.5, -3.5, 3.5, 0, per_value=True) == (
        "0 ± 3 (95 %), binning adds at most ± 0.50 per value: -4 to 4")
    assert moment_words(9.6, 0.4, 0.0, 9.2, 10.0, 2, per_value=True) == "9.60 ± 0.40 (95 %), binning adds nothing: 9.20 to 10.00"
