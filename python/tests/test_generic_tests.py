"""The project's generic data tests catch what they are written for.

`not_null_columns` replaces a `not_null` test per column (one query and one
dbt node each) with one scan per model. On a copy of the clean sample's
warehouse with nulls planted in two of `fct_retrievals`' listed columns, the
test must fail with exactly those columns and their null counts, and pass on
the untouched warehouse.
"""

from __future__ import annotations

import shutil

import duckdb
import yaml

from lara.dbt import run_dbt
from lara.paths import project_dir

SELECT = "test_name:not_null_columns,fct_retrievals"


def _listed_columns() -> list[str]:
    path = project_dir() / "models/marts/retrieval/_retrieval_marts__models.yml"
    model = next(
        m for m in yaml.safe_load(path.read_text())["models"] if m["name"] == "fct_retrievals"
    )
    tests = [t["not_null_columns"] for t in model["data_tests"] if "not_null_columns" in t]
    assert len(tests) == 1, tests
    return tests[0]["arguments"]["column_names"]


def _run_test(sample, warehouse, root):
    return run_dbt(
        ["test", "--select", SELECT, "--store-failures", "--vars", "{lara_full_test: true}"],
        sample.raw_path,
        warehouse,
        extra_env={"DBT_TARGET_PATH": str(root / "target"), "DBT_LOG_PATH": str(root / "logs")},
        capture=True,
    )


def test_not_null_columns_names_each_column_with_nulls(clean_sample, tmp_path):
    columns = _listed_columns()
    assert {"surface", "is_empty", "click_count"} <= set(columns)
    warehouse = tmp_path / "lara.duckdb"
    shutil.copy(clean_sample.warehouse, warehouse)

    passed = _run_test(clean_sample, warehouse, tmp_path)
    assert passed.returncode == 0, passed.stdout[-3000:]

    with duckdb.connect(str(warehouse)) as con:
        ids = [
            row[0]
            for row in con.execute(
                "select retrieval_id from marts.fct_retrievals order by retrieval_id limit 5"
            ).fetchall()
        ]
        con.execute(
            "update marts.fct_retrievals set surface = null where retrieval_id = ?", [ids[0]]
        )
        con.execute(
            "update marts.fct_retrievals set click_count = null where retrieval_id in (?, ?, ?)",
            ids[1:4],
        )
    failed = _run_test(clean_sample, warehouse, tmp_path)
    log = failed.stdout + failed.stderr
    assert failed.returncode != 0, log[-3000:]
    assert "Got 2 results" in log, log[-3000:]
    with duckdb.connect(str(warehouse), read_only=True) as con:
        (table,) = con.execute(
            "select table_schema || '.' || table_name from information_schema.tables"
            " where table_name like 'not_null_columns_fct_retrieval%'"
        ).fetchone()
        stored = con.execute(f"select column_name, null_rows from {table} order by 1").fetchall()
    assert stored == [("click_count", 3), ("surface", 1)]
