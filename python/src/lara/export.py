"""Exports of the public marts for BI tools (`lara export`).

`export_marts(warehouse, out_dir)` writes, from a built warehouse:

- `<out_dir>/<mart>/<mart>.parquet` for every public mart: every table of
  schema `marts` (the dbt models `fct_*` / `agg_*` and the tables Python
  writes there after `dbt build`, such as `bridge_statistics`), except the
  MetricFlow time spine; zstd compressed, one file per mart, same path on
  every run;
- `<out_dir>/lara_marts.duckdb`: the same tables (schema `marts`, with their
  table and column comments) in a DuckDB file of their own, so a BI tool
  never needs the full warehouse, whose staging schema holds raw user
  content (prompt texts, queries, user ids);
- `<out_dir>/_index.json`: per mart its file, row count, columns (name,
  type, description) and description, plus the export time and the
  warehouse's modification time.

Files are written under a temporary name and renamed, so a reader never sees
a half-written file. Marts that no longer exist are removed from the folder.
See docs/bi.md for how to open them.

Unpublished exports: `lara run` writes the exports of a run whose
data-quality gate failed beside the published ones (`exports/unpublished/`),
marked so that nobody mistakes them for published numbers: `_index.json` says
`"published": false` and why, every Parquet file carries the key-value
metadata `lara_published=false` (and the gate verdict), and the folder holds
`UNPUBLISHED.txt`. Published exports say `"published": true` and carry
`lara_published=true`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path
from typing import Any

import duckdb

from lara import __version__

MARTS_SCHEMA = "marts"
# Tables of schema marts that are machinery, not marts.
NOT_MARTS = ("metricflow_time_spine",)
DUCKDB_EXPORT = "lara_marts.duckdb"
INDEX_FILE = "_index.json"
UNPUBLISHED_MARKER = "UNPUBLISHED.txt"


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def public_marts(con: duckdb.DuckDBPyConnection, catalog: str | None = None) -> list[str]:
    """Names of the public marts present in schema `marts`, sorted."""
    catalog_filter = "and database_name = ?" if catalog else ""
    rows = con.execute(
        "select table_name from duckdb_tables() "
        f"where schema_name = ? {catalog_filter} order by table_name",
        [MARTS_SCHEMA, catalog] if catalog else [MARTS_SCHEMA],
    ).fetchall()
    return [name for (name,) in rows if name not in NOT_MARTS]


def _describe(con: duckdb.DuckDBPyConnection, catalog: str, mart: str) -> dict[str, Any]:
    table_comment = con.execute(
        "select comment from duckdb_tables() "
        "where database_name = ? and schema_name = ? and table_name = ?",
        [catalog, MARTS_SCHEMA, mart],
    ).fetchone()
    columns = con.execute(
        "select column_name, data_type, comment from duckdb_columns() "
        "where database_name = ? and schema_name = ? and table_name = ? order by column_index",
        [catalog, MARTS_SCHEMA, mart],
    ).fetchall()
    return {
        "description": (table_comment[0] if table_comment else None) or None,
        "columns": [
            {"name": name, "type": data_type, "description": comment or None}
            for name, data_type, comment in columns
        ],
    }


def _write_parquet(
    con: duckdb.DuckDBPyConnection,
    source: str,
    path: Path,
    metadata: dict[str, str] | None = None,
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.unlink(missing_ok=True)
    kv = ""
    if metadata:
        pairs = ", ".join(f"{_quote(k)}: {_literal(v)}" for k, v in metadata.items())
        kv = f", kv_metadata {{{pairs}}}"
    con.execute(
        f"copy (select * from {source}) to {_literal(str(partial))} "
        f"(format parquet, compression zstd{kv})"
    )
    os.replace(partial, path)


def _write_duckdb(
    con: duckdb.DuckDBPyConnection, marts: list[str], described: dict[str, dict], path: Path
) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.unlink(missing_ok=True)
    con.execute(f"attach {_literal(str(partial))} as lara_export")
    try:
        con.execute(f"create schema lara_export.{MARTS_SCHEMA}")
        for mart in marts:
            target = f"lara_export.{MARTS_SCHEMA}.{_quote(mart)}"
            con.execute(
                f"create table {target} as select * from warehouse.{MARTS_SCHEMA}.{_quote(mart)}"
            )
            info = described[mart]
            if info["description"]:
                con.execute(f"comment on table {target} is {_literal(info['description'])}")
            for column in info["columns"]:
                if column["description"]:
                    con.execute(
                        f"comment on column {target}.{_quote(column['name'])} "
                        f"is {_literal(column['description'])}"
                    )
    finally:
        con.execute("detach lara_export")
    os.replace(partial, path)


def export_marts(
    warehouse: Path,
    out_dir: Path,
    *,
    unpublished_reason: str | None = None,
    gate: dict[str, Any] | None = None,
) -> list[Path]:
    """Write the public marts of `warehouse` as Parquet (+ a marts-only DuckDB file).

    Returns the written files: one Parquet file per mart, then the DuckDB
    file, then `_index.json` (and `UNPUBLISHED.txt`). Raises
    FileNotFoundError when the warehouse does not exist and ValueError when
    it holds no public mart. `unpublished_reason`: these exports are not
    published (the gate failed), marked as such in the index, in every
    Parquet file's metadata and by a marker file; `gate`: the gate's verdict
    recorded in the index ({"verdict", "exit_code", "results"}).
    """
    warehouse = Path(warehouse)
    out_dir = Path(out_dir)
    if not warehouse.exists():
        raise FileNotFoundError(f"lara export: warehouse {warehouse} does not exist")
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    entries: list[dict[str, Any]] = []
    published = unpublished_reason is None
    metadata = {"lara_published": "true" if published else "false"}
    if gate is not None:
        metadata["lara_gate_verdict"] = str(gate.get("verdict"))
    with duckdb.connect() as con:
        con.execute(f"attach {_literal(str(warehouse))} as warehouse (read_only)")
        marts = public_marts(con, "warehouse")
        if not marts:
            raise ValueError(f"lara export: no public mart in {warehouse} (run dbt build first)")
        described = {mart: _describe(con, "warehouse", mart) for mart in marts}
        for mart in marts:
            path = out_dir / mart / f"{mart}.parquet"
            source = f"warehouse.{MARTS_SCHEMA}.{_quote(mart)}"
            _write_parquet(con, source, path, metadata)
            rows = con.execute(f"select count(*) from {source}").fetchone()[0]
            written.append(path)
            entries.append(
                {
                    "name": mart,
                    "path": f"{mart}/{mart}.parquet",
                    "rows": int(rows),
                    "bytes": path.stat().st_size,
                    **described[mart],
                }
            )
        duckdb_path = out_dir / DUCKDB_EXPORT
        _write_duckdb(con, marts, described, duckdb_path)
        written.append(duckdb_path)

    for stale in out_dir.iterdir():
        if (
            stale.is_dir()
            and stale.name not in marts
            and (stale / f"{stale.name}.parquet").exists()
        ):
            shutil.rmtree(stale)

    modified = dt.datetime.fromtimestamp(warehouse.stat().st_mtime, dt.UTC)
    index = {
        "exporter": f"lara {__version__}",
        "exported_at": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "warehouse": str(warehouse.resolve()),
        "warehouse_modified_at": modified.replace(microsecond=0).isoformat(),
        "layout": "<mart>/<mart>.parquet; every table also in " + DUCKDB_EXPORT + " (schema marts)",
        "duckdb": DUCKDB_EXPORT,
        "published": published,
        "unpublished_reason": unpublished_reason,
        "gate": gate,
        "marts": entries,
    }
    index_path = out_dir / INDEX_FILE
    partial = index_path.with_name(f".{INDEX_FILE}.partial")
    partial.write_text(json.dumps(index, indent=2) + "\n")
    os.replace(partial, index_path)
    written.append(index_path)
    marker = out_dir / UNPUBLISHED_MARKER
    if published:
        marker.unlink(missing_ok=True)
    else:
        marker.write_text(
            "NOT PUBLISHED: these exports come from a `lara run` whose data-quality gate "
            f"failed.\n{unpublished_reason}\nThe published exports are in the folder above; "
            f'see {INDEX_FILE} ("published": false).\n'
        )
        written.append(marker)
    return written


def add_export_arguments(parser: Any) -> Any:
    """Add the export's options to `parser` (the `lara export` sub-command)."""
    parser.add_argument("--out", default=None, help="target folder (default: exports/)")
    parser.set_defaults(func=export_main)
    return parser


def export_main(args: Any) -> int:
    """Export the marts of the warehouse ($LARA_DUCKDB_PATH); 0 ok, 1 failed."""
    import sys

    from lara.paths import project_dir, warehouse_path

    out = Path(args.out) if getattr(args, "out", None) else project_dir() / "exports"
    try:
        written = export_marts(warehouse_path(), out)
    except (FileNotFoundError, ValueError) as error:
        print(str(error), file=sys.stderr)
        return 1
    marts = sum(1 for path in written if path.suffix == ".parquet")
    print(f"lara export: {marts} marts written to {out} (index: {out / INDEX_FILE})")
    return 0
