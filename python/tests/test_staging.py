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
        "select source_file, source_line, raw_row, quarantine_reason, record_key"
        " from data_quality.dq_quarantine where source_format = 'jsonl'"
    )
    assert rows
    conflicting = 0
    for source_file, source_line, raw_row, reason, _ in rows:
        opener = gzip.open if source_file.endswith(".gz") else open
        with opener(source_file, "rt") as handle:
            line = handle.read().split("\n")[source_line - 1]
        if reason == "conflicting_duplicate":
            # A conflicting version passed every check: shown as its typed
            # values, whichever run found the conflict; the line it points at
            # holds the same key.
            conflicting += 1
            shown, delivered = json.loads(raw_row), json.loads(line)
            key = [k for k in shown if k.endswith("_id")][0]
            assert shown[key] == delivered[key], (raw_row, line)
        else:
            assert line == raw_row
    assert conflicting, "the bad-rows sample holds conflicting JSON versions"


def test_parquet_rows_keep_no_raw_text_unless_quarantined(bad_rows_sample):
    # The row as delivered is kept for quarantined rows only; a quarantined
    # Parquet row shows its values as JSON.
    for table in ("prompts", "retrievals", "actions"):
        kept, clean_with_text = bad_rows_sample.query(
            "select count(case when _row_status = 'quarantined' and _raw_row is not null"
            " then 1 end), count(case when _row_status <> 'quarantined'"
            " and _raw_row is not null then 1 end)"
            f" from staging.base_lara__{table}"
        )[0]
        assert kept > 0 and clean_with_text == 0, table
    rows = bad_rows_sample.query(
        "select raw_row from data_quality.dq_quarantine where source_format = 'parquet'"
    )
    assert rows and all(isinstance(json.loads(raw), dict) for (raw,) in rows)


def _duckdb_macro(name: str, *arguments: str) -> str:
    """The SQL of a DuckDB macro of macros/cross_db/types.sql (plain Jinja: no dbt
    context needed), rendered with `arguments`."""
    import jinja2

    from lara.paths import project_dir

    source = (project_dir() / "macros/cross_db/types.sql").read_text()
    return str(getattr(jinja2.Environment().from_string(source).module, name)(*arguments)).strip()


def test_a_blank_list_element_is_what_trim_leaves_empty_for_every_code_point():
    """`duckdb__lara_list_has_blank` trims only elements whose first character trim()
    could remove; it must answer as trimming every element does, for each character to
    U+30FF (the Unicode spaces, control and format characters among them) alone, twice,
    before or after an id, and beside one."""
    expression = _duckdb_macro("duckdb__lara_list_has_blank", "l")
    assert "trim(" in expression
    trimmed = (
        "coalesce(list_bool_or(list_transform(l, lambda e: coalesce(trim(e), '') = '')), false)"
    )
    with duckdb.connect() as con:
        rows = con.execute(
            f"""
            with chars as (
                select chr(cast(i as integer)) as c
                from range(1, 12544) as codes (i)
                where i not between 55296 and 57343
            ),
            lists as (
                select [c] as l from chars
                union all select [c || c] from chars
                union all select [c || ' '] from chars
                union all select [' ' || c] from chars
                union all select [c || 'a1'] from chars
                union all select ['a1' || c] from chars
                union all select ['a1', c] from chars
                union all select * from (values ([''])) as v (l)
                union all select * from (values ([null])) as v (l)
                union all select * from (values (['a1', null])) as v (l)
                union all select * from (values (cast([] as varchar[]))) as v (l)
                union all select * from (values (cast(null as varchar[]))) as v (l)
            )
            select
                count(*) filter (where ({expression}) is distinct from ({trimmed})),
                count(*) filter (where {expression}),
                count(*) filter (where not {expression}),
                list(l) filter (where ({expression}) is distinct from ({trimmed}))[1:5]
            from lists
            """
        ).fetchone()
    differing, blank, not_blank, examples = rows
    assert differing == 0, examples
    # both answers occur: spaces (U+0020, U+00A0, U+3000, ...) are blank, ids are not
    assert blank > 3 * 16 and not_blank > 12000


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
            "to '" + str(root / "retrievals/dt=2026-08-01/r.parquet").replace("'", "''") + "'"
            " (format parquet)"
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
    assert "required table 'actions' has no readable data files" in output
    assert str(root / "actions") in output


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


# --- hostile files and values: one build over every fault at once ------------

# The raw root itself is named to break a query that pastes it into SQL.
HOSTILE_ROOT = "raw it's x'); create table main.pwned as select 42 as v; --"


def _parquet(path: Path, select_sql: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    target = str(path).replace("'", "''")
    with duckdb.connect() as con:
        con.execute(f"copy ({select_sql}) to '{target}' (format parquet)")


@pytest.fixture(scope="module")
def hostile_build(tmp_path_factory):
    """Every file-level fault of the hardening issue in one raw folder, built once."""
    tmp = tmp_path_factory.mktemp("hostile")
    root = tmp / HOSTILE_ROOT
    _minimal_tables(root)
    day = root / "prompts/dt=2026-08-01"
    # Outside the dt= layout: never read, but accounted for.
    _write_jsonl(root / "retrievals/loose.jsonl", [{"retrieval_id": "r_loose"}])
    _write_jsonl(root / "retrievals/dt=2026-08-01/sub/nested.jsonl", [{"retrieval_id": "r_nested"}])
    # Another extension, and marker files and folders (ignored).
    (day / "notes.csv").write_text("a,b\n")
    (day / "_SUCCESS").write_text("")
    (root / "prompts/_temporary").mkdir()
    (root / "prompts/_temporary/part.jsonl").write_text("not data\n")
    # Unreadable: truncated and zero-byte gzip, zero-byte Parquet, a latin-1 byte.
    lines = "\n".join(json.dumps({"prompt_id": f"z{i}"}) for i in range(2000))
    packed = gzip.compress(lines.encode())
    (day / "truncated.jsonl.gz").write_bytes(packed[: len(packed) // 2])
    (day / "empty.jsonl.gz").write_bytes(b"")
    (day / "empty.parquet").write_bytes(b"")
    (day / "latin1.jsonl").write_bytes(
        b'{"prompt_id":"pl1","session_guid":"s1","user_id":"u1","surface":"chat",'
        b'"ts":"2026-08-01T10:00:00Z","prompt_text":"caf\xe9"}\n'
    )
    (day / "empty.jsonl").write_bytes(b"")  # an empty JSON Lines file is fine: no rows
    # A required column of a type the contract does not accept.
    _parquet(
        root / "prompts/dt=2026-08-02/bad_type.parquet",
        "select 'p9' as prompt_id, 's9' as session_guid, 'u9' as user_id,"
        " 'chat' as surface, 12345 as ts",
    )
    # File names with glob characters: each file reads only itself.
    row = {
        "prompt_id": "g1",
        "session_guid": "s1",
        "user_id": "u1",
        "surface": "chat",
        "ts": "2026-08-01T10:00:00Z",
    }
    _write_jsonl(day / "a*.jsonl", [row])
    _write_jsonl(day / "ab.jsonl", [{**row, "prompt_id": "g2"}])
    _write_jsonl(day / "c[x].jsonl", [{**row, "prompt_id": "g3"}])
    # An event dated outside its partition day (metrics.md scope rules).
    _write_jsonl(
        day / "probe.jsonl", [{**row, "prompt_id": "p_epoch", "ts": "1970-01-01T00:00:00Z"}]
    )
    # Fractional and whole grades, JSON and Parquet.
    label = {"retrieval_id": "r1", "judge": "human", "judged_at": "2026-08-02T00:00:00Z"}
    _write_jsonl(
        root / "relevance_labels/dt=2026-08-02/labels.jsonl",
        [{**label, "asset_id": "a1", "grade": 2.5}, {**label, "asset_id": "a2", "grade": 3.0}],
    )
    _parquet(
        root / "relevance_labels/dt=2026-08-02/labels.parquet",
        "select 'r1' as retrieval_id, 'a3' as asset_id, 1.5::double as grade, 'llm' as judge,"
        " timestamp '2026-08-02 00:00:00' as judged_at"
        " union all select 'r1', 'a4', 2.0::double, 'llm', timestamp '2026-08-02 00:00:00'",
    )
    result = _build(root, tmp)
    return tmp, root, result


def _hostile_query(hostile_build, sql: str, params: list | None = None) -> list[tuple]:
    tmp, _, result = hostile_build
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
    with duckdb.connect(str(tmp / "w.duckdb"), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def test_a_raw_path_with_quotes_and_sql_builds_and_runs_nothing(hostile_build):
    tables = _hostile_query(
        hostile_build, "select table_schema, table_name from information_schema.tables"
    )
    assert ("main", "pwned") not in tables
    assert _hostile_query(hostile_build, "select count(*) from staging.stg_lara__prompts")[0][0]


def test_every_file_under_a_table_folder_is_accounted_for(hostile_build):
    _, root, _ = hostile_build
    files = {
        path: (status, reason)
        for path, status, reason in _hostile_query(
            hostile_build,
            "select relative_path, file_status, skip_reason from data_quality.dq_raw_files",
        )
    }
    on_disk = {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).parts[0] in TABLES
    }
    assert on_disk == set(files)
    expected = {
        "retrievals/loose.jsonl": ("skipped", "outside_partition_layout"),
        "retrievals/dt=2026-08-01/sub/nested.jsonl": ("skipped", "outside_partition_layout"),
        "prompts/dt=2026-08-01/notes.csv": ("skipped", "unsupported_file_type"),
        "prompts/dt=2026-08-01/_SUCCESS": ("ignored", None),
        "prompts/_temporary/part.jsonl": ("ignored", None),
        "prompts/dt=2026-08-01/truncated.jsonl.gz": ("skipped", "unreadable_file"),
        "prompts/dt=2026-08-01/empty.jsonl.gz": ("skipped", "unreadable_file"),
        "prompts/dt=2026-08-01/empty.parquet": ("skipped", "unreadable_file"),
        "prompts/dt=2026-08-01/latin1.jsonl": ("skipped", "unreadable_file"),
        "prompts/dt=2026-08-01/empty.jsonl": ("data", None),
        "prompts/dt=2026-08-02/bad_type.parquet": ("skipped", "invalid_file_schema"),
    }
    for path, outcome in expected.items():
        assert files[path] == outcome, path
    (detail,) = _hostile_query(
        hostile_build,
        "select skip_detail from data_quality.dq_raw_files"
        " where relative_path like '%bad_type.parquet'",
    )[0]
    assert "'ts'" in detail and "INTEGER" in detail


def test_the_reconciliation_counts_skipped_files(hostile_build):
    rows = dict(
        _hostile_query(
            hostile_build,
            "select table_name, skipped_file_count from data_quality.dq_reconciliation"
            " where table_name in ('prompts', 'retrievals')",
        )
    )
    assert rows == {"prompts": 6, "retrievals": 2}
    reconciled = _hostile_query(
        hostile_build, "select is_reconciled from data_quality.dq_reconciliation"
    )
    assert all(ok for (ok,) in reconciled)


def test_file_names_with_glob_characters_read_only_themselves(hostile_build):
    files = _hostile_query(
        hostile_build,
        "select regexp_extract(_source_file, '[^/]*$'), count(*) from staging.base_lara__prompts"
        " where prompt_id in ('g1', 'g2', 'g3') group by 1 order by 1",
    )
    assert files == [("a*.jsonl", 1), ("ab.jsonl", 1), ("c[x].jsonl", 1)]


def test_an_event_outside_its_partition_day_is_quarantined(hostile_build):
    rows = _hostile_query(
        hostile_build,
        "select quarantine_reason, quarantine_column from data_quality.dq_quarantine"
        " where raw_row like '%p_epoch%'",
    )
    assert rows == [("timestamp_outside_partition", "ts")]
    assert not _hostile_query(
        hostile_build, "select * from staging.stg_lara__prompts where prompt_id = 'p_epoch'"
    )


def test_fractional_grades_are_quarantined_not_truncated(hostile_build):
    rows = dict(
        _hostile_query(
            hostile_build,
            "select asset_id, coalesce(_quarantine_reason, 'clean')"
            " from staging.base_lara__relevance_labels order by 1",
        )
    )
    assert rows == {"a1": "invalid_type", "a2": "clean", "a3": "invalid_type", "a4": "clean"}
    grades = dict(
        _hostile_query(
            hostile_build, "select asset_id, grade from staging.stg_lara__relevance_labels"
        )
    )
    assert grades == {"a2": 3, "a4": 2}
