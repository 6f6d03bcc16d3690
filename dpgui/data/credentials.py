"""Where a database password comes from — never from a file dpgui writes.

In order: the environment variable ``DPGUI_DB_PASSWORD``; the system keyring (``keyring``
package: service ``dpgui``, user name = the database URL without a password, e.g.
``postgresql://alice@db.example.org:5432/census``); the caller's prompt (the window's dialog, the
command line's ``getpass``). None of them: no password is given to the driver, so PostgreSQL's own
``PGPASSWORD`` and ``~/.pgpass`` (or a password-less method such as peer or certificate
authentication) still work. The password is handed to the database driver only: it is not put in a
:class:`~dpgui.data.source_spec.SourceSpec`, a message, a log or any file.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from dpgui.errors import Cancelled

__all__ = ["ENV_PASSWORD", "KEYRING_SERVICE", "find_password", "keyring_password", "remember_password"]

#: The environment variable read first.
ENV_PASSWORD = "DPGUI_DB_PASSWORD"
#: The keyring service name (the entry's user name is the URL without password).
KEYRING_SERVICE = "dpgui"


def keyring_password(display_url: str) -> str | None:
    """The password stored in the system keyring for ``display_url``, or None (no entry, no keyring
    backend, a locked or broken one: any keyring error means "not there")."""
    try:
        import keyring

        found = keyring.get_password(KEYRING_SERVICE, display_url)
    except Exception:  # noqa: BLE001 - backends raise their own errors (D-Bus, no backend, locked): all mean "no entry"
        return None
    return found if isinstance(found, str) and found else None


def remember_password(display_url: str, password: str) -> bool:
    """Store ``password`` in the system keyring for ``display_url``; False if there is no usable keyring."""
    try:
        import keyring

        keyring.set_password(KEYRING_SERVICE, display_url, password)
    except Exception:  # noqa: BLE001 - any backend error: the password is simply not remembered
        return False
    return True


def find_password(display_url: str, prompt: Callable[[str], str | None] | None) -> str | None:
    """The password for ``display_url`` (a URL without password): ``DPGUI_DB_PASSWORD``, else the
    keyring, else ``prompt(display_url)`` (if given: "" from it means no password, None that the
    user cancelled: :class:`~dpgui.errors.Cancelled`), else None."""
    env = os.environ.get(ENV_PASSWORD)
    if env:
        return env
    stored = keyring_password(display_url)
    if stored is not None:
        return stored
    if prompt is not None:
        typed = prompt(display_url)
        if typed is None:
            raise Cancelled("connecting to the database was cancelled (no password given)")
        return typed if typed else None
    return None
