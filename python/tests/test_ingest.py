"""Trace adapters on spans emitted through the real OpenTelemetry SDK.

Spans are made with `opentelemetry-sdk` (InMemorySpanExporter) and the attribute
names of `openinference-semantic-conventions` / `opentelemetry-semantic-conventions`,
then exported the ways a team would hand them over: OTLP JSON (protobuf messages of
`opentelemetry-proto`, through `google.protobuf.json_format`, ids in hex as the OTLP
JSON encoding requires, and in base64 as protobuf's generic JSON writes them), a
Phoenix-style spans dataframe in Parquet (flattened `attributes.*` columns), and JSON
Lines with one nested `attributes` column. Every export must give the same tables;
then dbt builds staging (and `fct_retrievals` when that mart exists) on them.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("openinference.semconv")
pytest.importorskip("opentelemetry.proto")

from google.protobuf import json_format
from openinference.semconv.trace import (
    DocumentAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
)
from opentelemetry import trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import (
    AnyValue,
    ArrayValue,
    InstrumentationScope,
    KeyValue,
)
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import (
    ResourceSpans,
    ScopeSpans,
    Span,
)
from opentelemetry.sdk.resources import Resource as SdkResource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.semconv._incubating.attributes import (
    gen_ai_attributes as GA,
)
from opentelemetry.semconv._incubating.attributes import user_attributes

from lara.dbt import run_dbt
from lara.ingest import (
    IngestConfig,
    add_ingest_arguments,
    ingest_openinference,
    ingest_otel_genai,
)
from lara.ingest.attributes import (
    GEN_AI_EVALUATION_RESULT_EVENT,
    LARA_DOCUMENT_ID,
    LARA_EVALUATION_DOCUMENT_POSITION,
    LARA_IS_SYNTHETIC,
    LARA_RETRIEVAL_ROLE,
)
from lara.labels import label_import, label_sample, weighted_mean
from lara.paths import project_dir

RETRIEVER = OpenInferenceSpanKindValues.RETRIEVER.value
TOOL = OpenInferenceSpanKindValues.TOOL.value
AGENT = OpenInferenceSpanKindValues.AGENT.value
KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
DOCS = SpanAttributes.RETRIEVAL_DOCUMENTS
T0 = 1_785_751_200_000_000_000  # 2026-08-03T10:00:00Z in ns
SECOND = 1_000_000_000
DAY = 86_400 * SECOND
TABLES = ["prompts", "retrievals", "actions", "relevance_labels"]
CONFIG = IngestConfig(
    role_map={"reference_*": "generation_reference"},
    action_type_map={"insert_asset": "place"},
)


# --- emitting spans ---------------------------------------------------------------------


class Emitter:
    """A tracer with an in-memory exporter; spans with explicit times (ns)."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider(resource=SdkResource.create({"service.name": "lara-test"}))
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = provider.get_tracer("lara.tests", "1.0")

    def span(self, name, start, parent=None, attributes=None, duration=SECOND, events=()):
        context = trace.set_span_in_context(parent) if parent is not None else None
        span = self.tracer.start_span(
            name, context=context, start_time=start, attributes=attributes or {}
        )
        for event_name, event_attributes, at in events:
            span.add_event(event_name, attributes=event_attributes, timestamp=at)
        return span, start + duration

    def finished(self):
        return self.exporter.get_finished_spans()


def _documents(ids_scores):
    attributes = {}
    for i, (doc_id, score) in enumerate(ids_scores):
        if doc_id is not None:
            attributes[f"{DOCS}.{i}.{DocumentAttributes.DOCUMENT_ID}"] = doc_id
        attributes[f"{DOCS}.{i}.{DocumentAttributes.DOCUMENT_SCORE}"] = score
        attributes[f"{DOCS}.{i}.{DocumentAttributes.DOCUMENT_CONTENT}"] = f"content of {doc_id}"
    return attributes


def emit_openinference() -> tuple[list, dict]:
    """Three prompts over two days; returns the spans and the expected facts by name."""
    e = Emitter()
    ids = {}
    # Prompt A: find, place, second retrieval returning the same asset, read.
    root, end_root = e.span(
        "designer_agent",
        T0,
        attributes={
            KIND: AGENT,
            SpanAttributes.INPUT_VALUE: "find a blue logo template and use it",
            SpanAttributes.SESSION_ID: "sess-1",
            SpanAttributes.USER_ID: "user-1",
        },
        duration=60 * SECOND,
    )
    r1, r1_end = e.span(
        "template_search",
        T0 + 1 * SECOND,
        parent=root,
        attributes={
            KIND: RETRIEVER,
            SpanAttributes.INPUT_VALUE: "blue logo",
            SpanAttributes.SESSION_ID: "sess-1",
            LARA_RETRIEVAL_ROLE: "find",
            **_documents([("a1", 0.9), ("a2", 0.8), ("a3", 0.5)]),
        },
    )
    r1.end(r1_end)
    t1, t1_end = e.span(
        "insert_asset",
        T0 + 5 * SECOND,
        parent=root,
        attributes={
            KIND: TOOL,
            SpanAttributes.TOOL_NAME: "insert_asset",
            SpanAttributes.INPUT_VALUE: json.dumps({"asset_id": "a2", "position": 1}),
            LARA_DOCUMENT_ID: "doc-9",
        },
    )
    t1.end(t1_end)
    r2, r2_end = e.span(
        "reference_lookup",
        T0 + 10 * SECOND,
        parent=root,
        attributes={
            KIND: RETRIEVER,
            SpanAttributes.INPUT_VALUE: "logo style guide",
            **_documents([("b1", 0.7), ("a2", 0.6)]),
        },
    )
    r2.end(r2_end)
    t2, t2_end = e.span(
        "read_asset",
        T0 + 20 * SECOND,
        parent=root,
        attributes={
            KIND: TOOL,
            SpanAttributes.TOOL_NAME: "read_asset",
            SpanAttributes.INPUT_VALUE: "read a2 and b1 please",
        },
    )
    t2.end(t2_end)
    t3, t3_end = e.span(
        "noop",
        T0 + 30 * SECOND,
        parent=root,
        attributes={KIND: TOOL, SpanAttributes.INPUT_VALUE: json.dumps({"x": "zzz"})},
    )
    t3.end(t3_end)
    root.end(end_root)
    ids.update(A=root, r1=r1, r2=r2, t1=t1, t2=t2)
    # Prompt B: same session, an empty result.
    root_b, end_b = e.span(
        "designer_agent",
        T0 + 120 * SECOND,
        attributes={
            KIND: AGENT,
            SpanAttributes.INPUT_VALUE: "anything in red?",
            SpanAttributes.SESSION_ID: "sess-1",
            SpanAttributes.USER_ID: "user-1",
        },
    )
    r3, r3_end = e.span(
        "template_search",
        T0 + 121 * SECOND,
        parent=root_b,
        attributes={
            KIND: RETRIEVER,
            SpanAttributes.INPUT_VALUE: "red",
            LARA_RETRIEVAL_ROLE: "browse",
        },
    )
    r3.end(r3_end)
    root_b.end(end_b + 5 * SECOND)
    ids.update(B=root_b, r3=r3)
    # Prompt C: next day, other session, no user id, synthetic, a document without id.
    root_c, end_c = e.span(
        "designer_agent",
        T0 + DAY,
        attributes={
            KIND: AGENT,
            SpanAttributes.INPUT_VALUE: "monitoring probe",
            SpanAttributes.SESSION_ID: "sess-2",
            LARA_IS_SYNTHETIC: True,
        },
    )
    r4, r4_end = e.span(
        "template_search",
        T0 + DAY + SECOND,
        parent=root_c,
        attributes={
            KIND: RETRIEVER,
            SpanAttributes.INPUT_VALUE: "probe",
            LARA_RETRIEVAL_ROLE: "not-a-role",
            **_documents([("c1", 0.5), (None, 0.4), ("c2", 0.3)]),
        },
    )
    r4.end(r4_end)
    root_c.end(end_c + 5 * SECOND)
    ids.update(C=root_c, r4=r4)
    return list(e.finished()), {k: _hex_span(v) for k, v in ids.items()} | {
        f"trace_{k}": _hex_trace(ids[k]) for k in ("A", "B", "C")
    }


def emit_otel_genai() -> tuple[list, dict]:
    """One prompt: retrieval with evaluation events, a tool call on a returned asset."""
    e = Emitter()
    root, end_root = e.span(
        f"{GA.GenAiOperationNameValues.INVOKE_AGENT.value} designer",
        T0,
        attributes={
            GA.GEN_AI_OPERATION_NAME: GA.GenAiOperationNameValues.INVOKE_AGENT.value,
            GA.GEN_AI_CONVERSATION_ID: "conv-7",
            user_attributes.USER_ID: "user-7",
            GA.GEN_AI_INPUT_MESSAGES: json.dumps(
                [
                    {"role": "system", "parts": [{"type": "text", "content": "be brief"}]},
                    {"role": "user", "parts": [{"type": "text", "content": "a poster layout"}]},
                ]
            ),
        },
        duration=30 * SECOND,
    )
    retrieval_op = GA.GenAiOperationNameValues.RETRIEVAL.value
    r1, r1_end = e.span(
        f"{retrieval_op} templates",
        T0 + SECOND,
        parent=root,
        attributes={
            GA.GEN_AI_OPERATION_NAME: retrieval_op,
            GA.GEN_AI_DATA_SOURCE_ID: "templates",
            GA.GEN_AI_RETRIEVAL_QUERY_TEXT: "poster layout",
            GA.GEN_AI_RETRIEVAL_DOCUMENTS: json.dumps(
                [
                    {"id": "p1", "score": 0.91},
                    {"id": "p2", "score": 0.72},
                    {"id": "p3", "score": 0.4},
                ]
            ),
            LARA_RETRIEVAL_ROLE: "operate",
        },
        events=[
            (
                GEN_AI_EVALUATION_RESULT_EVENT,
                {
                    GA.GEN_AI_EVALUATION_NAME: "relevance",
                    GA.GEN_AI_EVALUATION_SCORE_VALUE: score,
                    LARA_EVALUATION_DOCUMENT_POSITION: position,
                },
                T0 + 40 * SECOND,
            )
            for position, score in [(0, 0.9), (1, 0.2), (2, 0.6)]
        ],
    )
    r1.end(r1_end)
    tool_op = GA.GenAiOperationNameValues.EXECUTE_TOOL.value
    t1, t1_end = e.span(
        f"{tool_op} insert_asset",
        T0 + 5 * SECOND,
        parent=root,
        attributes={
            GA.GEN_AI_OPERATION_NAME: tool_op,
            GA.GEN_AI_TOOL_NAME: "insert_asset",
            GA.GEN_AI_TOOL_CALL_ID: "call-1",
            GA.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps({"asset": "p2", "doc": "d-1"}),
        },
    )
    t1.end(t1_end)
    root.end(end_root)
    return list(e.finished()), {
        "root": _hex_span(root),
        "r1": _hex_span(r1),
        "t1": _hex_span(t1),
        "trace": _hex_trace(root),
    }


def _hex_span(span) -> str:
    return format(span.get_span_context().span_id, "016x")


def _hex_trace(span) -> str:
    return format(span.get_span_context().trace_id, "032x")


# --- exporting spans --------------------------------------------------------------------


def _any_value(value) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, list | tuple):
        return AnyValue(array_value=ArrayValue(values=[_any_value(v) for v in value]))
    return AnyValue(string_value=str(value))


def _key_values(attributes) -> list[KeyValue]:
    return [KeyValue(key=k, value=_any_value(v)) for k, v in (attributes or {}).items()]


def otlp_request(spans) -> ExportTraceServiceRequest:
    """ReadableSpans as an OTLP ExportTraceServiceRequest (protobuf)."""
    messages = []
    for span in spans:
        context = span.get_span_context()
        messages.append(
            Span(
                trace_id=context.trace_id.to_bytes(16, "big"),
                span_id=context.span_id.to_bytes(8, "big"),
                parent_span_id=span.parent.span_id.to_bytes(8, "big") if span.parent else b"",
                name=span.name,
                kind=span.kind.value + 1,
                start_time_unix_nano=span.start_time,
                end_time_unix_nano=span.end_time,
                attributes=_key_values(span.attributes),
                events=[
                    Span.Event(
                        time_unix_nano=event.timestamp,
                        name=event.name,
                        attributes=_key_values(event.attributes),
                    )
                    for event in span.events
                ],
            )
        )
    scope = spans[0].instrumentation_scope
    return ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=Resource(attributes=_key_values(spans[0].resource.attributes)),
                scope_spans=[
                    ScopeSpans(
                        scope=InstrumentationScope(name=scope.name, version=scope.version),
                        spans=messages,
                    )
                ],
            )
        ]
    )


def write_otlp_json(spans, path: Path) -> None:
    """OTLP JSON encoding: protobuf JSON mapping with trace/span ids as hex strings."""
    document = json_format.MessageToDict(otlp_request(spans))
    for resource_spans in document["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = __import__("base64").b64decode(span[key]).hex()
    path.write_text(json.dumps(document))


def write_otlp_jsonl_base64(spans, path: Path) -> None:
    """Protobuf's generic JSON (ids in base64), one request a line, gzipped."""
    half = len(spans) // 2
    lines = [
        json_format.MessageToJson(otlp_request(chunk), indent=None)
        for chunk in (spans[:half], spans[half:])
    ]
    with gzip.open(path, "wt") as handle:
        handle.write("\n".join(lines) + "\n")


def _phoenix_attributes(attributes) -> dict:
    """Phoenix's dataframe layout: semantic-convention keys kept whole, the
    `retrieval.documents` list as a list of `{"document.id": ...}` objects."""
    out, documents = {}, {}
    prefix = DOCS + "."
    for key, value in attributes.items():
        if key.startswith(prefix):
            index, _, rest = key[len(prefix) :].partition(".")
            documents.setdefault(int(index), {})[rest] = value
        else:
            out[key] = value
    if documents:
        out[DOCS] = [documents[i] for i in sorted(documents)]
    return out


def phoenix_dataframe(spans) -> pd.DataFrame:
    rows = []
    for span in spans:
        context = span.get_span_context()
        row = {
            "name": span.name,
            "span_kind": span.attributes.get(KIND, "UNKNOWN"),
            "parent_id": format(span.parent.span_id, "016x") if span.parent else None,
            "start_time": pd.Timestamp(span.start_time, unit="ns", tz="UTC"),
            "end_time": pd.Timestamp(span.end_time, unit="ns", tz="UTC"),
            "status_code": "UNSET",
            "status_message": "",
            "context.span_id": format(context.span_id, "016x"),
            "context.trace_id": format(context.trace_id, "032x"),
            "events": [
                {
                    "name": event.name,
                    "timestamp": pd.Timestamp(event.timestamp, unit="ns", tz="UTC").isoformat(),
                    "attributes": dict(event.attributes),
                }
                for event in span.events
            ],
        }
        for key, value in _phoenix_attributes(dict(span.attributes)).items():
            row[f"attributes.{key}"] = value
        rows.append(row)
    return pd.DataFrame(rows).set_index("context.span_id", drop=False)


def write_phoenix_nested_jsonl(spans, path: Path) -> None:
    """Phoenix rows as JSON Lines with one nested `attributes` object."""
    with open(path, "w") as handle:
        for span in spans:
            nested: dict = {}
            for key, value in _phoenix_attributes(dict(span.attributes)).items():
                node = nested
                parts = key.split(".")
                for part in parts[:-1]:
                    node = node.setdefault(part, {})
                node[parts[-1]] = value
            handle.write(
                json.dumps(
                    {
                        "name": span.name,
                        "span_kind": span.attributes.get(KIND),
                        "parent_id": format(span.parent.span_id, "016x") if span.parent else None,
                        "start_time": pd.Timestamp(
                            span.start_time, unit="ns", tz="UTC"
                        ).isoformat(),
                        "context": None,
                        "span_id": format(span.get_span_context().span_id, "016x"),
                        "trace_id": format(span.get_span_context().trace_id, "032x"),
                        "attributes": nested,
                    }
                )
                + "\n"
            )


def phoenix_document_evaluations(ids: dict) -> pd.DataFrame:
    """Phoenix DocumentEvaluations layout: index (context.span_id, document_position)."""
    frame = pd.DataFrame(
        {
            "context.span_id": [ids["r1"], ids["r1"], ids["r1"], ids["r2"], ids["r4"]],
            "document_position": [0, 1, 2, 0, 1],
            "label": ["relevant", "relevant", "unrelated", None, "relevant"],
            "score": [1.0, 1.0, 0.0, 0.8, 1.0],
            "explanation": ["", "", "", "", ""],
        }
    )
    return frame.set_index(["context.span_id", "document_position"])


# --- fixtures ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def openinference_exports(tmp_path_factory):
    root = tmp_path_factory.mktemp("oi_exports")
    spans, ids = emit_openinference()
    write_otlp_json(spans, root / "otlp.json")
    write_otlp_jsonl_base64(spans, root / "otlp_base64.jsonl.gz")
    phoenix_dataframe(spans).reset_index(drop=True).to_parquet(root / "spans.parquet")
    write_phoenix_nested_jsonl(spans, root / "spans_nested.jsonl")
    phoenix_dataframe(spans).reset_index(drop=True).to_json(
        root / "spans_flat.jsonl", orient="records", lines=True, date_format="iso"
    )
    phoenix_document_evaluations(ids).to_parquet(root / "document_evaluations.parquet")
    return root, spans, ids


def _read_table(root: Path, table: str) -> pd.DataFrame:
    files = sorted((root / table).glob("dt=*/*.parquet"))
    frame = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    return frame


def _comparable(frame: pd.DataFrame) -> list:
    records = frame.astype(object).where(frame.notna(), None).to_dict("records")
    for record in records:
        for key, value in record.items():
            if hasattr(value, "tolist"):
                record[key] = value.tolist()
            elif isinstance(value, pd.Timestamp):
                record[key] = value.isoformat()
    return sorted(records, key=lambda r: json.dumps(r, sort_keys=True, default=str))


@pytest.fixture(scope="module")
def openinference_tables(openinference_exports, tmp_path_factory):
    root, _, _ = openinference_exports
    out = tmp_path_factory.mktemp("oi_raw")
    report = ingest_openinference(
        root / "spans.parquet", out, CONFIG, evaluations=[root / "document_evaluations.parquet"]
    )
    return out, report


# --- OpenInference ----------------------------------------------------------------------


def test_openinference_counts_and_diagnostics(openinference_tables):
    _, report = openinference_tables
    assert dict(report) == {"prompts": 3, "retrievals": 4, "actions": 3, "relevance_labels": 4}
    assert report.diagnostics["documents_without_id"] == 1
    assert report.diagnostics["invalid_roles_dropped"] == 1
    assert report.diagnostics["evaluations_unknown_document"] == 1
    assert report.diagnostics["spans_read"] == 10


def test_openinference_retrievals(openinference_tables, openinference_exports):
    out, _ = openinference_tables
    _, _, ids = openinference_exports
    retrievals = _read_table(out, "retrievals").set_index("retrieval_id")
    r1 = retrievals.loc[ids["r1"]]
    assert list(r1["returned_asset_ids"]) == ["a1", "a2", "a3"]
    assert r1["prompt_id"] == ids["trace_A"]
    assert r1["session_guid"] == "sess-1"
    assert r1["query_text"] == "blue logo"
    assert r1["retrieval_role"] == "find"
    assert retrievals.loc[ids["r2"], "retrieval_role"] == "generation_reference"  # role_map
    assert list(retrievals.loc[ids["r3"], "returned_asset_ids"]) == []  # empty result
    assert retrievals.loc[ids["r3"], "retrieval_role"] == "browse"
    assert list(retrievals.loc[ids["r4"], "returned_asset_ids"]) == ["c1", "c2"]
    assert pd.isna(retrievals.loc[ids["r4"], "retrieval_role"])  # invalid value dropped
    assert retrievals.loc[ids["r4"], "session_guid"] == "sess-2"


def test_openinference_prompts(openinference_tables, openinference_exports):
    out, _ = openinference_tables
    _, _, ids = openinference_exports
    prompts = _read_table(out, "prompts").set_index("prompt_id")
    a = prompts.loc[ids["trace_A"]]
    assert (a["session_guid"], a["user_id"], a["surface"]) == ("sess-1", "user-1", "chat")
    assert a["prompt_text"] == "find a blue logo template and use it"
    assert a["ts"] == pd.Timestamp("2026-08-03T10:00:00Z")
    c = prompts.loc[ids["trace_C"]]
    assert c["user_id"] == "sess-2"  # no user.id: the session stands in
    assert bool(c["is_synthetic"]) is True
    assert pd.isna(prompts.loc[ids["trace_A"], "is_synthetic"])


def test_openinference_agent_actions_carry_lineage(openinference_tables, openinference_exports):
    out, _ = openinference_tables
    _, _, ids = openinference_exports
    actions = _read_table(out, "actions").set_index("action_id")
    place = actions.loc[f"{ids['t1']}:a2"]
    assert place["actor"] == "agent"
    assert place["action_type"] == "place"  # action_type_map
    assert place["source_retrieval_id"] == ids["r1"]  # r2 came later
    assert place["prompt_id"] == ids["trace_A"]
    assert place["document_id"] == "doc-9"
    # read_asset names a2 and b1 after r2: the latest retrieval holding each.
    read_a2 = actions.loc[f"{ids['t2']}:a2"]
    read_b1 = actions.loc[f"{ids['t2']}:b1"]
    assert read_a2["source_retrieval_id"] == ids["r2"]
    assert read_b1["source_retrieval_id"] == ids["r2"]
    assert read_a2["action_type"] == "select"  # the default
    assert set(actions["session_guid"]) == {"sess-1"}


def test_openinference_relevance_labels(openinference_tables, openinference_exports):
    out, _ = openinference_tables
    _, _, ids = openinference_exports
    labels = _read_table(out, "relevance_labels")
    got = {(r.retrieval_id, r.asset_id): r.grade for r in labels.itertuples()}
    assert got == {
        (ids["r1"], "a1"): 1,
        (ids["r1"], "a2"): 1,
        (ids["r1"], "a3"): 0,
        (ids["r2"], "b1"): 1,  # no label: score 0.8 >= 0.5
    }  # r4's position 1 has no document id: dropped and counted
    assert set(labels["judge"]) == {"llm"}


def test_partitions_and_parquet_types_follow_the_contract(openinference_tables):
    out, _ = openinference_tables
    assert sorted(p.name for p in (out / "prompts").iterdir()) == ["dt=2026-08-03", "dt=2026-08-04"]
    assert (out / "retrievals" / "dt=2026-08-03" / "part-0.parquet").exists()
    schema = pq.read_schema(out / "retrievals" / "dt=2026-08-03" / "part-0.parquet")
    assert str(schema.field("ts").type) == "timestamp[us, tz=UTC]"
    assert str(schema.field("returned_asset_ids").type) == "list<element: string>"
    labels = pq.read_schema(next((out / "relevance_labels").glob("dt=*/part-0.parquet")))
    assert str(labels.field("grade").type) == "int64"
    assert str(labels.field("judged_at").type) == "timestamp[us, tz=UTC]"


def test_every_export_format_gives_the_same_tables(openinference_exports, tmp_path):
    root, _, _ = openinference_exports
    results = {}
    names = ["otlp.json", "otlp_base64.jsonl.gz", "spans.parquet", "spans_nested.jsonl"]
    for name in [*names, "spans_flat.jsonl"]:
        out = tmp_path / name
        ingest_openinference(
            root / name, out, CONFIG, evaluations=[root / "document_evaluations.parquet"]
        )
        results[name] = {t: _comparable(_read_table(out, t)) for t in TABLES}
    reference = results.pop("spans.parquet")
    for name, tables in results.items():
        for table in TABLES:
            assert tables[table] == reference[table], (name, table)


def test_existing_partition_is_not_overwritten(openinference_exports, tmp_path):
    root, _, _ = openinference_exports
    ingest_openinference(root / "otlp.json", tmp_path, CONFIG)
    with pytest.raises(FileExistsError):
        ingest_openinference(root / "otlp.json", tmp_path, CONFIG)
    ingest_openinference(root / "otlp.json", tmp_path, CONFIG.replace(overwrite=True))


def test_root_span_prompts_and_session_lineage_scope(openinference_exports, tmp_path):
    root, _, ids = openinference_exports
    config = CONFIG.replace(prompt_from="root_span", lineage_scope="session")
    report = ingest_openinference(root / "otlp.json", tmp_path, config)
    prompts = _read_table(tmp_path, "prompts")
    assert set(prompts["prompt_id"]) == {ids["A"], ids["B"], ids["C"]}
    assert report["actions"] == 3


def test_command_line_and_config_file(openinference_exports, tmp_path):
    root, _, ids = openinference_exports
    config = tmp_path / "ingest.yaml"
    config.write_text("role_map:\n  reference_*: generation_reference\nsurface: editor_assistant\n")
    parser = argparse.ArgumentParser()
    add_ingest_arguments(parser)
    args = parser.parse_args(
        [
            "openinference",
            str(root / "otlp.json"),
            "--out",
            str(tmp_path / "raw"),
            "--config",
            str(config),
            "--action-type-map",
            "insert_*=place",
            "--evaluations",
            str(root / "document_evaluations.parquet"),
            "--quiet",
        ]
    )
    assert args.func(args) == 0
    retrievals = _read_table(tmp_path / "raw", "retrievals").set_index("retrieval_id")
    assert retrievals.loc[ids["r2"], "retrieval_role"] == "generation_reference"
    assert set(_read_table(tmp_path / "raw", "prompts")["surface"]) == {"editor_assistant"}
    actions = _read_table(tmp_path / "raw", "actions").set_index("action_id")
    assert actions.loc[f"{ids['t1']}:a2", "action_type"] == "place"
    assert args.func(args) == 2  # the partitions exist now: refused, not overwritten
    bad = parser.parse_args(["otel-genai", str(root), "--out", str(tmp_path), "--surface", "fax"])
    assert bad.func(bad) == 2


# --- OpenTelemetry GenAI ----------------------------------------------------------------


@pytest.fixture(scope="module")
def genai_tables(tmp_path_factory):
    root = tmp_path_factory.mktemp("genai_exports")
    spans, ids = emit_otel_genai()
    write_otlp_json(spans, root / "genai.json")
    out = tmp_path_factory.mktemp("genai_raw")
    report = ingest_otel_genai(root / "genai.json", out, IngestConfig(part_name="genai"))
    return out, report, ids, root


def test_otel_genai_tables(genai_tables):
    out, report, ids, _ = genai_tables
    assert dict(report) == {"prompts": 1, "retrievals": 1, "actions": 1, "relevance_labels": 3}
    files = sorted((out / "retrievals").glob("dt=*/*.parquet"))
    assert [f.name for f in files] == ["genai.parquet"]
    retrieval = _read_table(out, "retrievals").iloc[0]
    assert retrieval["retrieval_id"] == ids["r1"]
    assert list(retrieval["returned_asset_ids"]) == ["p1", "p2", "p3"]
    assert retrieval["query_text"] == "poster layout"
    assert retrieval["session_guid"] == "conv-7"
    assert retrieval["retrieval_role"] == "operate"
    prompt = _read_table(out, "prompts").iloc[0]
    assert (prompt["prompt_id"], prompt["user_id"]) == (ids["trace"], "user-7")
    assert prompt["prompt_text"] == "a poster layout"
    action = _read_table(out, "actions").iloc[0]
    assert action["action_id"] == f"{ids['t1']}:p2"
    assert action["source_retrieval_id"] == ids["r1"]
    assert action["consumed_asset_id"] == "p2"
    labels = _read_table(out, "relevance_labels").sort_values("asset_id")
    assert list(labels["grade"]) == [1, 0, 1]
    assert labels["judged_at"].iloc[0] == pd.Timestamp("2026-08-03T10:00:40Z")


def test_otel_genai_from_a_phoenix_dataframe(tmp_path):
    """The same GenAI spans as a spans dataframe (events as a list column) give the same tables."""
    spans, _ = emit_otel_genai()
    write_otlp_json(spans, tmp_path / "g.json")
    phoenix_dataframe(spans).reset_index(drop=True).to_parquet(tmp_path / "g.parquet")
    ingest_otel_genai(tmp_path / "g.json", tmp_path / "a")
    ingest_otel_genai(tmp_path / "g.parquet", tmp_path / "b")
    for table in TABLES:
        a = _comparable(_read_table(tmp_path / "a", table))
        assert a == _comparable(_read_table(tmp_path / "b", table)), table


def test_otel_genai_graded_scale(genai_tables, tmp_path):
    _, _, _, root = genai_tables
    config = IngestConfig(score_thresholds=(0.25, 0.5, 0.75), judge="human")
    ingest_otel_genai(root / "genai.json", tmp_path, config)
    labels = _read_table(tmp_path, "relevance_labels").sort_values("asset_id")
    assert list(labels["grade"]) == [3, 0, 2]
    assert set(labels["judge"]) == {"human"}


def test_required_table_without_rows_gets_an_empty_typed_file(tmp_path):
    spans, _ = emit_otel_genai()
    without_tools = [s for s in spans if not s.name.startswith("execute_tool")]
    write_otlp_json(without_tools, tmp_path / "no_tools.json")
    report = ingest_otel_genai(tmp_path / "no_tools.json", tmp_path / "raw")
    assert report["actions"] == 0 and report.partitions["actions"] == {"2026-08-03": 0}
    empty = pq.read_table(tmp_path / "raw" / "actions" / "dt=2026-08-03" / "part-0.parquet")
    assert empty.num_rows == 0
    assert str(empty.schema.field("ts").type) == "timestamp[us, tz=UTC]"


# --- dbt on the ingested tables --------------------------------------------------------


def _has_model(name: str) -> bool:
    return any((project_dir() / "models").rglob(f"{name}.sql"))


@pytest.fixture(scope="module")
def built(openinference_tables, genai_tables, openinference_exports, tmp_path_factory):
    """Both adapters' tables in one raw folder, plus a human judgement appended by
    label-import (JSON Lines beside the Parquet parts), built by dbt once."""
    oi_out, _ = openinference_tables
    genai_out, _, _, _ = genai_tables
    _, _, ids = openinference_exports
    work = tmp_path_factory.mktemp("ingest_build")
    raw = work / "raw"
    for source in (oi_out, genai_out):
        for path in source.rglob("*.parquet"):
            target = raw / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    judgements = work / "human.csv"
    pd.DataFrame(
        {
            "retrieval_id": [ids["r1"]],
            "asset_id": ["a3"],
            "grade": ["2"],
            "judge": ["human"],
            "judged_at": ["2026-08-05T09:00:00Z"],
        }
    ).to_csv(judgements, index=False)
    assert label_import(judgements, raw)["labels_written"] == 1
    select = ["staging", "data_quality"]
    if _has_model("fct_retrievals"):
        select.append("+fct_retrievals")
    result = run_dbt(
        # cautious: no tests of marts that are not built here (e.g. relationships to them)
        ["build", "--select", *select, "--indirect-selection", "cautious"],
        raw,
        work / "lara.duckdb",
        extra_env={"DBT_TARGET_PATH": str(work / "target"), "DBT_LOG_PATH": str(work / "logs")},
        capture=True,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
    return work / "lara.duckdb"


def _query(warehouse: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_dbt_staging_reads_every_ingested_row(built):
    counts = dict(
        _query(
            built,
            "select table_name, clean_rows from data_quality.dq_reconciliation "
            "where table_name in ('prompts', 'retrievals', 'actions', 'relevance_labels')",
        )
    )
    assert counts == {"prompts": 4, "retrievals": 5, "actions": 4, "relevance_labels": 8}
    assert _query(built, "select count(*) from data_quality.dq_quarantine") == [(0,)]


def test_dbt_staging_keeps_lineage_and_lists(built, openinference_exports):
    _, _, ids = openinference_exports
    rows = _query(
        built,
        "select retrieval_id, returned_asset_ids, retrieval_role, returned_count "
        "from staging.stg_lara__retrievals order by retrieved_at",
    )
    by_id = {row[0]: row[1:] for row in rows}
    assert by_id[ids["r1"]] == (["a1", "a2", "a3"], "find", 3)
    assert by_id[ids["r3"]] == ([], "browse", 0)
    actions = _query(
        built,
        "select consumed_asset_id, source_retrieval_id, actor from staging.stg_lara__actions "
        f"where action_id = '{ids['t1']}:a2'",
    )
    assert actions == [("a2", ids["r1"], "agent")]


@pytest.mark.skipif(not _has_model("fct_retrievals"), reason="marts.fct_retrievals not written yet")
def test_dbt_fct_retrievals_on_ingested_traces(built, openinference_exports, genai_tables):
    _, _, ids = openinference_exports
    _, _, genai_ids, _ = genai_tables
    with duckdb.connect(str(built), read_only=True) as con:
        marts = con.execute(
            "select retrieval_id, is_empty, is_labelled, precision_at_1, ndcg_at_k, "
            "has_agent_consumption from marts.fct_retrievals"
        ).df()
    marts = marts.set_index("retrieval_id")
    assert ids["r4"] not in marts.index  # synthetic prompt: out of every metric
    r1 = marts.loc[ids["r1"]]
    assert bool(r1["is_labelled"]) and bool(r1["has_agent_consumption"])
    assert r1["precision_at_1"] == 1
    # The human grade 2 for a3 wins over the LLM's 0: gains 1, 1, 2 against ideal 2, 1, 1.
    dcg = 1 + 1 / np.log2(3) + 2 / np.log2(4)
    ideal = 2 + 1 / np.log2(3) + 1 / np.log2(4)
    assert r1["ndcg_at_k"] == pytest.approx(dcg / ideal)
    assert bool(marts.loc[ids["r3"], "is_empty"])
    assert bool(marts.loc[genai_ids["r1"], "has_agent_consumption"])


def test_label_sample_on_the_built_warehouse(built, openinference_exports, tmp_path):
    """label-sample reads the dbt-built scope model: synthetic and empty retrievals out."""
    _, _, ids = openinference_exports
    summary = label_sample(built, tmp_path, total=10, k=2, seed=1)
    design = pd.read_csv(tmp_path / "sample_design.csv")
    # r1, r2 (sess-1) and the GenAI retrieval; r3 is empty, r4 synthetic.
    assert summary["retrievals_in_frame"] == 3
    assert ids["r3"] not in set(design["retrieval_id"]) and ids["r4"] not in set(
        design["retrieval_id"]
    )
    assert set(design["inclusion_probability"]) == {1.0}  # everything fits in the budget
    judging = pd.read_csv(tmp_path / "judging.csv")
    r1 = judging[judging["retrieval_id"] == ids["r1"]]
    assert list(r1["asset_id"]) == ["a1", "a2"]
    estimate = weighted_mean([1.0, 0.5, 0.0], design["inclusion_probability"].tolist())
    assert estimate.estimate == pytest.approx(0.5) and estimate.variance == 0


# --- timestamps of any precision ---------------------------------------------------------

NANOS = T0 + 123_456_789  # 2026-08-03T10:00:00.123456789Z


def _precise_spans():
    e = Emitter()
    root, _ = e.span(
        "designer_agent",
        NANOS,
        attributes={KIND: AGENT, SpanAttributes.INPUT_VALUE: "q", SpanAttributes.SESSION_ID: "s"},
    )
    retrieval, _ = e.span(
        "template_search",
        NANOS + 200,  # 200 ns later: the same microsecond
        parent=root,
        attributes={KIND: RETRIEVER, LARA_RETRIEVAL_ROLE: "find", **_documents([("a1", 0.9)])},
    )
    retrieval.end(NANOS + 2 * SECOND)
    root.end(NANOS + 3 * SECOND)
    return list(e.finished())


def test_timestamps_of_any_precision_are_truncated_to_microseconds(tmp_path):
    """Nanosecond OTLP (the SDK's unit), nanosecond Parquet, ISO strings with nine fraction
    digits and epoch milliseconds in JSON Lines: written as microseconds, never refused."""
    spans = _precise_spans()
    write_otlp_json(spans, tmp_path / "otlp.json")
    frame = phoenix_dataframe(spans).reset_index(drop=True)
    assert str(frame["start_time"].dtype) == "datetime64[ns, UTC]"
    frame.to_parquet(tmp_path / "ns.parquet")
    iso = frame.assign(
        start_time=[f"2026-08-03T10:00:00.{123456789 + i * 200:09d}Z" for i in (0, 1)]
    )
    iso.drop(columns=["end_time"]).to_json(tmp_path / "iso.jsonl", orient="records", lines=True)
    millis = frame.assign(start_time=[1_785_751_200_123, 1_785_751_200_123])
    millis.drop(columns=["end_time"]).to_json(tmp_path / "ms.jsonl", orient="records", lines=True)
    expected = {
        "otlp.json": pd.Timestamp("2026-08-03T10:00:00.123456Z"),
        "ns.parquet": pd.Timestamp("2026-08-03T10:00:00.123456Z"),
        "iso.jsonl": pd.Timestamp("2026-08-03T10:00:00.123456Z"),
        "ms.jsonl": pd.Timestamp("2026-08-03T10:00:00.123Z"),
    }
    for name, stamp in expected.items():
        out = tmp_path / f"out_{name}"
        ingest_openinference(tmp_path / name, out)
        prompts = _read_table(out, "prompts")
        retrievals = _read_table(out, "retrievals")
        assert prompts["ts"].tolist() == [stamp], name
        assert retrievals["ts"].tolist() == [stamp], name
        schema = pq.read_schema(next((out / "prompts").glob("dt=*/*.parquet")))
        assert str(schema.field("ts").type) == "timestamp[us, tz=UTC]"


def test_bench_spans_flattens_what_it_built():
    """The speed measurement (`lara.ingest.bench_spans`) runs the real reading and extraction
    on its synthetic spans: five a trace, one retriever with five documents, one tool call."""
    from lara.ingest import bench_spans

    result = bench_spans(500)
    assert result["n_spans"] == 500
    assert (result["retrieval_spans"], result["documents"]) == (100, 500)
    assert result["tool_spans"] == 200  # the tool span and the agent span of each trace
    assert result["spans_per_second"] > 0 and result["cpu_seconds"] >= 0
    assert result["parse_floor_cpu_seconds"] >= 0  # only parsing the same requests
    # the same spans as a Phoenix spans dataframe in a Parquet file: the same facts found
    from lara.ingest import bench_phoenix_spans

    phoenix = bench_phoenix_spans(500)
    for name in ("n_spans", "retrieval_spans", "documents", "tool_spans"):
        assert phoenix[name] == result[name], name


def test_structured_otlp_values_are_flattened(tmp_path):
    """OTLP `kvlistValue` / `arrayValue` attributes (the GenAI conventions' structured
    form, not JSON text): messages, documents and tool arguments are read all the same."""

    def text(value):
        return {"stringValue": value}

    def kvlist(**items):
        return {"kvlistValue": {"values": [{"key": k, "value": v} for k, v in items.items()]}}

    def array(*items):
        return {"arrayValue": {"values": list(items)}}

    def span(span_id, name, start, parent="", **attributes):
        return {
            "traceId": "0af7651916cd43dd8448eb211c80319c",
            "spanId": span_id,
            "parentSpanId": parent,
            "name": name,
            "startTimeUnixNano": str(T0 + start * SECOND),
            "attributes": [
                {"key": k.replace("__", "."), "value": v} for k, v in attributes.items()
            ],
        }

    root = "b7ad6b7169203331"
    messages = array(
        kvlist(role=text("system"), parts=array(kvlist(type=text("text"), content=text("brief")))),
        kvlist(
            role=text("user"),
            parts=array(
                kvlist(type=text("text"), content=text("a poster")),
                kvlist(type=text("text"), content=text("in red")),
            ),
        ),
    )
    documents = array(
        kvlist(id=text("p1"), score={"doubleValue": 0.9}),
        kvlist(metadata=kvlist(asset_id=text("p2"))),
    )
    request = {
        "resourceSpans": [
            {
                "resource": {"attributes": []},
                "scopeSpans": [
                    {
                        "spans": [
                            span(
                                root,
                                "invoke_agent designer",
                                0,
                                gen_ai__conversation__id=text("conv-9"),
                                gen_ai__input__messages=messages,
                            ),
                            span(
                                "00f067aa0ba902b7",
                                "retrieval templates",
                                1,
                                root,
                                gen_ai__retrieval__documents=documents,
                            ),
                            span(
                                "00f067aa0ba902b8",
                                "execute_tool insert",
                                2,
                                root,
                                gen_ai__tool__call__arguments=kvlist(
                                    asset=text("p2"), n={"intValue": "3"}
                                ),
                            ),
                        ]
                    }
                ],
            }
        ]
    }
    (tmp_path / "structured.json").write_text(json.dumps(request))
    report = ingest_otel_genai(tmp_path / "structured.json", tmp_path / "raw")
    assert report.diagnostics["document_ids_by_key"] == {"id": 1, "metadata.asset_id": 1}
    prompt = _read_table(tmp_path / "raw", "prompts").iloc[0]
    assert prompt["prompt_text"] == "a poster\nin red"
    retrieval = _read_table(tmp_path / "raw", "retrievals").iloc[0]
    assert list(retrieval["returned_asset_ids"]) == ["p1", "p2"]
    action = _read_table(tmp_path / "raw", "actions").iloc[0]
    assert (action["consumed_asset_id"], action["source_retrieval_id"]) == (
        "p2",
        "00f067aa0ba902b7",
    )


def test_otlp_spellings_layouts_and_order_in_one_read():
    """camelCase, snake_case and legacy (`instrumentationLibrarySpans`) requests, a list of
    requests, and several resources and scopes in one request, read together: the same
    spans, attributes and row order as the same spans in plain camelCase requests."""
    from lara.ingest.bench import synthetic_otlp_requests
    from lara.ingest.otlp import _CAMEL_TO_SNAKE
    from lara.ingest.spans import read_span_documents

    requests = synthetic_otlp_requests(5 * 512)
    plain = read_span_documents(requests)

    def snake(text: str) -> str:
        for camel, snake_name in _CAMEL_TO_SNAKE.items():
            text = text.replace(f'"{camel}"', f'"{snake_name}"')
        return text

    first, second = (json.loads(text) for text in requests[:2])
    # One request: two resources, the first with two scopes (the spans of requests 0, 1).
    scopes = first["resourceSpans"][0]["scopeSpans"]
    half = len(scopes[0]["spans"]) // 2
    scopes[:] = [{"spans": scopes[0]["spans"][:half]}, {"spans": scopes[0]["spans"][half:]}]
    first["resourceSpans"].append(second["resourceSpans"][0])
    mixed = [
        json.dumps(first),
        snake(requests[2]),
        requests[3].replace('"scopeSpans"', '"instrumentationLibrarySpans"'),
        "[" + requests[4] + "]",
    ]
    for texts in (mixed, [json.dumps(first), *requests[2:]]):  # the general, the common path
        read = read_span_documents(texts)
        pd.testing.assert_frame_equal(read.frame, plain.frame)
        pd.testing.assert_frame_equal(read.attributes, plain.attributes)


def test_lookup_frame_and_reference_tokens():
    """Look-ups spread into columns for any index (span rows 0..n-1 or not), names found
    inside JSON metadata, blanks as null; tool tokens from JSON leaves, list items and
    plain strings, whole and split (JSON-looking text that is not JSON counts whole only
    when the span has no readable JSON value)."""
    from lara.ingest.lookup import Lookup, reference_tokens
    from lara.ingest.spans import connect, fetch_frame

    con = connect()
    long = pd.DataFrame(
        {
            "row": [0, 0, 1, 2, 7],
            "key": ["a", "metadata", "a", "b", "a"],
            "value": [" x ", '{"lara": {"role": "find"}}', " ", "y", "z"],
            "vtype": ["string"] * 5,
        }
    )
    lookup = Lookup(con, long)
    spec = {"a": ["a"], "role": ["metadata.lara.role"], "b": ["zz", "b"], "none": []}
    expected = {"a": ["x", None, None], "role": ["find", None, None], "b": [None, None, "y"]}
    for index in (pd.Index([0, 1, 2]), pd.Index([0, 1, 2, 5])):  # rows 0..n-1, and not
        found = lookup.frame(spec, index)
        for alias, values in expected.items():
            assert found[alias].tolist()[:3] == values and found[alias].dtype == object
        assert found["none"].isna().all() and found.index.equals(index)
    shuffled = lookup.frame(spec, pd.Index([2, 7, 0]))
    assert shuffled["a"].tolist() == [None, "z", "x"] and shuffled["b"].tolist()[0] == "y"
    lookup.close()

    values = pd.DataFrame(
        {
            "entity": [0, 0, 1, 1, 2, 3, 4, 5, 7, 7, 8],
            "value": [
                ' {"asset_id": "a-1", "n": 3, "l": ["x y", 2, 1.5]}',
                "hello world",
                "\u00a0{not json",
                '{"k": "v"}',
                "{bad",
                '["p", "q"]',
                "12",
                None,
                "{}",
                '\t[ "z" ]',
                "1.5",
            ],
            "vtype": ["string"] * 5 + ["list", "int", "string", "string", "string", "float"],
        }
    )
    tokens = reference_tokens(con, values)
    by_entity = tokens.groupby("entity")["token"].agg(list).to_dict()
    assert by_entity == {
        0: ["2", "3", "a-1", "hello", "hello world", "world", "x", "x y", "y"],
        1: ["v"],
        2: ["bad", "{bad"],
        3: ["p", "q"],
        4: ["12"],
        7: ["z"],
    }
    # Results fetched through Arrow keep the dtypes of `.df()`: no value -> object.
    frame = fetch_frame(con, "select 'a' as t, null::varchar as n, 1 as i")
    assert (
        frame.dtypes.to_dict()
        == con.sql("select 'a' as t, null::varchar as n, 1 as i").df().dtypes.to_dict()
    )


def _long_attributes(con, table_name: str) -> list[tuple]:
    return sorted(con.sql(f"select row, key, value, vtype from {table_name}").fetchall())


def test_phoenix_nested_columns_flatten_as_their_json_does():
    """A Phoenix table's nested Arrow columns (structs, lists of structs, lists of lists,
    lists of scalars, empty and all-null lists, hostile text, unusual numbers) and scalar
    ones are flattened natively into exactly the (row, key, value, vtype) that flattening their JSON
    text gives (`flatten_json`, the path maps and JSON strings still take)."""
    import pyarrow as pa

    from lara.ingest.phoenix import _attributes_table, _json_texts
    from lara.ingest.span_core import connect, flatten_json

    hostile = 'x\'); drop table attrs; -- "q" \\ ü\n<b>'
    documents = [
        [
            {
                "document.id": "a-1",
                "document.score": 1.0,
                "document.metadata": {"page": 2, "tags": ["x", None], "ok": True},
            },
            None,
            {"document.id": hostile, "document.score": 1e20, "document.metadata": None},
        ],
        [],
        None,
        [None, None],
        [{"document.id": "b", "document.score": float("nan"), "document.metadata": None}],
        [{"document.id": None, "document.score": 1.5e-7, "document.metadata": {"page": None}}],
    ]
    table = pa.table(
        {
            "attributes.retrieval.documents": pa.array(documents),
            "attributes.grid": pa.array([[[1, 2], [3]], [[]], None, [None, [4]], [[]], []]),
            "attributes.tags": pa.array([["a", None], [], None, [hostile], ["d"], [None]]),
            # scalar columns render as nested leaves do (a float's 1.0 as "1.0", not "1")
            "attributes.score": pa.array([1.0, None, float("nan"), 1e20, -0.0, 1.5e-7]),
            "attributes.ok": pa.array([True, False, None, True, None, False]),
            "attributes.count": pa.array([1, None, -(2**62), 0, 7, None]),
            "attributes": pa.array(
                [
                    {"session": {"id": "s1"}, "flag": True, "n": -3},
                    None,
                    {"session": {"id": None}, "flag": False, "n": None},
                    {"session": None, "flag": None, "n": 2**62},
                    {"session": {"id": hostile}, "flag": True, "n": 0},
                    {"session": {"id": ""}, "flag": None, "n": None},
                ]
            ),
        }
    )
    con = connect()
    native = _long_attributes(con, _attributes_table(con, table))
    as_json = pd.concat(
        [
            pd.DataFrame(
                {
                    "row": range(table.num_rows),
                    "prefix": name.removeprefix("attributes").removeprefix("."),
                    "j": _json_texts(con, table.column(name)).to_pylist(),
                }
            )
            for name in table.column_names
        ],
        ignore_index=True,
    )
    expected = flatten_json(con, as_json[as_json["j"].notna()])
    assert native == sorted(expected[["row", "key", "value", "vtype"]].itertuples(index=False))
    # the rule itself (the loop the columnar reading replaced had it too): lists of
    # objects or lists flatten by position, a list of scalars or an empty one stays a value
    assert (0, "retrieval.documents.2.document.id", hostile, "string") in native  # past a null
    assert (0, "grid.0", "[1,2]", "list") in native and (1, "grid.0", "[]", "list") in native
    assert (0, "tags", '["a",null]', "list") in native
    assert (0, "score", "1.0", "float") in native and (0, "ok", "true", "bool") in native
    assert (1, "retrieval.documents", "[]", "list") in native
    assert (3, "retrieval.documents", "[null,null]", "list") in native
    # with no prefix, a list at the top of a value has no key: its items come by position
    top = flatten_json(
        con, pd.DataFrame({"row": [0, 1], "j": ['["p", "q"]', '{"t": ["a"], "e": []}']})
    )
    assert sorted(top[["row", "key", "value", "vtype"]].itertuples(index=False, name=None)) == [
        (0, "0", "p", "string"),
        (0, "1", "q", "string"),
        (1, "e", "[]", "list"),
        (1, "t", '["a"]', "list"),
    ]


def test_phoenix_columns_give_way_in_a_stated_order():
    """For one (span, key): an `attributes.<name>` column beats the nested `attributes`
    column, a nested column beats a scalar one, a later column an earlier one; ids in
    bytes are read as lower-case hex, all-zero ids as none."""
    import pyarrow as pa

    from lara.ingest.phoenix import _attributes_table, phoenix_batch
    from lara.ingest.span_core import connect

    table = pa.table(
        {
            "context.span_id": pa.array(
                [bytes.fromhex("00000000000000ab"), b"\x01" * 8, b"\x02" * 8]
            ),
            "context.trace_id": pa.array(["AB" * 16, "cd" * 16, "ef" * 16]),
            "parent_id": pa.array([None, "0000000000000000", "00000000000000ab"]),
            "attributes": pa.array([{"a": {"b": "from attributes"}, "c": "kept"}] * 3),
            "attributes.a.b": pa.array(["scalar", "scalar", None]),
            "attributes.a": pa.array([{"b": "struct"}, None, None]),
        }
    )
    con = connect()
    values = {
        (row, key): value
        for row, key, value, _ in _long_attributes(con, _attributes_table(con, table))
    }
    assert values == {
        (0, "a.b"): "struct",
        (1, "a.b"): "scalar",
        (2, "a.b"): "from attributes",
        (0, "c"): "kept",
        (1, "c"): "kept",
        (2, "c"): "kept",
    }
    frame = phoenix_batch(con, table).frame
    assert frame["span_id"].tolist() == ["00000000000000ab", "01" * 8, "02" * 8]
    assert frame["trace_id"].tolist() == ["ab" * 16, "cd" * 16, "ef" * 16]
    assert frame["parent_id"].isna().tolist() == [True, True, False]


# --- reading only the attributes an adapter reads ---------------------------------------

KEY_CONFIGS = [
    CONFIG,
    IngestConfig(),
    IngestConfig(tool_asset_keys=("asset_id", "ids")),
    IngestConfig(
        metadata_attribute="app.meta",
        role_attribute="app.retrieval.role",
        surface_attribute="app.surface",
        reference_attributes=("tool.parameters", "input.value"),
        document_id_keys=("document.metadata.asset_id", "document.id"),
    ),
    IngestConfig(metadata_attribute=None, surface_attribute=None, role_attribute=None),
]


def _asked_names(monkeypatch) -> tuple[list[str], list[str]]:
    """Record what extractions ask of a span set's attribute table: exact names (a value
    per entity, or a JSON path below a shorter name) and prefixes (every key under one)."""
    from lara.ingest import lookup as lookup_module

    exact: list[str] = []
    under: list[str] = []
    cls = lookup_module.Lookup
    init, best, values, below, indexed = cls.__init__, cls._best, cls.values, cls.under, cls.indexed

    def recording_init(self, con, long, entity="row"):
        init(self, con, long, entity)
        self.of_spans = isinstance(long, str) and long == "attrs"

    def recording_best(self, spec, query):
        if self.of_spans:
            exact.extend(name for names in spec.values() for name in names)
        return best(self, spec, query)

    def recording_values(self, spec):
        if self.of_spans:
            exact.extend(name for names in spec.values() for name in names)
        return values(self, spec)

    def recording_under(self, names, entities):
        if self.of_spans:
            under.extend(names)
        return below(self, names, entities)

    def recording_indexed(self, prefix, entities=None):
        if self.of_spans:
            under.append(prefix)
        return indexed(self, prefix, entities)

    monkeypatch.setattr(cls, "__init__", recording_init)
    monkeypatch.setattr(cls, "_best", recording_best)
    monkeypatch.setattr(cls, "values", recording_values)
    monkeypatch.setattr(cls, "under", recording_under)
    monkeypatch.setattr(cls, "indexed", recording_indexed)
    return exact, under


def _extracted_frames(extracted) -> dict:
    return {
        name: _comparable(getattr(extracted, name))
        for name in ("spans", "retrievals", "documents", "references", "tokens", "evaluations")
    } | {"diagnostics": extracted.diagnostics}


def test_the_readers_keep_every_attribute_the_adapters_read(
    openinference_exports, genai_tables, monkeypatch, tmp_path
):
    """`lara ingest` reads only the attributes its adapter reads (openinference_keys,
    otel_genai_keys): every name an extraction asks for, with each configuration, is kept
    (a prefix with every key under it), and the extraction from the filtered span set
    equals the one from every attribute, in every export form."""
    from lara.ingest.openinference import extract_openinference, openinference_keys
    from lara.ingest.otel_genai import extract_otel_genai, otel_genai_keys
    from lara.ingest.spans import read_spans

    oi_root, _, _ = openinference_exports
    spans, _ = emit_otel_genai()
    phoenix_dataframe(spans).reset_index(drop=True).to_parquet(tmp_path / "genai.parquet")
    adapters = [
        (extract_openinference, openinference_keys, oi_root / name)
        for name in ("otlp.json", "otlp_base64.jsonl.gz", "spans.parquet", "spans_nested.jsonl")
    ] + [
        (extract_otel_genai, otel_genai_keys, genai_tables[3] / "genai.json"),
        (extract_otel_genai, otel_genai_keys, tmp_path / "genai.parquet"),
    ]
    exact, under = _asked_names(monkeypatch)
    for extract, keys, path in adapters:
        for config in KEY_CONFIGS:
            exact.clear()
            under.clear()
            keep = keys(config)
            everything = extract(read_spans(path), config)
            assert exact and under, "the recording saw no look-up"
            missed = [name for name in exact if not keep.keeps(name)]
            missed += [
                prefix
                for prefix in under
                if not any(prefix == n or prefix.startswith(n + ".") for n in keep.names)
            ]
            assert not missed, f"{extract.__name__} reads {missed}, which the reader drops"
            filtered = extract(read_spans(path, keep), config)
            assert _extracted_frames(filtered) == _extracted_frames(everything), (path, config)


#: the modules that build the span set's attribute table (and Lookup, which reads it)
ATTRIBUTE_TABLE_WRITERS = {"spans", "otlp", "phoenix", "span_core", "lookup"}


def test_the_adapters_read_span_attributes_only_through_lookup() -> None:
    """The test above records the names the extractions ask `Lookup` for. It would not see
    an extraction that read the span set's attribute table some other way (its own SQL on
    `attributes_table`, the `attributes` frame), so no module but the readers touches the
    table except to hand it to `Lookup`."""
    import ast

    import lara.ingest

    package = Path(lara.ingest.__file__).parent
    outside = []
    for path in sorted(package.glob("*.py")):
        if path.stem in ATTRIBUTE_TABLE_WRITERS:
            continue
        tree = ast.parse(path.read_text())
        handed = {
            id(arg)
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Lookup"
            for arg in node.args
        }
        outside += [
            f"{path.name}:{node.lineno} .{node.attr}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and node.attr in {"attributes_table", "attributes"}
            and id(node) not in handed
        ]
        outside += [
            f"{path.name}:{node.lineno} the table's name"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "attrs" in node.value.split()
        ]
    assert not outside, f"span attributes read outside Lookup: {outside}"
    assert {"openinference.py", "otel_genai.py"} <= {p.name for p in package.glob("*.py")}


def test_attributes_no_adapter_reads_are_not_read(openinference_exports, tmp_path):
    """An attribute the adapter does not read (an LLM span's messages, its output) stays
    out of the span set: a Phoenix file's column is not read at all, other inputs' keys are
    dropped once read; the tables written are the same."""
    import pyarrow as pa

    from lara.ingest.openinference import openinference_keys
    from lara.ingest.spans import read_spans

    root, spans, _ = openinference_exports
    frame = phoenix_dataframe(spans).reset_index(drop=True)
    frame["attributes.output.value"] = "an answer the adapter does not read"
    frame.to_json(tmp_path / "x.jsonl", orient="records", lines=True, date_format="iso")
    table = pa.Table.from_pandas(frame, preserve_index=False)
    # a map column (flattened through its JSON text, the slow path) under a name not read
    unread = pa.array([[("k", b"\x00")]] * len(frame), pa.map_(pa.string(), pa.binary()))
    pq.write_table(table.append_column("attributes.llm.unreadable", unread), tmp_path / "x.parquet")
    keep = openinference_keys(CONFIG)
    # otlp.json: its resource attributes (service.name, telemetry.sdk.*) are not read
    for path in (tmp_path / "x.parquet", tmp_path / "x.jsonl", root / "otlp.json"):
        every = read_spans(path).attributes
        kept = read_spans(path, keep).attributes
        assert set(every["key"]) > set(kept["key"]), path
        assert all(keep.keeps(key) for key in kept["key"]), path
        assert not kept["key"].str.startswith(("llm.", "output.")).any(), path
        expected = every[every["key"].map(keep.keeps)].reset_index(drop=True)
        assert _comparable(kept) == _comparable(expected), path
    # What was left out is named (list positions as `*`), and reported by `lara ingest`.
    assert read_spans(tmp_path / "x.parquet", keep).attributes_not_read == [
        "llm.unreadable",
        "output.value",
    ]
    assert "service.name" in read_spans(root / "otlp.json", keep).attributes_not_read
    assert read_spans(root / "otlp.json").attributes_not_read == []
    ingest_openinference(root / "spans.parquet", tmp_path / "a", CONFIG)
    report = ingest_openinference(tmp_path / "x.parquet", tmp_path / "b", CONFIG)
    assert report.diagnostics["attributes_not_read"] == ["llm.unreadable", "output.value"]
    for table_name in TABLES[:3]:
        a = _comparable(_read_table(tmp_path / "a", table_name))
        assert a == _comparable(_read_table(tmp_path / "b", table_name)), table_name


def test_attributes_not_read_are_named_once_per_list_position():
    from lara.ingest.run import _first
    from lara.ingest.span_core import attribute_names

    keys = [
        "llm.input_messages.0.message.content",
        "llm.input_messages.1.message.content",
        "llm.input_messages.10.message.role",
        "llm.token_count.prompt",
        "tag.2",
    ]
    assert attribute_names(keys) == [
        "llm.input_messages.*.message.content",
        "llm.input_messages.*.message.role",
        "llm.token_count.prompt",
        "tag.*",
    ]
    assert _first(["a", "b", "c"], 2) == ["a", "b", "(and 1 more)"]
    assert _first(["a", "b"], 2) == ["a", "b"]
