"""Comparing two warehouses table by table (the incremental equality tests).

Every table of the schemas `marts` and `data_quality`, row for row, floats
within 1e-9 (sums are taken in a different order). The bookkeeping column
`_lara_loaded_at` (which run wrote a row) is left out; everything else,
`_lara_session_date` included, must be equal.
"""

from __future__ import annotations

import math
from pathlib import Path

import duckdb

BOOKKEEPING = {"_lara_loaded_at"}
SCHEMAS = ("marts", "data_quality")


def compared_tables(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(schema, table) of every table of SCHEMAS, in name order."""
    return con.execute(
        "select table_schema, table_name from information_schema.tables "
        "where table_schema in (select unnest(?)) and table_type = 'BASE TABLE' "
        "order by 1, 2",
        [list(SCHEMAS)],
    ).fetchall()


def snapshot(warehouse: Path) -> dict[str, tuple[list[str], list[tuple]]]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        tables = compared_tables(con)
        out = {}
        for schema, table in tables:
            columns = [
                c
                for (c,) in con.execute(
                    "select column_name from information_schema.columns "
                    "where table_schema = ? and table_name = ? order by ordinal_position",
                    [schema, table],
                ).fetchall()
                if c not in BOOKKEEPING
            ]
            select = ", ".join(f'"{c}"' for c in columns)
            rows = con.execute(f'select {select} from "{schema}"."{table}" order by all').fetchall()
            out[f"{schema}.{table}"] = (columns, rows)
    return out


def same_value(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return True
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def differences(left: dict, right: dict) -> list[str]:
    problems = []
    for name in sorted(set(left) | set(right)):
        if name not in left or name not in right:
            problems.append(f"{name}: only in {'full refresh' if name in right else 'incremental'}")
            continue
        (lcols, lrows), (rcols, rrows) = left[name], right[name]
        if lcols != rcols:
            problems.append(f"{name}: columns differ {lcols} vs {rcols}")
            continue
        if len(lrows) != len(rrows):
            problems.append(f"{name}: {len(lrows)} rows incremental vs {len(rrows)} full refresh")
            continue
        for lrow, rrow in zip(lrows, rrows, strict=True):
            if not all(same_value(a, b) for a, b in zip(lrow, rrow, strict=True)):
                diff = {
                    c: (a, b)
                    for c, a, b in zip(lcols, lrow, rrow, strict=True)
                    if not same_value(a, b)
                }
                problems.append(f"{name}: first differing row {diff}")
                break
    return problems
