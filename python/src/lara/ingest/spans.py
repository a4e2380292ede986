"""Reading span exports into one canonical, columnar span table.

Accepted inputs (a file, or a folder read recursively; hidden and `_`-prefixed
files are skipped):

- a Phoenix spans dataframe (`px.Client().get_spans_dataframe()` /
  `client.spans.get_spans_dataframe()`) saved as Parquet (`*.parquet`) or JSON
  Lines (`*.jsonl`, `*.jsonl.gz`, one span a line): columns `context.span_id`,
  `context.trace_id`, `parent_id`, `name`, `span_kind`, `start_time`,
  `end_time`, `events` and the attributes either in `attributes.<name>`
  columns (Phoenix's layout: semantic-convention names kept whole, e.g.
  `attributes.retrieval.documents` holding a list of `{"document.id": ...}`,
  other names nested, e.g. `attributes.lara` holding `{"retrieval": {"role":
  ...}}`) or nested in one `attributes` column (an object or a JSON string);
  `span_id` / `trace_id` are accepted for the context columns;
- OTLP JSON (`*.json`: one `ExportTraceServiceRequest` / `TracesData`, or a
  list of them; `*.jsonl` / `*.jsonl.gz`: one request a line, the
  OpenTelemetry Collector file exporter's layout), camelCase or snake_case
  field names, ids in hex (the OTLP JSON rule) or base64 (protobuf's generic
  JSON mapping);
- OTLP protobuf (`*.pb`, `*.pb.gz`: one serialized `ExportTraceServiceRequest`
  or `TracesData`, the OTLP/HTTP body; needs `opentelemetry-proto`).

The result is columnar (`SpanSet`):

- `frame`: one row per span, `row` (0..n-1), `trace_id`, `span_id`,
  `parent_id` (lower-case hex where the input was an OTLP id), `name`,
  `span_kind` (Phoenix's column, else null), `start_time` (UTC, truncated to
  microseconds, the contract's precision);
- `attributes`: one row per (span, attribute) in the OpenTelemetry flat
  layout: nested objects and lists of objects flattened to dotted keys with
  list indices (`retrieval.documents.0.document.id`); a list of scalars stays
  one value (JSON text); columns `row`, `key`, `value` (text), `vtype`
  (`string`, `int`, `float`, `bool`, `list`);
- `events`: one row per (span, event, event attribute): `row`, `event`,
  `name`, `time`, `key`, `value`, `vtype`.

Everything is done over whole columns: JSON is parsed and unnested by DuckDB
(`from_json`, `unnest`, `json_tree`), Parquet read by Arrow; no Python loop
runs per span. (OTLP values of the structured kinds `kvlistValue` and arrays
holding them, which OpenInference never writes, are converted per value.)
"""

from __future__ import annotations

import gzip
import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

SPAN_COLUMNS = ["row", "trace_id", "span_id", "parent_id", "name", "span_kind", "start_time"]
ATTRIBUTE_COLUMNS = ["row", "key", "value", "vtype"]
EVENT_COLUMNS = ["row", "event", "name", "time", "key", "value", "vtype"]
SUPPORTED_SUFFIXES = (
    ".parquet",
    ".json",
    ".jsonl",
    ".jsonl.gz",
    ".ndjson",
    ".json.gz",
    ".pb",
    ".pb.gz",
)
MAX_JSON_OBJECT_BYTES = 2_000_000_000

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


# --- the columnar span set ---------------------------------------------------------------


@dataclass
class SpanSet:
    """The canonical span table (see the module doc) and what reading it found.

    The attributes stay in DuckDB (table `attrs` of `con`, the long form), where the
    adapters query them; `attributes` reads them out as a DataFrame.
    """

    con: duckdb.DuckDBPyConnection
    frame: pd.DataFrame
    events: pd.DataFrame
    files: list[str] = field(default_factory=list)
    formats: dict[str, int] = field(default_factory=dict)
    dropped_duplicates: int = 0
    dropped_without_id: int = 0
    attributes_table: str = "attrs"

    @property
    def attributes(self) -> pd.DataFrame:
        return self.con.execute(
            f"select row, key, value, vtype from {self.attributes_table} order by row, key"
        ).df()


def _empty(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({column: pd.Series(dtype=object) for column in columns})


@dataclass
class _Batch:
    """Spans read from one input; `attributes` a DataFrame or the name of a DuckDB table
    (`row`, `key`, `value`, `vtype`) of the reading connection."""

    frame: pd.DataFrame
    attributes: pd.DataFrame | str
    events: pd.DataFrame


_batch_ids = itertools.count()


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
        return _empty(ATTRIBUTE_COLUMNS)
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


# --- OTLP JSON (and protobuf, via its JSON mapping) --------------------------------------

_CAMEL_TO_SNAKE = {
    "resourceSpans": "resource_spans",
    "scopeSpans": "scope_spans",
    "traceId": "trace_id",
    "spanId": "span_id",
    "parentSpanId": "parent_span_id",
    "startTimeUnixNano": "start_time_unix_nano",
    "timeUnixNano": "time_unix_nano",
    "stringValue": "string_value",
    "intValue": "int_value",
    "doubleValue": "double_value",
    "boolValue": "bool_value",
    "bytesValue": "bytes_value",
    "arrayValue": "array_value",
    "kvlistValue": "kvlist_value",
}


class _Names:
    """OTLP JSON field names in one spelling: camelCase (the OTLP JSON encoding, protobuf's
    json_format) or snake_case (protobuf's field names, `preserving_proto_field_name`)."""

    def __init__(self, camel: bool) -> None:
        self.camel = camel

    def __getattr__(self, name: str) -> str:
        return name if self.camel else _CAMEL_TO_SNAKE[name]

    def structure(self) -> str:
        """The `from_json` structure of an ExportTraceServiceRequest."""
        n = self
        any_value = (
            f'{{"{n.stringValue}":"VARCHAR","{n.intValue}":"VARCHAR",'
            f'"{n.doubleValue}":"VARCHAR","{n.boolValue}":"BOOLEAN","{n.bytesValue}":"VARCHAR",'
            f'"{n.arrayValue}":"JSON","{n.kvlistValue}":"JSON"}}'
        )
        kvs = '[{"key":"VARCHAR","value":' + any_value + "}]"
        event = f'{{"{n.timeUnixNano}":"VARCHAR","name":"VARCHAR","attributes":{kvs}}}'
        span = (
            f'{{"{n.traceId}":"VARCHAR","{n.spanId}":"VARCHAR","{n.parentSpanId}":"VARCHAR",'
            f'"name":"VARCHAR","{n.startTimeUnixNano}":"VARCHAR","attributes":{kvs},'
            f'"events":[{event}]}}'
        )
        scope = '{"spans":[' + span + "]}"
        # `instrumentationLibrarySpans`: OTLP before 0.15 (camelCase JSON only).
        legacy = ',"instrumentationLibrarySpans":[' + scope + "]" if self.camel else ""
        resource = (
            '{"resource":{"attributes":'
            + kvs
            + f'}},"{n.scopeSpans}":['
            + scope
            + "]"
            + legacy
            + "}"
        )
        return f'{{"{n.resourceSpans}":[' + resource + "]}"

    def scopes(self, alias: str) -> str:
        if self.camel:
            return f"coalesce({alias}.scopeSpans, {alias}.instrumentationLibrarySpans)"
        return f"{alias}.scope_spans"


def _otlp_scopes_sql(n: _Names, documents: str) -> str:
    """A query of the scopes of OTLP requests in one spelling.

    `documents` is a query of (`doc_no`, `doc`: the request's JSON text). Each request is
    parsed once into the OTLP structure; the query returns one row per (request, resource,
    scope): `doc_no`, `rs_no`, `ss_no`, `missing` (the request has no `resourceSpans`),
    `n_spans`, `resource_attributes`, `spans` (the scope's list, not unnested) and
    `first_row` (0: set by `_number_scopes`). A request without `resourceSpans` and a
    resource without scopes give one row without spans, so that `missing` is seen.
    """
    scopes = n.scopes("rs")
    return f"""
with requests as (
    select doc_no, from_json(doc, '{n.structure()}') as r
    from ({documents})
),
resources as (
    select
        doc_no,
        r.{n.resourceSpans} is null as missing,
        unnest(coalesce(r.{n.resourceSpans}, [null])) as rs,
        generate_subscripts(coalesce(r.{n.resourceSpans}, [null]), 1) as rs_no
    from requests
),
scopes as (
    select
        doc_no,
        rs_no,
        missing,
        rs.resource.attributes as resource_attributes,
        unnest(coalesce({scopes}, [null])) as ss,
        generate_subscripts(coalesce({scopes}, [null]), 1) as ss_no
    from resources
)
select
    doc_no,
    rs_no,
    ss_no,
    missing,
    coalesce(len(ss.spans), 0)::bigint as n_spans,
    resource_attributes,
    ss.spans as spans,
    0::bigint as first_row
from scopes
"""


def _number_scopes(con: duckdb.DuckDBPyConnection, tables: Sequence[str]) -> None:
    """Set `first_row` of the scope tables `tables` (see `_otlp_scopes_sql`): the row of
    each scope's first span when the spans of all of them are numbered 0..n-1 in reading
    order (request, resource, scope, span)."""
    counts = " union all ".join(f"select doc_no, rs_no, ss_no, n_spans from {t}" for t in tables)
    con.execute(
        "create or replace temp table otlp_scope_rows as "
        "select doc_no, rs_no, ss_no, "
        "(sum(n_spans) over (order by doc_no, rs_no, ss_no rows unbounded preceding) - n_spans)"
        "::bigint as first_row "
        f"from ({counts})"
    )
    for table in tables:
        con.execute(
            f"update {table} as t set first_row = o.first_row from otlp_scope_rows as o "
            "where o.doc_no = t.doc_no and o.rs_no = t.rs_no and o.ss_no = t.ss_no"
        )
    con.execute("drop table otlp_scope_rows")


def _scope_spans_sql(table: str) -> str:
    """(`row`, `s`): the spans of the scope table `table`, `s` the OTLP span struct."""
    return f"""
    select first_row + span_no - 1 as row, s
    from (
        select first_row, unnest(spans) as s, generate_subscripts(spans, 1) as span_no
        from {table}
    )
"""


def _otlp_frame_sql(n: _Names, table: str) -> str:
    """The span rows of the scope table `table`: SPAN_COLUMNS (`start_us` for `start_time`)
    and `n_events`."""
    return f"""
select
    row,
    lara_id(s.{n.traceId}) as trace_id,
    lara_id(s.{n.spanId}) as span_id,
    lara_id(s.{n.parentSpanId}) as parent_id,
    s.name as name,
    null::varchar as span_kind,
    (try_cast(s.{n.startTimeUnixNano} as hugeint) // 1000)::bigint as start_us,
    coalesce(len(s.events), 0) as n_events
from ({_scope_spans_sql(table)})
"""


def _otlp_attributes_sql(n: _Names, table: str) -> str:
    """The attributes (`row`, `key`, `value`, `vtype`, `priority`) of the spans of the scope
    table `table`: the resource's (priority 0, repeated on each span of the scope) and the
    span's own (priority 1). Values of unknown kinds are left out."""
    return f"""
with
span_attributes as (
    select row, unnest(s.attributes) as a from ({_scope_spans_sql(table)})
),
span_values as (
    select row, a.key as key, {_value_columns(n, "a")}, 1 as priority
    from span_attributes
),
resource_attributes as (
    select first_row, n_spans, unnest(resource_attributes) as a
    from {table}
    where n_spans > 0
),
resource_values as (
    select first_row, n_spans, a.key as key, {_value_columns(n, "a")}, 0 as priority
    from resource_attributes
),
resource_rows as (
    select unnest(range(first_row, first_row + n_spans)) as row, key, value, vtype, priority
    from resource_values
)
select row, key, value, vtype, priority
from (
    select * from resource_rows
    union all
    select row, key, value, vtype, priority from span_values
)
where key is not null and vtype is not null
"""


def _otlp_events_sql(n: _Names, table: str) -> str:
    """The events of the spans of the scope table `table`, one row per (span, event, event
    attribute): EVENT_COLUMNS, `time` in microseconds; structured values left out."""
    return f"""
with
events as (
    select row, unnest(s.events) as e, generate_subscripts(s.events, 1) - 1 as event
    from ({_scope_spans_sql(table)})
),
event_attributes as (
    select
        row,
        event,
        e.name as name,
        (try_cast(e.{n.timeUnixNano} as hugeint) // 1000)::bigint as time,
        unnest(e.attributes) as a
    from events
),
event_values as (
    select row, event, name, time, a.key as key, {_value_columns(n, "a")}
    from event_attributes
)
select row, event, name, time, key, value, vtype
from event_values
where vtype is distinct from 'structured'
"""


def _value_columns(n: _Names, a: str) -> str:
    """SQL columns `vtype`, `value` of the OTLP AnyValue `{a}.value`: scalars as text,
    arrays of scalars as a JSON list; kvlists and arrays holding objects or arrays are
    `structured` (their OTLP JSON, converted per value afterwards)."""
    v = f"{a}.value"
    array = f"{v}.{n.arrayValue}"
    nested = (
        f"(contains({array}::varchar, '\"{n.kvlistValue}\"') "
        f"or contains({array}::varchar, '\"{n.arrayValue}\"'))"
    )
    item = " , ".join(
        f"json_extract(x, '$.{name}')"
        for name in (n.stringValue, n.intValue, n.doubleValue, n.boolValue)
    )
    return f"""case
            when {v}.{n.stringValue} is not null then 'string'
            when {v}.{n.intValue} is not null then 'int'
            when {v}.{n.doubleValue} is not null then 'float'
            when {v}.{n.boolValue} is not null then 'bool'
            when {v}.{n.bytesValue} is not null then 'string'
            when {array} is not null and not {nested} then 'list'
            when {array} is not null or {v}.{n.kvlistValue} is not null then 'structured'
        end as vtype,
        case
            when {v}.{n.stringValue} is not null then {v}.{n.stringValue}
            when {v}.{n.intValue} is not null then {v}.{n.intValue}
            when {v}.{n.doubleValue} is not null then {v}.{n.doubleValue}
            when {v}.{n.boolValue} is not null
                then case when {v}.{n.boolValue} then 'true' else 'false' end
            when {v}.{n.bytesValue} is not null then {v}.{n.bytesValue}
            when {array} is not null and not {nested} then to_json(list_transform(
                coalesce(json_extract({array}, '$.values[*]'), []),
                lambda x: coalesce({item})
            ))::varchar
            when {array} is not null then json_object('{n.arrayValue}', {array})::varchar
            else json_object('{n.kvlistValue}', {v}.{n.kvlistValue})::varchar
        end as value"""


def _any_value(value: Any) -> Any:
    """An OTLP `AnyValue` (JSON) as a plain value (only for structured values)."""
    if not isinstance(value, dict):
        return value
    for camel, snake in (("stringValue", "string_value"), ("bytesValue", "bytes_value")):
        if camel in value or snake in value:
            return value.get(camel, value.get(snake))
    for camel, snake in (("boolValue", "bool_value"),):
        if camel in value or snake in value:
            return bool(value.get(camel, value.get(snake)))
    for camel, snake in (("intValue", "int_value"),):
        if camel in value or snake in value:
            return int(value.get(camel, value.get(snake)))
    for camel, snake in (("doubleValue", "double_value"),):
        if camel in value or snake in value:
            return float(value.get(camel, value.get(snake)))
    for camel, snake in (("arrayValue", "array_value"),):
        if camel in value or snake in value:
            items = (value.get(camel) or value.get(snake) or {}).get("values", [])
            return [_any_value(item) for item in items]
    for camel, snake in (("kvlistValue", "kvlist_value"),):
        if camel in value or snake in value:
            items = (value.get(camel) or value.get(snake) or {}).get("values", [])
            return {item.get("key"): _any_value(item.get("value", {})) for item in items}
    return None


def _structured(con: duckdb.DuckDBPyConnection, structured: pd.DataFrame) -> pd.DataFrame:
    """Structured OTLP values (kvlists, arrays of kvlists / arrays) flattened under their key."""
    # One OTLP AnyValue JSON per structured attribute; rare (OpenInference flattens its
    # objects into dotted keys), so converted value by value.
    converted = pd.DataFrame(
        {
            "row": structured["row"].to_numpy(),
            "prefix": structured["key"].to_numpy(),
            "priority": structured["priority"].to_numpy(),
            "j": [json.dumps(_any_value(json.loads(text))) for text in structured["value"]],
        }
    )
    return flatten_json(con, converted)


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


def _keep_one_value_per_key(con: duckdb.DuckDBPyConnection, table: str) -> None:
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


def _otlp_batch(con: duckdb.DuckDBPyConnection, parts: Sequence[tuple[_Names, str]]) -> _Batch:
    """The spans of the scope tables `parts` (each with its spelling; see
    `_otlp_scopes_sql`) as a batch, rows numbered across them in reading order. The scope
    tables are dropped."""
    tables = [table for _, table in parts]
    _number_scopes(con, tables)

    def union(sql: Any) -> str:
        return " union all ".join(f"({sql(names, table)})" for names, table in parts)

    frame = fetch_frame(
        con,
        "select row, trace_id, span_id, parent_id, name, span_kind, start_us, n_events "
        f"from ({union(_otlp_frame_sql)}) order by row",
    )
    frame["start_time"] = micros_to_utc(frame.pop("start_us"))
    has_events = bool(frame.pop("n_events").any())
    table = f"batch_attrs_{next(_batch_ids)}"
    con.execute(f"create temp table {table} as {union(_otlp_attributes_sql)}")
    events = con.execute(union(_otlp_events_sql)).df() if has_events else _empty(EVENT_COLUMNS)
    con.execute("; ".join(f"drop table {t}" for t in tables))
    structured = con.execute(
        f"select row, key, value, vtype, priority from {table} where vtype = 'structured'"
    ).df()
    if not structured.empty:
        flat = _structured(con, structured)
        con.register("structured_flat", flat[["row", "key", "value", "vtype", "priority"]])
        con.execute(
            f"delete from {table} where vtype = 'structured'; "
            f"insert into {table} select row, key, value, vtype, priority from structured_flat"
        )
        con.unregister("structured_flat")
    _keep_one_value_per_key(con, table)
    if has_events:
        events["time"] = micros_to_utc(events["time"])
    return _Batch(frame, table, events[EVENT_COLUMNS].reset_index(drop=True))


# --- Phoenix spans dataframe --------------------------------------------------------------

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
    name = f"batch_attrs_{next(_batch_ids)}"
    long = pa.concat_tables(parts) if parts else _LONG_SCHEMA.empty_table()
    con.register("phoenix_attrs_in", long.filter(pa.compute.not_equal(long["key"], "")))
    try:
        con.execute(f"create temp table {name} as select * from phoenix_attrs_in")
    finally:
        con.unregister("phoenix_attrs_in")
    _keep_one_value_per_key(con, name)
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


def phoenix_batch(con: duckdb.DuckDBPyConnection, table: pa.Table) -> _Batch:
    """A Phoenix spans dataframe (an Arrow table) as a batch: the span frame in one DuckDB
    query over it (ids through `lara_id`), the attributes by `_attributes_table`."""
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
        else _empty(EVENT_COLUMNS)
    )
    return _Batch(frame[SPAN_COLUMNS], _attributes_table(con, table), events)


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
        return _empty(EVENT_COLUMNS)
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


def _phoenix_rows_batch(con: duckdb.DuckDBPyConnection) -> _Batch:
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
    return _Batch(frame[SPAN_COLUMNS], attributes[ATTRIBUTE_COLUMNS].reset_index(drop=True), events)


# --- files ------------------------------------------------------------------------------


def _iter_files(src: Path) -> list[Path]:
    if src.is_file():
        return [src]
    if not src.is_dir():
        raise FileNotFoundError(f"lara ingest: {src} does not exist")
    files = [
        path
        for path in sorted(src.rglob("*"))
        if path.is_file()
        and not any(part.startswith((".", "_")) for part in path.relative_to(src).parts)
        and path.name.endswith(SUPPORTED_SUFFIXES)
    ]
    if not files:
        raise FileNotFoundError(
            f"lara ingest: no span files under {src} (expected {', '.join(SUPPORTED_SUFFIXES)})"
        )
    return files


def _protobuf_json(path: Path) -> str:
    """An OTLP protobuf file (one ExportTraceServiceRequest / TracesData) as OTLP JSON."""
    try:
        from google.protobuf import json_format
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )
    except ImportError as error:  # pragma: no cover - the `ingest` extra is missing
        raise ValueError(
            f"lara ingest: reading {path} needs opentelemetry-proto (pip install 'lara[ingest]')"
        ) from error
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        payload = handle.read()
    message = ExportTraceServiceRequest()
    try:
        message.ParseFromString(payload)
    except Exception as error:  # protobuf's DecodeError
        raise ValueError(f"lara ingest: {path} is not an OTLP protobuf trace export") from error
    return json_format.MessageToJson(message, indent=None)


class _NotCommonOtlp(Exception):
    """The documents are not all camelCase OTLP request objects: read them the general way."""


# The common case, every document one camelCase OTLP request object (the Collector's file
# exporter, the OTLP JSON encoding): parsed once, straight into the OTLP structure. A
# document that may be anything else (a list, snake_case, a span row) takes the general
# path, which tells the kinds apart first (parsing each document three more times).
_COMMON_OTLP_CHECK_SQL = r"""
select coalesce(bool_and(
    contains(doc, '"resourceSpans"')
    and not contains(doc, '"resource_spans"')
    and not regexp_matches(doc, '^\s*\[')
), false)
from ({relation})
"""


def _common_otlp_batch(con: duckdb.DuckDBPyConnection, relation: str) -> _Batch:
    """The documents of `relation` (`doc_no`, `doc`) as a batch when they are all camelCase
    OTLP requests (one object each, `resourceSpans` at the top); else `_NotCommonOtlp`."""
    if not con.execute(_COMMON_OTLP_CHECK_SQL.format(relation=relation)).fetchone()[0]:
        raise _NotCommonOtlp
    names = _Names(camel=True)
    try:
        con.execute(
            f"create or replace temp table otlp_scopes_camel as {_otlp_scopes_sql(names, relation)}"
        )
    except duckdb.Error as error:  # not JSON, or not of the OTLP structure
        raise _NotCommonOtlp from error
    if con.execute("select bool_or(missing) from otlp_scopes_camel").fetchone()[0]:
        # `resourceSpans` only inside a value, or null
        con.execute("drop table otlp_scopes_camel")
        raise _NotCommonOtlp
    return _otlp_batch(con, [(names, "otlp_scopes_camel")])


def _large_strings(texts: Sequence[str]) -> pa.LargeStringArray:
    """`texts` as one Arrow array, built from their UTF-8 bytes joined (a few times faster
    than `pa.array` on long texts)."""
    encoded = [text.encode() for text in texts]
    offsets = np.zeros(len(encoded) + 1, dtype="int64")
    np.cumsum([len(data) for data in encoded], out=offsets[1:])
    return pa.LargeStringArray.from_buffers(
        len(encoded), pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))
    )


def documents_batch(
    con: duckdb.DuckDBPyConnection, texts: Sequence[str], origin: str
) -> tuple[_Batch, str]:
    """JSON documents (OTLP requests, or Phoenix span rows) as a batch, with their kind."""
    array = _large_strings(texts)
    numbers = pa.array(np.arange(len(array), dtype="int64"))
    schema = pa.schema([("doc_no", pa.int64()), ("doc", pa.large_string())])
    # Record batches of a few documents each, so that DuckDB parses them in parallel.
    batches = [
        pa.record_batch([numbers.slice(i, 8), array.slice(i, 8)], schema=schema)
        for i in range(0, len(array), 8)
    ]
    con.register("texts_in", pa.Table.from_batches(batches, schema))
    try:
        try:
            return _common_otlp_batch(con, "select doc_no, doc from texts_in"), "otlp_json"
        except _NotCommonOtlp:
            return _documents_batch(con, "select doc from texts_in", origin)
    finally:
        con.unregister("texts_in")


def _documents_batch(
    con: duckdb.DuckDBPyConnection, relation: str, origin: str
) -> tuple[_Batch, str]:
    con.execute(
        f"""
        create or replace temp table docs_all as
        with raw as (
            select (row_number() over ()) as src_no, doc::varchar as doc from ({relation})
        ),
        typed as (
            select src_no, doc, json_type(doc) = 'ARRAY' as is_array from raw
        ),
        expanded as (
            select src_no, 0 as item_no, doc from typed where not is_array
            union all
            select
                src_no,
                generate_subscripts(doc::json[], 1) as item_no,
                unnest(doc::json[])::varchar as doc
            from typed
            where is_array
        )
        select
            (row_number() over (order by src_no, item_no) - 1)::bigint as doc_no,
            doc,
            json_exists(doc, '$.resourceSpans') as camel,
            json_exists(doc, '$.resource_spans') as snake
        from expanded
        """
    )
    otlp, total = con.execute(
        "select count(*) filter (where camel or snake), count(*) from docs_all"
    ).fetchone()
    if otlp and otlp < total:
        raise ValueError(f"lara ingest: {origin} mixes OTLP requests and span rows")
    if total == 0:
        return _Batch(_empty(SPAN_COLUMNS), _empty(ATTRIBUTE_COLUMNS), _empty(EVENT_COLUMNS)), (
            "empty"
        )
    if otlp:
        parts = []
        kinds = con.execute("select distinct camel from docs_all where camel or snake").fetchall()
        for (camel,) in kinds:
            names, table = _Names(camel), f"otlp_scopes_{'camel' if camel else 'snake'}"
            documents = f"select doc_no, doc from docs_all where camel = {str(camel).lower()}"
            con.execute(
                f"create or replace temp table {table} as {_otlp_scopes_sql(names, documents)}"
            )
            parts.append((names, table))
        return _otlp_batch(con, parts), "otlp_json"
    con.execute(
        "create or replace temp table docs_all as select doc_no, doc::json as doc from docs_all"
    )
    return _phoenix_rows_batch(con), "phoenix_json"


def _read_file(con: duckdb.DuckDBPyConnection, path: Path) -> tuple[_Batch, str]:
    name = path.name
    if name.endswith(".parquet"):
        return phoenix_batch(con, pq.read_table(path)), "phoenix_parquet"
    if name.endswith((".pb", ".pb.gz")):
        batch, _ = documents_batch(con, [_protobuf_json(path)], str(path))
        return batch, "otlp_protobuf"
    relation = (
        "select json::varchar as doc from read_json_objects(?, format = 'auto', "
        f"maximum_object_size = {MAX_JSON_OBJECT_BYTES})"
    )
    try:
        con.execute(f"create or replace temp table file_docs as {relation}", [str(path)])
    except duckdb.Error as error:
        raise ValueError(f"lara ingest: {path} is not JSON / JSON Lines: {error}") from error
    try:
        return _common_otlp_batch(con, "select rowid as doc_no, doc from file_docs"), "otlp_json"
    except _NotCommonOtlp:
        return _documents_batch(con, "select doc from file_docs", str(path))


def _renumber_attributes(con: duckdb.DuckDBPyConnection, renumber: pd.DataFrame) -> None:
    """Table `all_attrs` as `attrs`, rows renumbered `old` -> `new` (rows not in `renumber`
    dropped); when every row keeps its number, the table is only renamed."""
    if np.array_equal(renumber["old"].to_numpy(), renumber["new"].to_numpy()):
        con.execute("delete from all_attrs where row < 0 or row >= ?", [len(renumber)])
        con.execute("drop table if exists attrs; alter table all_attrs rename to attrs")
        return
    con.register("renumber", renumber)
    con.execute(
        "create or replace temp table attrs as "
        "select r.new as row, a.key, a.value, a.vtype "
        "from all_attrs as a join renumber as r on r.old = a.row; "
        "drop table all_attrs"
    )
    con.unregister("renumber")


def span_set(
    con: duckdb.DuckDBPyConnection, batches: Iterable[_Batch], result: SpanSet | None = None
) -> SpanSet:
    """The batches as one span set: spans without ids dropped, repeated span ids read once
    (the first kept), rows renumbered 0..n-1 in reading order."""
    frames, events, offset = [], [], 0
    con.execute(
        "create or replace temp table all_attrs "
        "(row bigint, key varchar, value varchar, vtype varchar)"
    )
    for batch in batches:
        if batch.frame.empty:
            continue
        frames.append(batch.frame.assign(row=batch.frame["row"].to_numpy() + offset))
        if not batch.events.empty:
            events.append(batch.events.assign(row=batch.events["row"].to_numpy() + offset))
        if isinstance(batch.attributes, str) and offset == 0:
            # The first batch's table (row, key, value, vtype) is taken as it is.
            con.execute(f"drop table all_attrs; alter table {batch.attributes} rename to all_attrs")
            offset += len(batch.frame)
            continue
        if isinstance(batch.attributes, str):
            source = batch.attributes
        else:
            source = "batch_attrs_frame"
            con.register(source, batch.attributes[ATTRIBUTE_COLUMNS])
        con.execute(
            f"insert into all_attrs select row + {int(offset)}, key, value, vtype from {source}"
        )
        if isinstance(batch.attributes, str):
            con.execute(f"drop table {source}")
        else:
            con.unregister(source)
        offset += len(batch.frame)
    frame = pd.concat(frames, ignore_index=True) if frames else _empty(SPAN_COLUMNS)
    has_ids = frame["span_id"].notna() & frame["trace_id"].notna()
    result = result or SpanSet(con, _empty(SPAN_COLUMNS), _empty(EVENT_COLUMNS))
    result.con = con
    result.dropped_without_id = int((~has_ids).sum())
    frame = frame[has_ids]
    duplicated = frame["span_id"].duplicated(keep="first")
    result.dropped_duplicates = int(duplicated.sum())
    frame = frame[~duplicated]
    renumber = pd.DataFrame(
        {"old": frame["row"].to_numpy(dtype="int64"), "new": np.arange(len(frame), dtype="int64")}
    )
    _renumber_attributes(con, renumber)
    mapping = pd.Series(renumber["new"].to_numpy(), index=renumber["old"].to_numpy())
    if events:
        all_events = pd.concat(events, ignore_index=True)
        all_events = all_events[all_events["row"].isin(mapping.index)]
        result.events = all_events.assign(
            row=mapping.reindex(all_events["row"].to_numpy()).to_numpy()
        ).reset_index(drop=True)
    else:
        result.events = _empty(EVENT_COLUMNS)
    result.frame = frame.assign(row=renumber["new"].to_numpy()).reset_index(drop=True)
    result.frame["start_time"] = pd.to_datetime(result.frame["start_time"], utc=True).dt.as_unit(
        "us"
    )
    return result


def read_spans(src: Path) -> SpanSet:
    """Every span under `src` as the canonical span table (duplicates by span id dropped)."""
    con = connect()
    result = SpanSet(con, _empty(SPAN_COLUMNS), _empty(EVENT_COLUMNS))
    batches = []
    for path in _iter_files(Path(src)):
        batch, kind = _read_file(con, path)
        result.files.append(str(path))
        result.formats[kind] = result.formats.get(kind, 0) + 1
        batches.append(batch)
    return span_set(con, batches, result)


def read_span_documents(texts: Sequence[str]) -> SpanSet:
    """OTLP JSON requests (or Phoenix span rows as JSON) held in memory as a span set."""
    con = connect()
    batch, kind = documents_batch(con, texts, "memory")
    result = SpanSet(con, _empty(SPAN_COLUMNS), _empty(EVENT_COLUMNS))
    result.formats[kind] = len(texts)
    return span_set(con, [batch], result)
