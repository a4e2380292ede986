"""The benchmark machinery (lara bench) on tiny inputs: the hand-written
reference SQL agrees with marts.fct_retrievals, every column of every row, on
the built clean and bad-rows samples, and the comparison notices a changed
value; the process measurement works, the IR comparison agrees with
pytrec_eval, and the report renders."""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import pytest

from lara import bench


@pytest.mark.parametrize("sample", ["clean_sample", "bad_rows_sample"])
def test_reference_agrees_with_fct_retrievals(sample: str, request, tmp_path: Path) -> None:
    """Every column of every row, on a clean Parquet sample and on a mixed Parquet /
    JSON Lines sample with every kind of bad row (quarantine and de-duplication)."""
    built = request.getfixturevalue(sample)
    reference_db = tmp_path / "reference.duckdb"
    bench.run_reference(built.raw_path, reference_db, "1GB", 2)
    agreement = bench.compare(built.warehouse, reference_db)
    bad = {c: v for c, v in agreement["columns"].items() if not v["ok"]}
    assert agreement["rows"][0] > 0
    assert agreement["rows"][0] == agreement["rows"][1]
    assert agreement["missing"] == 0 and agreement["extra"] == 0
    assert not bad, bad
    assert not agreement["extra_columns"]
    with duckdb.connect(str(built.warehouse), read_only=True) as con:
        mart_columns = [
            row[0]
            for row in con.execute(
                "select column_name from information_schema.columns"
                " where table_schema = 'marts' and table_name = 'fct_retrievals'"
            ).fetchall()
            # every value column; _lara_loaded_at is incremental bookkeeping
            if not row[0].startswith("_lara_")
        ]
    assert len(mart_columns) > 40
    assert sorted(agreement["columns"]) == sorted(mart_columns)
    assert agreement["ok"]


def test_compare_finds_a_changed_value(clean_sample, tmp_path: Path) -> None:
    """The comparison is row for row: one float off by more than the tolerance,
    or one flag flipped, is reported on its column."""
    reference_db = tmp_path / "reference.duckdb"
    bench.run_reference(clean_sample.raw_path, reference_db, "1GB", 2)
    with duckdb.connect(str(reference_db)) as con:
        con.execute(
            "update ref_fct_retrievals"
            " set dcg_at_k = dcg_at_k + 1e-7, ndcg_at_k = ndcg_at_k + 1e-12"
            " where retrieval_id = (select min(retrieval_id) from ref_fct_retrievals"
            " where dcg_at_k is not null)"
        )
        con.execute(
            "update ref_fct_retrievals set has_research_failure = not has_research_failure"
            " where retrieval_id = (select max(retrieval_id) from ref_fct_retrievals)"
        )
    agreement = bench.compare(clean_sample.warehouse, reference_db)
    bad = {c: v["mismatched_rows"] for c, v in agreement["columns"].items() if not v["ok"]}
    assert bad == {"dcg_at_k": 1, "has_research_failure": 1}
    assert not agreement["ok"]


def test_measure_reports_time_and_rss() -> None:
    measured = bench.measure([sys.executable, "-c", "x = bytearray(50_000_000)"])
    assert measured.returncode == 0
    assert measured.seconds > 0
    assert measured.max_rss_kib > 40_000


def test_ir_sql_matches_pytrec_eval(clean_sample) -> None:
    pytest.importorskip("pytrec_eval")
    compiled = (
        clean_sample.warehouse.parent
        / "target/compiled/lara/models/intermediate/retrieval/int_retrieval_relevance.sql"
    )
    result = bench.bench_ir(3000, 7, compiled.read_text(), 1, "1GB", log=lambda _: None)
    assert result.lists > 2000
    assert result.max_abs_diff < 1e-9


def test_sizes_and_report(clean_sample) -> None:
    assert bench.parse_sizes("default") == [1_000_000, 5_000_000, 20_000_000]
    assert bench.parse_sizes("1e6,2000") == [1_000_000, 2000]
    events = bench.count_events(clean_sample.raw_path)
    assert events > 0
    results = [
        bench.SizeResult(1000, 100, 1000, 0.5, 10.0, 300.0, 2.0, 100.0),
        bench.SizeResult(4000, 400, 4000, 2.0, 20.0, 400.0, 4.0, 150.0),
    ]
    ir = bench.IrResult(1000, 1.0, 0.5, 0.2, 0.0)
    report = bench.render_report(bench.machine_info(), results, ir, "4GB", 2, ["a note"])
    assert "| 4,000 | 4,000 | 400 |" in report
    assert "log-log slope" in report
    assert "pytrec_eval" in report
