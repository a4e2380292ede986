"""The benchmark machinery (lara bench) on tiny inputs: the hand-written
reference SQL agrees with marts.fct_retrievals, every column of every row, on
the built clean and bad-rows samples, and the comparison notices a changed
value; the process measurement works, the IR comparison agrees with
pytrec_eval, and the report renders (with the span-flattening section)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path

import duckdb
import pytest

from lara import bench, bench_incremental, bench_report
from lara.ingest import bench as ingest_bench
from lara.ingest.bench import ROW_BY_ROW_COMMIT
from lara.paths import project_dir


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
        bench_report.SizeResult(1000, 100, 1000, 0.5, 10.0, 300.0, 2.0, 100.0),
        bench_report.SizeResult(4000, 400, 4000, 2.0, 20.0, 400.0, 4.0, 150.0),
    ]
    ir = bench.IrResult(1000, 1.0, 0.5, 0.2, 0.0)
    report = bench_report.render_report(bench.machine_info(), results, ir, "4GB", 2, ["a note"])
    assert "| 4,000 | 4,000 | 400 |" in report
    assert "log-log slope" in report
    assert "pytrec_eval" in report
    assert "events, generator:" not in report  # results saved before the CPU s were measured
    results[1].generator_cpu_s, results[1].generator_write_cpu_s = 3.2, 0.8
    report = bench_report.render_report(bench.machine_info(), results, ir, "4GB", 2, [])
    assert (
        "- 4,000 events, generator: 3.2 CPU s (every thread) in 2.0 s wall; writing the files"
        " 0.8 CPU s (25% of its CPU time)" in report
    )
    assert "1,000 events, generator:" not in report


def _size(
    events: int,
    build_s: float,
    reference_s: float,
    lineage_s: float,
    rss: float,
    lineage_build_s: float | None = None,
):
    return bench_report.SizeResult(
        events,
        events // 10,
        events,
        events / 1e6,
        build_s,
        rss,
        reference_s,
        500.0,
        dbt_breakdown={
            "fct_retrievals_lineage_models_s": lineage_s,
            "by_type_s": {"model": lineage_s * 1.5, "test": 10.0},
            "models_s": {"fct_retrievals": lineage_s / 3, "int_retrieval_signals": 2.0},
            "slowest_models_s": {"fct_retrievals": lineage_s / 3},
        },
        lineage_build_s=lineage_build_s,
    )


def _day(days: int, day_s: float, full_s: float | None):
    return bench_incremental.IncrementalResult(
        sessions=1000 * days,
        days=days,
        events=200_000 * days,
        last_day_events=210_000,
        generator_s=5.0,
        history_build_s=100.0,
        day_build_s=day_s,
        full_build_s=full_s,
        day_peak_rss_mib=900.0,
        full_peak_rss_mib=None if full_s is None else 2000.0,
        ok=True,
        idle_build_s=day_s / 3,
        recomputed={"fct_retrievals": 0.05},
        day_breakdown={"by_type_s": {"model": 10.0}, "models_s": {"fct_retrievals": 3.0}},
        idle_breakdown={"by_type_s": {"model": 4.0}, "models_s": {"agg_tier3_completion": 1.5}},
    )


def test_targets_report_every_target_met_or_missed() -> None:
    """The targets row of the scale issue: RSS at 20M, lineage and whole build against
    the reference at 5M and 20M, the day's share of the full build, 60 vs 30 days, and
    the log-log slope; a miss says by how much."""
    results = [
        _size(1_000_000, 60.0, 10.0, 15.0, 1500.0),
        _size(5_000_000, 200.0, 40.0, 70.0, 3000.0),  # lineage 1.75x, build 5x: a miss
        _size(20_000_000, 700.0, 180.0, 300.0, 4200.0),  # RSS over by 104 MiB
    ]
    incremental = [_day(30, 30.0, 400.0), _day(60, 45.0, None)]  # 7.5%; 1.5x: a miss
    text = "\n".join(bench_report.targets(results, incremental))
    rows = {line.split(" | ")[0]: line for line in text.splitlines() if line.startswith("| ")}

    def row(prefix: str) -> str:
        found = [line for key, line in rows.items() if key.startswith("| " + prefix)]
        assert len(found) == 1, (prefix, text)
        return found[0]

    assert "4,200 MiB" in row("peak RSS under 4 GiB") and "**no** (+104 MiB)" in text
    lineage = [line for line in rows.values() if "lineage within 2x" in line]
    assert len(lineage) == 2 and all(line.endswith("| yes |") for line in lineage)
    whole = [line for line in rows.values() if "whole build with data tests" in line]
    assert "= 5.00x | **no** (1.25x the target)" in whole[0]
    assert "= 3.89x | yes" in whole[1]
    assert "= 7.5% | yes" in row("one-day incremental build")
    assert "= 1.50x | **no**" in row("the day's build at 60 days")
    slope = row("cost per event flat or falling")
    assert "| yes |" in slope  # 60 -> 700 s over 20x the events: slope < 1
    assert "| int_retrieval_signals | 2.0 |" in text
    report = bench_incremental.render_incremental(incremental)
    assert "| 30 days | 6,000,000 | 200,000 |" in report
    assert "not run" in report and "7.5%" in report
    # a run with nothing new (10 s): the day's cost above it is (30 - 10) / 400 = 5.0%
    assert "| 30.0 | 900 | 10.0 | 400.0 | 2,000 | 7.5% | 5.0% | 100.0 |" in report
    # the run with nothing new keeps its node seconds (where the fixed cost goes)
    assert (
        "- 30 days, the run with nothing new, node seconds: model 4.0;"
        " slowest models: agg_tier3_completion 1.5"
    ) in report
    assert "fct_retrievals 5.0%" in report


def test_breakdown_names_the_slowest_data_tests(tmp_path: Path) -> None:
    """A full build's data tests can cost as much as a model (at 20M events the two
    key tests of int_retrieval_assets took 54.7 node seconds): the per-size and
    per-run lines name the slowest ones, read from run_results.json."""
    target = tmp_path / "target"
    target.mkdir()
    run = [
        ("model.lara.stg_lara__retrievals", 4.0),
        ("model.lara.fct_retrievals", 6.0),
        ("model.lara.fct_retrieval_reretrievals", 9.0),
        ("test.lara.unique_fct_retrievals_retrieval_id.1a2b3c", 0.5),
    ]
    run += [(f"test.lara.not_null_t{i}_x.{i:06d}", 0.1 * i) for i in range(1, 8)]
    run.append(("test.lara.unique_combination_of_columns_int_retrieval_assets_key.9f8e7d", 30.2))
    results = [{"unique_id": uid, "execution_time": t} for uid, t in run]
    (target / "run_results.json").write_text(json.dumps({"elapsed_time": 60.0, "results": results}))
    parents = {"model.lara.fct_retrievals": ["model.lara.stg_lara__retrievals"]}
    (target / "manifest.json").write_text(json.dumps({"parent_map": parents}))

    breakdown = bench.dbt_breakdown(target)
    assert breakdown["fct_retrievals_lineage_models_s"] == 10.0
    assert breakdown["by_type_s"]["test"] == round(0.5 + 30.2 + 0.1 * sum(range(1, 8)), 2)
    assert list(breakdown["slowest_tests_s"].items()) == [
        ("unique_combination_of_columns_int_retrieval_assets_key", 30.2),
        ("not_null_t7_x", 0.7),
        ("not_null_t6_x", 0.6),
        ("unique_fct_retrievals_retrieval_id", 0.5),
        ("not_null_t5_x", 0.5),
    ]
    size = _size(20_000_000, 700.0, 180.0, 300.0, 3000.0)
    size.dbt_breakdown = breakdown
    report = bench_report.render_report(bench.machine_info(), [size], None, "3GB", 2, [])
    assert (
        "slowest models: fct_retrieval_reretrievals 9.0, fct_retrievals 6.0,"
        " stg_lara__retrievals 4.0; slowest data tests:"
        " unique_combination_of_columns_int_retrieval_assets_key 30.2, not_null_t7_x 0.7,"
    ) in report
    day = _day(30, 30.0, 400.0)
    day.day_breakdown = breakdown
    assert (
        "- 30 days, the day's node seconds (summed over threads): model 19.0, test"
    ) in bench_incremental.render_incremental([day])
    assert "; slowest data tests: unique_combination_of_columns_int_retrieval_assets_key 30.2" in (
        bench_incremental.render_incremental([day])
    )
    # the run with nothing new says what a node costs: its node seconds over its nodes
    assert breakdown["nodes_by_type"] == {"model": 3, "test": 9}
    day.idle_breakdown = breakdown
    idle = next(
        line
        for line in bench_incremental.render_incremental([day]).splitlines()
        if "the run with nothing new" in line
    )
    per_test = (0.5 + 30.2 + 0.1 * sum(range(1, 8))) / 9 * 1000
    assert f"; per node: model 6.33 s (3), data test {per_test:.0f} ms (9);" in idle
    assert "per node" not in bench_incremental.render_incremental([_day(30, 30.0, 400.0)])
    # results saved before tests were recorded (lara bench --merge) render as before
    assert "slowest data tests" not in bench_report.render_report(
        bench.machine_info(),
        [_size(20_000_000, 700.0, 180.0, 300.0, 3000.0)],
        None,
        "3GB",
        2,
        [],
    )


def test_targets_say_when_the_largest_size_is_missing() -> None:
    text = "\n".join(bench_report.targets([_size(1_000_000, 60.0, 10.0, 15.0, 1500.0)], []))
    assert "not measured (largest size built: 1,000,000 events) | **no**" in text
    assert "one-day incremental build under 10% of the full build | not measured" in text


def _has_commit(commit: str) -> bool:
    """Whether the project's git history holds `commit`."""
    found = subprocess.run(
        ["git", "-C", str(project_dir()), "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return found.returncode == 0


def test_the_row_by_row_loop_needs_its_commit(monkeypatch, tmp_path) -> None:
    """Without the loop's commit in the history, `row_by_row_cpu_seconds` says why (the
    benchmark then reports the loop as not run, with that reason)."""
    monkeypatch.setattr(ingest_bench, "ROW_BY_ROW_COMMIT", "0" * 40)
    with pytest.raises(RuntimeError, match="git archive 0{40} failed"):
        ingest_bench.row_by_row_cpu_seconds(tmp_path / "spans.jsonl")
    assert "git archive" in ingest_bench._loop_or_reason(tmp_path / "spans.jsonl", 1)["unavailable"]
    # No git on the machine at all: the same.
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="git archive 0{40} failed"):
        ingest_bench.row_by_row_cpu_seconds(tmp_path / "spans.jsonl")


def test_span_flattening_section_and_target() -> None:
    """`lara bench --spans N`: the span-flattening section (spans, wall and CPU seconds,
    spans per CPU second, the ratio to the row-by-row loop) and its target row."""
    measured = bench.bench_span_flattening(500)
    assert [(r.input, r.spans) for r in measured] == [("OTLP JSON", 500), ("Phoenix Parquet", 500)]
    assert all(r.cpu_s >= 0 and r.runs == 3 for r in measured)
    # The row-by-row loop ran beside it, on the same spans (it found the same counts, or
    # bench_span_flattening would have raised), unless the commit is not in the checkout.
    if _has_commit(ROW_BY_ROW_COMMIT):
        assert all(r.loop_cpu_s and r.loop_cpu_s > 0 and r.loop_note is None for r in measured)
        assert all(r.speedup == pytest.approx(r.loop_cpu_s / r.cpu_s) for r in measured)
    else:
        assert all(r.loop_cpu_s is None and "git archive" in r.loop_note for r in measured)
    # Results saved before the loop ran beside it: compared with its earlier figures.
    slow = bench.SpanResult(100_000, 3.0, 2.5)  # 40,000 spans per CPU s: 3.0x the loop
    report = bench_report.render_report(bench.machine_info(), [], None, "4GB", 2, [], [], [slow])
    assert "## Span flattening" in report
    assert (
        "| OTLP JSON | 100,000 | 3.00 | 2.50 | 40,000 | not run (13,500 spans per CPU s measured"
        " before) | 3.0x |"
    ) in report
    assert "`lara` at df8f717, taken from the project's git history" in report
    row = [line for line in report.splitlines() if line.startswith("| span flattening >=")]
    assert row == [
        "| span flattening >= 10x the row-by-row loop (issue 19) | 40,000 spans per CPU s"
        " (100,000 spans) = 3.0x | **no** (0.30x the target) |"
    ]
    assert "| 3.0x | n/a | n/a |" in report
    assert "| Phoenix Parquet |" not in report  # not measured in this result
    fast = bench.SpanResult(100_000, 1.0, 0.5)  # 200,000 spans per CPU s: 14.8x
    assert "= 14.8x | yes |" in "\n".join(bench_report.targets([], [], [fast]))
    # The parse floor (CPU seconds of only parsing the input) and the ratio to it; the
    # loop's CPU seconds in the same run, the ratio taken from them.
    assert all(r.parse_floor_cpu_s is not None and r.parse_floor_cpu_s >= 0 for r in measured)
    floored = bench.SpanResult(100_000, 3.0, 2.5, 0.8, loop_cpu_s=10.0)
    report = bench_report.render_report(bench.machine_info(), [], None, "4GB", 2, [], [], [floored])
    assert "| OTLP JSON | 100,000 | 3.00 | 2.50 | 40,000 | 10.00 | 4.0x | 0.80 | 3.1x |" in report
    assert (
        "= 4.0x (the loop 10.00 CPU s in the same run); 3.1x the parse floor (0.80 CPU s) | **no**"
    ) in report
    assert "was not run" not in report
    # The text says how many runs each CPU second figure is the least of (`runs`).
    assert "in this process; the least CPU seconds of three runs. CPU seconds" in report
    once = bench_report.render_report(
        bench.machine_info(), [], None, "4GB", 2, [], [], [replace(floored, runs=1)]
    )
    assert "in this process; the CPU seconds of one run. CPU seconds" in once
    assert "three runs" not in once
    # The same spans from a Phoenix Parquet file: a row of its own, against the loop on
    # that file.
    phoenix = bench.SpanResult(100_000, 1.0, 1.25, 0.05, "Phoenix Parquet", 4.0)
    report = bench_report.render_report(
        bench.machine_info(), [], None, "4GB", 2, [], [], [floored, phoenix]
    )
    mixed = bench_report.render_report(
        bench.machine_info(), [], None, "4GB", 2, [], [], [floored, replace(phoenix, runs=12)]
    )
    assert (
        "OTLP JSON: the least CPU seconds of three runs; Phoenix Parquet: the least CPU"
        " seconds of 12 runs."
    ) in mixed
    assert "| Phoenix Parquet | 100,000 | 1.00 | 1.25 | 80,000 | 4.00 | 3.2x | 0.05 | 25.0x |" in (
        report
    )
    assert (
        "| the same from a Phoenix Parquet file | 80,000 spans per CPU s = 3.2x the loop on"
        " that file (the loop 4.00 CPU s in the same run) | **no** (0.32x the target) |"
    ) in report
    # A loop that could not run says why, under the table, and falls back to the figure.
    missing = bench.SpanResult(100_000, 1.0, 1.25, 0.05, "Phoenix Parquet", None, "no git")
    report = bench_report.render_report(bench.machine_info(), [], None, "4GB", 2, [], [], [missing])
    assert "| not run (24,400 spans per CPU s measured before) | 3.3x |" in report
    assert "The row-by-row loop was not run in this benchmark: Phoenix Parquet: no git." in report
    # Saved results load in every form written so far: a list (one per input, as
    # `lara bench` writes them now), the one object holding the Phoenix run as flat
    # `phoenix_*` fields, and the oldest, without a floor.
    saved = json.loads(json.dumps({"spans": [asdict(floored), asdict(phoenix)]}))
    assert bench_report.span_results(saved["spans"]) == [floored, phoenix]
    flat = {"spans": 100_000, "wall_s": 3.0, "cpu_s": 2.5, "parse_floor_cpu_s": 0.8}
    flat |= {"phoenix_wall_s": 1.0, "phoenix_cpu_s": 1.25, "phoenix_floor_cpu_s": 0.05}
    unlooped = [replace(floored, loop_cpu_s=None), replace(phoenix, loop_cpu_s=None)]
    assert bench_report.span_results(flat) == unlooped
    flat |= {"phoenix_wall_s": None, "phoenix_cpu_s": None, "phoenix_floor_cpu_s": None}
    assert bench_report.span_results(flat) == unlooped[:1]
    (oldest,) = bench_report.span_results({"spans": 100_000, "wall_s": 3.0, "cpu_s": 2.5})
    assert oldest.over_floor is None and oldest.input == "OTLP JSON"
    skipped = bench_report.render_report(bench.machine_info(), [], None, "4GB", 2, [])
    assert "## Span flattening" not in skipped
    assert "the row-by-row loop (issue 19) | not measured |" in skipped


def test_spans_option() -> None:
    parser = argparse.ArgumentParser()
    bench.add_bench_arguments(parser)
    assert parser.parse_args([]).spans == 100_000
    assert parser.parse_args(["--spans", "0"]).spans == 0


def test_threads_come_from_lara_threads_and_a_bad_value_is_a_usage_error(monkeypatch, capsys):
    from lara.cli import build_parser

    monkeypatch.setenv("LARA_THREADS", "3")
    parser = argparse.ArgumentParser()
    bench.add_bench_arguments(parser)
    assert parser.parse_args([]).threads == 3
    assert parser.parse_args(["--threads", "1"]).threads == 1
    monkeypatch.setenv("LARA_THREADS", "two")
    # Every other command still parses (the parser is built for every command) ...
    assert build_parser().parse_args(["run"]).command == "run"
    # ... and `lara bench` stops with a usage error naming the setting.
    for args in (["bench"], ["bench", "--threads", "0"]):
        with pytest.raises(SystemExit) as stopped:
            build_parser().parse_args(args)
        assert stopped.value.code == 2
        assert "must be a whole number of at least 1" in capsys.readouterr().err


def test_the_one_day_run_delivers_every_table_of_the_last_day_only():
    # Yesterday's warehouse holds every partition before the last day and the
    # undated ones; the day is every table's partition of the last day (labels
    # included); partitions dated after it are not delivered at all.
    raw = Path("raw")
    files = [
        raw / table / f"dt={day}" / "part-0.parquet"
        for table, days in {
            "prompts": ["2026-08-01", "2026-08-02", "2026-08-03"],
            "actions": ["2026-08-01", "2026-08-02", "2026-08-03", "2026-08-04"],
            "relevance_labels": ["2026-08-02", "2026-08-03", "2026-08-09"],
            "replay_documents": ["all"],
        }.items()
        for day in days
    ]
    last_day, history, day, later = bench_incremental.split_delivery(files, days=3)
    assert last_day == "2026-08-03"
    assert {p.parent.name for p in day} == {"dt=2026-08-03"}
    assert {p.parts[1] for p in day} == {"prompts", "actions", "relevance_labels"}
    assert {(p.parts[1], p.parent.name) for p in later} == {
        ("actions", "dt=2026-08-04"),
        ("relevance_labels", "dt=2026-08-09"),
    }
    assert raw / "replay_documents" / "dt=all" / "part-0.parquet" in history
    assert all(p.parent.name < "dt=2026-08-03" for p in history if p.parts[1] != "replay_documents")
    assert sorted(history + day + later) == sorted(files)


def test_the_lineage_target_uses_the_lineage_built_alone() -> None:
    """The lineage target compares the wall time of the lineage built on its own with the
    reference's; results without that measurement fall back to the summed node seconds,
    and say so."""
    results = [
        _size(5_000_000, 200.0, 40.0, 120.0, 3000.0, lineage_build_s=100.0),
        _size(20_000_000, 700.0, 180.0, 300.0, 3500.0),
    ]
    text = "\n".join(bench_report.targets(results, []))
    lineage = [line for line in text.splitlines() if "lineage within 2x" in line]
    assert len(lineage) == 2, text
    assert "| 100.0 s (built alone) / 40.0 s = 2.50x | **no** (1.25x the target) |" in lineage[0]
    assert "300.0 s (node seconds summed in the full build) / 180.0 s = 1.67x | yes |" in lineage[1]
    report = bench_report.render_report(bench.machine_info(), results, None, "3GB", 2, [])
    summed = "models in fct_retrievals' lineage 120.0 (3.0x the reference; built alone 100.0 s"
    assert summed in report


def _saved_run() -> dict:
    """Measurements as `lara bench` saves them (every part of the report), as JSON."""
    saved = {
        "run": {
            "commit": "abc1234",
            "uncommitted_changes": False,
            "utc": "2026-12-07 09:00",
            "command": "lara bench --sizes 5000000,20000000",
        },
        "machine": {"nproc": 2, "cpu": "test host"},
        "memory_limit": "3GB",
        "threads": 2,
        "notes": ["- a note"],
        "results": [
            asdict(_size(5_000_000, 200.0, 40.0, 70.0, 3000.0)),
            asdict(_size(20_000_000, 700.0, 180.0, 300.0, 3900.0)),
        ],
        "ir": asdict(bench.IrResult(1000, 0.5, 1.0, 2.0, 1e-16)),
        "incremental": [asdict(_day(30, 30.0, 400.0)), asdict(_day(60, 33.0, None))],
        "spans": [asdict(bench.SpanResult(100_000, 1.5, 2.0, loop_cpu_s=6.0))],
    }
    return json.loads(json.dumps(saved, default=str))


def test_the_report_is_written_again_from_its_saved_measurements(tmp_path: Path, capsys) -> None:
    """`lara bench --render` writes the report from the JSON beside it, measuring nothing:
    every section of the measured run, and a first paragraph that names the run."""
    saved = _saved_run()
    loaded = bench_report.load_saved(saved)
    assert [r.events for r in loaded.results] == [5_000_000, 20_000_000]
    assert loaded.ir.lists == 1000 and loaded.spans[0].loop_cpu_s == 6.0
    assert [r.days for r in loaded.incremental] == [30, 60]
    out = tmp_path / "docs" / "benchmarks.md"
    out.parent.mkdir()
    assert bench.main(["--render", "--out", str(out)]) == 2  # nothing saved yet
    assert "no saved measurements at" in capsys.readouterr().err
    assert not out.exists()
    bench_report.saved_beside(out).write_text(json.dumps(saved))
    assert bench.main(["--render", "--out", str(out)]) == 0
    report = out.read_text()
    assert report == bench_report.render_saved(saved)
    first = report.splitlines()[2]
    assert "`lara bench --sizes 5000000,20000000` at commit abc1234, 2026-12-07 09:00 UTC" in first
    assert "docs/performance-notes.md" in first
    for section in (
        "## Machine",
        "| cpu | test host |",
        "LARA_DUCKDB_MEMORY_LIMIT=3GB",
        "## Full build vs hand-written reference",
        "## Span flattening",
        "## Targets",
        "## Tier 1 IR metrics at scale",
        "## Notes",
        "- a note",
        "## Reading the numbers",
        "## One-day incremental run",
    ):
        assert section in report, section
    # a run from a changed checkout says so
    saved["run"]["uncommitted_changes"] = True
    assert "at commit abc1234 with uncommitted changes," in bench_report.render_saved(saved)
    # a command line with a backtick or a line break (a --note) stays one code span
    saved["run"]["command"] = "lara bench --note 'the `production` selector\nat 3GB'"
    first = bench_report.render_saved(saved).splitlines()[2]
    assert "`` lara bench --note 'the `production` selector at 3GB' ``" in first


def test_the_saved_measurements_of_earlier_runs_still_load() -> None:
    """bench_results.json of runs before the run, machine and settings were saved
    (`--merge` reads them): results only, a single span object, no incremental list."""
    old = {
        "results": _saved_run()["results"],
        "ir": None,
        "incremental": {},
        "spans": {"spans": 100_000, "wall_s": 1.6, "cpu_s": 2.2},
    }
    loaded = bench_report.load_saved(old)
    assert len(loaded.results) == 2 and loaded.ir is None and loaded.incremental == []
    assert [r.input for r in loaded.spans] == ["OTLP JSON"]
    assert (
        "Written by `lara bench` (python/src/lara/bench.py); re-run"
        in bench_report.render_saved(old)
    )


def test_the_checked_in_report_is_what_lara_bench_renders() -> None:
    """docs/benchmarks.md is generated: it must equal the report rendered from the
    measurements saved beside it (docs/benchmarks.json). After a change to the report's
    text, `lara bench --render` writes it again; analysis goes to docs/performance-notes.md."""
    docs = project_dir() / "docs"
    saved = json.loads((docs / "benchmarks.json").read_text())
    assert saved["run"]["commit"] and saved["results"] and saved["incremental"]
    assert (docs / "benchmarks.md").read_text() == bench_report.render_saved(saved), (
        "docs/benchmarks.md differs from `lara bench --render`"
    )
    assert (docs / "performance-notes.md").exists()


def test_the_readme_quotes_the_checked_in_report() -> None:
    """The README's table of the latest run ("Speed and memory") is written from the same
    measurements as docs/benchmarks.md: after a `lara bench` run, `lara bench --render`
    writes both."""
    readme = (project_dir() / "README.md").read_text()
    saved = json.loads((project_dir() / "docs" / "benchmarks.json").read_text())
    assert readme == bench_report.with_readme_summary(readme, saved), (
        "README.md's table of the latest run differs from `lara bench --render`"
    )
    rows = bench_report.readme_summary(saved)
    assert len(rows) == 2 + 8 and all(f"\n{row}\n" in readme for row in rows)


def test_the_readme_summary_says_met_or_missed(tmp_path: Path, monkeypatch) -> None:
    """Each row of the README's table has the run's figure and its target met or missed;
    `lara bench --render` rewrites the table only in the project's own README."""
    saved = _saved_run()
    # lineage built alone 1.75x and 1.67x the reference (met); whole build 5x and 3.9x (missed)
    saved["results"][0]["lineage_build_s"], saved["results"][1]["lineage_build_s"] = 70.0, 300.0
    # the mart and the reference disagree (one retrieval missing)
    # the run with nothing new counted its nodes: its cost per node is in the day's row
    saved["incremental"][0]["idle_breakdown"] = {
        "by_type_s": {"model": 20.0, "test": 12.0},
        "nodes_by_type": {"model": 100, "test": 400},
    }
    saved["results"][1]["agreement"] = {
        "ok": False,
        "rows": 9,
        "missing": 1,
        "extra": 0,
        "columns": {},
    }
    rows = bench_report.readme_summary(saved)
    assert rows[:2] == ["| | latest run | target |", "|---|---|---|"]
    text = "\n".join(rows)
    expected = (
        "| full build of 20M events (2.0M sessions) with its data tests | 11.7 minutes,",
        "peak RSS 3,900 MiB; `fct_retrievals` **not** equal to the reference row for row |",
        "| RSS under 4 GiB: met |",
        "lineage built alone | 1.8x the reference at 5M events, 1.7x the reference at",
        "20M events | 2x: met |",
        "| the whole build with its data tests | 5.0x the reference at 5M events,",
        "3.9x the reference at 20M events | 4x: missed |",
        "| 30.0 s, 7.5% of a full build of the same files; a run with nothing new",
        "alone 10.0 s, 2.5% (per node: model 0.20 s (100), data test 30 ms (400)) |",
        "| 10%: met |",
        "| the same day over 60 days | 1.10x the 30-day one | 1.3x: met |",
        "| span reading against the row-by-row loop | 3.0x as fast from OTLP JSON",
        "| 10x (issue 19): missed |",
        "| the generator (slowest size) | 1,000,000 events per second | 500k: met |",
    )
    assert [line for line in expected if line not in text] == [], text
    assert bench_report.readme_summary({}) == []
    readme = f"intro\n{bench_report.README_BEGIN}\nold\n{bench_report.README_END}\nafter\n"
    assert bench_report.with_readme_summary(readme, saved) == (
        f"intro\n{bench_report.README_BEGIN}\n\n{text}\n\n{bench_report.README_END}\nafter\n"
    )
    with pytest.raises(ValueError, match="has no lines"):
        bench_report.with_readme_summary("no table here\n", saved)
    # A report written elsewhere leaves the project's README alone.
    out = tmp_path / "benchmarks.md"
    bench_report.saved_beside(out).write_text(json.dumps(saved))
    before = (project_dir() / "README.md").read_text()
    assert bench.refresh_readme(out, saved) is False
    assert bench.main(["--render", "--out", str(out)]) == 0
    assert (project_dir() / "README.md").read_text() == before


def test_the_readme_table_is_written_only_for_the_projects_own_report(
    tmp_path: Path, capsys
) -> None:
    """`refresh_readme` writes the table into the README of the project whose
    docs/benchmarks.md is the report, and a README without the table's comment lines is
    left alone with a message (a bench run goes on)."""
    saved = _saved_run()
    (tmp_path / "docs").mkdir()
    out = tmp_path / "docs" / "benchmarks.md"
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n{bench_report.README_BEGIN}\n{bench_report.README_END}\n")
    assert bench.refresh_readme(out, saved, project=tmp_path) is True
    assert readme.read_text() == bench_report.with_readme_summary(
        f"# x\n{bench_report.README_BEGIN}\n{bench_report.README_END}\n", saved
    )
    assert "| | latest run | target |" in readme.read_text()
    assert bench.refresh_readme(tmp_path / "elsewhere.md", saved, project=tmp_path) is False
    readme.write_text("# a README without the table\n")
    assert bench.refresh_readme(out, saved, project=tmp_path) is False
    assert readme.read_text() == "# a README without the table\n"
    assert "its table of the latest run not written" in capsys.readouterr().err


def test_merge_keeps_what_the_run_does_not_measure_and_names_its_run(
    tmp_path: Path, monkeypatch
) -> None:
    """`lara bench --merge` re-measures some parts (here span flattening) and keeps the
    others from the measurements beside the report; the first paragraph names the run each
    kept part came from, through later merges too, and --render gives the same report."""
    out = tmp_path / "docs" / "benchmarks.md"
    out.parent.mkdir()
    bench_report.saved_beside(out).write_text(json.dumps(_saved_run()))
    fresh = bench.SpanResult(100, 0.01, 0.02, loop_cpu_s=0.05)
    monkeypatch.setattr(bench, "bench_span_flattening", lambda n, log: [fresh])
    monkeypatch.setattr(bench, "dbt_parse_rss_mib", lambda work: 150.0)
    argv = ["--sizes", "", "--ir-lists", "0", "--incremental-events-per-day", "0", "--spans"]
    argv += ["100", "--merge", "--work", str(tmp_path / "work"), "--out", str(out)]
    monkeypatch.setattr(sys, "argv", ["lara", "bench", *argv])
    kept = (
        " Kept from earlier runs (`--merge`), each measured on its own run's host (the machine"
        " table is this run's): the 5,000,000-event size, the 20,000,000-event"
        " size, the IR comparison and the one-day run from the run of"
        " `lara bench --sizes 5000000,20000000` at commit abc1234, 2026-12-07 09:00 UTC."
    )
    for _ in range(2):  # merging again keeps naming the run the kept parts came from
        assert bench.main(argv) == 0
        report = out.read_text()
        assert kept in report.splitlines()[2]
        saved = json.loads(bench_report.saved_beside(out).read_text())
        assert saved["run"]["parts"]["spans"] is None  # measured by this run
        assert saved["run"]["parts"]["ir"]["commit"] == "abc1234"
        assert [r["target_events"] for r in saved["results"]] == [5_000_000, 20_000_000]
        assert saved["spans"] == [asdict(fresh)] and saved["ir"]["lists"] == 1000
        assert report == bench_report.render_saved(saved)
    # without --merge nothing is kept, and nothing is said to be
    assert bench.main(argv[: argv.index("--merge")] + argv[argv.index("--merge") + 1 :]) == 0
    report = out.read_text()
    assert "Kept from earlier runs" not in report and "## Targets" in report
    assert json.loads(bench_report.saved_beside(out).read_text())["results"] == []
