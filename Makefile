# lara: `make run` builds the warehouse from logs; `make test` runs every test.
# Both set up .venv on first use (pinned by python/constraints.txt).

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

export DBT_PROFILES_DIR := $(CURDIR)
export DBT_PROJECT_DIR := $(CURDIR)
export DBT_SEND_ANONYMOUS_USAGE_STATS := false

# Sample size for `make run` when LARA_RAW_PATH is unset.
SAMPLE_SESSIONS ?= 20000
SAMPLE_DAYS ?= 14
SAMPLE_SEED ?= 7

.PHONY: help setup run test lint lint-sql format bench clean

help:
	@echo "make run    set up, then generate the sample (unless LARA_RAW_PATH is set) and build everything"
	@echo "make test   set up, then run every test (pytest, dbt unit and data tests, sqlfluff, ruff)"
	@echo "make lint   sqlfluff (dbt templater) and ruff only"
	@echo "make bench  benchmark (not part of make test): writes docs/benchmarks.md"
	@echo "make clean  remove the warehouse, target/ and the generated sample"

setup: $(STAMP)

$(STAMP): python/pyproject.toml python/constraints.txt
	@echo "== setting up $(VENV) (first run only)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c python/constraints.txt -e 'python[dev]'
	@touch $(STAMP)

run: setup
	$(BIN)/lara run --sessions $(SAMPLE_SESSIONS) --days $(SAMPLE_DAYS) --seed $(SAMPLE_SEED)

test: setup
	$(BIN)/ruff check python
	$(BIN)/ruff format --check python
	$(BIN)/pytest python/tests
	$(MAKE) --no-print-directory lint-sql

lint: setup
	$(BIN)/ruff check python
	$(BIN)/ruff format --check python
	$(MAKE) --no-print-directory lint-sql

# sqlfluff's dbt templater compiles every model against a small generated
# sample (the on-run-start hook needs files to register).
LINT_RAW := target/lint-sample
lint-sql: setup
	@test -d $(LINT_RAW)/prompts || $(BIN)/lara generate --sessions 200 --days 2 --seed 1 --out $(LINT_RAW) --quiet
	LARA_RAW_PATH=$(CURDIR)/$(LINT_RAW) LARA_DUCKDB_PATH=$(CURDIR)/target/lint.duckdb \
		$(BIN)/sqlfluff lint models macros analyses tests --processes 2

# Speed and memory: generates logs of increasing size and writes
# docs/benchmarks.md (takes tens of minutes; not part of `make test`).
bench: setup
	$(BIN)/lara bench

format: setup
	$(BIN)/ruff format python
	$(BIN)/ruff check --fix python

clean:
	rm -rf target warehouse data/sample logs
