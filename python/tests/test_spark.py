"""Cross-engine test: the same sample built on DuckDB and on local Spark
(dbt-spark, method session) gives the same public marts.

One small generated sample (mixed Parquet / JSON Lines, gzipped, with every
kind of malformed row, so the raw registration and staging are exercised on
both engines) is built on DuckDB in one full `dbt build`, and on Spark as a
scheduler would: the first two days' deliveries (`dbt build` without
data tests, creating the tables), then the rest, i.e. the third day and the `late-*` files dropped
into days already loaded (an incremental `dbt build`: base models rewrite
the pending raw partitions, session-grained models the affected session
days). Then every public mart (fct_* and agg_*) is read
through lara.engine on both and compared: same columns, same row count, same
rows after sorting; numbers within 1e-9 relative tolerance; timestamps,
dates, booleans, decimals and nulls normalised. The Python statistics
(`lara bridge`, production bridge) then run on both engines and write their
tables back; their point estimates must agree too.

Needs the optional extra `spark` (pyspark, dbt-spark[session]) and Java 17:
`make test-spark`. Skipped when they are missing, except in CI with
LARA_SPARK_TESTS=1, where a missing piece fails the test.
"""

from __future__ import annotations

import datetime as dt
import decimal
import importlib.util
import json
import math
import os
import re
import shutil
import time
from collections import Counter
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from deliveries import delivery_batches, land
from freshness import freshness_results, utc
from lara.dbt import run_dbt

pytestmark = pytest.mark.spark

REL_TOL = 1e-9
ABS_TOL = 1e-12
# Public marts named by the issue; every other fct_* / agg_* mart is compared too.
REQUIRED_MARTS = (
    "fct_retrievals",
    "fct_action_attributions",
    "fct_prompts",
    "fct_sessions",
    "fct_document_utility",
)
# Written by the Python statistics, compared separately (point estimates).
PYTHON_TABLES = ("bridge_statistics", "entity_observability", "production_bridge_statistics")


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def _missing_spark_stack() -> str | None:
    missing = [
        label
        for label, module in (("pyspark", "pyspark"), ("dbt-spark", "dbt.adapters.spark"))
        if not _importable(module)
    ]
    if missing:
        return (
            f"{' and '.join(missing)} not installed (optional extra `spark`: "
            "pip install -e 'python[spark]', or run `make test-spark`)"
        )
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no Java runtime (pyspark needs Java 17)"
    return None


def _require_spark() -> None:
    reason = _missing_spark_stack()
    if reason is None:
        return
    if os.environ.get("LARA_SPARK_TESTS") == "1":
        # `make test-spark` installs the stack first: a missing piece is a failure.
        pytest.fail(f"Spark tests are required here (LARA_SPARK_TESTS=1): {reason}")
    pytest.skip(f"Spark tests skipped: {reason}")


def _build(
    root: Path, raw: Path, target: str, command: str = "build", extra: tuple[str, ...] = ()
) -> tuple[float, str]:
    """dbt `command` of `raw` on `target`; returns the wall time in seconds and the log."""
    env = {
        "LARA_TARGET": target,
        # Spark spends most of a small build planning queries and waiting on
        # the metastore, not computing: more dbt threads than cores help.
        "LARA_THREADS": os.environ.get("LARA_THREADS", "4" if target == "spark" else "2"),
        "DBT_TARGET_PATH": str(root / f"target-{target}"),
        "DBT_LOG_PATH": str(root / f"logs-{target}"),
        "LARA_SPARK_DIR": str(root / "spark"),
    }
    started = time.monotonic()
    # Unit tests test engine-independent logic and add about 5 minutes on
    # Spark (query planning of their fixture CTEs); they pass there too, and
    # run on DuckDB in `make test`.
    args = [command, *extra]
    if target == "spark" and command == "build":
        args += ["--exclude-resource-type", "unit_test"]
    result = run_dbt(args, raw, root / "lara.duckdb", extra_env=env, capture=True)
    elapsed = time.monotonic() - started
    if result.returncode != 0:
        # dbt's own output (stdout) says what failed; Spark's JVM fills stderr
        # with warnings, so only its last lines are shown.
        failures = [
            line
            for line in result.stdout.splitlines()
            if "ERROR" in line or "FAIL" in line or "Error" in line
        ]
        raise AssertionError(
            f"dbt {command} on {target} failed ({elapsed:.0f} s):\n"
            + "\n".join(failures[-40:])
            + "\n...\n"
            + result.stdout[-4000:]
            + "\n... stderr:\n"
            + result.stderr[-1000:]
        )
    return elapsed, result.stdout + result.stderr


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    """The sample built on both engines: {'duckdb': Warehouse, 'spark': Warehouse, ...}."""
    _require_spark()
    from lara import engine
    from lara.generate import GeneratorConfig, generate

    root = tmp_path_factory.mktemp("spark_vs_duckdb")
    raw = root / "raw"
    config = GeneratorConfig(sessions=300, days=3, seed=5, fmt="mixed", gzip=True, bad_rows=True)
    generate(config, raw, progress=False)
    seconds = {"duckdb": _build(root, raw, "duckdb")[0]}
    # Spark: two scheduled runs over a landing folder (see the module docstring).
    landing = root / "landing"
    batches = delivery_batches(raw, scheduled_days=3)
    first, rest = batches[:2], batches[2:]
    for batch in first:
        land(batch, landing)
    seconds["spark_first"], _ = _build(
        root, landing, "spark", extra=("--exclude-resource-type", "test")
    )
    for batch in rest:
        land(batch, landing)
    # No lookback: the first day is then not pending in the second run. Its
    # file log holds the SQL (debug) for test_spark_models_run_their_query_once.
    seconds["spark"], incremental_log = _build(
        root,
        landing,
        "spark",
        extra=("--vars", '{"lara_lookback_days": 0}', "--log-level-file", "debug"),
    )
    # Source freshness on both engines (Spark's own loaded_at_field), before
    # this process opens the Spark metastore.
    freshness = {
        "duckdb": freshness_results(raw, root / "lara.duckdb", root / "freshness-duckdb")[0],
        "spark": freshness_results(
            landing,
            root / "lara.duckdb",
            root / "freshness-spark",
            extra_env={"LARA_TARGET": "spark", "LARA_SPARK_DIR": str(root / "spark")},
        )[0],
    }
    print(
        f"\ndbt build wall time on the same sample: duckdb {seconds['duckdb']:.0f} s; spark: "
        f"first two days (build, no data tests) {seconds['spark_first']:.0f} s, "
        f"rest (incremental build) {seconds['spark']:.0f} s"
    )
    old_dir = os.environ.get("LARA_SPARK_DIR")
    os.environ["LARA_SPARK_DIR"] = str(root / "spark")
    try:
        with (
            engine.connect(root / "lara.duckdb", target="duckdb") as duck,
            engine.connect(target="spark") as spark,
        ):
            yield {
                "duckdb": duck,
                "spark": spark,
                "root": root,
                "seconds": seconds,
                "incremental_log": incremental_log,
                "freshness": freshness,
                "first_delivery": [rel for batch in first for _, rel in batch],
                "later_delivery": [rel for batch in rest for _, rel in batch],
            }
            spark.spark.stop()
    finally:
        if old_dir is None:
            os.environ.pop("LARA_SPARK_DIR", None)
        else:
            os.environ["LARA_SPARK_DIR"] = old_dir


def _public_marts(duck) -> list[str]:
    frame = duck.query_df(
        "select table_name from information_schema.tables where table_schema = 'marts' "
        "and (table_name like 'fct\\_%' escape '\\' or table_name like 'agg\\_%' escape '\\') "
        "order by table_name"
    )
    return list(frame["table_name"])


# ---------------------------------------------------------------- normalising


def _normal(value):
    """A comparable plain value: None, float, str, bool, or an ISO timestamp."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, int | decimal.Decimal):
        return float(value)
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day).isoformat(sep=" ")
    return str(value)


def _sort_key(row: tuple) -> tuple:
    # Floats rounded for ordering only, so last-bit noise cannot swap two rows.
    return tuple(
        (0, "") if v is None else (1, f"{v:.6g}") if isinstance(v, float) else (2, str(v))
        for v in row
    )


def _normal_rows(frame: pd.DataFrame, columns: list[str]) -> list[tuple]:
    rows = [
        tuple(_normal(v) for v in record)
        for record in frame[columns].astype(object).itertuples(index=False, name=None)
    ]
    # Non-float columns first in the sort order: they hold the keys.
    return sorted(rows, key=_sort_key)


def _diff(mart: str, columns: list[str], left: list[tuple], right: list[tuple]) -> list[str]:
    problems = []
    for index, (a_row, b_row) in enumerate(zip(left, right, strict=True)):
        for column, a, b in zip(columns, a_row, b_row, strict=True):
            if isinstance(a, float) and isinstance(b, float):
                if not math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL):
                    problems.append(f"{mart} row {index} {column}: duckdb {a!r} spark {b!r}")
            elif a != b:
                problems.append(f"{mart} row {index} {column}: duckdb {a!r} spark {b!r}")
        if len(problems) > 20:
            break
    return problems


def _compare(engines, mart: str) -> None:
    duck = engines["duckdb"].query_df(f"select * from marts.{mart}")
    spark = engines["spark"].query_df(f"select * from marts.{mart}")
    assert sorted(duck.columns) == sorted(spark.columns), mart
    assert len(duck) == len(spark), f"{mart}: duckdb {len(duck)} rows, spark {len(spark)}"
    # Sort columns: strings, booleans, dates first (keys), numbers last. The
    # incremental bookkeeping column (when each build ran) is not a value.
    numeric = {c for c in duck.columns if pd.api.types.is_float_dtype(duck[c])}
    values = [c for c in duck.columns if not c.startswith("_lara_")]
    columns = sorted(values, key=lambda c: (c in numeric, c))
    problems = _diff(mart, columns, _normal_rows(duck, columns), _normal_rows(spark, columns))
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- tests


def test_both_engines_build_the_same_public_marts(engines):
    marts = _public_marts(engines["duckdb"])
    assert set(REQUIRED_MARTS) <= set(marts)
    assert any(name.startswith("agg_") for name in marts)
    missing = [name for name in marts if not engines["spark"].relation_exists("marts", name)]
    assert not missing, f"not built on Spark: {missing}"


@pytest.mark.parametrize("mart", REQUIRED_MARTS)
def test_fact_marts_agree(engines, mart):
    _compare(engines, mart)


def test_every_other_public_mart_agrees(engines):
    failures = []
    for mart in _public_marts(engines["duckdb"]):
        if mart in REQUIRED_MARTS:
            continue
        try:
            _compare(engines, mart)
        except AssertionError as error:
            failures.append(str(error))
    assert not failures, "\n\n".join(failures)


def test_python_statistics_run_on_both_engines(engines, monkeypatch, tmp_path):
    from lara.bridge import run_bridge_statistics
    from lara.production_bridge import run_production_bridge_statistics

    results = {}
    for target in ("duckdb", "spark"):
        monkeypatch.setenv("LARA_TARGET", target)
        bridge = run_bridge_statistics(
            engines["root"] / "lara.duckdb", resamples=20, seed=0, plot=False
        )
        production = run_production_bridge_statistics(
            engines["root"] / "lara.duckdb", resamples=20, seed=0
        )
        assert bridge["status"] == "ok", bridge["message"]
        assert production["status"] == "ok", production["message"]
        results[target] = (bridge, production)
    for table in PYTHON_TABLES:
        assert engines["spark"].relation_exists("marts", table), table
        duck = engines["duckdb"].query_df(f"select * from marts.{table}")
        spark = engines["spark"].query_df(f"select * from marts.{table}")
        assert sorted(duck.columns) == sorted(spark.columns), table
        assert len(duck) == len(spark), table
    # Point estimates do not depend on row order; bootstrap intervals may.
    keys = ("sru_variant", "spearman_rho", "document_count")
    duck_rows = sorted(
        tuple(_normal(row.get(k)) for k in keys)
        for row in results["duckdb"][0]["bridge_statistics"]
    )
    spark_rows = sorted(
        tuple(_normal(row.get(k)) for k in keys) for row in results["spark"][0]["bridge_statistics"]
    )
    assert len(duck_rows) == len(spark_rows)
    for a_row, b_row in zip(duck_rows, spark_rows, strict=True):
        for a, b in zip(a_row, b_row, strict=True):
            if isinstance(a, float) and isinstance(b, float):
                assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (a_row, b_row)
            else:
                assert a == b, (a_row, b_row)


def test_spark_incremental_run_read_only_pending_partitions(engines):
    """The second Spark run was incremental: base models read only the
    pending raw partitions (new days, days that received a late file, the
    lookback) and left the others as the first run loaded them."""
    later = engines["later_delivery"]
    assert any(rel.name.startswith("late-") for rel in later), "no late file in the later delivery"
    match = re.search(
        r"lara: prompts: incremental run reads (\d+) file\(s\) in (\d+) pending partition",
        engines["incremental_log"],
    )
    assert match, engines["incremental_log"][-3000:]
    pending = int(match.group(2))
    spark = engines["spark"]
    loads = spark.query_df(
        "select _partition_value, max(_lara_loaded_at) as loaded_at"
        " from staging.base_lara__prompts group by _partition_value"
    )
    assert 0 < pending < len(loads), (pending, loads)
    # Days that received files in the later delivery hold rows it loaded; a
    # day it did not read keeps the first run's rows.
    newest = loads["loaded_at"].max()
    received = {rel.parts[1].removeprefix("dt=") for rel in later if rel.parts[0] == "prompts"}
    assert (loads[loads["_partition_value"].isin(received)]["loaded_at"] == newest).all(), loads
    assert (loads["loaded_at"] < newest).any(), loads
    # The session-grained facts are partitioned by session day on Spark.
    partitions = spark.query_df("show partitions marts.fct_retrievals")
    assert len(partitions) >= 3, partitions


def test_spark_models_run_their_query_once(engines):
    """On Spark, dbt puts an incremental model's query in a temporary view
    (`<model>__dbt_tmp`) and every statement that reads the view plans and
    runs the whole query again. Each strategy reads it at most once
    (lara_replace_sessions writes it to `<model>__lara_new` first; reading
    it four times made the incremental build of this sample stall in
    fct_retrieval_reretrievals). Read off the SQL in the incremental
    build's debug file log."""
    log = (engines["root"] / "logs-spark" / "dbt.log").read_text()
    log = log[log.rindex("Running with dbt=") :]
    views = Counter(re.findall(r"create or replace temporary view (\w+)__dbt_tmp\b", log))
    reads = Counter(re.findall(r"\bfrom\s+(\w+)__dbt_tmp\b", log))
    assert views["fct_retrieval_reretrievals"] == 1, sorted(views)
    assert reads["fct_retrieval_reretrievals"] == 1, reads
    assert "base_lara__prompts" in views, sorted(views)
    assert {model: count for model, count in reads.items() if count > views[model]} == {}


def test_view_column_comments_fit_the_hive_metastore(engines):
    """Views carry their column docs as comments, cut to the 256 characters
    a Hive 2.x metastore stores (macros/relations/column_comments.sql): a longer
    one fails the metastore insert and costs ten retries per view."""
    frame = engines["spark"].query_df("describe table staging.stg_lara__prompts")
    comments = dict(zip(frame["col_name"], frame["comment"], strict=True))
    loaded_at = comments["_lara_loaded_at"]
    assert len(loaded_at) == 256 and loaded_at.endswith("…"), loaded_at
    assert loaded_at.startswith("Incremental bookkeeping, not a metric"), loaded_at
    # A short description is kept whole.
    assert comments["prompt_id"] and not comments["prompt_id"].endswith("…"), comments


def test_source_freshness_agrees(engines):
    """`dbt source freshness` runs on Spark (its own loaded_at_field) and
    reports the same newest event per table as on DuckDB."""
    duck, spark = engines["freshness"]["duckdb"], engines["freshness"]["spark"]
    assert set(duck) == set(spark) and {"prompts", "actions"} <= set(spark)
    for table in duck:
        assert spark[table]["status"] == duck[table]["status"], (table, spark[table])
        assert utc(spark[table]["max_loaded_at"]) == utc(duck[table]["max_loaded_at"]), table


# ---------------------------------------------------------------- emptied days


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
    Built with its own metastore, read from its Parquet files (this process
    already holds the other fixture's Spark session)."""
    _require_spark()
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
    _build(root, raw, "spark", extra=select)
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
    _, log = _build(root, raw, "spark", extra=select)
    _build(root, raw, "duckdb", extra=select)
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
    left, right = _normal_rows(duck, columns), _normal_rows(spark, columns)
    assert not _diff("fct_prompts", columns, left, right)


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
    left, right = _normal_rows(duck, columns), _normal_rows(spark, columns)
    assert not _diff("fct_document_utility", columns, left, right)


def test_spark_keeps_the_replay_marts_when_no_replay_rows_arrive(engines):
    # The second scheduled run loaded no replay file (they all came with the
    # first two days): the replay marts were kept as the first run wrote them
    # (and equal DuckDB's: test_every_other_public_mart_agrees).
    for mart in ("fct_document_utility", "fct_entity_observations", "agg_bridge_quadrants"):
        assert f"lara: {mart}: none of" in engines["incremental_log"], mart


def test_overridden_dbt_spark_macros_keep_the_adapter_strategies(tmp_path):
    """The project overrides two dbt-spark macros by name to add its
    strategies; dbt-spark's own strategies must still validate and get the
    adapter's SQL (a project model may use them)."""
    _require_spark()
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
