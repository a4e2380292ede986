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

import pandas as pd
import pytest

from lara.cli import main
from lineage_faults import NEWEST, plant_reproduction_4


def _check(raw: Path, out: Path, *extra: str) -> tuple[int, dict, pd.DataFrame]:
    code = main(
        ["check", "--raw-path", str(raw), "--out", str(out), "--no-docs", "--quiet", *extra]
    )
    results = json.loads((out / "gate_results.json").read_text())
    failing = pd.read_csv(out / "failing_ids.csv", dtype=str, keep_default_na=False)
    return code, results, failing


@pytest.fixture()
def raw(small_raw_sample, tmp_path) -> Path:
    target = tmp_path / "raw"
    shutil.copytree(small_raw_sample, target)
    return target


def test_reproduction_4_every_lineage_fault_is_named(raw, tmp_path):
    plant_reproduction_4(raw)
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
    plant_reproduction_4(raw, ghost_prompts=20)  # > 1% of the day's retrievals
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
