"""`dbt source freshness` on the raw views: the newest event time per table.

The generated sample's events are months old, so every checked table is
past `error_after` and dbt exits 1; what is tested is that freshness runs
over the registered raw views and reports each table's newest valid `ts`
(a malformed timestamp is ignored, as staging quarantines it). The Spark
variant of `loaded_at_field` is checked against these numbers in
test_spark.py.
"""

from __future__ import annotations

from freshness import freshness_results, utc


def test_freshness_reports_the_newest_event_per_table(bad_rows_sample, tmp_path) -> None:
    by_table, result = freshness_results(
        bad_rows_sample.raw_path, bad_rows_sample.warehouse, tmp_path
    )
    # Event tables are checked; label tables have freshness: null.
    assert {"prompts", "retrievals", "actions"} <= set(by_table)
    assert "relevance_labels" not in by_table
    assert result.returncode == 1  # months-old sample: past error_after
    for table, column in (("prompts", "prompted_at"), ("actions", "acted_at")):
        entry = by_table[table]
        assert entry["status"] == "error", entry
        reported = utc(entry["max_loaded_at"])
        raw_newest = bad_rows_sample.query(
            f"select max(try_cast(ts as timestamptz)) from lara_raw.{table}"
        )
        clean_newest = bad_rows_sample.query(f"select max({column}) from staging.stg_lara__{table}")
        assert reported == utc(raw_newest[0][0]), (table, reported, raw_newest)
        # Staging keeps a subset of the raw rows.
        assert reported >= utc(clean_newest[0][0]), (table, reported, clean_newest)
