"""OTLP JSON (and OTLP protobuf, through its JSON mapping) read into a `Batch`.

Each request is parsed once, by DuckDB's `from_json`, into the OTLP structure (camelCase or
snake_case field names); spans, their attributes and events are unnested from it as whole
columns. See lara.ingest.spans for the accepted files.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from lara.ingest.span_core import (
    EVENT_COLUMNS,
    Batch,
    empty_frame,
    fetch_frame,
    flatten_json,
    keep_one_value_per_key,
    micros_to_utc,
    new_attributes_table,
)

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


class OtlpNames:
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


def otlp_scopes_sql(n: OtlpNames, documents: str) -> str:
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
    """Set `first_row` of the scope tables `tables` (see `otlp_scopes_sql`): the row of
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


def _otlp_frame_sql(n: OtlpNames, table: str) -> str:
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


def _otlp_attributes_sql(n: OtlpNames, table: str) -> str:
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


def _otlp_events_sql(n: OtlpNames, table: str) -> str:
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


def _value_columns(n: OtlpNames, a: str) -> str:
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


def otlp_batch(con: duckdb.DuckDBPyConnection, parts: Sequence[tuple[OtlpNames, str]]) -> Batch:
    """The spans of the scope tables `parts` (each with its spelling; see
    `otlp_scopes_sql`) as a batch, rows numbered across them in reading order. The scope
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
    table = new_attributes_table()
    con.execute(f"create temp table {table} as {union(_otlp_attributes_sql)}")
    events = con.execute(union(_otlp_events_sql)).df() if has_events else empty_frame(EVENT_COLUMNS)
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
    keep_one_value_per_key(con, table)
    if has_events:
        events["time"] = micros_to_utc(events["time"])
    return Batch(frame, table, events[EVENT_COLUMNS].reset_index(drop=True))


def protobuf_json(path: Path) -> str:
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


class NotCommonOtlp(Exception):
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


def common_otlp_batch(con: duckdb.DuckDBPyConnection, relation: str) -> Batch:
    """The documents of `relation` (`doc_no`, `doc`) as a batch when they are all camelCase
    OTLP requests (one object each, `resourceSpans` at the top); else `NotCommonOtlp`."""
    if not con.execute(_COMMON_OTLP_CHECK_SQL.format(relation=relation)).fetchone()[0]:
        raise NotCommonOtlp
    names = OtlpNames(camel=True)
    try:
        con.execute(
            f"create or replace temp table otlp_scopes_camel as {otlp_scopes_sql(names, relation)}"
        )
    except duckdb.Error as error:  # not JSON, or not of the OTLP structure
        raise NotCommonOtlp from error
    if con.execute("select bool_or(missing) from otlp_scopes_camel").fetchone()[0]:
        # `resourceSpans` only inside a value, or null
        con.execute("drop table otlp_scopes_camel")
        raise NotCommonOtlp
    return otlp_batch(con, [(names, "otlp_scopes_camel")])
