#!/bin/sh
# /usr/bin/dpgui: starts the app installed in /opt/dpgui (the desktop window, or a command: dpgui --help).
exec /opt/dpgui/dpgui "$@"
