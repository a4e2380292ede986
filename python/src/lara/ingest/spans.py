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

This module finds the files, tells their kinds apart and assembles the span set; the
readers are lara.ingest.otlp (OTLP JSON and protobuf) and lara.ingest.phoenix (Phoenix's
dataframe), over what they share in lara.ingest.span_core.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from lara.ingest.otlp import (
    NotCommonOtlp,
    OtlpNames,
    common_otlp_batch,
    otlp_batch,
    otlp_scopes_sql,
    protobuf_json,
)
from lara.ingest.phoenix import phoenix_file_batch, phoenix_rows_batch
from lara.ingest.span_core import (
    ATTRIBUTE_COLUMNS,
    EVENT_COLUMNS,
    SPAN_COLUMNS,
    Batch,
    KeyFilter,
    attribute_names,
    connect,
    empty_frame,
    fetch_frame,
    flatten_json,
    flatten_json_sql,
    micros_to_utc,
    normalize_ids,
    utc_microseconds,
)

# The helpers every reader shares stay importable from here (lara.ingest.span_core).
__all__ = [
    "ATTRIBUTE_COLUMNS",
    "EVENT_COLUMNS",
    "MAX_JSON_OBJECT_BYTES",
    "KeyFilter",
    "SPAN_COLUMNS",
    "SUPPORTED_SUFFIXES",
    "SpanSet",
    "connect",
    "documents_batch",
    "fetch_frame",
    "flatten_json",
    "flatten_json_sql",
    "micros_to_utc",
    "normalize_ids",
    "read_span_documents",
    "read_spans",
    "span_set",
    "utc_microseconds",
]

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
    #: attribute names left out because the adapter does not read them (list positions
    #: as `*`; see KeyFilter)
    attributes_not_read: list[str] = field(default_factory=list)

    @property
    def attributes(self) -> pd.DataFrame:
        return self.con.execute(
            f"select row, key, value, vtype from {self.attributes_table} order by row, key"
        ).df()


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
) -> tuple[Batch, str]:
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
            return common_otlp_batch(con, "select doc_no, doc from texts_in"), "otlp_json"
        except NotCommonOtlp:
            return _documents_batch(con, "select doc from texts_in", origin)
    finally:
        con.unregister("texts_in")


def _documents_batch(
    con: duckdb.DuckDBPyConnection, relation: str, origin: str
) -> tuple[Batch, str]:
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
        return Batch(
            empty_frame(SPAN_COLUMNS), empty_frame(ATTRIBUTE_COLUMNS), empty_frame(EVENT_COLUMNS)
        ), "empty"
    if otlp:
        parts = []
        kinds = con.execute("select distinct camel from docs_all where camel or snake").fetchall()
        for (camel,) in kinds:
            names, table = OtlpNames(camel), f"otlp_scopes_{'camel' if camel else 'snake'}"
            documents = f"select doc_no, doc from docs_all where camel = {str(camel).lower()}"
            con.execute(
                f"create or replace temp table {table} as {otlp_scopes_sql(names, documents)}"
            )
            parts.append((names, table))
        return otlp_batch(con, parts), "otlp_json"
    con.execute(
        "create or replace temp table docs_all as select doc_no, doc::json as doc from docs_all"
    )
    return phoenix_rows_batch(con), "phoenix_json"


def _read_file(
    con: duckdb.DuckDBPyConnection, path: Path, keep: KeyFilter | None = None
) -> tuple[Batch, str]:
    name = path.name
    if name.endswith(".parquet"):
        return phoenix_file_batch(con, path, keep), "phoenix_parquet"
    if name.endswith((".pb", ".pb.gz")):
        batch, _ = documents_batch(con, [protobuf_json(path)], str(path))
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
        return common_otlp_batch(con, "select rowid as doc_no, doc from file_docs"), "otlp_json"
    except NotCommonOtlp:
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


def _drop_unread_keys(con: duckdb.DuckDBPyConnection, keep: KeyFilter | None) -> list[str]:
    """Remove from `attrs` the keys `keep` does not keep (from every kind of input: a
    Phoenix file has left out whole columns already), and return them. Decided per
    distinct key, in Python."""
    if keep is None:
        return []
    keys = [key for (key,) in con.execute("select distinct key from attrs").fetchall()]
    dropped = sorted(key for key in keys if not keep.keeps(key))
    if dropped:
        con.register("unread_keys", pa.table({"key": pa.array(dropped, pa.string())}))
        try:
            con.execute("delete from attrs where key in (select key from unread_keys)")
        finally:
            con.unregister("unread_keys")
    return dropped


def span_set(
    con: duckdb.DuckDBPyConnection,
    batches: Iterable[Batch],
    result: SpanSet | None = None,
    keep: KeyFilter | None = None,
) -> SpanSet:
    """The batches as one span set: spans without ids dropped, repeated span ids read once
    (the first kept), rows renumbered 0..n-1 in reading order; with `keep`, only the
    attributes it keeps (the names the adapter reads, see KeyFilter)."""
    batches = list(batches)  # read twice: the spans, then what was left unread
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
    frame = pd.concat(frames, ignore_index=True) if frames else empty_frame(SPAN_COLUMNS)
    has_ids = frame["span_id"].notna() & frame["trace_id"].notna()
    result = result or SpanSet(con, empty_frame(SPAN_COLUMNS), empty_frame(EVENT_COLUMNS))
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
    result.attributes_not_read = attribute_names(
        [*_drop_unread_keys(con, keep), *(name for batch in batches for name in batch.unread)]
    )
    mapping = pd.Series(renumber["new"].to_numpy(), index=renumber["old"].to_numpy())
    if events:
        all_events = pd.concat(events, ignore_index=True)
        all_events = all_events[all_events["row"].isin(mapping.index)]
        result.events = all_events.assign(
            row=mapping.reindex(all_events["row"].to_numpy()).to_numpy()
        ).reset_index(drop=True)
    else:
        result.events = empty_frame(EVENT_COLUMNS)
    result.frame = frame.assign(row=renumber["new"].to_numpy()).reset_index(drop=True)
    result.frame["start_time"] = pd.to_datetime(result.frame["start_time"], utc=True).dt.as_unit(
        "us"
    )
    return result


def read_spans(src: Path, keep: KeyFilter | None = None) -> SpanSet:
    """Every span under `src` as the canonical span table (duplicates by span id dropped);
    with `keep`, only the attributes it keeps (see KeyFilter)."""
    con = connect()
    result = SpanSet(con, empty_frame(SPAN_COLUMNS), empty_frame(EVENT_COLUMNS))
    batches = []
    for path in _iter_files(Path(src)):
        batch, kind = _read_file(con, path, keep)
        result.files.append(str(path))
        result.formats[kind] = result.formats.get(kind, 0) + 1
        batches.append(batch)
    return span_set(con, batches, result, keep)


def read_span_documents(texts: Sequence[str], keep: KeyFilter | None = None) -> SpanSet:
    """OTLP JSON requests (or Phoenix span rows as JSON) held in memory as a span set
    (with `keep`, only the attributes it keeps)."""
    con = connect()
    batch, kind = documents_batch(con, texts, "memory")
    result = SpanSet(con, empty_frame(SPAN_COLUMNS), empty_frame(EVENT_COLUMNS))
    result.formats[kind] = len(texts)
    return span_set(con, [batch], result, keep)
