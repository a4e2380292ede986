"""Bulk runs: an incremental run that recomputes most sessions builds them like a full build.

An incremental run whose lineage closure holds at least var
`lara_bulk_run_share` (default 0.5) of the sessions (raw files moved, a long
backfill) is a bulk run on DuckDB (macros/incremental/bulk.sql):
lara_sessions_this_run lists every session with reason `bulk`, the
session-grained models compile to their full-build SQL (no semi-joins on the
run's sessions, whose fixed 20% estimate made DuckDB plan a whole month as a
small run and run out of its 3GB pool at 6M events) and the strategy empties
their tables before inserting.

A sample with bad rows is delivered as a first day, then every later file at
once (a backfill), then nothing new: the backfill is a bulk run, the run
after it is not (not even with a share of 0: a run that touches no session is
never a bulk run), and the warehouse equals a full refresh over the same files
after each.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from deliveries import build, delivery_batches, land
from warehouse_diff import differences, snapshot


def _reasons(warehouse: Path) -> dict[str, int]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return dict(
            con.execute(
                "select reason, count(*) from run_state.lara_sessions_this_run group by reason"
            ).fetchall()
        )


@pytest.fixture(scope="module")
def backfill(tmp_path_factory):
    from lara.generate import GeneratorConfig, generate

    root = tmp_path_factory.mktemp("bulk")
    raw = root / "raw"
    generate(
        GeneratorConfig(sessions=600, days=4, seed=11, fmt="mixed", gzip=True, bad_rows=True),
        raw,
        progress=False,
    )
    landing, incremental, full = root / "landing", root / "incremental.duckdb", root / "full.duckdb"
    first, *rest = delivery_batches(raw, scheduled_days=1)
    runs = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LARA_BULK_RUN_SHARE", "0.5")  # the project's default
        land(first, landing)
        build(landing, incremental, root, ["build"])
        for batch in rest:
            land(batch, landing)
        build(landing, incremental, root, ["build"])
        target = root / f"target-{incremental.stem}"
        runs["backfill"] = {
            "reasons": _reasons(incremental),
            "compiled": (
                target / "compiled/lara/models/marts/retrieval/fct_retrievals.sql"
            ).read_text(),
            "run": (target / "run/lara/models/marts/retrieval/fct_retrievals.sql").read_text(),
            "snapshot": snapshot(incremental),
        }
        # Nothing new, and a share of 0: a run that touches no session is not a bulk run.
        patch.setenv("LARA_BULK_RUN_SHARE", "0")
        build(landing, incremental, root, ["build"])
        runs["idle"] = {"reasons": _reasons(incremental), "snapshot": snapshot(incremental)}
        build(landing, full, root, ["build"])
    runs["full"] = {"reasons": _reasons(full), "snapshot": snapshot(full)}
    return runs


def test_a_backfill_of_most_sessions_is_a_bulk_run_over_every_session(backfill):
    reasons = backfill["backfill"]["reasons"]
    assert set(reasons) == {"bulk"}
    # every session with a row, as the full build lists them
    assert reasons["bulk"] == backfill["full"]["reasons"]["full_build"]


def test_a_bulk_run_builds_session_grained_models_with_their_full_build_sql(backfill):
    compiled, run = backfill["backfill"]["compiled"], backfill["backfill"]["run"]
    # An incremental run reads the sessions this run by semi-joins; a bulk run does not.
    assert "in (select session_guid from sessions_this_run)" not in compiled
    assert "in (select retrievals.prompt_id from retrievals)" not in compiled
    # The strategy empties the table (every row was recomputed) before inserting.
    statements = [s.strip() for s in run.split(";") if s.strip()]
    assert statements[0].startswith("delete from") and " where" not in statements[0]
    assert statements[1].startswith("insert into")


def test_the_run_after_a_bulk_run_is_incremental_again(backfill):
    # with nothing new it recomputes no session, even with LARA_BULK_RUN_SHARE=0
    assert backfill["idle"]["reasons"] == {}


@pytest.mark.parametrize("run", ["backfill", "idle"])
def test_bulk_and_following_runs_equal_a_full_refresh(backfill, run):
    problems = differences(backfill["full"]["snapshot"], backfill[run]["snapshot"])
    assert not problems, "\n".join(problems[:20])
