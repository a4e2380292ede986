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

# `make test` runs the test modules on this many pytest-xdist workers; a
# module's tests (and its fixtures' builds) stay on one worker. dbt spends
# most of a build in its own single-threaded Python, so two workers on two
# cores halve the wall time. TEST_WORKERS=0 runs them in one process.
TEST_WORKERS ?= 2

.PHONY: help setup setup-spark run test test-spark lint lint-sql format bench clean

help:
	@echo "make run    set up, then generate the sample (unless LARA_RAW_PATH is set) and build everything"
	@echo "make test   set up, then run every test (pytest, dbt unit and data tests, sqlfluff, ruff)"
	@echo "make test-spark  add the spark extra to .venv, then build a sample on DuckDB and local Spark and compare the marts"
	@echo "make lint   sqlfluff (dbt templater) and ruff only"
	@echo "make bench  benchmark (not part of make test): writes docs/benchmarks.md and .json"
	@echo "make clean  remove the warehouse, target/, the generated sample and the run's reports/ and exports/"

# setup also creates what a plain `dbt debug` / `dbt build` needs: the
# warehouse folder and, unless it exists, the bundled sample in data/sample
# (the default LARA_RAW_PATH; `make run` regenerates it).
SAMPLE_MANIFEST := data/sample/_manifest.json
setup: $(STAMP) warehouse $(SAMPLE_MANIFEST)

warehouse:
	mkdir -p warehouse

$(SAMPLE_MANIFEST): | $(STAMP)
	$(BIN)/lara generate --sessions $(SAMPLE_SESSIONS) --days $(SAMPLE_DAYS) --seed $(SAMPLE_SEED) --out data/sample --quiet

$(STAMP): python/pyproject.toml python/constraints.txt
	@echo "== setting up $(VENV) (first run only)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c python/constraints.txt -e 'python[dev]'
	@touch $(STAMP)

# Optional: dbt-spark and pyspark (extra `spark`) in the same .venv; DuckDB
# users never install them.
SPARK_STAMP := $(VENV)/.spark-installed-stamp
setup-spark: $(SPARK_STAMP)

$(SPARK_STAMP): $(STAMP)
	@echo "== adding the spark extra (dbt-spark, pyspark) to $(VENV)"
	$(BIN)/pip install --quiet -c python/constraints.txt -e 'python[dev,spark]'
	@touch $(SPARK_STAMP)

run: setup
	$(BIN)/lara run --sessions $(SAMPLE_SESSIONS) --days $(SAMPLE_DAYS) --seed $(SAMPLE_SEED)

test: setup
	$(BIN)/ruff check python
	$(BIN)/ruff format --check python
	$(BIN)/ruff check --config python/pyproject.toml examples
	$(BIN)/ruff format --config python/pyproject.toml --check examples
	$(BIN)/pytest python/tests -m "not spark" --numprocesses $(TEST_WORKERS) --dist loadfile --durations=20
	$(MAKE) --no-print-directory lint-sql

# The cross-engine test (python/tests/test_spark.py): one small sample built
# with dbt on DuckDB and on local Spark, public marts compared. Fails rather
# than skips when the Spark stack is missing (LARA_SPARK_TESTS=1 under CI=true).
test-spark: setup-spark
	LARA_SPARK_TESTS=1 $(BIN)/pytest python/tests/test_spark.py -m spark -s --durations=10

lint: setup
	$(BIN)/ruff check python
	$(BIN)/ruff format --check python
	$(BIN)/ruff check --config python/pyproject.toml examples
	$(BIN)/ruff format --config python/pyproject.toml --check examples
	$(MAKE) --no-print-directory lint-sql

# sqlfluff's dbt templater compiles every model against a small generated
# sample (the on-run-start hook needs files to register).
LINT_RAW := target/lint-sample
lint-sql: setup
	@test -d $(LINT_RAW)/prompts || $(BIN)/lara generate --sessions 200 --days 2 --seed 1 --out $(LINT_RAW) --quiet
	LARA_RAW_PATH=$(CURDIR)/$(LINT_RAW) LARA_DUCKDB_PATH=$(CURDIR)/target/lint.duckdb \
		$(BIN)/sqlfluff lint models macros analyses tests --processes 2

# Speed and memory: generates logs of increasing size and writes
# docs/benchmarks.md and the measurements behind it, docs/benchmarks.json (takes
# tens of minutes; not part of `make test`). `lara bench --render` writes the
# report again from the JSON alone.
bench: setup
	$(BIN)/lara bench

format: setup
	$(BIN)/ruff format python
	$(BIN)/ruff check --fix python

# Keeps the (tracked) warehouse folder itself.
clean:
	rm -rf target warehouse/* data/sample logs spark-warehouse metastore_db derby.log reports exports
