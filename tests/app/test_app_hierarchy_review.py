"""Final review of issue 15's merged window: what the hierarchy page says about the node list."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from gui_helpers import make_window


def test_the_prior_help_does_not_say_the_data_categories_are_declared_public_by_themselves(qtbot):
    """Since the categories must be declared public by the officer (the box "These categories are public"),
    the prior's help must not say that without a prior the data's categories are "declared public", as if
    dpgui did it: it says that the officer must declare them."""
    window = make_window(qtbot, seed=1)
    texts = [label.text() for label in window.hierarchy.findChildren(QLabel)]
    prior_help = [t for t in texts if t.startswith("A public table")]
    assert prior_help, texts
    assert "taken from your data and declared public" not in prior_help[0]
    assert "These categories are public" in prior_help[0]
