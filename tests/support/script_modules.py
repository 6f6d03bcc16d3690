"""Loading a script that is not in a package (a benchmark, a packaging step) as a module, for its tests."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType


@contextmanager
def script_module(path: Path) -> Iterator[ModuleType]:
    """The script at ``path`` as the module named after its file, while the block runs: its folder is on
    ``sys.path`` (benchmarks import their siblings by name) and it is in ``sys.modules`` (its dataclasses
    look their module up there); both are undone afterwards."""
    name = path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[name]
        sys.path.remove(str(path.parent))
