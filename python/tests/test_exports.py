"""`lara export`: the public marts as Parquet and as a marts-only DuckDB file."""

from __future__ import annotations

import json

import duckdb
import pytest

from lara.export import DUCKDB_EXPORT, INDEX_FILE, export_marts


@pytest.fixture(scope="module")
def exported(clean_sample, tmp_path_factory):
    out = tmp_path_factory.mktemp("exports")
    return out, export_marts(clean_sample.warehouse, out)


def _marts(clean_sample) -> dict[str, int]:
    names = [
        name
        for (name,) in clean_sample.query(
            "select table_name from duckdb_tables() where schema_name = 'marts' order by 1"
        )
        if name != "metricflow_time_spine"
    ]
    return {
        name: clean_sample.query(f'select count(*) from marts."{name}"')[0][0] for name in names
    }


def test_every_public_mart_is_one_parquet_file_in_a_stable_layout(exported, clean_sample):
    out, written = exported
    marts = _marts(clean_sample)
    assert {"fct_retrievals", "fct_prompts", "fct_sessions", "agg_tier2_usage"} <= set(marts)
    parquet = sorted(p for p in written if p.suffix == ".parquet")
    assert [p.relative_to(out).as_posix() for p in parquet] == [
        f"{name}/{name}.parquet" for name in sorted(marts)
    ]
    with duckdb.connect() as con:
        for name, rows in marts.items():
            path = out / name / f"{name}.parquet"
            assert con.execute(f"select count(*) from read_parquet('{path}')").fetchone()[0] == rows
            exported_columns = [
                r[0]
                for r in con.execute(f"describe select * from read_parquet('{path}')").fetchall()
            ]
            mart_columns = [
                r[0]
                for r in clean_sample.query(
                    "select column_name from duckdb_columns() where schema_name = 'marts' "
                    "and table_name = ? order by column_index",
                    [name],
                )
            ]
            assert exported_columns == mart_columns
    assert not list(out.glob("**/*.partial"))
    assert "metricflow_time_spine" not in {p.parent.name for p in parquet}


def test_index_lists_rows_columns_and_build_time(exported, clean_sample):
    out, written = exported
    index = json.loads((out / INDEX_FILE).read_text())
    assert written[-1] == out / INDEX_FILE
    assert index["exported_at"] and index["warehouse_modified_at"]
    assert index["duckdb"] == DUCKDB_EXPORT
    marts = _marts(clean_sample)
    by_name = {entry["name"]: entry for entry in index["marts"]}
    assert set(by_name) == set(marts)
    for name, rows in marts.items():
        entry = by_name[name]
        assert entry["rows"] == rows
        assert entry["path"] == f"{name}/{name}.parquet"
        assert entry["columns"] and all(c["name"] and c["type"] for c in entry["columns"])
    retrievals = by_name["fct_retrievals"]
    assert retrievals["description"]
    assert {c["name"]: c for c in retrievals["columns"]}["retrieval_id"]["description"]


def test_duckdb_export_holds_the_marts_and_nothing_else(exported, clean_sample):
    out, _ = exported
    marts = _marts(clean_sample)
    with duckdb.connect(str(out / DUCKDB_EXPORT), read_only=True) as con:
        tables = con.execute(
            "select schema_name, table_name from duckdb_tables() order by 2"
        ).fetchall()
        assert {schema for schema, _ in tables} == {"marts"}
        assert sorted(name for _, name in tables) == sorted(marts)
        for name, rows in marts.items():
            assert con.execute(f'select count(*) from marts."{name}"').fetchone()[0] == rows
        (comment,) = con.execute(
            "select comment from duckdb_tables() where table_name = 'fct_retrievals'"
        ).fetchone()
        assert comment


def test_export_is_repeatable_and_drops_stale_marts(clean_sample, tmp_path):
    stale = tmp_path / "agg_removed_mart"
    stale.mkdir()
    (stale / "agg_removed_mart.parquet").write_bytes(b"old")
    unrelated = tmp_path / "notes"
    unrelated.mkdir()
    first = export_marts(clean_sample.warehouse, tmp_path)
    second = export_marts(clean_sample.warehouse, tmp_path)
    assert first == second
    assert not stale.exists()
    assert unrelated.exists()


def test_missing_warehouse_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        export_marts(tmp_path / "nope.duckdb", tmp_path / "out")
