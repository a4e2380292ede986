"""What every span reader of `lara ingest` shares (lara.ingest.spans reads the files).

- the DuckDB connection of a read, with the ingest macros (`lara_id` and friends);
- ids and times brought to the contract's form (`normalize_ids`, `utc_microseconds`);
- `Batch`, the spans of one input: their frame, long attribute table and events;
- JSON values flattened to the long attribute table (`flatten_json`), and one value kept
  per (span, key) (`keep_one_value_per_key`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

SPAN_COLUMNS = ["row", "trace_id", "span_id", "parent_id", "name", "span_kind", "start_time"]
ATTRIBUTE_COLUMNS = ["row", "key", "value", "vtype"]
EVENT_COLUMNS = ["row", "event", "name", "time", "key", "value", "vtype"]

# --- DuckDB: one in-process connection per read, with the macros below -------------------

_MACROS = r"""
create or replace temp macro lara_any_id(x) as (
    case
        when x is null or trim(x::varchar) = '' then null
        when regexp_full_match(trim(x::varchar), '0+') then null
        when regexp_full_match(trim(x::varchar), '[0-9a-fA-F]{16}|[0-9a-fA-F]{32}')
            then lower(trim(x::varchar))
        when length(trim(x::varchar)) in (12, 24)
            and regexp_full_match(trim(x::varchar), '[A-Za-z0-9+/]+=+')
            and octet_length(try(from_base64(trim(x::varchar)))) in (8, 16)
            then case
                when regexp_full_match(lower(hex(from_base64(trim(x::varchar)))), '0+') then null
                else lower(hex(from_base64(trim(x::varchar))))
            end
        else trim(x::varchar)
    end
);
create or replace temp macro lara_id(x) as (
    case
        -- the common case first (one regular expression): lower-case hex, not all zeros
        when regexp_full_match(x::varchar, '[0-9a-f]{16}|[0-9a-f]{32}')
            and not regexp_full_match(x::varchar, '0+')
            then x::varchar
        else lara_any_id(x)
    end
);
create or replace temp macro lara_vtype(t) as (
    case
        when t = 'VARCHAR' then 'string'
        when t in ('BIGINT', 'UBIGINT', 'HUGEINT') then 'int'
        when t = 'DOUBLE' then 'float'
        when t = 'BOOLEAN' then 'bool'
        else 'list'
    end
);
"""


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the ingest macros."""
    con = duckdb.connect()
    con.execute("set enable_progress_bar = false")
    con.execute(_MACROS)
    return con


def fetch_frame(
    con: duckdb.DuckDBPyConnection, query: str, params: Sequence[Any] | None = None
) -> pd.DataFrame:
    """The result of `query` as a DataFrame with the dtypes `.df()` gives it (text columns
    `str`, or `object` when they hold no value), through Arrow: a few times faster than
    `.df()` on many rows of text."""
    frame = con.sql(query, params=params).to_arrow_table().to_pandas()
    for column in frame.columns:
        if isinstance(frame[column].dtype, pd.StringDtype) and frame[column].isna().all():
            frame[column] = pd.Series([None] * len(frame), index=frame.index, dtype=object)
    return frame


def normalize_ids(values: pd.Series) -> pd.Series:
    """Span / trace ids as text: OTLP ids (hex, or base64 of 8 / 16 bytes) as lower-case hex;
    all-zero ids (OTLP's "no parent") and blanks as null; other ids trimmed, as given."""
    texts = pd.Series(values, dtype=object).map(
        lambda v: v.hex() if isinstance(v, bytes) else v, na_action="ignore"
    )
    texts = pa.array(texts.where(texts.notna(), None).astype(object), pa.string(), from_pandas=True)
    con = connect()
    con.register("ids_in", pa.table({"x": texts}))
    ids = con.sql("select lara_id(x) as id from ids_in").to_arrow_table().column("id")
    return pd.Series(ids.to_pylist(), index=values.index, dtype=object)


def micros_to_utc(values: pd.Series) -> pd.Series:
    """Integer microseconds since the epoch (nullable) as UTC timestamps, exactly (no float)."""
    whole = pd.Series(values, dtype="Int64")
    raw = whole.to_numpy(dtype="int64", na_value=np.iinfo(np.int64).min)  # that value is NaT
    stamps = pd.Series(raw.astype("datetime64[us]"), index=whole.index)
    return stamps.dt.tz_localize("UTC")


def utc_microseconds(values: Any) -> pd.Series:
    """Timestamps of any precision as UTC, truncated to microseconds (the contract's unit).

    Accepts datetimes (naive = UTC; any unit), ISO-8601 strings (any number of fraction
    digits, any offset), and numbers since the epoch whose unit is told by their size:
    below 1e11 seconds, below 1e14 milliseconds, below 1e17 microseconds, else nanoseconds
    (OTLP's `*UnixNano`); integers stay exact. Unparseable values become NaT.
    """
    series = values if isinstance(values, pd.Series) else pd.Series(values)
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        stamps = pd.to_datetime(series, utc=True)
        return stamps.dt.floor("us").dt.as_unit("us")
    numbers = pd.to_numeric(series, errors="coerce", dtype_backend="numpy_nullable")
    is_number = numbers.notna()
    micros = pd.Series(pd.array([pd.NA] * len(series), dtype="Int64"), index=series.index)
    if is_number.any():
        magnitude = numbers.abs()
        if pd.api.types.is_integer_dtype(numbers.dtype):
            whole = numbers.astype("Int64")
            micros = (
                whole.where(magnitude >= 1e17, 0) // 1000
                + whole.where((magnitude >= 1e14) & (magnitude < 1e17), 0)
                + whole.where((magnitude >= 1e11) & (magnitude < 1e14), 0) * 1000
                + whole.where(magnitude < 1e11, 0) * 1_000_000
            ).where(is_number)
        else:
            factor = np.select(
                [magnitude < 1e11, magnitude < 1e14, magnitude < 1e17],
                [1e6, 1e3, 1.0],
                default=1e-3,
            )
            micros = np.floor(numbers.astype("Float64") * factor).astype("Int64").where(is_number)
    from_numbers = micros_to_utc(micros)
    text = series.where(~is_number).astype(object)
    text = text.where(text.notna(), None)
    from_text = pd.to_datetime(text, utc=True, errors="coerce", format="mixed")
    stamps = pd.Series(from_numbers, index=series.index).dt.as_unit("ns")
    stamps = stamps.where(is_number, pd.Series(from_text, index=series.index).dt.as_unit("ns"))
    return stamps.dt.floor("us").dt.as_unit("us")


# --- the spans of one input ----------------------------------------------------------------


def empty_frame(columns: list[str]) -> pd.DataFrame:
    """An empty DataFrame of object columns `columns`."""
    return pd.DataFrame({column: pd.Series(dtype=object) for column in columns})


@dataclass
class Batch:
    """Spans read from one input; `attributes` a DataFrame or the name of a DuckDB table
    (`row`, `key`, `value`, `vtype`) of the reading connection."""

    frame: pd.DataFrame
    attributes: pd.DataFrame | str
    events: pd.DataFrame
    #: attribute names left out by a KeyFilter before they were read (Phoenix columns)
    unread: tuple[str, ...] = ()


@dataclass(frozen=True)
class KeyFilter:
    """The attributes an adapter reads, so that a reader keeps only those (a function that
    takes a filter keeps every attribute when given `None`).

    `names` are attribute names in the flat layout (`session.id`, `retrieval.documents`).
    A key is kept when it is one of them, lies under one (`retrieval.documents.0.document.id`
    under `retrieval.documents`: items and structured children), or one lies under it
    (`metadata` for `metadata.lara.role`: the JSON object a look-up may find the name in,
    and the struct a Phoenix column holds it in). So a key that a look-up of `names` can
    reach is kept, and every key kept comes with the keys that could outrank it.
    """

    names: tuple[str, ...]

    def keeps(self, key: str) -> bool:
        return any(
            key == name or key.startswith(name + ".") or name.startswith(key + ".")
            for name in self.names
        )


_POSITION = re.compile(r"\.\d+(?=\.|$)")


def attribute_names(keys: Iterable[str]) -> list[str]:
    """Attribute keys as names, list positions written `*` (`llm.input_messages.*.message.
    content` for every message), each once, sorted."""
    return sorted({_POSITION.sub(".*", key) for key in keys})


_batch_ids = itertools.count()


def new_attributes_table() -> str:
    """A name for a batch's long attribute table, unique in the process."""
    return f"batch_attrs_{next(_batch_ids)}"


# --- flattening JSON values (DuckDB json_tree) ------------------------------------------

# Leaves and lists of scalars of each JSON value, under a dotted key: objects, and lists
# holding an object or a list, flatten to `a.b` / `a.0.b`; a list of scalars (or an empty
# list) stays one value (vtype `list`), except at the top of a value with no prefix, where
# there is no key for it: its items come by position (`0`, `1`, ...).
_FLATTEN_SQL = r"""
with tree as (
    -- value_no tells the JSON values apart (json_tree numbers the nodes of each from 0)
    select
        s.row,
        s.priority,
        s.prefix,
        s.value_no,
        t.id,
        t.parent,
        t.type,
        t.value,
        t.fullkey
    from (select *, row_number() over () as value_no from {source}) as s, json_tree(s.j) as t
),
containers as (
    -- has_nested: the node has an object or a list among its children
    select
        value_no,
        parent as id,
        bool_or(type in ('OBJECT', 'ARRAY')) as has_nested
    from tree
    where parent is not null
    group by all
),
parents as (
    select
        tree.*,
        parent_node.type as parent_type,
        parent_node.parent is not null or coalesce(tree.prefix, '') <> '' as parent_has_key,
        coalesce(parent_box.has_nested, false) as parent_has_nested,
        coalesce(own_box.has_nested, false) as own_has_nested
    from tree
    left join tree as parent_node
        on parent_node.value_no = tree.value_no
        and parent_node.id = tree.parent
    left join containers as parent_box
        on parent_box.value_no = tree.value_no
        and parent_box.id = tree.parent
    left join containers as own_box
        on own_box.value_no = tree.value_no
        and own_box.id = tree.id
),
kept as (
    select
        row,
        priority,
        prefix,
        fullkey,
        case when type = 'ARRAY' then value::varchar else value ->> '$' end as value,
        lara_vtype(type) as vtype
    from parents
    where
        type not in ('OBJECT', 'NULL')
        -- a list kept whole: nothing nested in it, and a key to sit under (a list at the
        -- top of a value without prefix gives its items by position instead)
        and (
            type <> 'ARRAY'
            or (not own_has_nested and (parent is not null or coalesce(prefix, '') <> ''))
        )
        and not coalesce(parent_type = 'ARRAY' and not parent_has_nested and parent_has_key, false)
),
keyed as (
    select
        row,
        priority,
        ltrim(
            coalesce(prefix, '') || regexp_replace(
                regexp_replace(substr(fullkey, 2), '\[(\d+)\]', '.\1', 'g'), '"', '', 'g'
            ),
            '.'
        ) as key,
        value,
        vtype
    from kept
)
select row, key, value, vtype, priority
from keyed
where key <> ''
qualify row_number() over (partition by row, key order by priority desc) = 1
"""


def flatten_json(con: duckdb.DuckDBPyConnection, values: pd.DataFrame) -> pd.DataFrame:
    """Flatten JSON texts to (row, key, value, vtype).

    `values` has columns `row`, `j` (JSON text), optional `prefix` (the dotted key the
    value sits under) and `priority` (for one row and key, the highest priority wins).
    """
    if values.empty:
        return empty_frame(ATTRIBUTE_COLUMNS)
    table = pa.table(
        {
            "row": pa.array(values["row"].to_numpy(dtype="int64")),
            "priority": pa.array(
                values["priority"].to_numpy(dtype="int64")
                if "priority" in values
                else np.zeros(len(values), dtype="int64")
            ),
            "prefix": pa.array(
                values["prefix"].astype(object).where(values["prefix"].notna(), None)
                if "prefix" in values
                else [None] * len(values),
                pa.string(),
            ),
            "j": pa.array(values["j"].astype(object).where(values["j"].notna(), None), pa.string()),
        }
    )
    con.register("json_in", table)
    try:
        return con.execute(flatten_json_sql("select row, priority, prefix, j from json_in")).df()
    finally:
        con.unregister("json_in")


def flatten_json_sql(values: str) -> str:
    """The query of `flatten_json` over the query `values` (`row`, `priority`, `prefix`,
    `j`: JSON text; invalid JSON left out): (row, key, value, vtype, priority)."""
    source = f"(select row, priority, prefix, j::json as j from ({values}) where json_valid(j))"
    return _FLATTEN_SQL.format(source=source)


# --- one value per (span, key) ------------------------------------------------------------

_ONE_VALUE_PER_KEY = "qualify row_number() over (partition by row, key order by priority desc) = 1"

# Whether some (row, key) of a long attribute table may repeat: compares hashes of the keys
# (a collision only sends the table through the window below, which is exact).
_MAY_REPEAT_KEYS_SQL = """
select count(*) > (select count(*) from (select distinct row, hash(key) from {table}))
from {table}
"""


def _one_value_per_key(con: duckdb.DuckDBPyConnection, table: str) -> str:
    """The clause keeping one value per (row, key) of `table` (the highest priority); none
    when no key repeats."""
    may_repeat = con.execute(_MAY_REPEAT_KEYS_SQL.format(table=table)).fetchone()[0]
    return _ONE_VALUE_PER_KEY if may_repeat else ""


def keep_one_value_per_key(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """`table` (row, key, value, vtype, priority) left with one value per (row, key), the
    highest priority's, and without its priority column."""
    one_value = _one_value_per_key(con, table)
    if one_value:
        con.execute(
            f"create or replace temp table {table} as "
            f"select row, key, value, vtype from {table} {one_value}"
        )
    else:
        con.execute(f"alter table {table} drop column priority")
