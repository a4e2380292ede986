"""Model and column descriptions as DuckDB comments (macros/relations/column_comments.sql).

`duckdb__persist_docs` reads a relation's stored comments and writes only the
ones that differ from the YAML: a full build stores every description, a
scheduled run leaves an unchanged incremental table's comments alone, and a
comment that no longer matches (a description edited since the table was
built) is written again on the next run, without a full refresh.
"""

from __future__ import annotations

import json
import re

import duckdb

from conftest import BuiltSample
from lara.dbt import run_dbt

STALE = 'stale comment; it\'s "quoted" $1'


def _stored_comments(warehouse) -> dict[tuple[str, str, str | None], str | None]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        relations = con.execute(
            "select schema_name, table_name, null, comment from duckdb_tables() "
            "union all select schema_name, view_name, null, comment from duckdb_views() "
            "where not internal "
            "union all select schema_name, table_name, column_name, comment from duckdb_columns()"
        ).fetchall()
    return {(schema, name, column): comment for schema, name, column, comment in relations}


def _models(clean_sample: BuiltSample) -> list[dict]:
    manifest = json.loads((clean_sample.warehouse.parent / "target" / "manifest.json").read_text())
    return [
        node
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model"
        and node["config"]["materialized"] != "ephemeral"
        and node["config"].get("persist_docs", {}).get("relation")
    ]


def test_a_build_stores_every_description(clean_sample):
    stored = _stored_comments(clean_sample.warehouse)
    models = _models(clean_sample)
    assert len(models) > 80
    checked, wrong = 0, []
    for node in models:
        key = (node["schema"], node["alias"])
        if node["description"]:
            checked += 1
            if stored.get((*key, None)) != node["description"]:
                wrong.append(f"{key}: {stored.get((*key, None))!r}")
        for name, column in node["columns"].items():
            if (*key, name) in stored:
                checked += 1
                if stored[(*key, name)] != column["description"]:
                    wrong.append(f"{key}.{name}: {stored[(*key, name)]!r}")
    assert checked > 1000
    assert not wrong, "comments that differ from the YAML:\n" + "\n".join(wrong[:20])


def test_a_run_writes_only_the_comments_that_differ(clean_sample, tmp_path):
    warehouse = clean_sample.copy_warehouse(tmp_path)
    # A description edited since the table was built: its stored comment is
    # stale (the text holds a quote, double quotes and a dollar sign).
    stale_literal = "'" + STALE.replace("'", "''") + "'"
    with duckdb.connect(str(warehouse)) as con:
        con.execute(f"comment on table marts.fct_prompts is {stale_literal}")
        con.execute(f"comment on column marts.fct_prompts.prompt_id is {stale_literal}")
        con.execute("comment on column marts.fct_sessions.session_guid is null")
    before = _stored_comments(warehouse)
    assert before[("marts", "fct_prompts", None)] == STALE

    logs = tmp_path / "logs"
    result = run_dbt(
        ["run", "--select", "fct_prompts", "fct_sessions", "--log-level-file", "debug"],
        clean_sample.raw_path,
        warehouse,
        extra_env={"DBT_TARGET_PATH": str(tmp_path / "target"), "DBT_LOG_PATH": str(logs)},
        capture=True,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]

    after = _stored_comments(warehouse)
    described = {node["alias"]: node for node in _models(clean_sample)}
    assert after[("marts", "fct_prompts", None)] == described["fct_prompts"]["description"]
    assert (
        after[("marts", "fct_prompts", "prompt_id")]
        == described["fct_prompts"]["columns"]["prompt_id"]["description"]
    )
    assert (
        after[("marts", "fct_sessions", "session_guid")]
        == described["fct_sessions"]["columns"]["session_guid"]["description"]
    )
    unchanged = {
        k: v
        for k, v in before.items()
        if k[:2] in {("marts", "fct_prompts"), ("marts", "fct_sessions")}
    }
    assert len(unchanged) > 20
    for key in unchanged:
        if key not in {
            ("marts", "fct_prompts", None),
            ("marts", "fct_prompts", "prompt_id"),
            ("marts", "fct_sessions", "session_guid"),
        }:
            assert after[key] == before[key], key

    # Only the three stale comments were written: the two incremental
    # tables' other comments already matched their descriptions.
    log = (logs / "dbt.log").read_text(errors="replace")
    written = re.findall(r'comment on (table|column) "lara"\."marts"\."(fct_\w+)"(?:\.(\w+))?', log)
    assert sorted(written) == [
        ("column", "fct_prompts", "prompt_id"),
        ("column", "fct_sessions", "session_guid"),
        ("table", "fct_prompts", ""),
    ]
