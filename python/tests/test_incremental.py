"""Incremental builds: day by day equals a full refresh, and a rerun changes nothing.

A multi-day sample with every kind of bad row (mixed Parquet / gzipped JSON
Lines, conflicting and exact duplicates, some of them in a `late-*` file of
the next day) is delivered into a landing folder one day at a time, and the
project is built after each delivery, as a scheduler would. The late files
arrive one day after their partition (a file dropped into a day already
loaded), and cross-session exports, actions days after their retrieval and
labels judged days later cross the day boundaries by construction of the
generator. The resulting warehouse must hold exactly what a full refresh
over the same files holds: every public mart (schema marts) and every
data-quality table, row for row (floats within 1e-9: sums are taken in a
different order). The only column allowed to differ is the bookkeeping
column `_lara_loaded_at`.

The same files delivered again in a random order (a fixed seed) over four
runs into a second warehouse must end equal to the same full refresh: a
day's actions before its prompts, labels before what they judge, later days
before earlier ones (an exporter backfilling out of order).
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import duckdb
import pytest

from deliveries import build as _build
from deliveries import delivery_batches, land
from warehouse_diff import differences as _differences
from warehouse_diff import snapshot as _snapshot


@pytest.fixture(scope="module")
def day_by_day(tmp_path_factory):
    from lara.generate import GeneratorConfig, generate

    root = tmp_path_factory.mktemp("incremental")
    raw = root / "raw"
    generate(
        GeneratorConfig(sessions=1500, days=5, seed=3, fmt="mixed", gzip=True, bad_rows=True),
        raw,
        progress=False,
    )
    landing = root / "landing"
    landing.mkdir()
    incremental = root / "incremental.duckdb"
    batches = delivery_batches(raw)
    logs = []
    partial = None
    for index, batch in enumerate(batches):
        land(batch, landing)
        if index == PARTIAL_RUN_AT:
            # A partial run first (an engineer refreshing one mart by hand): it
            # loads the day and records the files, but keeps the watermark, so
            # the scheduled run that follows still recomputes the day in the
            # models the partial run skipped.
            before = _watermarks(incremental)
            _build(landing, incremental, root, ["run", "--select", *PARTIAL_SELECTION])
            partial = {"before": before, "after": _watermarks(incremental)}
        # Models only in between; the first and the last run also test.
        args = ["build"] if index in (0, len(batches) - 1) else ["run"]
        logs.append(_build(landing, incremental, root, args))
    after_schedule = _snapshot(incremental)
    whole_tables_after_schedule = _whole_table_stamps(incremental)
    rerun_log = _build(landing, incremental, root, ["run"])
    after_rerun = _snapshot(incremental)
    compiled = root / f"target-{incremental.stem}" / "compiled" / "lara" / "models" / "marts"
    rerun_period_measures = {
        model: _period_measure_blocks(next(compiled.rglob(f"{model}.sql")).read_text())
        for model in PERIOD_MEASURE_MODELS
    }
    with duckdb.connect(str(incremental), read_only=True) as con:
        loaded_at = con.execute(
            "select count(distinct _lara_loaded_at) from marts.fct_retrievals"
        ).fetchone()[0]
    full = root / "full.duckdb"
    _build(landing, full, root, ["build"])
    prompt_reads = {
        target: {
            model: " ".join(next(models.rglob(f"{model}.sql")).read_text().split()).lower()
            for model in PROMPT_READ_MODELS
        }
        for target, models in (
            ("incremental", compiled.parent),
            ("full", root / "target-full" / "compiled" / "lara" / "models"),
        )
    }
    return {
        "incremental": after_schedule,
        "rerun": after_rerun,
        "full": _snapshot(full),
        "logs": logs,
        "rerun_log": rerun_log,
        "rerun_period_measures": rerun_period_measures,
        "prompt_reads": prompt_reads,
        "batches": batches,
        "loaded_at_values": loaded_at,
        "whole_tables_after_schedule": whole_tables_after_schedule,
        "whole_tables_after_rerun": _whole_table_stamps(incremental),
        "partial": partial,
        "watermarks": _watermarks(incremental),
        "warehouse": incremental,
        "landing": landing,
    }


#: The daily aggregates with period measures (lara_rollup `period_measures`), with their day column.
PERIOD_MEASURE_MODELS = {
    "agg_tier3_completion": "retrieval_date",
    "agg_stage_costs": "activity_date",
    "agg_prompts_per_session": "activity_date",
}


#: Models reading the rows of other sessions by prompt_id (lara_in_prompts_of), with the
#: term their incremental runs must compile to.
PROMPT_READ_MODELS = {
    "fct_retrievals": "prompt_id in (select retrievals.prompt_id from retrievals)",
    "fct_prompts": "retrieval_prompt_id in (select prompts.prompt_id from prompts)",
    "int_prompts_scoped": "prompt_id in (select prompts.prompt_id from prompts)",
}


def _period_measure_blocks(sql: str) -> list[str]:
    """The bodies of the `<name>__period_measures` CTEs of a compiled model."""
    blocks = []
    for match in re.finditer(r"\w+__period_measures as \(", sql):
        depth, start = 1, match.end()
        for end in range(start, len(sql)):
            depth += {"(": 1, ")": -1}.get(sql[end], 0)
            if depth == 0:
                blocks.append(sql[start:end])
                break
    return blocks


#: The shuffled schedule: the same files in a seeded random order, over this many runs.
SHUFFLED_RUNS = 4


@pytest.fixture(scope="module")
def shuffled(day_by_day, tmp_path_factory):
    """Every file of the day-by-day schedule delivered in a random order (fixed seed)
    into a second warehouse: a day's actions before its prompts, labels before what
    they judge, later days before earlier ones. The first delivery also holds the first
    dated file of each table in that order (a run needs a readable file of every
    required table). Models only, and the data tests on the first run."""
    import random

    root = tmp_path_factory.mktemp("shuffled")
    files = [pair for batch in day_by_day["batches"] for pair in batch]
    order = random.Random(7).sample(files, len(files))
    first = {}
    for source, relative in order:
        if _is_date(relative.parent.name.removeprefix("dt=")):
            first.setdefault(relative.parts[0], (source, relative))
    rest = [pair for pair in order if pair not in first.values()]
    size = -(-len(rest) // SHUFFLED_RUNS)
    batches = [[*first.values(), *rest[:size]]]
    batches += [rest[start : start + size] for start in range(size, len(rest), size)]
    landing = root / "landing"
    landing.mkdir()
    warehouse = root / "shuffled.duckdb"
    for index, batch in enumerate(batches):
        land(batch, landing)
        _build(landing, warehouse, root, ["build"] if index == 0 else ["run"])
    return {"batches": batches, "landing": landing, "snapshot": _snapshot(warehouse)}


#: When the schedule runs a partial `--select` before its scheduled run, and what it selects.
PARTIAL_RUN_AT = 3
PARTIAL_SELECTION = ("+fct_retrievals", "lara_incremental_manifest")


def _watermarks(warehouse: Path) -> list[tuple]:
    """Each run in the load log: its start, the files it recorded, its `reflected_through`."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute(
            "select run_started_at, count(*), max(reflected_through)"
            " from run_state.lara_incremental_manifest group by run_started_at order by 1"
        ).fetchall()


#: The replay marts (strategy lara_replace_table) and the contract tables each reads.
REPLAY_MARTS = {
    "fct_document_utility": ("replay_documents",),
    "agg_bridge_quadrants": ("replay_documents",),
    "fct_entity_observations": ("replay_documents", "replay_queries", "document_entities"),
}

#: The marts over every labelled retrieval or attribution, recomputed whole (strategy
#: lara_replace_table) by a run that loaded a row of any contract table.
LOG_WHOLE_TABLE_MARTS = (
    "fct_retrieval_bridge",
    "agg_tier1_weighted",
    "agg_consumed_rank_distribution",
)


def _whole_table_stamps(warehouse: Path) -> dict:
    """The `_lara_loaded_at` values of each mart recomputed whole (the replay marts and
    LOG_WHOLE_TABLE_MARTS), the newest load of each contract table, and the start of
    every run in the load log."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        marts = {
            mart: {
                t
                for (t,) in con.execute(
                    f"select distinct _lara_loaded_at from marts.{mart}"
                ).fetchall()
            }
            for mart in (*REPLAY_MARTS, *LOG_WHOLE_TABLE_MARTS)
        }
        loads = dict(
            con.execute(
                "select table_name, newest_loaded_at from run_state.lara_tables_this_run"
            ).fetchall()
        )
        runs = [
            t
            for (t,) in con.execute(
                "select distinct run_started_at from run_state.lara_incremental_manifest order by 1"
            ).fetchall()
        ]
    return {"marts": marts, "loads": loads, "runs": runs}


def test_schedule_delivers_late_files_and_several_days(day_by_day):
    batches = day_by_day["batches"]
    assert len(batches) >= 5
    assert all(batch for batch in batches)
    late = [rel for batch in batches[1:] for _, rel in batch if rel.name.startswith("late-")]
    assert late, "the sample should hold late files delivered into days already loaded"


def test_incremental_runs_read_only_pending_partitions(day_by_day):
    # The second run of the schedule reads a few partitions, not all of them.
    log = day_by_day["logs"][2]
    assert "incremental run reads" in log
    assert "pending partition(s)" in log


#: What dbt prints when it parses the whole project again (its saved parse unusable).
WHOLE_PARSE = "Unable to do partial parsing"


def test_scheduled_runs_after_the_first_reuse_dbts_saved_parse(day_by_day):
    # docs/scheduling.md, "Keep target/ between runs": with the same settings,
    # each run after the first re-reads only what changed. Nothing the
    # project renders into its profile or variables may differ between two
    # runs (a time, a process id, a temporary folder), or every scheduled run
    # would parse everything again (about 7.5 s more per dbt invocation).
    first, *later = day_by_day["logs"]
    assert WHOLE_PARSE in first, "the first run, into an empty target folder, parses everything"
    reparsed = [
        i for i, log in enumerate([*later, day_by_day["rerun_log"]], 1) if WHOLE_PARSE in log
    ]
    assert not reparsed, f"runs {reparsed} of the schedule parsed the whole project again"


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def test_a_run_with_nothing_new_rereads_only_the_lookback_day(day_by_day):
    # The rerun found no new or changed file. With the default
    # lara_lookback_days (1) it re-reads one day, the newest day the listing
    # (here the same as the load log) holds for any table, and only in the
    # tables delivered into it: a table whose newest day is older (the
    # replay tables, written once) reads nothing.
    dated: dict[str, set[str]] = {}
    for batch in day_by_day["batches"]:
        for _, rel in batch:
            table, partition = rel.parts[0], rel.parts[1].removeprefix("dt=")
            if _is_date(partition):
                dated.setdefault(table, set()).add(partition)
    newest = max(day for days in dated.values() for day in days)
    reads = {
        table: (int(files), int(partitions))
        for table, files, partitions in re.findall(
            r"lara: (\w+): incremental run reads (\d+) file\(s\) in (\d+) pending partition",
            day_by_day["rerun_log"],
        )
    }
    assert set(reads) >= set(dated), reads
    expected = {table: int(newest in days) for table, days in dated.items()}
    assert {table: reads[table][1] for table in dated} == expected, (newest, reads)
    assert any(count == 0 for count in expected.values()), expected


def test_a_run_that_delivers_a_day_rereads_no_other_day(day_by_day):
    # Each scheduled run reads the partitions its delivery brought (the new
    # day, late files dropped into earlier days) and, as the lookback, the
    # newest day of the listing in the tables that hold it: not the newest
    # day of the run before as well (that run read it). The partial run
    # before PARTIAL_RUN_AT already recorded that run's delivery.
    with duckdb.connect(str(day_by_day["warehouse"]), read_only=True) as con:
        status = {
            Path(path).relative_to(day_by_day["landing"]).as_posix(): file_status
            for path, file_status in con.execute(
                "select source_file, file_status from lara_raw.raw_files"
            ).fetchall()
        }
    listed: dict[str, set[str]] = {}
    checked = 0
    for index, batch in enumerate(day_by_day["batches"]):
        delivered: dict[str, set[str]] = {}
        for _, rel in batch:
            if status.get(rel.as_posix()) == "data":
                day = rel.parts[1].removeprefix("dt=")
                delivered.setdefault(rel.parts[0], set()).add(day)
                listed.setdefault(rel.parts[0], set()).add(day)
        if index == 0 or index == PARTIAL_RUN_AT:
            continue
        newest = max(day for days in listed.values() for day in days if _is_date(day))
        reads = {
            table: int(partitions)
            for table, _, partitions in re.findall(
                r"lara: (\w+): incremental run reads (\d+) file\(s\) in (\d+) pending partition",
                day_by_day["logs"][index],
            )
        }
        for table, days in listed.items():
            expected = delivered.get(table, set()) | ({newest} & days)
            assert reads[table] == len(expected), (index, table, reads[table], sorted(expected))
            checked += 1
    assert checked >= 20, checked


def test_replay_marts_are_recomputed_only_by_runs_that_load_replay_rows(day_by_day):
    # The replay files arrive with the first deliveries (a late one a day after);
    # every later run keeps the replay marts as they are (strategy
    # lara_replace_table): each mart was last written by the run that last loaded
    # one of its tables, several runs ago, and the rerun did not touch it.
    # (Their content equals a full refresh: test_day_by_day_equals_full_refresh.)
    schedule = day_by_day["whole_tables_after_schedule"]
    for mart, tables in REPLAY_MARTS.items():
        newest_load = max(schedule["loads"][table] for table in tables)
        assert schedule["marts"][mart] == {newest_load}, (mart, schedule["marts"][mart])
        assert newest_load < schedule["runs"][-2], (mart, newest_load, schedule["runs"])
    assert day_by_day["whole_tables_after_rerun"]["marts"] == schedule["marts"]
    assert len(day_by_day["whole_tables_after_rerun"]["runs"]) == len(schedule["runs"]) + 1


def test_whole_table_marts_are_recomputed_by_runs_that_load_rows_only(day_by_day):
    # fct_retrieval_bridge, agg_tier1_weighted and agg_consumed_rank_distribution
    # rank or weight every labelled retrieval or attribution, so each is recomputed
    # whole (strategy lara_replace_table): the last scheduled run loaded a day, so
    # every row carries its start (the newest load of any contract table), and the
    # rerun, which loaded nothing, kept them as they were.
    # (Their content equals a full refresh: test_day_by_day_equals_full_refresh.)
    schedule = day_by_day["whole_tables_after_schedule"]
    newest_load = max(t for t in schedule["loads"].values() if t is not None)
    assert newest_load == schedule["runs"][-1], (newest_load, schedule["runs"])
    for mart in LOG_WHOLE_TABLE_MARTS:
        assert schedule["marts"][mart] == {newest_load}, (mart, schedule["marts"][mart])
        assert day_by_day["whole_tables_after_rerun"]["marts"][mart] == {newest_load}, mart


def test_a_partial_select_keeps_the_watermark(day_by_day):
    # The partial run (PARTIAL_SELECTION: fct_retrievals' lineage and the load
    # log, not the aggregates) recorded the files it loaded under the previous
    # run's watermark; the scheduled run after it advanced the watermark. That
    # the day reached the models it skipped is test_day_by_day_equals_full_refresh.
    partial = day_by_day["partial"]
    before, after = partial["before"], partial["after"]
    assert after[: len(before)] == before
    assert len(after) == len(before) + 1, after
    _, files, reflected_through = after[-1]
    assert files > 0, "the partial run loaded the delivered day"
    assert reflected_through is not None
    assert reflected_through == before[-1][2], (before[-1], after[-1])
    scheduled = day_by_day["watermarks"][len(after)]
    assert scheduled[2] > reflected_through, (after[-1], scheduled)


def test_rows_were_recomputed_in_several_runs(day_by_day):
    # The facts were built up over several runs (not rebuilt from scratch).
    assert day_by_day["loaded_at_values"] >= 3


def test_day_by_day_equals_full_refresh(day_by_day):
    problems = _differences(day_by_day["incremental"], day_by_day["full"])
    assert not problems, "\n".join(problems[:20])


def test_public_marts_are_compared(day_by_day):
    names = set(day_by_day["full"])
    for fact in (
        "fct_retrievals",
        "fct_action_attributions",
        "fct_prompts",
        "fct_sessions",
        "fct_document_utility",
    ):
        assert f"marts.{fact}" in names
    assert "data_quality.dq_quarantine" in names
    assert all(rows for name, (_, rows) in day_by_day["full"].items() if "fct_" in name)


def test_a_run_that_recomputes_no_day_reads_the_period_measures_back(day_by_day):
    # The rerun recomputed no day (test_rerun_changes_nothing: nothing
    # changed), so each daily aggregate with period measures (distinct counts,
    # percentiles: they read every row) took them from its own period-total
    # rows instead (lara_rollup, lara_recomputes_a_day): no aggregate over the
    # history in its compiled SQL.
    for model, day in PERIOD_MEASURE_MODELS.items():
        blocks = day_by_day["rerun_period_measures"][model]
        assert blocks, model
        for block in blocks:
            text = " ".join(block.split()).lower()
            assert f'."{model}" where {day} is null' in text, (model, text)
            assert "group by" not in text and "(distinct" not in text, (model, text)


def test_incremental_runs_read_prompt_side_rows_by_the_run_s_prompts(day_by_day):
    # lara_in_prompts_of: an incremental run reads the rows of its retrievals' (or
    # prompts') prompts by prompt_id, in any session; a full build reads every row,
    # with no semi-join. That the values are right is the equality tests' job
    # (test_incremental_late_export); this checks the read stays narrow.
    for model, term in PROMPT_READ_MODELS.items():
        assert term in day_by_day["prompt_reads"]["incremental"][model], model
        full = day_by_day["prompt_reads"]["full"][model]
        assert term not in full, model
        assert "where true" in full or "and true" in full, model


def test_rerun_changes_nothing(day_by_day):
    problems = _differences(day_by_day["rerun"], day_by_day["incremental"])
    assert not problems, "\n".join(problems[:20])


def test_the_shuffled_schedule_delivers_days_out_of_order(shuffled):
    days = [
        {day for _, relative in batch if _is_date(day := relative.parent.name.removeprefix("dt="))}
        for batch in shuffled["batches"]
    ]
    assert len(days) == SHUFFLED_RUNS
    assert sum(len(batch) for batch in shuffled["batches"]) > 50
    # A later run delivers a day older than one an earlier run delivered.
    assert any(
        later < earlier
        for position, earlier_days in enumerate(days)
        for earlier in earlier_days
        for later_days in days[position + 1 :]
        for later in later_days
    )


def _landing_relative(snapshot: dict, landing: Path) -> dict:
    """The snapshot with raw file paths (dq_quarantine.source_file) relative to `landing`."""
    prefix = f"{landing}/"

    def relative(value):
        is_path = isinstance(value, str) and value.startswith(prefix)
        return value.removeprefix(prefix) if is_path else value

    return {
        name: (columns, [tuple(relative(value) for value in row) for row in rows])
        for name, (columns, rows) in snapshot.items()
    }


def test_deliveries_in_any_order_equal_a_full_refresh(day_by_day, shuffled):
    problems = _differences(
        _landing_relative(shuffled["snapshot"], shuffled["landing"]),
        _landing_relative(day_by_day["full"], day_by_day["landing"]),
    )
    assert not problems, "\n".join(problems[:20])
