"""The ``world`` fixture of the ``dpgui hierarchy`` CLI tests (tests/support/hierarchy_world.py); a test
module that defines its own ``world`` uses that one."""

from hierarchy_world import world  # noqa: F401 — the fixture
