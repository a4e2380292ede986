"""Reading span exports into one canonical span table.

Accepted inputs (a file, or a folder read recursively; hidden and `_`-prefixed
files are skipped):

- a Phoenix spans dataframe (`px.Client().get_spans_dataframe()` /
  `client.spans.get_spans_dataframe()`) saved as Parquet (`*.parquet`) or JSON
  Lines (`*.jsonl`, `*.jsonl.gz`, one span a line): columns `context.span_id`,
  `context.trace_id`, `parent_id`, `name`, `span_kind`, `start_time`,
  `end_time`, `events` and the attributes either flattened into
  `attributes.<name>` columns (Phoenix's layout: `attributes.retrieval.documents`
  holds a list of `{"document.id": ..., "document.score": ...}`) or nested in
  one `attributes` column (a dict or a JSON string); `span_id` / `trace_id`
  are accepted for the context columns;
- OTLP JSON (`*.json`: one `ExportTraceServiceRequest`, or a list of them;
  `*.jsonl` / `*.jsonl.gz`: one request a line, as the OpenTelemetry
  Collector's file exporter writes), camelCase or snake_case field names,
  span ids in hex (the OTLP JSON rule) or base64 (protobuf's generic JSON).

The canonical table has one row per span: `trace_id`, `span_id`, `parent_id`
(lower-case hex where the input was an OTLP id), `name`, `span_kind` (Phoenix's
column, else null), `start_time` (UTC), `attributes` (a flat dict: nested
values and lists of objects flattened to dotted keys with list indices, e.g.
`retrieval.documents.0.document.id`, the OpenTelemetry attribute layout;
lists of scalars stay lists; JSON strings stay strings) and `events` (list of
`{name, time, attributes}`).

Flattening attributes is a Python loop over spans (linear in the number of
spans and attributes); everything after it is pandas.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import gzip
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

SPAN_COLUMNS = [
    "trace_id",
    "span_id",
    "parent_id",
    "name",
    "span_kind",
    "start_time",
    "attributes",
    "events",
]
SUPPORTED_SUFFIXES = (".parquet", ".json", ".jsonl", ".jsonl.gz", ".ndjson")
_HEX = re.compile(r"^[0-9a-fA-F]+$")


@dataclass
class SpanSet:
    """The canonical span table and what reading it found."""

    frame: pd.DataFrame
    files: list[str] = field(default_factory=list)
    formats: dict[str, int] = field(default_factory=dict)
    dropped_duplicates: int = 0
    dropped_without_id: int = 0


# --- values ----------------------------------------------------------------------------


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return value is pd.NaT


def _scalar(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, pd.Timestamp | dt.datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value


def flatten_into(out: dict[str, Any], prefix: str, value: Any) -> None:
    """Flatten `value` under `prefix`: dicts and lists of dicts to dotted keys."""
    if _is_missing(value):
        return
    if isinstance(value, dict):
        for key, item in value.items():
            flatten_into(out, f"{prefix}.{key}" if prefix else str(key), item)
        return
    if isinstance(value, list | tuple | np.ndarray):
        items = list(value)
        if any(isinstance(item, dict) for item in items):
            for index, item in enumerate(items):
                flatten_into(out, f"{prefix}.{index}", item)
        elif prefix:
            out[prefix] = [_scalar(item) for item in items if not _is_missing(item)]
        return
    if prefix:
        out[prefix] = _scalar(value)


def flatten(value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    flatten_into(out, "", value)
    return out


def normalize_id(value: Any) -> str | None:
    """Span / trace ids as strings: OTLP ids become lower-case hex; others stay as given."""
    if _is_missing(value):
        return None
    if isinstance(value, bytes):
        text = value.hex()
    else:
        text = str(_scalar(value)).strip()
    if not text:
        return None
    if len(text) in (16, 32) and _HEX.match(text):
        text = text.lower()
    elif len(text) in (12, 24) and text.endswith("="):
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) in (8, 16):
            text = raw.hex()
    if set(text) == {"0"}:
        return None  # OTLP's "no parent"
    return text


def get_attr(attributes: dict[str, Any], key: str | None) -> Any:
    """An attribute by name; where absent, a path into a JSON-string attribute.

    `metadata.lara_role` finds `{"lara_role": ...}` inside a `metadata` attribute
    holding a JSON object string (OpenInference's layout for metadata).
    """
    if not key:
        return None
    if key in attributes:
        return attributes[key]
    parts = key.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        head = ".".join(parts[:cut])
        value = attributes.get(head)
        if isinstance(value, str) and value.lstrip().startswith("{"):
            try:
                nested = flatten(json.loads(value))
            except ValueError:
                return None
            return nested.get(".".join(parts[cut:]))
    return None


def indexed(attributes: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """Items of a flattened list attribute: `prefix.{i}.{rest}` -> {i: {rest: value}}."""
    start = prefix + "."
    items: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(start):
            continue
        index, _, rest = key[len(start) :].partition(".")
        if index.isdigit() and rest:
            items.setdefault(int(index), {})[rest] = value
    return dict(sorted(items.items()))


def parse_json_value(value: Any) -> Any:
    """A JSON string parsed (objects and lists); anything else unchanged."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


# --- OTLP JSON --------------------------------------------------------------------------


def _any_value(value: Any) -> Any:
    """An OTLP `AnyValue` (JSON) as a Python value."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "string_value"):
        if key in value:
            return value[key]
    for key in ("boolValue", "bool_value"):
        if key in value:
            return bool(value[key])
    for key in ("intValue", "int_value"):
        if key in value:
            return int(value[key])
    for key in ("doubleValue", "double_value"):
        if key in value:
            return float(value[key])
    for key in ("arrayValue", "array_value"):
        if key in value:
            return [_any_value(item) for item in (value[key] or {}).get("values", [])]
    for key in ("kvlistValue", "kvlist_value"):
        if key in value:
            return _key_values((value[key] or {}).get("values", []))
    for key in ("bytesValue", "bytes_value"):
        if key in value:
            return value[key]
    return None


def _key_values(items: Iterable[dict]) -> dict[str, Any]:
    return {item["key"]: _any_value(item.get("value", {})) for item in items or []}


def _get(mapping: dict, camel: str, snake: str, default: Any = None) -> Any:
    if camel in mapping:
        return mapping[camel]
    return mapping.get(snake, default)


def is_otlp_document(document: Any) -> bool:
    return isinstance(document, dict) and (
        "resourceSpans" in document or "resource_spans" in document
    )


def _otlp_rows(document: dict) -> Iterator[dict[str, Any]]:
    for resource_spans in _get(document, "resourceSpans", "resource_spans", []) or []:
        resource = _key_values((resource_spans.get("resource") or {}).get("attributes", []))
        scopes = (
            _get(resource_spans, "scopeSpans", "scope_spans")
            or resource_spans.get("instrumentationLibrarySpans")
            or []
        )
        for scope_spans in scopes:
            for span in scope_spans.get("spans", []) or []:
                attributes: dict[str, Any] = {}
                flatten_into(attributes, "", resource)
                flatten_into(attributes, "", _key_values(span.get("attributes", [])))
                events = []
                for event in span.get("events", []) or []:
                    time = _get(event, "timeUnixNano", "time_unix_nano")
                    events.append(
                        {
                            "name": event.get("name"),
                            "time": pd.Timestamp(int(time), unit="ns", tz="UTC")
                            if time not in (None, "", "0", 0)
                            else None,
                            "attributes": flatten(_key_values(event.get("attributes", []))),
                        }
                    )
                yield {
                    "trace_id": normalize_id(_get(span, "traceId", "trace_id")),
                    "span_id": normalize_id(_get(span, "spanId", "span_id")),
                    "parent_id": normalize_id(_get(span, "parentSpanId", "parent_span_id")),
                    "name": span.get("name"),
                    "span_kind": None,
                    "start_time": int(_get(span, "startTimeUnixNano", "start_time_unix_nano", 0)),
                    "attributes": attributes,
                    "events": events,
                }


def _otlp_frame(documents: Iterable[dict]) -> pd.DataFrame:
    rows = [row for document in documents for row in _otlp_rows(document)]
    frame = pd.DataFrame.from_records(rows, columns=SPAN_COLUMNS)
    frame["start_time"] = pd.to_datetime(frame["start_time"].astype("int64"), unit="ns", utc=True)
    return frame


# --- Phoenix spans dataframe -------------------------------------------------------------


def _first_column(frame: pd.DataFrame, *names: str) -> pd.Series:
    for name in names:
        if name in frame.columns:
            return frame[name]
    return pd.Series([None] * len(frame), index=frame.index, dtype=object)


def _utc(value: Any) -> pd.Timestamp | None:
    if _is_missing(value):
        return None
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _phoenix_events(value: Any) -> list[dict[str, Any]]:
    value = parse_json_value(value)
    if not isinstance(value, list | tuple | np.ndarray):
        return []
    events = []
    for event in value:
        if not isinstance(event, dict):
            continue
        attributes = parse_json_value(event.get("attributes"))
        events.append(
            {
                "name": event.get("name"),
                "time": _utc(event.get("timestamp", event.get("time"))),
                "attributes": flatten(attributes) if isinstance(attributes, dict) else {},
            }
        )
    return events


def phoenix_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A Phoenix spans dataframe as the canonical span table."""
    if frame.index.name and frame.index.name not in frame.columns:
        frame = frame.reset_index()
    attribute_columns = [c for c in frame.columns if c.startswith("attributes.")]
    nested = _first_column(frame, "attributes")
    records = frame[attribute_columns].to_dict("records") if attribute_columns else None
    attributes_list = []
    for position in range(len(frame)):
        attributes: dict[str, Any] = {}
        blob = parse_json_value(nested.iat[position])
        if isinstance(blob, dict):
            flatten_into(attributes, "", blob)
        if records is not None:
            for column, value in records[position].items():
                flatten_into(attributes, column[len("attributes.") :], value)
        attributes_list.append(attributes)
    start = pd.to_datetime(_first_column(frame, "start_time"), utc=True, format="mixed")
    out = pd.DataFrame(
        {
            "trace_id": _first_column(frame, "context.trace_id", "trace_id").map(normalize_id),
            "span_id": _first_column(frame, "context.span_id", "span_id").map(normalize_id),
            "parent_id": _first_column(frame, "parent_id", "parent_span_id").map(normalize_id),
            "name": _first_column(frame, "name").astype(object),
            "span_kind": _first_column(frame, "span_kind").astype(object),
            "start_time": start.to_numpy(),
            "attributes": attributes_list,
            "events": [_phoenix_events(v) for v in _first_column(frame, "events")],
        }
    )
    out["start_time"] = pd.to_datetime(out["start_time"], utc=True)
    return out[SPAN_COLUMNS]


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


def _read_lines(path: Path) -> list[Any]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _read_file(path: Path) -> tuple[pd.DataFrame, str]:
    name = path.name
    if name.endswith(".parquet"):
        return phoenix_frame(pd.read_parquet(path)), "phoenix_parquet"
    if name.endswith(".json"):
        document = json.loads(path.read_text(encoding="utf-8"))
        documents = document if isinstance(document, list) else [document]
    else:
        documents = _read_lines(path)
    otlp = [d for d in documents if is_otlp_document(d)]
    rows = [d for d in documents if not is_otlp_document(d)]
    if otlp and rows:
        raise ValueError(f"lara ingest: {path} mixes OTLP requests and span rows")
    if otlp:
        return _otlp_frame(otlp), "otlp_json"
    if not rows:
        return pd.DataFrame(columns=SPAN_COLUMNS), "empty"
    return phoenix_frame(pd.DataFrame.from_records(rows)), "phoenix_json"


def read_spans(src: Path) -> SpanSet:
    """Every span under `src` as the canonical span table (duplicates by span id dropped)."""
    frames = []
    result = SpanSet(frame=pd.DataFrame(columns=SPAN_COLUMNS))
    for path in _iter_files(Path(src)):
        frame, kind = _read_file(path)
        result.files.append(str(path))
        result.formats[kind] = result.formats.get(kind, 0) + 1
        if len(frame):
            frames.append(frame)
    if frames:
        frame = pd.concat(frames, ignore_index=True)
    else:
        frame = pd.DataFrame(columns=SPAN_COLUMNS)
    frame["start_time"] = pd.to_datetime(frame["start_time"], utc=True)
    has_ids = frame["span_id"].notna() & frame["trace_id"].notna()
    result.dropped_without_id = int((~has_ids).sum())
    frame = frame[has_ids]
    duplicated = frame["span_id"].duplicated(keep="first")
    result.dropped_duplicates = int(duplicated.sum())
    result.frame = frame[~duplicated].reset_index(drop=True)
    return result
