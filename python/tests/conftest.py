"""Shared fixtures: generated samples and dbt builds into temporary warehouses.

Builds are expensive (tens of seconds), so each distinct sample is generated
and built once per test session and shared read-only by the tests.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from lara.dbt import run_dbt

# Incremental runs in the tests stay incremental: a run that recomputes half of
# a small sample's sessions (the second day of three) would otherwise be a bulk
# run (var lara_bulk_run_share, macros/incremental/bulk.sql) and build the
# session-grained models with their full-build SQL. test_incremental_bulk.py
# sets the default back for the bulk runs it tests.
os.environ.setdefault("LARA_BULK_RUN_SHARE", "2")


@dataclass(frozen=True)
class BuiltSample:
    raw_path: Path
    warehouse: Path
    manifest: dict
    build_log: str

    def query(self, sql: str, params: list | None = None) -> list[tuple]:
        with duckdb.connect(str(self.warehouse), read_only=True) as con:
            return con.execute(sql, params or []).fetchall()

    def df(self, sql: str):
        with duckdb.connect(str(self.warehouse), read_only=True) as con:
            return con.execute(sql).df()

    def copy_warehouse(self, directory: Path) -> Path:
        """A writable copy of the (shared, read-only) warehouse in `directory`, with its
        write-ahead log when there is one."""
        warehouse = directory / "lara.duckdb"
        shutil.copy(self.warehouse, warehouse)
        wal = self.warehouse.with_name(self.warehouse.name + ".wal")
        if wal.exists():
            shutil.copy(wal, directory / (warehouse.name + ".wal"))
        return warehouse


def build_sample(root: Path, config, dbt_args: list[str] | None = None) -> BuiltSample:
    """Generate `config` (a GeneratorConfig) under root/raw and build it into root/lara.duckdb."""
    from lara.generate import generate

    raw = root / "raw"
    manifest = generate(config, raw, progress=False)
    warehouse = root / "lara.duckdb"
    result = run_dbt(
        dbt_args or ["build"],
        raw,
        warehouse,
        extra_env={"DBT_TARGET_PATH": str(root / "target"), "DBT_LOG_PATH": str(root / "logs")},
        capture=True,
    )
    log = result.stdout + result.stderr
    if result.returncode != 0:
        raise AssertionError(f"dbt build failed on {raw}:\n{log[-6000:]}")
    return BuiltSample(raw, warehouse, manifest, log)


@pytest.fixture(scope="session")
def clean_sample(tmp_path_factory) -> BuiltSample:
    """A clean multi-day sample (parquet), built once."""
    from lara.generate import GeneratorConfig

    root = tmp_path_factory.mktemp("clean_sample")
    return build_sample(root, GeneratorConfig(sessions=3000, days=4, seed=11))


@pytest.fixture(scope="session")
def bad_rows_sample(tmp_path_factory) -> BuiltSample:
    """A sample with every kind of malformed row, mixed parquet / JSON Lines (gzipped)."""
    from lara.generate import GeneratorConfig

    root = tmp_path_factory.mktemp("bad_rows_sample")
    config = GeneratorConfig(sessions=800, days=3, seed=5, fmt="mixed", gzip=True, bad_rows=True)
    return build_sample(root, config)


def read_manifest(raw_path: Path) -> dict:
    return json.loads((raw_path / "_manifest.json").read_text())


@pytest.fixture(scope="session")
def small_raw_sample(tmp_path_factory) -> Path:
    """Raw files only (not built): 300 sessions, 3 days, mixed Parquet / gzipped JSON Lines.

    The sample of the hardening tests (gate payloads, lineage faults, `lara
    run` lock and publishing); each test copies it before changing anything.
    """
    from lara.generate import GeneratorConfig, generate

    root = tmp_path_factory.mktemp("small_raw_sample") / "raw"
    config = GeneratorConfig(sessions=300, days=3, seed=1, fmt="mixed", gzip=True)
    generate(config, root, progress=False)
    return root
