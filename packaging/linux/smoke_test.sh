#!/usr/bin/env bash
# Installs dist/dpgui_<version>_<arch>.deb, proves the installed app works, removes it again.
#
#   1. dpkg -i (Depends must already be satisfied: `make system-deps` installs them);
#   2. /usr/bin/dpgui --version and --self-test (the frozen app, from the installed path), and
#      without a desktop a clear message with exit code 2;
#   3. a signed bundle made by the installed app verifies with `minisign -Vm` and `dpgui verify`,
#      and a tampered one is rejected by both (scripts/minisign_check.sh);
#   4. the real window on Xvfb, on the sample dataset: alive after 10 s, a visible "dpgui" window,
#      screenshot saved to dist/smoke/installed-window.png;
#   5. dpkg --purge, then nothing may be left in /opt/dpgui or /usr/bin/dpgui.
# Needs root or sudo, Xvfb and xdotool (`make system-deps`), and .venv (for the screenshot and for
# scripts/xvfb.py, which gives the whole script its own virtual display).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${DPGUI_SMOKE_ON_XVFB:-}" ]; then   # never the developer's own screen
    DPGUI_SMOKE_ON_XVFB=1 exec .venv/bin/python scripts/xvfb.py bash "$0" "$@"
fi
SUDO=$( [ "$(id -u)" = 0 ] || echo sudo )
deb=$(ls dist/dpgui_*.deb | head -n 1)
work=$(mktemp -d)
app_pid=""
installed=""
cleanup() {
    [ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null || true
    # A check failed after dpkg -i: remove the package, so a failed run leaves the machine as it was.
    [ -n "$installed" ] && $SUDO dpkg --purge dpgui >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
# The smoke test never touches the real ledger, keys, recent files or window settings.
export DPGUI_HOME="$work/home" XDG_CONFIG_HOME="$work/config"

echo "== dpkg -i $deb"
installed=1
$SUDO dpkg -i "$deb"
test -x /opt/dpgui/dpgui && test -x /usr/bin/dpgui
dpkg -s dpgui | grep -E '^(Version|Depends|Installed-Size):'

echo "== installed: dpgui --version, dpgui --self-test"
/usr/bin/dpgui --version | tee "$work/version.txt"
grep -q "(frozen app)" "$work/version.txt"
/usr/bin/dpgui --self-test

echo "== installed: without a desktop, a clear message and exit code 2 (not Qt's abort)"
status=0
env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM /usr/bin/dpgui >"$work/no-desktop.txt" 2>&1 || status=$?
cat "$work/no-desktop.txt"
if [ "$status" != 2 ] || ! grep -q "needs a graphical desktop" "$work/no-desktop.txt"; then
    echo "ERROR: without a desktop the installed app exited with $status, without the message"; exit 1
fi

echo "== installed app signs; minisign and dpgui verify accept, and reject a tampered manifest"
DPGUI=/usr/bin/dpgui bash scripts/minisign_check.sh

echo "== the real window on Xvfb ($DISPLAY) for 10 s"
QT_QPA_PLATFORM=xcb /usr/bin/dpgui resources/sample/flights.parquet --column distance \
    >"$work/app.log" 2>&1 &
app_pid=$!
sleep 10
if ! kill -0 "$app_pid" 2>/dev/null; then
    echo "ERROR: the installed app exited within 10 s:"; cat "$work/app.log"; exit 1
fi
window=$(xdotool search --onlyvisible --classname '^dpgui$' | head -n 1 || true)
if [ -z "$window" ]; then
    echo "ERROR: no visible dpgui window after 10 s:"; cat "$work/app.log"; exit 1
fi
echo "window $window: $(xdotool getwindowname "$window")"
mkdir -p dist/smoke
QT_QPA_PLATFORM=xcb .venv/bin/python - dist/smoke/installed-window.png <<'PY'
import sys
from PySide6.QtGui import QGuiApplication
app = QGuiApplication(sys.argv[:1])
image = app.primaryScreen().grabWindow(0)  # the whole X screen
sys.exit(0 if image.save(sys.argv[1]) and image.width() > 0 else 1)
PY
echo "screenshot: dist/smoke/installed-window.png"
kill "$app_pid"; wait "$app_pid" 2>/dev/null || true; app_pid=""

echo "== dpkg --purge dpgui"
$SUDO dpkg --purge dpgui
installed=""
if [ -e /opt/dpgui ] || [ -e /usr/bin/dpgui ] || [ -e /usr/share/applications/dpgui.desktop ]; then
    echo "ERROR: left behind after removal:"; ls -la /opt/dpgui /usr/bin/dpgui 2>&1 || true; exit 1
fi
echo "smoke test passed: installed, self-tested, signed and verified, window alive after 10 s, removed cleanly"
