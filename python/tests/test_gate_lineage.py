"""The lineage gate names every fault, checks retrieval -> prompt, and looks into the warehouse.

Issue 20, reproduction 4: in the newest partition, one action whose
`source_retrieval_id` names no retrieval, one consumed asset never returned
and one retrieval whose `prompt_id` names no prompt used to pass the gate
(exit 0, no failing id: each under its `mostly` threshold, and retrieval ->
prompt was never checked). Now each is listed with its id: a warning below the
threshold, an error above it. Lookups read every raw partition and the built
warehouse's staging rows.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from lara.cli import main

NEWEST = "2026-08-03"


def _rows(folder: Path, columns: str) -> list[tuple]:
    """Some rows of one raw partition, whatever its format."""
    path = next(p for p in sorted(folder.iterdir()) if p.name.startswith("part-"))
    reader = "read_parquet" if path.suffix == ".parquet" else "read_json_auto"
    with duckdb.connect() as con:
        return con.execute(f"select {columns} from {reader}(?) limit 5", [str(path)]).fetchall()


def _append(folder: Path, rows: list[dict]) -> None:
    with (folder / "probe.jsonl").open("a") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def _check(raw: Path, out: Path, *extra: str) -> tuple[int, dict, pd.DataFrame]:
    code = main(
        ["check", "--raw-path", str(raw), "--out", str(out), "--no-docs", "--quiet", *extra]
    )
    results = json.loads((out / "gate_results.json").read_text())
    failing = pd.read_csv(out / "failing_ids.csv", dtype=str, keep_default_na=False)
    return code, results, failing


def _plant_reproduction_4(raw: Path, ghost_prompts: int = 1) -> None:
    retrieval_id, prompt_id, session = _rows(
        raw / "retrievals" / f"dt={NEWEST}", "retrieval_id, prompt_id, session_guid"
    )[0]
    ts = f"{NEWEST}T12:00:00Z"
    click = {
        "session_guid": session,
        "prompt_id": prompt_id,
        "ts": ts,
        "actor": "user",
        "action_type": "click",
    }
    _append(
        raw / "actions" / f"dt={NEWEST}",
        [
            {
                **click,
                "action_id": "x_ghost_click",
                "consumed_asset_id": "a_1",
                "source_retrieval_id": "r_ghost_0",
            },
            {
                **click,
                "action_id": "x_never_returned",
                "consumed_asset_id": "a_never_returned_0",
                "source_retrieval_id": retrieval_id,
            },
        ],
    )
    _append(
        raw / "retrievals" / f"dt={NEWEST}",
        [
            {
                "retrieval_id": f"r_orphan_{k}",
                "prompt_id": f"p_ghost_{k}",
                "session_guid": session,
                "ts": ts,
                "retrieval_role": "find",
                "returned_asset_ids": ["a_1"],
            }
            for k in range(ghost_prompts)
        ],
    )


@pytest.fixture()
def raw(small_raw_sample, tmp_path) -> Path:
    target = tmp_path / "raw"
    shutil.copytree(small_raw_sample, target)
    return target


def test_reproduction_4_every_lineage_fault_is_named(raw, tmp_path):
    _plant_reproduction_4(raw)
    code, results, failing = _check(raw, tmp_path / "out", "--no-warehouse")
    failures = {(f["table"], f["name"]): f for f in results["failures"]}
    expected = {
        ("actions", "lineage_source_known"): "x_ghost_click",
        ("actions", "lineage_consumed_in_returned"): "x_never_returned",
        ("retrievals", "lineage_prompt_known"): "r_orphan_0",
    }
    assert set(failures) == set(expected), sorted(failures)
    for (table, check), row_key in expected.items():
        failure = failures[(table, check)]
        assert failure["severity"] == "warning" and failure["below_threshold"], failure
        assert failure["unexpected_count"] == 1
        assert [s[f"{table[:-1]}_id"] for s in failure["sample"]] == [row_key]
        rows = failing[(failing["table"] == table) & (failing["check"] == check)]
        assert rows["row_key"].tolist() == [row_key] and rows["severity"].tolist() == ["warning"]
        assert rows["source"].str.startswith(f"{table}/dt={NEWEST}/probe.jsonl:").all()
    assert code == 1 and results["verdict"] == "warnings"


def test_lineage_faults_above_the_threshold_fail(raw, tmp_path):
    _plant_reproduction_4(raw, ghost_prompts=20)  # > 1% of the day's retrievals
    code, results, failing = _check(raw, tmp_path / "out", "--no-warehouse")
    (prompt,) = [f for f in results["failures"] if f["name"] == "lineage_prompt_known"]
    assert prompt["severity"] == "error" and not prompt["below_threshold"]
    assert prompt["unexpected_count"] == 20
    listed = failing[failing["check"] == "lineage_prompt_known"]["row_key"]
    assert sorted(listed) == sorted(f"r_orphan_{k}" for k in range(20))
    assert code == 2 and results["verdict"] == "failed"


def test_lookups_read_the_warehouse(clean_sample, tmp_path):
    """Raw files gone (retention), rows in the warehouse: the lineage still resolves."""
    raw = tmp_path / "raw"
    shutil.copytree(clean_sample.raw_path, raw)
    days = sorted(p.name for p in (raw / "prompts").iterdir())
    shutil.rmtree(raw / "prompts" / days[-1])  # the newest day's retrievals lose their prompts
    shutil.rmtree(raw / "retrievals" / days[-2])  # the day before's actions lose their retrievals
    tables = ["--table", "retrievals", "--table", "actions", "--all"]
    code, results, _ = _check(raw, tmp_path / "raw_only", *tables, "--no-warehouse")
    failed = {(f["partition"], f["name"]) for f in results["failures"]}
    newest, before = days[-1].removeprefix("dt="), days[-2].removeprefix("dt=")
    assert {(newest, "lineage_prompt_known"), (before, "lineage_source_known")} <= failed
    assert code == 2

    warehouse = ["--warehouse", str(clean_sample.warehouse)]
    code, results, _ = _check(raw, tmp_path / "with_warehouse", *tables, *warehouse)
    lineage = [f for f in results["failures"] if f["check"].startswith("lineage_")]
    assert lineage == [], [(f["partition"], f["name"]) for f in lineage]
    assert results["lineage_lookups"]["warehouse_tables"] == ["placements", "prompts", "retrievals"]
    checked = {(c["partition"], c["name"]) for c in results["checks"]}
    assert {(newest, "lineage_prompt_known"), (before, "lineage_source_known")} <= checked
