# Every target makes .venv itself when it is missing, so a fresh machine needs only Python 3.11+ and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: play test test-web lint typecheck pytest bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Reinstall whenever pyproject.toml changes (new dependency, new console script).
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

play: $(STAMP)
	$(BIN)/spades play

test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -q

# The web page and its transport alone (tests/web/), with the browser required: a missing Chromium
# fails here instead of skipping (install it with: apt-get install chromium chromium-driver).
test-web: $(STAMP)
	SPADES_REQUIRE_BROWSER=1 $(BIN)/pytest -q tests/web

bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[dev,bench]'
	@for script in $(filter-out bench/__init__.py bench/report.py,$(wildcard bench/*.py)); do \
		echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis build *.egg-info
