"""Files under the repository's ``resources/`` folder (sample data, icons), found in a checkout or a bundle.

In a source checkout ``resources/`` is beside the ``dpgui`` package; in the PyInstaller bundle
(packaging/dpgui.spec) it is added as data under the bundle root, ``sys._MEIPASS``.
"""

from __future__ import annotations

import pathlib
import sys

__all__ = ["resource_candidates", "find_resource"]


def resource_candidates(relative: pathlib.PurePosixPath) -> list[pathlib.Path]:
    """Places searched for ``relative`` (e.g. ``resources/icons/dpgui.png``), bundle first, then the checkout."""
    roots: list[pathlib.Path] = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        roots.append(pathlib.Path(bundle))
    roots.append(pathlib.Path(__file__).resolve().parents[1])  # dpgui/resources.py -> repository root
    return [root.joinpath(*relative.parts) for root in roots]


def find_resource(relative: pathlib.PurePosixPath) -> pathlib.Path | None:
    """The first existing file of :func:`resource_candidates`, or None."""
    return next((path for path in resource_candidates(relative) if path.is_file()), None)
