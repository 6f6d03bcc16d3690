"""Where dpgui keeps the officer's own files: keys, the budget ledger, autosaves and, when
``DPGUI_HOME`` is set, the window's settings (recent files, last folder, window geometry).

``DPGUI_HOME`` (an environment variable) overrides the platform's user data directory, so tests
and scripts never touch the real one. The folder is created user-only (0700 on POSIX).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from dpgui.errors import DataError

HOME_VARIABLE = "DPGUI_HOME"


def user_home() -> Path:
    """The dpgui data folder (created if missing): ``$DPGUI_HOME`` or platformdirs' user data dir."""
    override = os.environ.get(HOME_VARIABLE)
    home = Path(override).expanduser() if override else Path(platformdirs.user_data_dir("dpgui", appauthor=False))
    return ensure_private_dir(home)


def settings_folder() -> Path | None:
    """``$DPGUI_HOME/settings`` when ``DPGUI_HOME`` is set: the window keeps its settings there (an
    INI file), since they hold the paths of confidential files; None without ``DPGUI_HOME`` (the
    platform's usual place for them). Not created here: a folder that cannot be made leaves the
    settings unsaved, never written to the real profile."""
    override = os.environ.get(HOME_VARIABLE)
    return Path(override).expanduser() / "settings" if override else None


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) if needed; new folders are user-only (0700 on POSIX)."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as err:
        raise DataError(f"cannot create the folder {path}: {err.strerror or err}",
                        f"check the permissions, or set {HOME_VARIABLE} to a writable folder") from None
    if not path.is_dir():
        raise DataError(f"{path} is not a folder", f"remove it, or set {HOME_VARIABLE} to another folder")
    return path
