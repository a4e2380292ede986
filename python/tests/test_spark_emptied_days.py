"""Cross-engine test of a delivery that empties whole session days on Spark.

A small sample (60 sessions, 2 days) is built on Spark
(`+fct_prompts +fct_document_utility`, no data tests); a later delivery then
re-delivers every prompt after the first day with other contents (both
versions quarantined), rewrites the first day's file without one session's
prompts, and re-delivers some replay documents with other scores. Spark must
drop the session days of fct_prompts that emptied, rewrite
fct_document_utility whole, and equal DuckDB on the same files. A module of
its own, so that `make test-spark` (two pytest workers, one module each)
builds it while the other worker builds test_spark.py's sample.

Needs the optional extra `spark` and Java 17, as test_spark.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from cross_engine import build, diff, normal_rows, require_spark
from lara.dbt import run_dbt

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def emptied_day(tmp_path_factory):
    """A Spark warehouse where a later delivery empties whole session days of
    fct_prompts: every prompt after the first day is re-delivered with other
    contents, so both versions are quarantined (conflicting duplicates) and
    the sessions that started after the first day keep only their actions;
    and the first day's file is rewritten without one session's prompts.
    The same delivery re-delivers some replay documents with other scores
    (quarantined too), so the incremental run recomputes fct_document_utility
    whole (strategy lara_replace_table: `insert overwrite` on Spark).
    Built with its own metastore and read from its Parquet files (run
    without workers, this process may hold test_spark.py's Spark session)."""
    require_spark()
    from lara.generate import GeneratorConfig, generate

    root = tmp_path_factory.mktemp("spark_emptied_days")
    raw = root / "raw"
    generate(GeneratorConfig(sessions=60, days=2, seed=11, fmt="jsonl"), raw, progress=False)
    days = sorted(p.name.removeprefix("dt=") for p in (raw / "prompts").glob("dt=*"))
    select = (
        "--select",
        "+fct_prompts",
        "+fct_document_utility",
        "--exclude-resource-type",
        "test",
    )
    build(root, raw, "spark", extra=select)
    first_utility = _spark_table(root, "fct_document_utility")
    for day in days[1:]:
        folder = raw / "prompts" / f"dt={day}"
        lines = []
        for path in sorted(folder.glob("*.jsonl")):
            for line in path.read_text().splitlines():
                row = json.loads(line)
                row["prompt_text"] = f"{row.get('prompt_text') or ''} (edited)"
                lines.append(json.dumps(row))
        (folder / "late-conflicting-versions.jsonl").write_text("\n".join(lines) + "\n")
    # The first day's prompts file rewritten without one session's prompts
    # (its actions stay): the removed rows must leave fct_prompts on Spark too
    # (base tombstones, lara_stage_source).
    first_file = sorted((raw / "prompts" / f"dt={days[0]}").glob("*.jsonl"))[0]
    prompt_lines = first_file.read_text().splitlines()
    dropped_session = json.loads(prompt_lines[0])["session_guid"]
    first_file.write_text(
        "\n".join(
            line for line in prompt_lines if json.loads(line)["session_guid"] != dropped_session
        )
        + "\n"
    )
    replay = sorted((raw / "replay_documents").glob("dt=*/*.jsonl"))[0]
    rows = [json.loads(line) for line in replay.read_text().splitlines()[:5]]
    for row in rows:
        row["reader_score_with"] = 0.123
    (replay.parent / "late-conflicting-versions.jsonl").write_text(
        "\n".join(json.dumps(row) for row in rows) + "\n"
    )
    _, log = build(root, raw, "spark", extra=select)
    build(root, raw, "duckdb", extra=select)
    with duckdb.connect(str(root / "lara.duckdb"), read_only=True) as con:
        duck = con.execute("select * from marts.fct_prompts").df()
    table = root / "spark" / "warehouse" / "marts.db" / "fct_prompts"
    # pyarrow skips `_`-prefixed folders as hidden: read the part files.
    spark = pd.concat(
        [pd.read_parquet(path) for path in sorted(table.glob("_lara_session_date=*/part-*"))],
        ignore_index=True,
    )
    with duckdb.connect(str(root / "lara.duckdb"), read_only=True) as con:
        duck_utility = con.execute("select * from marts.fct_document_utility").df()
    return {
        "days": days,
        "dropped_session": dropped_session,
        "log": log,
        "duckdb": duck,
        "spark": spark,
        "table": table,
        "utility": {
            "first": first_utility,
            "spark": _spark_table(root, "fct_document_utility"),
            "duckdb": duck_utility,
        },
    }


def _spark_table(root: Path, name: str) -> pd.DataFrame:
    """An unpartitioned mart of the fixture's Spark warehouse, from its Parquet files."""
    parts = sorted((root / "spark" / "warehouse" / "marts.db" / name).glob("part-*"))
    return pd.concat([pd.read_parquet(path) for path in parts], ignore_index=True)


def test_spark_drops_session_days_that_emptied(emptied_day):
    later = emptied_day["days"][1:]
    assert later, "the sample should span two days"
    folders = {p.name for p in emptied_day["table"].glob("_lara_session_date=*")}
    assert f"_lara_session_date={emptied_day['days'][0]}" in folders
    for day in later:
        assert f"_lara_session_date={day}" not in folders, folders
    assert "fct_prompts: dropping emptied partition _lara_session_date=" in emptied_day["log"]


def test_spark_after_emptied_days_equals_duckdb(emptied_day):
    duck, spark = emptied_day["duckdb"], emptied_day["spark"]
    # The rewritten file's session lost its prompts on both engines.
    assert emptied_day["dropped_session"] not in set(spark["session_guid"])
    assert emptied_day["dropped_session"] not in set(duck["session_guid"])
    columns = sorted(c for c in duck.columns if not c.startswith("_lara_"))
    assert sorted(c for c in spark.columns if not c.startswith("_lara_")) == columns
    assert len(duck) == len(spark) > 0
    left, right = normal_rows(duck, columns), normal_rows(spark, columns)
    assert not diff("fct_prompts", columns, left, right)


def test_spark_replaces_a_replay_mart_whole_when_replay_rows_arrive(emptied_day):
    # The incremental run loaded conflicting replay documents: both versions
    # are quarantined, so the mart lost rows, and Spark rewrote it whole (every
    # row stamped by that run) to what DuckDB computes from all the files.
    utility = emptied_day["utility"]
    first, spark, duck = utility["first"], utility["spark"], utility["duckdb"]
    assert 0 < len(spark) == len(duck) < len(first)
    assert spark["_lara_loaded_at"].nunique() == 1
    assert spark["_lara_loaded_at"].iloc[0] > first["_lara_loaded_at"].max()
    assert "fct_document_utility: none of" not in emptied_day["log"]
    columns = sorted(c for c in duck.columns if not c.startswith("_lara_"))
    left, right = normal_rows(duck, columns), normal_rows(spark, columns)
    assert not diff("fct_document_utility", columns, left, right)


def test_overridden_dbt_spark_macros_keep_the_adapter_strategies(tmp_path):
    """The project overrides two dbt-spark macros by name to add its
    strategies; dbt-spark's own strategies must still validate and get the
    adapter's SQL (a project model may use them)."""
    require_spark()
    result = run_dbt(
        ["run-operation", "lara_check_spark_strategy_overrides"],
        tmp_path / "raw",
        tmp_path / "lara.duckdb",
        extra_env={
            "LARA_TARGET": "spark",
            "LARA_SPARK_DIR": str(tmp_path / "spark"),
            "DBT_TARGET_PATH": str(tmp_path / "target"),
            "DBT_LOG_PATH": str(tmp_path / "logs"),
        },
        capture=True,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-4000:]
    assert "lara: append -> insert into table" in log
    assert "lara: insert_overwrite -> insert overwrite table" in log
    assert "dbt-spark strategy overrides ok" in log
