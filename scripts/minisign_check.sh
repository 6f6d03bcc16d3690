#!/usr/bin/env bash
# Shows that Debian's stock minisign verifies a dpgui bundle and rejects a tampered one.
# Uses a throw-away DPGUI_HOME and key; run after `make test` (needs .venv and minisign).
# DPGUI=/usr/bin/dpgui bash scripts/minisign_check.sh checks an installed (frozen) dpgui instead.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export DPGUI_HOME="$work/home" QT_QPA_PLATFORM=offscreen
dpgui=${DPGUI:-.venv/bin/dpgui}
printf 'a throw-away passphrase\n' > "$work/pass"
$dpgui key create ci-officer --passphrase-file "$work/pass" --dir "$work"
$dpgui ledger cap flights 1 --reason "CI demonstration"
mkdir "$work/bundle"
$dpgui release resources/sample/flights.parquet --column distance --lower 0 --upper 5000 --bins 500 \
    --epsilon 0.5 --dataset flights --bundle "$work/bundle" --key "$work/ci-officer.key" --passphrase-file "$work/pass" --name flights-ci
ls -l "$work/bundle"
echo "--- minisign -Vm on the bundle's manifest (must succeed):"
minisign -Vm "$work/bundle/flights-ci.manifest.json" -p "$work/ci-officer.pub"
echo "--- dpgui verify:"
$dpgui verify "$work/bundle/flights-ci.manifest.json" --pubkey "$work/ci-officer.pub"
echo "--- the manifest with ε changed from 0.5 to 0.1 (must be rejected):"
sed -i 's/"epsilon": 0.5,/"epsilon": 0.1,/' "$work/bundle/flights-ci.manifest.json"
grep -c '"epsilon": 0.1,' "$work/bundle/flights-ci.manifest.json" >/dev/null
if minisign -Vm "$work/bundle/flights-ci.manifest.json" -p "$work/ci-officer.pub"; then
    echo "ERROR: minisign accepted a tampered manifest"; exit 1
fi
if $dpgui verify "$work/bundle/flights-ci.manifest.json" --pubkey "$work/ci-officer.pub"; then
    echo "ERROR: dpgui verify accepted a tampered manifest"; exit 1
fi
echo "minisign check passed: the stock tool accepts the bundle and rejects the tampered manifest."
