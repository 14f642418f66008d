# Every target makes .venv itself when it is missing, so a fresh machine needs only Python 3.11+ and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# What playing needs alone (trio, msgpack, rich, typer, ...: no pytest, mypy, ruff or playwright):
# `make play` and `make install` install only that; the development targets install [dev] on top.
PLAY_STAMP := $(VENV)/.installed-play

# `make play ARGS="--preset hearts"` passes ARGS to `spades play`; `make install` links the three
# commands into BINDIR (a folder on your PATH) so they work from anywhere.
ARGS   ?=
BINDIR ?= $(HOME)/.local/bin
COMMANDS := spades spades-server spades-bot

.PHONY: play install uninstall test test-fast test-web doc-images axe lint typecheck pytest bench clean

$(BIN)/python:
	@echo "making a Python environment in $(VENV) (once) ..."
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip

# Reinstall whenever pyproject.toml changes (new dependency, new console script).
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)
	@echo "installed spades, spades-server and spades-bot in $(BIN)/ (make install puts them on your PATH)"

# A development install already holds everything playing needs: then there is nothing to fetch.
$(PLAY_STAMP): pyproject.toml | $(BIN)/python
	@if [ -f $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ]; then touch $(PLAY_STAMP); else \
		echo "installing what playing needs into $(VENV) (once; a minute or so, more on a busy machine) ..."; \
		start=$$(date +%s); \
		$(BIN)/python -m pip install -q -e . && touch $(PLAY_STAMP) && \
		echo "installed in $$(( $$(date +%s) - start )) s; starting the game"; fi

# SPADES_VIA=make: what the game tells you to type next is `make play ARGS="..."`, which works here
# before `make install`. A refusal the game said in a sentence (exit 1) is not make's error too.
play: $(PLAY_STAMP)
	@SPADES_VIA=make $(BIN)/spades play $(ARGS) || [ $$? -eq 1 ]

# Links, not copies: the commands stay the ones of this checkout's .venv (pipx does the same).
install: $(PLAY_STAMP)
	@mkdir -p "$(BINDIR)"
	@for c in $(COMMANDS); do ln -sf "$(CURDIR)/$(BIN)/$$c" "$(BINDIR)/$$c"; done
	@echo "linked $(COMMANDS) into $(BINDIR)"
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) \
		echo "$(BINDIR) is not on your PATH: add it, e.g. export PATH=\"$(BINDIR):\$$PATH\" in ~/.profile";; esac

uninstall:
	@for c in $(COMMANDS); do \
		if [ "$$(readlink "$(BINDIR)/$$c")" = "$(CURDIR)/$(BIN)/$$c" ]; then rm "$(BINDIR)/$$c"; fi; done
	@echo "removed this checkout's links from $(BINDIR)"

test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# axe-core for the page's accessibility test (tests/web/test_accessibility.py), from npm as its
# lock file pins it; never committed. Without npm the test skips (saying why), unless the browser
# tests are required (CI), where it fails.
AXE := tests/web/axe/node_modules/axe-core/axe.min.js
$(AXE): tests/web/axe/package.json tests/web/axe/package-lock.json
	@if command -v npm >/dev/null 2>&1; then cd tests/web/axe && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/axe-core/axe.min.js; \
	else echo "npm is not installed: the accessibility test will skip (apt-get install npm)"; fi

axe: $(AXE)

pytest: $(STAMP) $(AXE)
	$(BIN)/pytest -q

# What a developer runs between changes: ruff, mypy and every test but the `slow` ones (browsers,
# tmux, several server processes; tests/conftest.py lists them). `make test` (CI) runs them all.
test-fast: lint typecheck $(STAMP)
	$(BIN)/pytest -q -m "not slow"

# The web page and its transport alone (tests/web/), with the browser required: a missing Chromium
# fails here instead of skipping (install it with: apt-get install chromium chromium-driver).
test-web: $(STAMP) $(AXE)
	SPADES_REQUIRE_BROWSER=1 $(BIN)/pytest -q tests/web

# The web page's screenshots in docs/web.md (docs/images/web-*.png): taken by the layout test and
# the replay test at each screen size, then made small with pngquant (apt-get install pngquant), a few hundred KB in all.
doc-images: $(STAMP) $(AXE)
	mkdir -p docs/images
	SPADES_REQUIRE_BROWSER=1 SPADES_DOC_IMAGES=1 $(BIN)/pytest -q tests/web/test_table_layout.py -k every
	SPADES_REQUIRE_BROWSER=1 SPADES_DOC_IMAGES=1 $(BIN)/pytest -q tests/web/test_replays.py -k every_screen
	pngquant --quality=60-85 --speed 1 --strip --force --ext .png docs/images/web-*-*x*.png

bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[dev,bench]'
	@for script in $(filter-out bench/__init__.py bench/report.py,$(wildcard bench/*.py)); do \
		echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis build *.egg-info
