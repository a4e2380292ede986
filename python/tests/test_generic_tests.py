"""The project's generic data tests catch what they are written for.

`not_null_columns` replaces a `not_null` test per column, and
`expressions_are_true` an `expression_is_true` test per row rule (one query
and one dbt node each), with one scan per model. On a copy of the clean
sample's warehouse with faults planted (nulls in two of `fct_retrievals`'
listed columns; rows of `fct_prompts` breaking one rule, or two), each test
must fail with exactly what was planted, and pass on the untouched warehouse.

Data tests are sized to the run (macros/tests/where_subquery.sql): with a
fault planted in rows an earlier completed build wrote, a `dbt build` with
nothing new (which writes none of the model's rows) passes without reading
them, and so does `dbt test`; the weekly full test finds it. A fault in a row
that a partial `dbt run` loaded since that build fails the next build.
"""

from __future__ import annotations

import json
import re
import shutil

import duckdb
import yaml

from lara.dbt import run_dbt
from lara.paths import project_dir


def _model_test_arguments(yaml_path: str, model_name: str, test_name: str) -> dict:
    path = project_dir() / yaml_path
    model = next(m for m in yaml.safe_load(path.read_text())["models"] if m["name"] == model_name)
    tests = [t[test_name] for t in model["data_tests"] if test_name in t]
    assert len(tests) == 1, tests
    return tests[0]["arguments"]


def _run_test(sample, warehouse, root, select: str):
    return run_dbt(
        ["test", "--select", select, "--store-failures", "--vars", "{lara_full_test: true}"],
        sample.raw_path,
        warehouse,
        extra_env={"DBT_TARGET_PATH": str(root / "target"), "DBT_LOG_PATH": str(root / "logs")},
        capture=True,
    )


def _stored_failures(warehouse, table_prefix: str, query: str) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        (table,) = con.execute(
            "select table_schema || '.' || table_name from information_schema.tables"
            " where table_name like ?",
            [table_prefix + "%"],
        ).fetchone()
        return con.execute(query.format(table=table)).fetchall()


def test_not_null_columns_names_each_column_with_nulls(clean_sample, tmp_path):
    select = "test_name:not_null_columns,fct_retrievals"
    columns = _model_test_arguments(
        "models/marts/retrieval/_retrieval_marts__models.yml", "fct_retrievals", "not_null_columns"
    )["column_names"]
    assert {"surface", "is_empty", "click_count"} <= set(columns)
    warehouse = tmp_path / "lara.duckdb"
    shutil.copy(clean_sample.warehouse, warehouse)

    passed = _run_test(clean_sample, warehouse, tmp_path, select)
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
    failed = _run_test(clean_sample, warehouse, tmp_path, select)
    log = failed.stdout + failed.stderr
    assert failed.returncode != 0, log[-3000:]
    assert "Got 2 results" in log, log[-3000:]
    stored = _stored_failures(
        warehouse,
        "not_null_columns_fct_retrieval",
        "select column_name, null_rows from {table} order by 1",
    )
    assert stored == [("click_count", 3), ("surface", 1)]


def test_expressions_are_true_names_the_rules_each_row_breaks(clean_sample, tmp_path):
    select = "test_name:expressions_are_true,fct_prompts"
    expressions = _model_test_arguments(
        "models/marts/behaviour/_behaviour__models.yml", "fct_prompts", "expressions_are_true"
    )["expressions"]
    rewritten = "rewrite_class is null or is_rewritten"
    missed = "(is_missed_retrieval is null) = (not is_tier0_labelled)"
    misrouted = "not is_misrouted or (is_retrieval_turn and is_tier0_labelled)"
    assert {rewritten, missed, misrouted} <= set(expressions), expressions
    warehouse = tmp_path / "lara.duckdb"
    shutil.copy(clean_sample.warehouse, warehouse)

    passed = _run_test(clean_sample, warehouse, tmp_path, select)
    assert passed.returncode == 0, passed.stdout[-3000:]

    with duckdb.connect(str(warehouse)) as con:

        def first_prompt(where: str) -> str:
            (prompt_id,) = con.execute(
                f"select prompt_id from marts.fct_prompts where {where} order by prompt_id limit 1"
            ).fetchone()
            return prompt_id

        # One rule broken: a rewrite class on a prompt not rewritten.
        one_rule = first_prompt("rewrite_class is not null and is_tier0_labelled")
        # Two rules broken on one row: that, and a labelled prompt without its Tier 0 flag.
        two_rules = first_prompt(
            f"rewrite_class is not null and is_tier0_labelled and prompt_id <> '{one_rule}'"
        )
        # Another rule: a misrouted prompt that is no retrieval turn.
        other_rule = first_prompt("not is_retrieval_turn and not is_misrouted")
        con.execute(
            "update marts.fct_prompts set is_rewritten = false where prompt_id in (?, ?)",
            [one_rule, two_rules],
        )
        con.execute(
            "update marts.fct_prompts set is_missed_retrieval = null where prompt_id = ?",
            [two_rules],
        )
        con.execute(
            "update marts.fct_prompts set is_misrouted = true where prompt_id = ?", [other_rule]
        )
    failed = _run_test(clean_sample, warehouse, tmp_path, select)
    log = failed.stdout + failed.stderr
    assert failed.returncode != 0, log[-3000:]
    assert "Got 3 results" in log, log[-3000:]
    stored = dict(
        _stored_failures(
            warehouse,
            "expressions_are_true_fct_promp",  # dbt truncates long test names
            "select prompt_id, failed_expressions from {table}",
        )
    )
    assert stored == {
        one_rule: rewritten,
        two_rules: f"{rewritten}, {missed}",
        other_rule: misrouted,
    }


def test_unique_combination_of_columns_reports_each_repeated_key(clean_sample, tmp_path):
    # The test groups a hash of the key first, then the key itself for the rows
    # whose hash repeats (tests/generic/unique_combination_of_columns.sql): it
    # must report exactly the repeated keys, nulls included, with their counts,
    # as one grouping by the columns does.
    select = "test_name:unique_combination_of_columns,int_retrieval_assets"
    warehouse = tmp_path / "lara.duckdb"
    shutil.copy(clean_sample.warehouse, warehouse)
    target = tmp_path / "target"

    passed = _run_test(clean_sample, warehouse, tmp_path, select)
    assert passed.returncode == 0, passed.stdout[-3000:]
    tests = _test_results(target)
    assert len(tests) == 2 and {t["status"] for t in tests.values()} == {"pass"}, tests

    table = "intermediate.int_retrieval_assets"
    with duckdb.connect(str(warehouse)) as con:
        r1, r2, r3 = (
            row[0]
            for row in con.execute(
                f"select distinct retrieval_id from {table} order by 1 limit 3"
            ).fetchall()
        )
        (a1, k1) = con.execute(
            f"select asset_id, asset_rank from {table} where retrieval_id = ? "
            "order by asset_rank limit 1",
            [r1],
        ).fetchone()
        (k2,) = con.execute(
            f"select min(asset_rank) from {table} where retrieval_id = ?", [r2]
        ).fetchone()
        # A whole row twice: both keys repeat.
        con.execute(
            f"insert into {table} select * from {table} where retrieval_id = ? and asset_id = ?",
            [r1, a1],
        )
        # Another asset at a rank already taken: only (retrieval_id, asset_rank) repeats.
        con.execute(
            f"insert into {table} select * replace ('planted-asset' as asset_id) from {table} "
            "where retrieval_id = ? and asset_rank = ?",
            [r2, k2],
        )
        # Two rows without an asset at a new rank: both keys repeat, one with a null.
        con.execute(
            f"insert into {table} select * replace (null as asset_id, 999 as asset_rank) "
            f"from {table} where retrieval_id = ? and asset_rank = ? "
            f"union all select * replace (null as asset_id, 999 as asset_rank) "
            f"from {table} where retrieval_id = ? and asset_rank = ?",
            [r3, 1, r3, 1],
        )
    failed = _run_test(clean_sample, warehouse, tmp_path, select)
    assert failed.returncode != 0, failed.stdout[-3000:]
    tests = _test_results(target)
    (by_asset,) = [t for name, t in tests.items() if name.endswith("_retrieval_id__asset_id")]
    (by_rank,) = [t for name, t in tests.items() if name.endswith("_retrieval_id__asset_rank")]
    assert (by_asset["status"], by_asset["failures"]) == ("fail", 2), by_asset
    assert (by_rank["status"], by_rank["failures"]) == ("fail", 3), by_rank
    with duckdb.connect(str(warehouse), read_only=True) as con:
        stored_assets = con.execute(
            f"select retrieval_id, asset_id, occurrences from {by_asset['relation_name']}"
        ).fetchall()
        stored_ranks = con.execute(
            f"select retrieval_id, asset_rank, occurrences from {by_rank['relation_name']}"
        ).fetchall()
    assert sorted(stored_assets, key=str) == sorted([(r1, a1, 2), (r3, None, 2)], key=str)
    assert sorted(stored_ranks) == sorted([(r1, k1, 2), (r2, k2, 2), (r3, 999, 2)])

    # A hash shared by different keys (a 64-bit collision cannot be planted): the
    # same compiled tests with every row given one hash must still report only the
    # repeated keys, from the exact pass over the columns.
    with duckdb.connect(str(warehouse), read_only=True) as con:
        for test, stored in ((by_asset, stored_assets), (by_rank, stored_ranks)):
            collided, hashes = re.subn(
                r"\bhash\([^()]*\)", "cast(0 as ubigint)", test["compiled_code"]
            )
            assert hashes == 3, test["compiled_code"]
            assert sorted(con.execute(collided).fetchall(), key=str) == sorted(stored, key=str)


def _test_results(target) -> dict[str, dict]:
    """The data tests of the last dbt command run into `target`, by test name."""
    results = json.loads((target / "run_results.json").read_text())["results"]
    return {
        result["unique_id"].split(".")[2]: result
        for result in results
        if result["unique_id"].startswith("test.")
    }


def _dbt_in(tmp_path, raw, warehouse):
    """`dbt(*args)` on `raw` into `warehouse`, run results under tmp_path/target."""
    env = {"DBT_TARGET_PATH": str(tmp_path / "target"), "DBT_LOG_PATH": str(tmp_path / "logs")}

    def dbt(*args: str):
        return run_dbt(list(args), raw, warehouse, extra_env=env, capture=True)

    return dbt


def _small_warehouse(tmp_path):
    """A small log (120 sessions over 2 days) under tmp_path/raw, every model built from
    it into tmp_path/lara.duckdb (a completed run); returns raw, warehouse, target and
    `dbt` (as `_dbt_in`)."""
    from lara.generate import GeneratorConfig, generate

    raw, warehouse, target = tmp_path / "raw", tmp_path / "lara.duckdb", tmp_path / "target"
    generate(GeneratorConfig(sessions=120, days=2, seed=17), raw, progress=False)
    dbt = _dbt_in(tmp_path, raw, warehouse)
    first = dbt("build", "--resource-type", "seed", "--resource-type", "model")
    assert first.returncode == 0, (first.stdout + first.stderr)[-3000:]
    return raw, warehouse, target, dbt


def test_a_build_with_nothing_new_tests_no_row(clean_sample, tmp_path):
    warehouse = tmp_path / "lara.duckdb"
    shutil.copy(clean_sample.warehouse, warehouse)
    target = tmp_path / "target"
    dbt = _dbt_in(tmp_path, clean_sample.raw_path, warehouse)

    with duckdb.connect(str(warehouse)) as con:
        loaded_at, retrieval_id = con.execute(
            "select max(_lara_loaded_at), min(retrieval_id) from marts.fct_retrievals"
        ).fetchone()
        (watermark,) = con.execute(
            "select max(reflected_through) from run_state.lara_incremental_manifest"
        ).fetchone()
        con.execute(
            "update marts.fct_retrievals set surface = null where retrieval_id = ?", [retrieval_id]
        )
    assert watermark == loaded_at  # the sample's build completed

    # A build with nothing new (of the mart's lineage: the aggregates after it
    # would read the planted null): fct_retrievals writes no row, and its tests
    # read only the rows written after the start of the last completed run.
    built = dbt("build", "--select", "+fct_retrievals")
    log = built.stdout + built.stderr
    assert built.returncode == 0, log[-3000:]
    tests = _test_results(target)
    (name,) = [n for n in tests if n.startswith("not_null_columns_fct_retrievals_")]
    assert tests[name]["status"] == "pass", tests[name]
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute("select max(_lara_loaded_at) from marts.fct_retrievals").fetchone() == (
            loaded_at,
        )
        (run_started_at,) = con.execute(
            "select run_started_at from run_state.lara_run_limits"
        ).fetchone()
    compiled = " ".join(tests[name]["compiled_code"].split())
    # The limit: the start of the last completed run, from the load log as it
    # was before this build.
    assert "_lara_loaded_at > coalesce((select max(run_started_at) from (" in compiled, compiled
    assert '"run_state"."lara_incremental_manifest"' in compiled, compiled
    assert (
        f"where run_started_at < cast('{run_started_at:%Y-%m-%d %H:%M:%S.%f}' as timestamp)"
        in compiled
    ), compiled

    # `dbt test` checks the rows since the limit the latest run started from (the
    # build above wrote none of the mart's); the weekly full test finds the fault.
    assert dbt("test", "--select", name).returncode == 0
    full = dbt("test", "--select", name, "--vars", "{lara_full_test: true}")
    assert full.returncode != 0
    assert _test_results(target)[name]["failures"] == 1


def test_a_build_tests_the_rows_a_partial_run_loaded(tmp_path):
    # After a completed run, a partial run (an engineer loading one table by
    # hand: it records the file but keeps the watermark) loads a late file; then
    # the scheduled build. The build checks the rows the partial run loaded, not
    # only its own: a fault in the new row fails the staging view's test, one in
    # an older row is not read (1 failure, not 2).
    raw, warehouse, target, dbt = _small_warehouse(tmp_path)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        (watermark,) = con.execute(
            "select max(reflected_through) from run_state.lara_incremental_manifest"
        ).fetchone()
        (retrieval_id,) = con.execute(
            "select min(retrieval_id) from staging.stg_lara__retrievals"
        ).fetchone()
    assert watermark is not None
    day = sorted(p.name for p in (raw / "retrievals").iterdir() if p.name.startswith("dt="))[-1]
    late = raw / "retrievals" / day / "late-by-hand.parquet"
    with duckdb.connect() as con:
        con.execute(
            f"copy (select * replace ('late-by-hand' as retrieval_id) "
            f"from read_parquet('{raw / 'retrievals' / day}/*.parquet') limit 1) "
            f"to '{late}' (format parquet)"
        )
    partial = dbt("run", "--select", "base_lara__retrievals", "lara_incremental_manifest")
    assert partial.returncode == 0, (partial.stdout + partial.stderr)[-3000:]
    with duckdb.connect(str(warehouse)) as con:
        assert con.execute(
            "select max(reflected_through) from run_state.lara_incremental_manifest"
        ).fetchone() == (watermark,)
        con.execute(
            "update staging.base_lara__retrievals set prompt_id = null "
            "where retrieval_id in ('late-by-hand', ?)",
            [retrieval_id],
        )
        assert con.execute(
            "select count(*) from staging.stg_lara__retrievals where prompt_id is null"
        ).fetchone() == (2,)
    scheduled = dbt("build", "--select", "+stg_lara__retrievals")
    assert scheduled.returncode != 0
    tests = _test_results(target)
    (name,) = [n for n in tests if n.startswith("not_null_columns_stg_lara__retrievals_")]
    assert (tests[name]["status"], tests[name]["failures"]) == ("fail", 1), tests[name]


def test_a_relationships_test_sized_to_the_run_finds_the_missing_parent(tmp_path):
    # dbt's `relationships` test, overridden (macros/tests/relationships.sql): on a
    # scheduled build the child side holds the run's rows, and the parent is read
    # only for the keys they name. A late action naming a retrieval nobody logged
    # is the one failure of the build (the older rows are not read); the weekly
    # full test, in dbt's own form over every row, finds the same action. A late
    # action naming a logged retrieval passes (its parent is read).
    raw, warehouse, target, dbt = _small_warehouse(tmp_path)
    staging = ["--select", "+stg_lara__actions", "+stg_lara__retrievals", "+stg_lara__prompts"]
    full = dbt("test", *staging, "--vars", "{lara_full_test: true}")
    assert full.returncode == 0, (full.stdout + full.stderr)[-3000:]
    (name,) = [
        n
        for n in _test_results(target)
        if n.startswith("relationships_stg_lara__actions_source_retrieval_id")
    ]
    known = _test_results(target)[name]["failures"]  # the sample's planted lineage faults

    # The latest day with an action that names its retrieval: a copy of that
    # action, naming none that exists, delivered late into its partition.
    with duckdb.connect() as con:
        (day,) = con.execute(
            f"select max(dt) from read_parquet('{raw / 'actions'}/*/*.parquet',"
            " hive_partitioning = true, hive_types_autocast = false)"
            " where source_retrieval_id is not null"
        ).fetchone()
        late = raw / "actions" / f"dt={day}" / "late-orphan.parquet"
        # Two late actions: one naming a retrieval nobody logged, one naming a
        # logged retrieval (its parent must still be found).
        con.execute(
            f"create table logged as select * from read_parquet('{late.parent}/*.parquet')"
            " where source_retrieval_id is not null limit 1"
        )
        con.execute(
            "copy (select * replace ('late-orphan' as action_id, 'no-such-retrieval' as"
            " source_retrieval_id) from logged union all select * replace ('late-known' as"
            f" action_id) from logged) to '{late}' (format parquet)"
        )
        assert con.execute(f"select count(*) from read_parquet('{late}')").fetchone() == (2,)
    # The scheduled build: the staging views, their tests, and the load log (so
    # the build completes a run).
    scheduled = dbt("build", *staging, "lara_incremental_manifest")
    assert scheduled.returncode == 0, (scheduled.stdout + scheduled.stderr)[-3000:]
    test = _test_results(target)[name]
    assert (test["status"], test["failures"]) == ("warn", 1), test
    compiled = " ".join(test["compiled_code"].split())
    assert "where retrieval_id in (select child.from_field from child)" in compiled, compiled
    assert "_lara_loaded_at > coalesce((" in compiled, compiled

    full = dbt("test", "--select", name, "--vars", "{lara_full_test: true}")
    assert full.returncode == 0, (full.stdout + full.stderr)[-3000:]
    test = _test_results(target)[name]
    assert (test["status"], test["failures"]) == ("warn", known + 1), test
    assert "from child)" not in " ".join(test["compiled_code"].split())
