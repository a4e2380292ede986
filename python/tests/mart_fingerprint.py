"""Fingerprints of a built warehouse: every table of `marts` and `data_quality`.

A fingerprint says what a table holds without storing its rows, so that it can
be committed (python/tests/golden/) and compared after a refactoring that must
not change any number (test_mart_fingerprints.py):

- the columns with their types, and the row count;
- per column, the non-null count and an order-independent content hash (the
  sum of DuckDB's 64-bit `hash` of every value) for exact types, or the sum,
  minimum and maximum for floating-point columns (compared within 1e-9: a sum
  over threads may differ in its last bits from run to run);
- an order-independent hash of the rows over the exact columns, so a value
  moved from one row to another is seen as well.

Values that depend on where and when the sample was built are neutralised:
the raw folder's path in text becomes `<raw>`, and columns that record the
run or the files' times (`_lara_loaded_at`, file modification times) are left
out (VOLATILE).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb

from warehouse_diff import compared_tables

#: columns whose value records when or where the build ran, not what it computed
VOLATILE = {"_lara_loaded_at", "modified_at", "file_modified_at", "file_mtime"}
FLOAT_TYPES = {"DOUBLE", "FLOAT", "REAL"}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _exact_expression(column: str, data_type: str, raw_root: str) -> str:
    if data_type == "VARCHAR":
        return f"replace({_quote(column)}, {_literal(raw_root)}, '<raw>')"
    if data_type == "VARCHAR[]":
        return f"list_transform({_quote(column)}, x -> replace(x, {_literal(raw_root)}, '<raw>'))"
    return _quote(column)


def table_fingerprint(
    con: duckdb.DuckDBPyConnection, schema: str, table: str, raw_root: str
) -> dict:
    columns = [
        (name, data_type)
        for name, data_type in con.execute(
            "select column_name, data_type from information_schema.columns"
            " where table_schema = ? and table_name = ? order by ordinal_position",
            [schema, table],
        ).fetchall()
        if name not in VOLATILE
    ]
    exact = [(n, t) for n, t in columns if t not in FLOAT_TYPES]
    floats = [(n, t) for n, t in columns if t in FLOAT_TYPES]
    parts = ["count(*)"]
    expressions = {n: _exact_expression(n, t, raw_root) for n, t in exact}
    if exact:
        row = ", ".join(expressions[n] for n, _ in exact)
        parts.append(f"cast(sum(cast(hash({row}) as hugeint)) as varchar)")
    else:
        parts.append("null")
    for name, _ in exact:
        parts.append(f"count({_quote(name)})")
        parts.append(f"cast(sum(cast(hash({expressions[name]}) as hugeint)) as varchar)")
    for name, _ in floats:
        q = _quote(name)
        parts += [f"count({q})", f"sum({q})", f"min({q})", f"max({q})"]
    values = list(
        con.execute(f"select {', '.join(parts)} from {_quote(schema)}.{_quote(table)}").fetchone()
    )
    out: dict = {
        "columns": [[n, t] for n, t in columns],
        "rows": values.pop(0),
        "row_hash": values.pop(0),
        "exact": {},
        "floats": {},
    }
    for name, _ in exact:
        out["exact"][name] = {"non_null": values.pop(0), "hash": values.pop(0)}
    for name, _ in floats:
        non_null, total, low, high = (values.pop(0) for _ in range(4))
        out["floats"][name] = {"non_null": non_null, "sum": total, "min": low, "max": high}
    return out


def fingerprint(warehouse: Path, raw_root: Path) -> dict[str, dict]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return {
            f"{schema}.{table}": table_fingerprint(con, schema, table, str(raw_root))
            for schema, table in compared_tables(con)
        }


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if math.isnan(a) and math.isnan(b):
        return True
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def differences(expected: dict[str, dict], actual: dict[str, dict]) -> list[str]:
    """What differs, one line per table and column (empty when equal)."""
    problems: list[str] = []
    for name in sorted(set(expected) | set(actual)):
        if name not in actual or name not in expected:
            problems.append(f"{name}: {'missing' if name not in actual else 'new table'}")
            continue
        want, got = expected[name], actual[name]
        if want["columns"] != got["columns"]:
            problems.append(f"{name}: columns {want['columns']} -> {got['columns']}")
            continue
        if want["rows"] != got["rows"]:
            problems.append(f"{name}: {want['rows']} rows -> {got['rows']}")
        for column, stats in want["exact"].items():
            if stats != got["exact"][column]:
                problems.append(f"{name}.{column}: values differ")
        for column, stats in want["floats"].items():
            other = got["floats"][column]
            if stats["non_null"] != other["non_null"] or not all(
                _close(stats[k], other[k]) for k in ("sum", "min", "max")
            ):
                problems.append(f"{name}.{column}: {stats} -> {other}")
        if want["row_hash"] != got["row_hash"] and not any(
            p.startswith((f"{name}.", f"{name}:")) for p in problems
        ):
            problems.append(f"{name}: the same column values, combined into different rows")
    return problems


def write(path: Path, fingerprints: dict[str, dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fingerprints, indent=1, sort_keys=True) + "\n")


def read(path: Path) -> dict[str, dict]:
    return json.loads(path.read_text())
