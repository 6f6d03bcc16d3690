# The two commands: `make run` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SAMPLE := resources/sample/flights.parquet

.PHONY: run test bench clean

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/activate
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

# Until the desktop window lands, `run` plans and releases a CDF of the bundled sample.
run: $(VENV)/.installed
	$(BIN)/dpgui plan --bins 1000 --epsilon 1 --n 336776
	$(BIN)/dpgui release $(SAMPLE) --column distance --lower 0 --upper 5000 --bins 1000 \
		--epsilon 1 --out sample-release.csv
	@echo "first rows of sample-release.csv:" && head -5 sample-release.csv

test: $(VENV)/.installed
	$(BIN)/python -m pytest -q

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) build dist *.egg-info bench-out sample-release.csv
