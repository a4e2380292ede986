"""`_lara_ingest.json`: what `lara ingest` wrote into a raw folder, read by the gate.

Written (and updated, one entry per run) in the root of the folder the adapters
write to. The `_` prefix keeps it out of the build and the gate's file checks.
It says:

- `trace_derived`: the folder's contract tables come from traces;
- `tables_without_daily_rows`: required contract tables that a trace-derived
  folder cannot be expected to fill every day, with the reason. The gate's
  `row_count` check (a required table has rows on every day of the anchor
  table, `gx/lara_gate.yml`) is not applied to them, unless `gx/lara_gate.yml`
  sets `row_count` for that table explicitly;
- `tables_not_in_traces`: contract tables no trace carries (user actions in
  the product, outcomes, labels other than evaluations, replay experiments);
  the build sees them as absent or empty, and the reports say so;
- `runs`: each ingest run: adapter, source, settings, rows written and the
  diagnostics (documents without id, the id keys used, tool spans scanned, ...).

Delete the file (or set `row_count` for the table in `gx/lara_gate.yml`) once
the folder also receives product events for those tables from another source.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from lara.ingest.writer import contract

MANIFEST_NAME = "_lara_ingest.json"
MANIFEST_VERSION = 1

#: Required tables a trace export may leave empty on a day, and why.
TABLES_WITHOUT_DAILY_ROWS: dict[str, str] = {
    "actions": (
        "traces hold agent tool calls only (no user actions in the product); a day whose "
        "requests called no tool on a returned asset has no actions"
    ),
    "retrievals": (
        "only retrieval spans become retrievals; a day whose requests made no retrieval has none"
    ),
}

#: Tables the trace adapters write (the rest of the contract is not in traces).
TABLES_WRITTEN = ("prompts", "retrievals", "actions", "relevance_labels")


def manifest_path(folder: Path) -> Path:
    return Path(folder) / MANIFEST_NAME


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The ingest manifest of a raw folder, or None when it has none (or it is unreadable)."""
    path = manifest_path(folder)
    if not path.is_file():
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def record_run(folder: Path, run: dict[str, Any]) -> Path:
    """Add `run` to the folder's manifest (created on the first run)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    document = read_manifest(folder) or {}
    runs = list(document.get("runs") or [])
    runs.append({"ingested_at": dt.datetime.now(dt.UTC).isoformat(), **run})
    document = {
        "lara_ingest": MANIFEST_VERSION,
        "trace_derived": True,
        "tables_without_daily_rows": dict(TABLES_WITHOUT_DAILY_ROWS),
        "tables_not_in_traces": sorted(set(contract()) - set(TABLES_WRITTEN)),
        "runs": runs,
    }
    path = manifest_path(folder)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(document, indent=1, default=str) + "\n", encoding="utf-8")
    temporary.replace(path)
    return path


def tables_without_daily_rows(folder: Path) -> dict[str, str]:
    """Required tables the folder's ingest manifest exempts from a daily row count."""
    document = read_manifest(folder)
    if not document or not document.get("trace_derived"):
        return {}
    tables = document.get("tables_without_daily_rows") or {}
    if not isinstance(tables, dict):
        return {}
    return {str(name): str(reason) for name, reason in tables.items()}
