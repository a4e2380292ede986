"""Lineage faults of issue 20, reproduction 4, planted into a copy of a generated sample."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

NEWEST = "2026-08-03"  # the newest day of `small_raw_sample` (conftest)


def sample_rows(folder: Path, columns: str) -> list[tuple]:
    """Some rows of one raw partition, whatever its format."""
    path = next(p for p in sorted(folder.iterdir()) if p.name.startswith("part-"))
    reader = "read_parquet" if path.suffix == ".parquet" else "read_json_auto"
    with duckdb.connect() as con:
        return con.execute(f"select {columns} from {reader}(?) limit 5", [str(path)]).fetchall()


def append_jsonl(folder: Path, rows: list[dict]) -> None:
    with (folder / "probe.jsonl").open("a") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def plant_reproduction_4(raw: Path, ghost_prompts: int = 1) -> None:
    """In the newest partition: an action naming retrieval `r_ghost_0`, an action whose
    consumed asset its (real) retrieval never returned, and `ghost_prompts` retrievals
    whose prompt_id names no prompt (`r_orphan_<k>` -> `p_ghost_<k>`)."""
    retrieval_id, prompt_id, session = sample_rows(
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
    append_jsonl(
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
    append_jsonl(
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
