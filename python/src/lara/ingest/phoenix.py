"""A Phoenix spans dataframe read into a `Batch`: a Parquet file (an Arrow table, flattened
from its arrays) or span rows held as JSON documents. See lara.ingest.spans for the layout.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from lara.ingest.span_core import (
    ATTRIBUTE_COLUMNS,
    EVENT_COLUMNS,
    SPAN_COLUMNS,
    Batch,
    KeyFilter,
    empty_frame,
    fetch_frame,
    flatten_json,
    keep_one_value_per_key,
    new_attributes_table,
    normalize_ids,
    utc_microseconds,
)

_CONTEXT = {
    "trace_id": ("context.trace_id", "trace_id"),
    "span_id": ("context.span_id", "span_id"),
    "parent_id": ("parent_id", "parent_span_id"),
    "name": ("name",),
    "span_kind": ("span_kind",),
    "start_time": ("start_time",),
    "events": ("events",),
}


def _column(table: pa.Table, names: Sequence[str]) -> pa.ChunkedArray | None:
    for name in names:
        if name in table.column_names:
            return table.column(name)
    return None


def _is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _scalar_vtype(kind: pa.DataType) -> str | None:
    """The vtype of an Arrow scalar column, None for nested ones (lists, structs, maps)."""
    if _is_text(kind) or pa.types.is_temporal(kind) or pa.types.is_dictionary(kind):
        return "string"
    if pa.types.is_boolean(kind):
        return "bool"
    if pa.types.is_integer(kind):
        return "int"
    if pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        return "float"
    return None


def _json_texts(con: duckdb.DuckDBPyConnection, column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A nested Arrow column as JSON text per row (DuckDB's to_json); text stays text."""
    if _is_text(column.type):
        whole = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        return whole.cast(pa.string())
    return _duckdb_texts(con, column, "to_json(c)")


def _is_scalar_leaf(kind: pa.DataType) -> bool:
    """Arrow types flattened natively as a leaf (their text as the JSON path gives it)."""
    return (
        _is_text(kind)
        or pa.types.is_boolean(kind)
        or pa.types.is_integer(kind)
        or pa.types.is_floating(kind)
    )


def _is_native_nested(kind: pa.DataType) -> bool:
    """Whether a nested Arrow type is flattened natively (structs with plainly named fields
    and lists, down to text, boolean, integer and floating leaves); other types (maps,
    timestamps or binary inside, fields named with quotes) take the JSON path."""
    if pa.types.is_struct(kind):
        return kind.num_fields > 0 and all(
            field.name
            and not any(c in field.name for c in '"\\[]')
            and (_is_scalar_leaf(field.type) or _is_native_nested(field.type))
            for field in kind
        )
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        value = kind.value_type
        return pa.types.is_null(value) or _is_scalar_leaf(value) or _is_native_nested(value)
    return False


def _leaf_texts(con: duckdb.DuckDBPyConnection, values: pa.Array) -> tuple[pa.Array, str]:
    """Valid scalar leaves as text and their vtype, as `flatten_json` gives them (floating
    numbers through DuckDB's JSON, as the JSON path renders them)."""
    kind = values.type
    if pa.types.is_boolean(kind):
        return pa.compute.if_else(values, "true", "false"), "bool"
    if pa.types.is_integer(kind):
        return values.cast(pa.string()), "int"
    if pa.types.is_floating(kind):
        return _duckdb_texts(con, values.cast(pa.float64()), "(to_json(c)::json ->> '$')"), "float"
    return values.cast(pa.string()), "string"


def _duckdb_texts(
    con: duckdb.DuckDBPyConnection, values: pa.Array | pa.ChunkedArray, expression: str
) -> pa.Array:
    """`expression` of column `c` over `values`, as text, in order."""
    con.register("texts_in", pa.table({"c": values}))
    try:
        texts = con.sql(f"select ({expression})::varchar as j from texts_in").to_arrow_table()
        return texts["j"].combine_chunks()
    finally:
        con.unregister("texts_in")


def _repeat(text: str, n: int) -> pa.Array:
    return pa.repeat(pa.scalar(text, pa.string()), n)


def _join_keys(keys: pa.Array, name: pa.Array | str) -> pa.Array:
    return pa.compute.binary_join_element_wise(keys, name, ".")


def _flatten_arrow(
    con: duckdb.DuckDBPyConnection,
    values: pa.Array,
    rows: np.ndarray,
    keys: pa.Array,
    out: list[tuple[np.ndarray, pa.Array, pa.Array, str]],
) -> None:
    """`values` (a native nested or scalar Arrow array; element i belongs to span row
    `rows[i]` under the dotted key `keys[i]`) flattened into `out` as (rows, keys, texts,
    vtype): the rule of `flatten_json` (objects and lists of objects or lists flatten to
    `a.b` / `a.0.b`; a list of scalars, or a list with no object or list in it, stays one
    JSON value; nulls are left out), without writing the values as JSON first."""
    kind = values.type
    if pa.types.is_struct(kind):
        # StructArray.flatten() gives each field the struct's nulls too
        for field, child in zip(kind, values.flatten(), strict=True):
            _flatten_arrow(con, child, rows, _join_keys(keys, field.name), out)
        return
    valid = values.is_valid().to_numpy(zero_copy_only=False)
    if _is_scalar_leaf(kind):
        kept = values.filter(valid)
        texts, vtype = _leaf_texts(con, kept)
        out.append((rows[valid], keys.filter(valid), texts, vtype))
        return
    # a list: elements are objects or lists (nested) when its value type is
    lengths = pa.compute.list_value_length(values).fill_null(0).to_numpy(zero_copy_only=False)
    elements = values.flatten()
    nested_type = not (pa.types.is_null(kind.value_type) or _is_scalar_leaf(kind.value_type))
    if nested_type:
        owner = np.repeat(np.arange(len(values)), lengths)
        element_valid = elements.is_valid().to_numpy(zero_copy_only=False)
        has_nested = np.bincount(owner[element_valid], minlength=len(values)) > 0
    else:
        has_nested = np.zeros(len(values), dtype=bool)
    whole = valid & ~has_nested
    if whole.any():
        texts = _json_texts(con, values.filter(whole))
        out.append((rows[whole], keys.filter(whole), texts, "list"))
    if has_nested.any():
        starts = np.cumsum(lengths) - lengths
        position = np.arange(len(elements)) - np.repeat(starts, lengths)
        take = element_valid
        item_keys = _join_keys(
            keys.take(pa.array(owner[take])), pa.array(position[take].astype(str), pa.string())
        )
        _flatten_arrow(con, elements.filter(take), rows[owner[take]], item_keys, out)


def _unread_columns(columns: Sequence[str], keep: KeyFilter | None) -> list[str]:
    """The `attributes.<name>` columns none of whose keys `keep` keeps."""
    prefix = "attributes."
    return [
        n
        for n in columns
        if keep is not None and n.startswith(prefix) and not keep.keeps(n[len(prefix) :])
    ]


def _attribute_names(columns: Sequence[str]) -> tuple[str, ...]:
    """`attributes.<name>` columns as attribute names."""
    return tuple(n[len("attributes.") :] for n in columns)


def _attributes_table(con: duckdb.DuckDBPyConnection, table: pa.Table) -> str:
    """The attributes of a Phoenix table in long form, as a DuckDB temp table (`row`, `key`,
    `value`, `vtype`).

    The nested `attributes` column (an object or a JSON string) gives way to the
    `attributes.<name>` columns for the same key; among those, for one key (a struct
    column `attributes.a` and a column `attributes.a.b`), a nested column wins over a
    scalar one, then a later column over an earlier one. Scalar and nested columns of
    plain types are flattened from their Arrow arrays; others (JSON text, maps) by
    `flatten_json`.
    """
    names = [n for n in table.column_names if n == "attributes" or n.startswith("attributes.")]
    n_rows, n_columns = table.num_rows, len(names)
    rows = np.arange(n_rows, dtype="int64")
    parts: list[pa.Table] = []
    as_json: list[pd.DataFrame] = []
    for index, name in enumerate(names):
        column = table.column(name)
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        values = column.combine_chunks()
        prefix = name[len("attributes.") :] if name != "attributes" else ""
        scalar = name != "attributes" and _scalar_vtype(values.type) is not None
        # the highest priority wins one (row, key): see the docstring
        priority = (
            (0 if name == "attributes" else 2 * n_columns) + (0 if scalar else n_columns) + index
        )
        if scalar:
            # rendered as the nested leaves are: a float column's 1.0 reads "1.0", not "1"
            text, _ = _leaf_texts(con, values)
            valid = text.is_valid().to_numpy(zero_copy_only=False)
            leaves = [
                (
                    rows[valid],
                    _repeat(prefix, int(valid.sum())),
                    text.filter(valid),
                    _scalar_vtype(values.type),
                )
            ]
        elif _is_native_nested(values.type) and (prefix or pa.types.is_struct(values.type)):
            leaves = []
            _flatten_arrow(con, values, rows, _repeat(prefix, n_rows), leaves)
        else:
            as_json.append(
                pd.DataFrame(
                    {
                        "row": rows,
                        "priority": priority,
                        "prefix": prefix,
                        "j": pd.Series(_json_texts(con, column).to_pylist(), dtype=object),
                    }
                )
            )
            continue
        parts.extend(
            pa.table(
                {
                    "row": pa.array(leaf_rows, pa.int64()),
                    "key": pa.compute.utf8_ltrim(leaf_keys, characters="."),
                    "value": texts.cast(pa.string()),
                    "vtype": _repeat(vtype, len(leaf_rows)),
                    "priority": pa.array(np.full(len(leaf_rows), priority, dtype="int64")),
                }
            )
            for leaf_rows, leaf_keys, texts, vtype in leaves
        )
    if as_json:
        values = pd.concat(as_json, ignore_index=True)
        flat = flatten_json(con, values[values["j"].notna()])
        parts.append(
            pa.Table.from_pandas(
                flat[["row", "key", "value", "vtype", "priority"]],
                schema=_LONG_SCHEMA,
                preserve_index=False,
            )
        )
    name = new_attributes_table()
    long = pa.concat_tables(parts) if parts else _LONG_SCHEMA.empty_table()
    con.register("phoenix_attrs_in", long.filter(pa.compute.not_equal(long["key"], "")))
    try:
        con.execute(f"create temp table {name} as select * from phoenix_attrs_in")
    finally:
        con.unregister("phoenix_attrs_in")
    keep_one_value_per_key(con, name)
    return name


_LONG_SCHEMA = pa.schema(
    [
        ("row", pa.int64()),
        ("key", pa.string()),
        ("value", pa.string()),
        ("vtype", pa.string()),
        ("priority", pa.int64()),
    ]
)


_FRAME_TEXT = ("trace_id", "span_id", "parent_id", "name", "span_kind")


def _text_sql(column: pa.ChunkedArray | None, name: str) -> str:
    """SQL for the text of `phoenix_in`'s column `name` (bytes as lower-case hex)."""
    if column is None:
        return "null::varchar"
    if pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
        return f"lower(hex({name}))"
    return f"{name}::varchar"


def phoenix_batch(
    con: duckdb.DuckDBPyConnection, table: pa.Table, keep: KeyFilter | None = None
) -> Batch:
    """A Phoenix spans dataframe (an Arrow table) as a batch: the span frame in one DuckDB
    query over it (ids through `lara_id`), the attributes by `_attributes_table`. The
    `attributes.<name>` columns `keep` does not keep are dropped first (an LLM span's
    messages, when the adapter does not read them); the other inputs' keys are filtered
    by lara.ingest.spans.span_set."""
    unread = _unread_columns(table.column_names, keep)
    table = table.drop_columns(unread)
    n = table.num_rows
    found = {target: _column(table, _CONTEXT[target]) for target in _FRAME_TEXT}
    inputs = {target: column for target, column in found.items() if column is not None}
    con.register("phoenix_in", pa.table({"row": pa.array(np.arange(n, dtype="int64")), **inputs}))
    try:
        select = ", ".join(
            f"lara_id({_text_sql(column, target)}) as {target}"
            if target.endswith("_id")
            else f"{_text_sql(column, target)} as {target}"
            for target, column in found.items()
        )
        frame = fetch_frame(con, f"select row, {select} from phoenix_in order by row")
    finally:
        con.unregister("phoenix_in")
    start = _column(table, _CONTEXT["start_time"])
    frame["start_time"] = (
        utc_microseconds(start.to_pandas())
        if start is not None
        else pd.Series(pd.NaT, index=frame.index, dtype="datetime64[us, UTC]")
    )
    events_column = _column(table, _CONTEXT["events"])
    events = (
        _phoenix_events(con, _json_texts(con, events_column))
        if events_column is not None
        else empty_frame(EVENT_COLUMNS)
    )
    return Batch(
        frame[SPAN_COLUMNS], _attributes_table(con, table), events, _attribute_names(unread)
    )


def phoenix_file_batch(
    con: duckdb.DuckDBPyConnection, path: Path, keep: KeyFilter | None = None
) -> Batch:
    """A Phoenix spans dataframe saved as Parquet, as a batch (`phoenix_batch`); the
    `attributes.<name>` columns `keep` does not keep are not read from the file."""
    columns = pq.read_schema(path).names
    unread = _unread_columns(columns, keep)
    table = pq.read_table(path, columns=[n for n in columns if n not in set(unread)])
    return dataclasses.replace(phoenix_batch(con, table), unread=_attribute_names(unread))


_PHOENIX_EVENTS_SQL = """
with parsed as (
    select
        row,
        case
            when json_type(j::json) = 'VARCHAR' then (j::json ->> '$')::json
            else j::json
        end as j
    from events_in
    where json_valid(j)
),
events as (
    select
        row,
        unnest(j::json[]) as e,
        generate_subscripts(j::json[], 1) - 1 as event
    from parsed
    where json_type(j) = 'ARRAY'
)
select
    row,
    event,
    e ->> 'name' as name,
    coalesce(e ->> 'timestamp', e ->> 'time') as time,
    case
        when json_type(e -> 'attributes') = 'VARCHAR' then e ->> 'attributes'
        else (e -> 'attributes')::varchar
    end as j
from events
"""


def _phoenix_events(con: duckdb.DuckDBPyConnection, texts: pa.Array) -> pd.DataFrame:
    """Phoenix's `events` column (a list of {name, timestamp, attributes}) in long form."""
    rows = pa.array(np.arange(len(texts), dtype="int64"))
    con.register("events_in", pa.table({"row": rows, "j": texts}))
    try:
        events = con.execute(_PHOENIX_EVENTS_SQL).df()
    finally:
        con.unregister("events_in")
    if events.empty:
        return empty_frame(EVENT_COLUMNS)
    events["entity"] = np.arange(len(events), dtype="int64")
    flat = flatten_json(con, pd.DataFrame({"row": events["entity"], "j": events["j"]}))
    flat = flat.rename(columns={"row": "entity"})
    out = events[["entity", "row", "event", "name", "time"]].merge(flat, on="entity", how="left")
    out["time"] = utc_microseconds(out["time"])
    return out[EVENT_COLUMNS].reset_index(drop=True)


_PHOENIX_ROWS_SQL = """
create or replace temp table phoenix_rows as
select
    doc_no as row,
    coalesce(doc ->> '$."context.trace_id"', doc ->> '$.trace_id',
             doc -> '$.context' ->> '$.trace_id') as trace_id,
    coalesce(doc ->> '$."context.span_id"', doc ->> '$.span_id',
             doc -> '$.context' ->> '$.span_id') as span_id,
    coalesce(doc ->> '$.parent_id', doc ->> '$.parent_span_id') as parent_id,
    doc ->> '$.name' as name,
    doc ->> '$.span_kind' as span_kind,
    doc ->> '$.start_time' as start_time,
    (doc -> '$.events')::varchar as events,
    doc
from docs_all
"""

# Top-level keys `attributes` / `attributes.<name>` of each row (JSON pointer, so that any
# key is addressed without quoting).
_PHOENIX_ROW_ATTRIBUTES_SQL = """
with keys as (
    select row, doc, unnest(json_keys(doc)) as key
    from phoenix_rows
)
select
    row,
    case when key = 'attributes' then 0 else 1 end as priority,
    case when key = 'attributes' then '' else substr(key, length('attributes.') + 1) end
        as prefix,
    case
        when key = 'attributes' and json_type(json_extract(doc, '/' || key)) = 'VARCHAR'
            then json_extract_string(doc, '/' || key)
        else json_extract(doc, '/' || replace(replace(key, '~', '~0'), '/', '~1'))::varchar
    end as j
from keys
where key = 'attributes' or starts_with(key, 'attributes.')
"""


def phoenix_rows_batch(con: duckdb.DuckDBPyConnection) -> Batch:
    """Phoenix span rows held as JSON documents in `docs_all` as a batch."""
    con.execute(_PHOENIX_ROWS_SQL)
    frame = con.execute(
        "select row, trace_id, span_id, parent_id, name, span_kind, start_time, events "
        "from phoenix_rows order by row"
    ).df()
    for target in ("trace_id", "span_id", "parent_id"):
        frame[target] = normalize_ids(frame[target])
    frame["start_time"] = utc_microseconds(frame["start_time"])
    values = con.execute(_PHOENIX_ROW_ATTRIBUTES_SQL).df()
    attributes = flatten_json(con, values)
    attributes = attributes.sort_values(["row", "priority"], kind="stable").drop_duplicates(
        ["row", "key"], keep="last"
    )
    events = _phoenix_events(con, pa.array(frame.pop("events").astype(object), pa.string()))
    return Batch(frame[SPAN_COLUMNS], attributes[ATTRIBUTE_COLUMNS].reset_index(drop=True), events)
