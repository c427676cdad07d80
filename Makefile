# One command runs the product, one runs the tests; each prepares .venv itself: `make run` installs only what the
# product needs, `make test` adds the dev tools (linters, pytest, Node for the Inspector) and PostgreSQL's driver.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
RUNTIME := $(VENV)/.installed-run
PIP    := $(BIN)/python -m pip --quiet --disable-pip-version-check

.PHONY: run test lint bench install clean

run: $(RUNTIME)
	$(BIN)/mcp-asrama demo

test: $(STAMP) lint
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

install: $(STAMP)

bench: $(STAMP)
	$(BIN)/python bench/service.py

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "Python 3.11+ is required (set PYTHON=/path/to/python3.11)"; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(RUNTIME): pyproject.toml | $(BIN)/python
	$(PIP) install -e .
	@touch $@

$(STAMP): pyproject.toml | $(BIN)/python
	$(PIP) install -e '.[dev,postgres]'
	@touch $@ $(RUNTIME)

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
