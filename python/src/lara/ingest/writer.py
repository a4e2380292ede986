"""Writing contract tables: typed by the contract, day-partitioned, checked before writing.

Layout: `<root>/<table>/dt=YYYY-MM-DD/<file>` with the day of the partition
column in UTC. Parquet columns are typed from the contract's `lara_type`
(timestamps UTC-aware microseconds, lists `list<string>`, integers int64);
JSON Lines carry ISO-8601 UTC strings. A frame that breaks the contract (a
required value missing, an empty id, an enum or range violation, a blank list
item) is a bug of the adapter that built it: it is refused, nothing is written.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from lara.contract import Column, Table, load_contract

ARROW_TYPES: dict[str, pa.DataType] = {
    "id": pa.string(),
    "string": pa.string(),
    "enum": pa.string(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "boolean": pa.bool_(),
    "integer": pa.int64(),
    "float": pa.float64(),
    "string_list": pa.list_(pa.string()),
}


@functools.cache
def contract() -> dict[str, Table]:
    """The log contract, parsed once per process (the sources file is large YAML)."""
    return load_contract()


class ContractViolation(ValueError):
    """A frame does not satisfy the log contract."""


def table_spec(table: str | Table) -> Table:
    if isinstance(table, Table):
        return table
    tables = contract()
    if table not in tables:
        raise KeyError(f"lara: {table!r} is not a contract table")
    return tables[table]


def arrow_schema(spec: Table) -> pa.Schema:
    return pa.schema([pa.field(c.name, ARROW_TYPES[c.lara_type]) for c in spec.columns])


def _missing(series: pd.Series) -> pd.Series:
    return series.isna()


def _list_problem(value: Any) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    if not isinstance(value, list | tuple | np.ndarray):
        return True
    return any(item is None or not isinstance(item, str) or not item.strip() for item in value)


def contract_problems(frame: pd.DataFrame, table: str | Table) -> list[str]:
    """Every way `frame` breaks the contract of `table` (empty = fine)."""
    spec = table_spec(table)
    problems: list[str] = []
    for column in spec.columns:
        if column.name not in frame.columns:
            if column.required:
                problems.append(f"{spec.name}.{column.name}: required column missing")
            continue
        values = frame[column.name]
        missing = _missing(values)
        if column.required and missing.any():
            problems.append(f"{spec.name}.{column.name}: {int(missing.sum())} null value(s)")
        present = values[~missing]
        problems += _column_problems(spec.name, column, present)
    return problems


def _column_problems(table: str, column: Column, present: pd.Series) -> list[str]:
    name = f"{table}.{column.name}"
    if present.empty:
        return []
    kind = column.lara_type
    if kind == "id":
        blank = present.astype(str).str.strip().eq("")
        if blank.any():
            return [f"{name}: {int(blank.sum())} empty id(s)"]
    elif kind == "enum":
        bad = ~present.isin(column.values)
        if bad.any():
            return [f"{name}: values outside {list(column.values)}: {sorted(set(present[bad]))}"]
    elif kind in ("integer", "float"):
        numbers = pd.to_numeric(present, errors="coerce")
        if numbers.isna().any():
            return [f"{name}: non-numeric values"]
        if kind == "integer" and (numbers != numbers.round()).any():
            return [f"{name}: non-integer values"]
        if column.min is not None and (numbers < column.min).any():
            return [f"{name}: values below {column.min}"]
        if column.max is not None and (numbers > column.max).any():
            return [f"{name}: values above {column.max}"]
    elif kind == "string_list":
        bad = present.map(_list_problem)
        if bad.any():
            return [f"{name}: {int(bad.sum())} list(s) with a null or blank item, or not lists"]
    elif kind == "timestamp":
        stamps = pd.to_datetime(present, utc=True, errors="coerce")
        if stamps.isna().any():
            return [f"{name}: unparseable timestamps"]
    return []


def _typed(frame: pd.DataFrame, spec: Table) -> pd.DataFrame:
    out = pd.DataFrame(index=frame.index)
    for column in spec.columns:
        values = (
            frame[column.name]
            if column.name in frame.columns
            else pd.Series([None] * len(frame), index=frame.index, dtype=object)
        )
        if column.lara_type == "timestamp":
            # The contract's unit is the microsecond: finer times are truncated, never refused.
            values = pd.to_datetime(values, utc=True).dt.floor("us").dt.as_unit("us")
        elif column.lara_type == "string_list":
            values = values.map(
                lambda v: (
                    None if not isinstance(v, list | tuple | np.ndarray) else [str(i) for i in v]
                )
            )
        elif column.lara_type == "integer":
            values = pd.to_numeric(values).astype("Int64")
        elif column.lara_type == "float":
            values = pd.to_numeric(values).astype("Float64")
        elif column.lara_type == "boolean":
            values = values.astype("boolean")
        else:
            values = values.astype(object).where(values.notna(), None)
        out[column.name] = values
    return out


def _partition_days(frame: pd.DataFrame, partition_column: str) -> pd.Series:
    return pd.to_datetime(frame[partition_column], utc=True).dt.strftime("%Y-%m-%d")


def _target(root: Path, spec: Table, day: str, file_name: str, overwrite: bool) -> Path:
    path = Path(root) / spec.name / f"dt={day}" / file_name
    if path.exists() and not overwrite:
        raise FileExistsError(
            f"lara: {path} exists (pass overwrite, or another part name, to write beside it)"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def write_parquet_partitions(
    frame: pd.DataFrame,
    table: str | Table,
    root: Path,
    partition_column: str,
    part_name: str = "part-0",
    overwrite: bool = False,
) -> dict[str, int]:
    """Write `frame` as `<root>/<table>/dt=<day>/<part_name>.parquet`; rows per day."""
    spec = table_spec(table)
    problems = contract_problems(frame, spec)
    if problems:
        raise ContractViolation("lara: refusing to write: " + "; ".join(problems))
    if frame.empty:
        return {}
    typed = _typed(frame, spec)
    days = _partition_days(frame, partition_column)
    schema = arrow_schema(spec)
    written: dict[str, int] = {}
    targets = {
        day: _target(root, spec, day, f"{part_name}.parquet", overwrite) for day in days.unique()
    }
    for day, rows in typed.groupby(days, sort=True):
        table_out = pa.Table.from_pandas(rows.reset_index(drop=True), schema=schema)
        pq.write_table(table_out, targets[day])
        written[str(day)] = len(rows)
    return written


def _json_value(value: Any, column: Column) -> Any:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if column.lara_type == "timestamp":
        stamp = pd.Timestamp(value)
        stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
        return stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if column.lara_type == "string_list":
        return [str(item) for item in value]
    if column.lara_type == "integer":
        return int(value)
    if column.lara_type == "float":
        return float(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def write_jsonl_partitions(
    frame: pd.DataFrame,
    table: str | Table,
    root: Path,
    partition_column: str,
    file_name: str,
    overwrite: bool = False,
) -> dict[str, int]:
    """Write `frame` as `<root>/<table>/dt=<day>/<file_name>` (JSON Lines); rows per day."""
    spec = table_spec(table)
    problems = contract_problems(frame, spec)
    if problems:
        raise ContractViolation("lara: refusing to write: " + "; ".join(problems))
    if frame.empty:
        return {}
    days = _partition_days(frame, partition_column)
    columns = [c for c in spec.columns if c.name in frame.columns]
    targets = {day: _target(root, spec, day, file_name, overwrite) for day in days.unique()}
    written: dict[str, int] = {}
    for day, rows in frame.groupby(days, sort=True):
        lines = [
            json.dumps({c.name: _json_value(record[c.name], c) for c in columns})
            for record in rows.to_dict("records")
        ]
        targets[day].write_text("\n".join(lines) + "\n", encoding="utf-8")
        written[str(day)] = len(rows)
    return written


def summarize(written: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    """Rows written per table."""
    return {table: sum(days.values()) for table, days in written.items()}


def write_empty_parquet(
    table: str | Table, root: Path, day: str, part_name: str = "part-0", overwrite: bool = False
) -> Path:
    """A typed Parquet file with no rows, so that a required table exists for the build."""
    spec = table_spec(table)
    path = _target(root, spec, day, f"{part_name}.parquet", overwrite)
    pq.write_table(arrow_schema(spec).empty_table(), path)
    return path
