"""Staging: counts against the generator's manifest, quarantine reasons,
reconciliation, and the raw-file reading rules (formats, time zones, errors)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from lara.contract import load_contract
from lara.dbt import run_dbt

TABLES = list(load_contract())


def _expected(manifest: dict, table: str) -> dict:
    """Expected staging counts; a table the generator does not write is empty."""
    empty = {"clean": 0, "exact_duplicates": 0, "quarantined": {}}
    return manifest["expected_staging"].get(table, empty)


@pytest.mark.parametrize("table", TABLES)
def test_clean_counts_match_the_manifest(bad_rows_sample, table):
    expected = _expected(bad_rows_sample.manifest, table)
    (clean,) = bad_rows_sample.query(f"select count(*) from staging.stg_lara__{table}")[0]
    assert clean == expected["clean"]


@pytest.mark.parametrize("table", TABLES)
def test_duplicates_and_quarantine_match_the_manifest(bad_rows_sample, table):
    expected = _expected(bad_rows_sample.manifest, table)
    rec = bad_rows_sample.query(
        "select duplicate_rows, quarantined_rows from data_quality.dq_reconciliation "
        "where table_name = ?",
        [table],
    )[0]
    assert rec[0] == expected["exact_duplicates"]
    assert rec[1] == sum(expected["quarantined"].values())
    by_reason = dict(
        bad_rows_sample.query(
            "select quarantine_reason, count(*) from data_quality.dq_quarantine "
            "where table_name = ? group by 1",
            [table],
        )
    )
    assert by_reason == {k: v for k, v in expected["quarantined"].items() if v}


def test_every_injected_defect_is_quarantined_with_its_reason(bad_rows_sample):
    defects = bad_rows_sample.manifest["bad_rows"]["defects"]
    found = set(
        bad_rows_sample.query(
            "select table_name, quarantine_reason, coalesce(quarantine_column, '') "
            "from data_quality.dq_quarantine"
        )
    )
    found_reasons = {(table, reason) for table, reason, _ in found}
    kinds = set()
    for table, by_reason in defects.items():
        for reason, detail in by_reason.items():
            if not detail["count"]:
                continue
            kinds.add(reason)
            assert (table, reason) in found_reasons, (table, reason)
            for row in detail.get("rows", []):
                if row.get("column") and reason != "conflicting_duplicate":
                    assert (table, reason, row["column"]) in found, (table, reason, row)
    for table, conflicts in bad_rows_sample.manifest["bad_rows"]["conflicts"].items():
        if conflicts:
            kinds.add("conflicting_duplicate")
            assert (table, "conflicting_duplicate") in found_reasons, table
            (versions,) = bad_rows_sample.query(
                "select count(*) from data_quality.dq_quarantine "
                "where table_name = ? and quarantine_reason = 'conflicting_duplicate'",
                [table],
            )[0]
            assert versions == 2 * len(conflicts), table
    for kind in [
        "json_parse_error",
        "missing_required",
        "empty_id",
        "invalid_timestamp",
        "invalid_type",
        "invalid_enum",
        "out_of_range",
        "invalid_list",
        "conflicting_duplicate",
    ]:
        assert kind in kinds, f"no {kind} defect injected"


def test_each_injected_row_gets_exactly_its_reason(bad_rows_sample):
    """Trace every injected JSON defect to its quarantine row by file and content."""
    defects = bad_rows_sample.manifest["bad_rows"]["defects"]
    quarantined = bad_rows_sample.query(
        "select table_name, quarantine_reason, raw_row from data_quality.dq_quarantine"
    )
    by_raw = {(table, raw): reason for table, reason, raw in quarantined}
    checked = 0
    for table, by_reason in defects.items():
        for reason, detail in by_reason.items():
            for row in detail.get("rows", []):
                if "raw" in row and (table, row["raw"]) in by_raw:
                    assert by_raw[(table, row["raw"])] == reason
                    checked += 1
    assert checked > 0


def test_reconciliation_holds_for_every_table(bad_rows_sample):
    rows = bad_rows_sample.query(
        "select table_name, raw_rows, clean_rows, quarantined_rows, duplicate_rows, "
        "is_reconciled from data_quality.dq_reconciliation"
    )
    assert len(rows) == len(TABLES)
    for table, raw, clean, quarantined, duplicates, ok in rows:
        assert ok and raw == clean + quarantined + duplicates, table
        if table in {"prompts", "retrievals", "actions"}:
            assert clean > 0, table


def test_raw_rows_equal_lines_on_disk(bad_rows_sample):
    """Every non-blank JSON line and every Parquet row is a raw row."""
    raw = bad_rows_sample.raw_path
    with duckdb.connect() as con:
        for table in ["prompts", "retrievals", "actions"]:
            on_disk = 0
            for path in sorted((raw / table).glob("dt=*/*")):
                if path.name.endswith(".parquet"):
                    on_disk += con.execute(
                        f"select count(*) from read_parquet('{path}')"
                    ).fetchone()[0]
                elif path.name.endswith(".jsonl.gz"):
                    with gzip.open(path, "rt") as handle:
                        on_disk += sum(1 for line in handle if line.strip())
                elif path.name.endswith(".jsonl"):
                    with open(path) as handle:
                        on_disk += sum(1 for line in handle if line.strip())
            (raw_rows,) = bad_rows_sample.query(
                "select raw_rows from data_quality.dq_reconciliation where table_name = ?",
                [table],
            )[0]
            assert raw_rows == on_disk, table


def test_quarantined_json_rows_point_at_their_file_and_line(bad_rows_sample):
    rows = bad_rows_sample.query(
        "select source_file, source_line, raw_row from data_quality.dq_quarantine "
        "where source_format = 'jsonl'"
    )
    assert rows
    for source_file, source_line, raw_row in rows:
        opener = gzip.open if source_file.endswith(".gz") else open
        with opener(source_file, "rt") as handle:
            lines = handle.read().split("\n")
        assert lines[source_line - 1] == raw_row


def test_staging_timestamps_are_utc(clean_sample):
    # The generator writes offsets such as +02:00 in JSON: staging must shift them.
    rows = clean_sample.query(
        "select count(*) from staging.stg_lara__prompts where prompted_at is null"
    )
    assert rows[0][0] == 0


# --- raw-file reading rules on hand-made folders --------------------------------------


def _write_jsonl(path: Path, rows: list, compress: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n"
    if compress:
        with gzip.open(path, "wt") as handle:
            handle.write(text)
    else:
        path.write_text(text)


def _minimal_tables(root: Path, prompt_ts: str = "2026-08-01T12:00:00+02:00") -> None:
    _write_jsonl(
        root / "prompts/dt=2026-08-01/a.jsonl",
        [
            {
                "prompt_id": "p1",
                "session_guid": "s1",
                "user_id": "u1",
                "surface": "chat",
                "ts": prompt_ts,
                "unknown_extra_column": 1,
            }
        ],
    )
    with duckdb.connect() as con:
        (root / "retrievals/dt=2026-08-01").mkdir(parents=True, exist_ok=True)
        con.execute("set TimeZone = 'America/New_York'")
        con.execute(
            "copy (select 'r1' as retrieval_id, 'p1' as prompt_id, 's1' as session_guid, "
            "timestamptz '2026-08-01 06:00:05-04:00' as ts, ['a1', 'a2'] as returned_asset_ids, "
            "'find' as retrieval_role) "
            f"to '{root}/retrievals/dt=2026-08-01/r.parquet' (format parquet)"
        )
    _write_jsonl(
        root / "actions/dt=2026-08-01/x.jsonl.gz",
        [
            {
                "action_id": "x1",
                "session_guid": "s1",
                "prompt_id": "p1",
                "ts": "2026-08-01T10:00:07Z",
                "actor": "agent",
                "action_type": "place",
                "consumed_asset_id": "a2",
                "source_retrieval_id": "r1",
                "document_id": "d1",
            }
        ],
        compress=True,
    )


def _build(root: Path, tmp: Path, select: str = "staging data_quality"):
    return run_dbt(
        ["build", "--select", select],
        root,
        tmp / "w.duckdb",
        extra_env={"DBT_TARGET_PATH": str(tmp / "target"), "DBT_LOG_PATH": str(tmp / "logs")},
        capture=True,
    )


def test_mixed_formats_and_time_zones_become_utc(tmp_path):
    root = tmp_path / "raw"
    _minimal_tables(root)
    result = _build(root, tmp_path)
    assert result.returncode == 0, result.stdout[-4000:]
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        prompted = con.execute(
            "select cast(prompted_at as varchar) from staging.stg_lara__prompts"
        ).fetchall()
        retrieved = con.execute(
            "select cast(retrieved_at as varchar), returned_asset_ids "
            "from staging.stg_lara__retrievals"
        ).fetchall()
        acted = con.execute(
            "select cast(acted_at as varchar) from staging.stg_lara__actions"
        ).fetchall()
        optional = con.execute("select count(*) from staging.stg_lara__relevance_labels").fetchone()
    assert prompted == [("2026-08-01 10:00:00",)]
    assert retrieved == [("2026-08-01 10:00:05", ["a1", "a2"])]
    assert acted == [("2026-08-01 10:00:07",)]
    assert optional == (0,)


def test_missing_required_table_stops_with_the_path(tmp_path):
    root = tmp_path / "raw"
    _minimal_tables(root)
    shutil.rmtree(root / "actions")
    result = _build(root, tmp_path)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "required table 'actions' has no files" in output
    assert str(root / "actions") in output


def test_wrong_parquet_type_names_file_and_column(tmp_path):
    root = tmp_path / "raw"
    _minimal_tables(root)
    bad = root / "prompts/dt=2026-08-02/bad.parquet"
    bad.parent.mkdir(parents=True)
    with duckdb.connect() as con:
        con.execute(
            "copy (select 'p9' as prompt_id, 's9' as session_guid, 'u9' as user_id, "
            "'chat' as surface, 12345 as ts) "
            f"to '{bad}' (format parquet)"
        )
    result = _build(root, tmp_path)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert str(bad) in output and "'ts'" in output


def test_json_line_numbers_survive_large_files(tmp_path):
    """Line numbers come from scan order: check them on a multi-megabyte file."""
    root = tmp_path / "raw"
    _minimal_tables(root)
    lines = [
        json.dumps(
            {
                "prompt_id": f"q{i}",
                "session_guid": "s",
                "user_id": "u",
                "surface": "chat" if i % 997 else "fax",
                "ts": "2026-08-01T00:00:00Z",
                "prompt_text": "x" * 80,
            }
        )
        for i in range(60000)
    ]
    _write_jsonl(root / "prompts/dt=2026-08-01/big.jsonl", lines)
    result = _build(root, tmp_path)
    assert result.returncode == 0, result.stdout[-4000:]
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        rows = con.execute(
            "select source_line, raw_row from data_quality.dq_quarantine "
            "where source_file like '%big.jsonl'"
        ).fetchall()
    assert len(rows) == len([i for i in range(60000) if i % 997 == 0])
    for source_line, raw_row in rows:
        assert json.loads(raw_row)["prompt_id"] == f"q{source_line - 1}"


def test_unsupported_file_extension_is_an_error(tmp_path):
    root = tmp_path / "raw"
    _minimal_tables(root)
    (root / "prompts/dt=2026-08-01/notes.csv").write_text("a,b\n")
    (root / "prompts/dt=2026-08-01/_SUCCESS").write_text("")
    result = _build(root, tmp_path)
    assert result.returncode != 0
    assert "notes.csv" in result.stdout + result.stderr
