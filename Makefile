# The two commands: `make run` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SAMPLE := resources/sample/flights.parquet

.PHONY: run test test-fast lint bench clean system-deps package constraints

# Debian packages the window needs (Qt's xcb plugin and Xvfb for the real-window tests), plus
# minisign (tests show the stock tool verifies our bundles) and poppler-utils (pdftotext reads our PDFs);
# for `make package` and its smoke test: binutils (strip, readelf, as, ld) and icu-devtools (icupkg),
# which shrink Qt's ICU data, xdotool (finds the installed app's window), the Wayland client libraries
# (listed in the .deb's Depends:), and shellcheck (tests the scripts); postgresql (the database tests start a
# throw-away server on a local socket: tests/support/pg_server.py) and a Java runtime (the Spark tests run Spark local[2]).
# Installed by CI (`.ci/run`); on a desktop machine they are normally present already.
SYSTEM_PACKAGES := xvfb xauth libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libdbus-1-3 \
	libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libxcb-randr0 libxcb-render-util0 \
	libxcb-xinerama0 libxcb-image0 libxcb-xkb1 libwayland-cursor0 libwayland-egl1 fonts-dejavu-core \
	minisign poppler-utils binutils icu-devtools xdotool shellcheck postgresql \
	default-jre-headless

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# What each target installs into .venv (pyproject.toml's extras): `make run` the app alone (its
# dependencies: no test, Spark or packaging package); `make test`, `make lint` and `make bench` the app with
# $(EXTRAS), the test tools (pytest, ruff, mypy, OpenDP, PyInstaller, …) and the optional Spark engine
# (tests/unit/data/test_spark_source.py); `make test EXTRAS=test` leaves Spark out (those tests then skip,
# or fail under CI=true). The installers never include Spark.
# One marker file per set installed (.venv/.installed-app, .venv/.installed-test+spark): a venv made by
# `make run` gets the extras on the first `make test`, and `make run` after `make test` only re-links
# the editable package (pip adds, never removes). A newer pyproject.toml reinstalls each set when used.
EXTRAS ?= test,spark
comma := ,
installed = $(VENV)/.installed-$(or $(subst $(comma),+,$(1)),app)
$(VENV)/.installed-%: pyproject.toml | $(BIN)/activate
	$(BIN)/python -m pip install --quiet -e '.$(if $(filter app,$*),,[$(subst +,$(comma),$*)])'
	touch $@

# Opens the desktop window on the bundled sample dataset (column `distance` selected).
run: $(call installed,)
	$(BIN)/dpgui $(SAMPLE) --column distance

test: $(call installed,$(EXTRAS))
	$(BIN)/python -m pytest -q

# The quick part of the suite while you work: every test but those marked slow, db (PostgreSQL), spark,
# xvfb (a real X server) or packaging (tests/conftest.py gives the markers). `make test` runs them all.
FAST := not slow and not db and not spark and not xvfb and not packaging
test-fast: $(call installed,$(EXTRAS))
	$(BIN)/python -m pytest -q -m "$(FAST)"

# The gates, configured in pyproject.toml: ruff (style and likely bugs), mypy (types: strict on every
# module) and import-linter (the layers; only dpgui/app imports Qt). All three run,
# and the target fails if any of them does. CI runs it before the tests.
lint: $(call installed,$(EXTRAS))
	@status=0; \
	echo "== ruff check"; $(BIN)/ruff check --output-format concise . || status=1; \
	echo "== mypy"; $(BIN)/mypy || status=1; \
	echo "== lint-imports"; $(BIN)/lint-imports --no-cache || status=1; \
	if [ $$status -ne 0 ]; then echo "make lint: FAILED (see the messages above)"; fi; \
	exit $$status

# The frozen app (dist/dpgui), a .deb and a .tar.gz; on Debian/Ubuntu after `make system-deps`. build.sh
# installs the `package` extra (PyInstaller) at the versions of packaging/constraints.txt.
package: $(BIN)/activate
	PYTHON=$(BIN)/python bash packaging/linux/build.sh

# packaging/constraints.txt, the versions the installers are built from (packaging/linux/build.sh and
# the Windows and macOS jobs install with it): regenerate after changing pyproject.toml's dependencies.
constraints:
	PYTHON=$(PYTHON) bash packaging/make_constraints.sh

# The speed and accuracy benchmarks, each printed with its target (the tests assert rules, not times),
# among them the window's worst GUI-thread stall while a 10⁶-row CSV loads and a release runs.
bench: $(call installed,$(EXTRAS))
	$(BIN)/python benchmarks/run_all.py

system-deps:
	@missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages: $$missing"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

clean:
	rm -rf $(VENV) build dist *.egg-info bench-out sample-release.csv .mypy_cache .ruff_cache .import_linter_cache
