"""`lara run` and runs that need more memory than a full build: it says so and what to do.

After a build in which a model ran out of DuckDB's memory limit, `lara run`
names the models and the remedies; and before building, when the warehouse's
load log knows no file under LARA_RAW_PATH (the files moved), it stops.

An incremental run that recomputes most sessions (the raw files moved to
another LARA_RAW_PATH, so every file looks new; or 20 days delivered at once
onto a 10-day warehouse) plans its joins for a small run: at 6M events over
30 days with the default 3GB pool, `fct_retrievals` and `fct_prompts` failed
that way (measured 2026-12-05, README "Incremental runs and late events")
while a full build of the same files passed. The run results below are shaped as dbt
wrote them then (the message copied from that run); the build itself is
replaced, so these tests run no dbt (the load log is a table written here).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from lara import cli
from lara.dbt import out_of_memory_nodes

OUT_OF_MEMORY = (
    "Runtime Error in model fct_retrievals (models/marts/retrieval/fct_retrievals.sql)\n"
    "  Out of Memory Error: failed to pin block of size 256.0 KiB (2.7 GiB/2.7 GiB used)\n"
    "  \n  Possible solutions:\n  * Reducing the number of threads (SET threads=X)\n"
)


def _write_run_results(target: Path, results: list[dict]) -> None:
    target.mkdir(parents=True, exist_ok=True)
    (target / "run_results.json").write_text(json.dumps({"results": results}))


def _results() -> list[dict]:
    return [
        {"unique_id": "operation.lara.lara-on-run-start-0", "status": "success", "message": "ok"},
        {"unique_id": "model.lara.fct_retrievals", "status": "error", "message": OUT_OF_MEMORY},
        {
            "unique_id": "model.lara.fct_prompts",
            "status": "error",
            "message": "Runtime Error in model fct_prompts\n  Binder Error: column x not found",
        },
        {
            "unique_id": "test.lara.unique_fct_prompts_prompt_id.0a1b",
            "status": "skipped",
            "message": None,
        },
    ]


def test_out_of_memory_nodes_names_only_the_nodes_that_ran_out_of_memory(tmp_path):
    _write_run_results(tmp_path, _results())
    assert out_of_memory_nodes(tmp_path) == ["fct_retrievals"]
    # No run results (dbt stopped before any node) or an unreadable file: nothing to say.
    assert out_of_memory_nodes(tmp_path / "missing") == []
    (tmp_path / "run_results.json").write_text("{not json")
    assert out_of_memory_nodes(tmp_path) == []


@pytest.mark.parametrize("full_refresh", [False, True])
def test_lara_run_explains_an_out_of_memory_build(tmp_path, monkeypatch, capsys, full_refresh):
    raw, target = tmp_path / "raw", tmp_path / "target"
    raw.mkdir()
    monkeypatch.setenv("LARA_RAW_PATH", str(raw))
    monkeypatch.setenv("LARA_DUCKDB_PATH", str(tmp_path / "warehouse.duckdb"))
    monkeypatch.setenv("DBT_TARGET_PATH", str(target))
    monkeypatch.setenv("LARA_DUCKDB_MEMORY_LIMIT", "3GB")
    calls = []

    def failing_build(args, raw_path, warehouse, extra_env=None, capture=False):
        calls.append(list(args))
        _write_run_results(target, _results())
        return subprocess.CompletedProcess(args, 1)

    monkeypatch.setattr("lara.dbt.run_dbt", failing_build)
    code = cli.main(["run", *(["--full-refresh"] if full_refresh else [])])
    err = capsys.readouterr().err
    assert code == cli.EXIT_BUILD_FAILED
    assert calls == [["build", "--full-refresh"] if full_refresh else ["build"]]
    assert "fct_retrievals ran out of DuckDB's memory limit (LARA_DUCKDB_MEMORY_LIMIT=3GB)" in err
    assert "fct_prompts" not in err.split("dbt build failed")[1]
    assert "raise LARA_DUCKDB_MEMORY_LIMIT" in err
    # A full refresh is the advice only to a run that was not one.
    assert ("`lara run --full-refresh`" in err) is not full_refresh


def test_lara_run_adds_nothing_to_a_build_that_failed_otherwise(tmp_path, monkeypatch, capsys):
    raw, target = tmp_path / "raw", tmp_path / "target"
    raw.mkdir()
    monkeypatch.setenv("LARA_RAW_PATH", str(raw))
    monkeypatch.setenv("LARA_DUCKDB_PATH", str(tmp_path / "warehouse.duckdb"))
    monkeypatch.setenv("DBT_TARGET_PATH", str(target))

    def failing_build(args, raw_path, warehouse, extra_env=None, capture=False):
        _write_run_results(
            target, [r for r in _results() if "fct_retrievals" not in r["unique_id"]]
        )
        return subprocess.CompletedProcess(args, 1)

    monkeypatch.setattr("lara.dbt.run_dbt", failing_build)
    assert cli.main(["run"]) == cli.EXIT_BUILD_FAILED
    err = capsys.readouterr().err
    assert "dbt build failed" in err
    assert "memory" not in err


def _warehouse_with_load_log(path: Path, files: list[str]) -> None:
    import duckdb

    with duckdb.connect(str(path)) as con:
        con.execute("create schema run_state")
        con.execute(
            "create table run_state.lara_incremental_manifest"
            " (table_name varchar, source_file varchar, partition_value varchar)"
        )
        for file in files:
            con.execute(
                "insert into run_state.lara_incremental_manifest"
                " values ('prompts', ?, '2026-08-01')",
                [file],
            )


@pytest.mark.parametrize(
    ("loaded_under", "full_refresh", "builds"),
    [
        ("old", False, False),  # moved: stop before dbt, say what to do
        ("old", True, True),  # a full refresh is what the message asks for
        ("new", False, True),  # the same root: the daily incremental run
        ("relative", False, True),  # the same root, loaded by dbt run from the project folder
        (None, False, True),  # no warehouse yet
    ],
)
def test_lara_run_stops_when_the_raw_files_moved(
    tmp_path, monkeypatch, capsys, loaded_under, full_refresh, builds
):
    """A warehouse whose load log knows only files under another folder than
    LARA_RAW_PATH: an incremental run would read every file as new and
    recompute every session (out of memory at 6M events); `lara run` stops
    and asks for a full refresh or the old path."""
    # A folder named like a table, to show the root is cut at the last `/<table>/`.
    new, warehouse = tmp_path / "prompts" / "new raw", tmp_path / "warehouse.duckdb"
    new.mkdir(parents=True)
    monkeypatch.setattr("lara.cli.project_dir", lambda: tmp_path / "prompts")
    if loaded_under:
        root = {"old": tmp_path / "old raw", "new": new, "relative": "new raw"}[loaded_under]
        _warehouse_with_load_log(
            warehouse, [f"{root}/prompts/dt=2026-08-0{n}/part-0.parquet" for n in range(1, 4)]
        )
    monkeypatch.setenv("LARA_RAW_PATH", str(new))
    monkeypatch.setenv("LARA_DUCKDB_PATH", str(warehouse))
    monkeypatch.setenv("DBT_TARGET_PATH", str(tmp_path / "target"))
    calls = []

    def build(args, raw_path, warehouse, extra_env=None, capture=False):
        calls.append(list(args))
        return subprocess.CompletedProcess(args, 1)  # stop after the build either way

    monkeypatch.setattr("lara.dbt.run_dbt", build)
    code = cli.main(["run", *(["--full-refresh"] if full_refresh else [])])
    err = capsys.readouterr().err
    assert code == cli.EXIT_BUILD_FAILED
    assert bool(calls) is builds
    if builds:
        assert "none under" not in err
    else:
        assert f"has loaded files under {tmp_path / 'old raw'}, and none under" in err
        assert "`lara run --full-refresh`" in err and "Nothing was done" in err


def test_the_moved_folders_are_printed_with_control_characters_escaped(
    tmp_path, monkeypatch, capsys
):
    """A root is cut at a file's last `/<table>/`, so a delivered folder named
    like a table makes part of it: its control characters reach no terminal."""
    new, warehouse = tmp_path / "new", tmp_path / "warehouse.duckdb"
    new.mkdir()
    hostile = f"{tmp_path}/old/prompts/dt=2026-08-01/\x1b[2J\x1b]0;owned\x07/prompts/part-0.parquet"
    _warehouse_with_load_log(warehouse, [hostile])
    monkeypatch.setenv("LARA_RAW_PATH", str(new))
    monkeypatch.setenv("LARA_DUCKDB_PATH", str(warehouse))
    monkeypatch.setattr("lara.dbt.run_dbt", lambda *a, **k: pytest.fail("dbt was run"))
    assert cli.main(["run"]) == cli.EXIT_BUILD_FAILED
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err
    assert "dt=2026-08-01/\\x1b[2J\\x1b]0;owned\\x07, and none under" in err
