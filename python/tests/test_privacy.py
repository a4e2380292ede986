"""Public outputs carry no user content and no raw user ids.

Prompts and queries are user content; user ids identify people. Neither may
reach schema `marts` (the public marts), the BI exports or the dashboard:
for every text column (and every text-list element) of every public mart,
no value equals a raw prompt_text, query_text or user_id of staging. Where
a user key is useful, marts use `lara_hash_user_id(column)` (macros/privacy),
proved here against Python's hashlib.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil

import duckdb
import pytest

from lara.dbt import run_dbt

SENSITIVE_COLUMNS = {"prompt_text", "query_text", "user_id"}
SENSITIVE_SQL = """
    select prompt_text as value, 'prompt_text' as kind from staging.stg_lara__prompts
    union
    select user_id, 'user_id' from staging.stg_lara__prompts
    union
    select query_text, 'query_text' from staging.stg_lara__retrievals
"""


def _text_columns(con: duckdb.DuckDBPyConnection, schema: str) -> list[tuple[str, str, str]]:
    return con.execute(
        "select table_name, column_name, data_type from duckdb_columns() "
        "where schema_name = ? and (data_type = 'VARCHAR' or data_type like 'VARCHAR[%') "
        "order by table_name, column_index",
        [schema],
    ).fetchall()


def _leaks(
    con: duckdb.DuckDBPyConnection,
    relation: str,
    column: str,
    data_type: str,
    sensitive_sql: str = SENSITIVE_SQL,
) -> list:
    """Up to 5 (kind, value) pairs where the column holds a sensitive value."""
    values = f'unnest("{column}")' if data_type.startswith("VARCHAR[") else f'"{column}"'
    return con.execute(
        f"""
        with
        sensitive as ({sensitive_sql}),
        published as (select distinct {values} as value from {relation})
        select sensitive.kind, published.value
        from published
        inner join sensitive on published.value = sensitive.value
        limit 5
        """
    ).fetchall()


@pytest.fixture(scope="module")
def sensitive_values(clean_sample) -> dict[str, set[str]]:
    values: dict[str, set[str]] = {}
    for value, kind in clean_sample.query(SENSITIVE_SQL):
        if value is not None:
            values.setdefault(kind, set()).add(value)
    assert values.get("prompt_text") and values.get("user_id") and values.get("query_text")
    return values


def test_no_public_mart_has_a_sensitive_column(clean_sample):
    columns = clean_sample.query(
        "select table_name, column_name from duckdb_columns() where schema_name = 'marts'"
    )
    assert columns
    named = [(t, c) for t, c in columns if c.lower() in SENSITIVE_COLUMNS]
    assert not named, f"public marts with user content / raw user id columns: {named}"


def test_no_public_mart_text_value_is_user_content_or_a_user_id(clean_sample):
    with duckdb.connect(str(clean_sample.warehouse), read_only=True) as con:
        marts = {
            t
            for (t,) in con.execute(
                "select table_name from duckdb_tables() where schema_name = 'marts'"
            ).fetchall()
        }
        assert {"fct_retrievals", "fct_prompts", "fct_sessions"} <= marts
        leaks = {}
        for table, column, data_type in _text_columns(con, "marts"):
            found = _leaks(con, f'marts."{table}"', column, data_type)
            if found:
                leaks[f"{table}.{column}"] = found
    assert not leaks, f"user content or raw user ids in public marts: {leaks}"


def test_exports_carry_no_user_content(clean_sample, tmp_path):
    from lara.export import DUCKDB_EXPORT, export_marts

    export_marts(clean_sample.warehouse, tmp_path)
    with duckdb.connect(str(tmp_path / DUCKDB_EXPORT), read_only=True) as con:
        schemas = {s for (s,) in con.execute("select schema_name from duckdb_tables()").fetchall()}
        assert schemas == {"marts"}, "the DuckDB export must hold the public marts only"
        columns = _text_columns(con, "marts")
        assert columns
        con.execute(f"attach '{clean_sample.warehouse}' as warehouse (read_only)")
        leaks = {}
        for table, column, data_type in columns:
            path = tmp_path / table / f"{table}.parquet"
            relation = f"read_parquet('{path}')"
            sensitive = SENSITIVE_SQL.replace("staging.", "warehouse.staging.")
            found = _leaks(con, relation, column, data_type, sensitive)
            if found:
                leaks[f"{table}.{column}"] = found
    assert not leaks, leaks


def test_dashboard_carries_no_user_content(clean_sample, sensitive_values, tmp_path):
    from lara.report import build_dashboard

    html = build_dashboard(clean_sample.warehouse, tmp_path / "dashboard.html").read_text()
    tokens = set(re.findall(r"[A-Za-z0-9_.:-]+", html))
    leaked_ids = sensitive_values["user_id"] & tokens
    assert not leaked_ids, sorted(leaked_ids)[:5]
    texts = sensitive_values["prompt_text"] | sensitive_values["query_text"]
    leaked_texts = [t for t in texts if len(t) >= 12 and t in html]
    assert not leaked_texts, leaked_texts[:5]


def _compile(clean_sample, tmp_path, sql: str, extra: list[str], env: dict[str, str]) -> str:
    target = tmp_path / "target"
    # Reuse the fixture build's parse (partial parsing) where the environment allows.
    shutil.copytree(clean_sample.warehouse.parent / "target", target)
    result = run_dbt(
        ["compile", "--inline", sql, "--output", "json", "--log-format", "json", *extra],
        clean_sample.raw_path,
        clean_sample.warehouse,
        extra_env={"DBT_TARGET_PATH": str(target), "DBT_LOG_PATH": str(tmp_path), **env},
        capture=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for line in result.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        compiled = event.get("data", {}).get("compiled")
        if compiled:
            return compiled
    raise AssertionError(f"no compiled SQL in dbt's output:\n{result.stdout[-3000:]}")


def test_hash_user_id_macro_is_a_salted_sha256(clean_sample, tmp_path):
    salt = os.environ.get("LARA_USER_ID_SALT", "lara-sample-salt")
    sql = (
        "select user_id, {{ lara_hash_user_id('user_id') }} as user_key "
        "from {{ ref('stg_lara__prompts') }} order by user_id limit 20"
    )
    compiled = _compile(clean_sample, tmp_path, sql, [], {})
    assert "user_id" in compiled
    rows = clean_sample.query(compiled)
    assert rows
    for user_id, user_key in rows:
        assert user_key == hashlib.sha256(f"{salt}|{user_id}".encode()).hexdigest()
        assert user_key != user_id


def test_hash_user_id_macro_can_expose_raw_ids_when_asked(clean_sample, tmp_path):
    sql = "select {{ lara_hash_user_id(\"'u_1'\") }} as user_key"
    compiled = _compile(clean_sample, tmp_path, sql, ["--vars", "{lara_expose_user_ids: true}"], {})
    with duckdb.connect() as con:
        assert con.execute(compiled).fetchone()[0] == "u_1"


def test_facts_carry_the_salted_user_key_of_the_right_user(clean_sample):
    """fct_retrievals, fct_prompts and fct_action_attributions publish user_key =
    sha256('<salt>|<user id>') of the prompt's (the credited retrieval's) user."""
    salt = os.environ.get("LARA_USER_ID_SALT", "lara-sample-salt")
    pairs = {
        "fct_prompts": """
            select facts.user_key, prompts.user_id
            from marts.fct_prompts as facts
            inner join staging.stg_lara__prompts as prompts on facts.prompt_id = prompts.prompt_id
        """,
        "fct_retrievals": """
            select facts.user_key, prompts.user_id
            from marts.fct_retrievals as facts
            left join staging.stg_lara__prompts as prompts on facts.prompt_id = prompts.prompt_id
        """,
        "fct_action_attributions": """
            select facts.user_key, prompts.user_id
            from marts.fct_action_attributions as facts
            inner join marts.fct_retrievals as retrievals
                on facts.retrieval_id = retrievals.retrieval_id
            left join staging.stg_lara__prompts as prompts
                on retrievals.prompt_id = prompts.prompt_id
        """,
    }
    for mart, sql in pairs.items():
        rows = clean_sample.query(sql)
        assert len(rows) > 100, mart
        users = {user_id for _, user_id in rows if user_id is not None}
        assert len(users) > 10, mart
        for user_key, user_id in rows:
            if user_id is None:
                assert user_key is None, mart
            else:
                assert user_key == hashlib.sha256(f"{salt}|{user_id}".encode()).hexdigest(), mart
