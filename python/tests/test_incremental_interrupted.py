"""A scheduled run killed part way needs nothing but the next run.

docs/scheduling.md promises that a run that failed or was stopped needs
nothing special: rerun it, nothing is lost or counted twice. The load log
(lara_incremental_manifest) is the last node of the DAG, so a run that dies
records no load and keeps the watermark; the next run reads the same
partitions again and recomputes the sessions of every row loaded after the
last completed run, including the rows the dead run already wrote.

Here the last day of a sample is delivered to a warehouse built on the days
before, and two runs are killed (SIGKILL, as an out-of-memory killer or a
scheduler's timeout would) at fixed points of the DAG: the first once the
base models have replaced the day's partitions, before the run state; the
second once the session-grained marts have written rows, before the daily
aggregates. A third run completes. The warehouse must then equal a full
build of the same files, on every mart and data-quality table.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import duckdb
import pytest

from deliveries import build, dbt_folders, delivery_batches, land
from lara.dbt import dbt_env, dbt_executable
from lara.paths import project_dir
from warehouse_diff import differences, snapshot

#: Where the two runs are killed: when dbt starts this model.
KILL_AT = ("lara_sessions_this_run", "agg_tier3_completion")


def _run_killed_at(root: Path, landing: Path, warehouse: Path, model: str) -> list[str]:
    """`dbt run`, killed with SIGKILL as soon as it starts `model`; its output up to then."""
    started = re.compile(rf"START sql \S+ model \S+\.{re.escape(model)} ")
    process = subprocess.Popen(
        [dbt_executable(), "run", "--project-dir", str(project_dir())],
        cwd=project_dir(),
        env=dbt_env(landing, warehouse, dbt_folders(root, warehouse)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines = []
    assert process.stdout is not None
    for line in process.stdout:
        lines.append(line)
        if started.search(line):
            os.killpg(process.pid, signal.SIGKILL)
            break
    process.wait()
    process.stdout.close()
    assert process.returncode == -signal.SIGKILL, (
        f"the run ended ({process.returncode}) before starting {model}:\n{''.join(lines)[-4000:]}"
    )
    return lines


#: What the tests compare between runs: the load log, and the newest row a
#: base model and a session-grained mart hold.
STATE_QUERIES = {
    "manifest_rows": "select count(*) from run_state.lara_incremental_manifest",
    "last_completed_run": "select max(run_started_at) from run_state.lara_incremental_manifest",
    "base_loaded": "select max(_lara_loaded_at) from staging.base_lara__retrievals",
    "fct_loaded": "select max(_lara_loaded_at) from marts.fct_retrievals",
}


def _state(warehouse: Path) -> dict:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return {name: con.execute(sql).fetchone()[0] for name, sql in STATE_QUERIES.items()}


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory, small_raw_sample):
    root = tmp_path_factory.mktemp("interrupted")
    raw = root / "raw"
    shutil.copytree(small_raw_sample, raw)
    landing = root / "landing"
    landing.mkdir()
    batches = delivery_batches(raw, scheduled_days=3)
    for batch in batches[:2]:
        land(batch, landing)
    warehouse = root / "incremental.duckdb"
    build(landing, warehouse, root, ["build"])
    states = {"built": _state(warehouse)}
    for batch in batches[2:]:
        land(batch, landing)
    for model in KILL_AT:
        _run_killed_at(root, landing, warehouse, model)
        states[model] = _state(warehouse)
    build(landing, warehouse, root, ["run"])
    states["completed"] = _state(warehouse)
    full = root / "full.duckdb"
    build(landing, full, root, ["build"])
    return {"states": states, "incremental": snapshot(warehouse), "full": snapshot(full)}


def test_the_first_killed_run_had_replaced_the_days_base_rows(interrupted):
    built, killed = interrupted["states"]["built"], interrupted["states"][KILL_AT[0]]
    assert killed["base_loaded"] > built["base_loaded"]
    assert killed["fct_loaded"] == built["fct_loaded"]


def test_the_second_killed_run_had_written_session_grained_marts(interrupted):
    first, second = interrupted["states"][KILL_AT[0]], interrupted["states"][KILL_AT[1]]
    assert second["fct_loaded"] > first["fct_loaded"]


def test_a_killed_run_records_no_load(interrupted):
    states = interrupted["states"]
    for model in KILL_AT:
        assert states[model]["manifest_rows"] == states["built"]["manifest_rows"]
        assert states[model]["last_completed_run"] == states["built"]["last_completed_run"]


def test_the_run_that_completes_records_the_load(interrupted):
    states = interrupted["states"]
    assert states["completed"]["manifest_rows"] > states["built"]["manifest_rows"]
    assert states["completed"]["last_completed_run"] > states["built"]["last_completed_run"]


def test_after_two_killed_runs_the_next_run_equals_a_full_build(interrupted):
    problems = differences(interrupted["incremental"], interrupted["full"])
    assert not problems, "\n".join(problems[:20])
    assert len(interrupted["full"]) > 20
