"""Trace adapters on spans from real instrumentors, exported by the SDK's real encoders.

Two small applications run offline, no model and no network:

- LangChain: langchain-core's `InMemoryVectorStore` over `DeterministicFakeEmbedding`,
  its retriever, and two tools, instrumented by `openinference-instrumentation-langchain`;
- LlamaIndex: llama-index-core's `VectorStoreIndex` over `MockEmbedding`, its retriever
  and a `FunctionTool`, instrumented by `openinference-instrumentation-llama-index`.

Their spans go through the OpenTelemetry SDK's encoders to every input the ingest reads:
OTLP JSON with hex ids (`opentelemetry-exporter-otlp-json-common`), OTLP JSON with base64
ids (the protobuf request of `opentelemetry-exporter-otlp-proto-common` through
`json_format`), the file exporter's JSON Lines (`opentelemetry-exporter-otlp-json-file`,
plain and gzipped), OTLP protobuf (`.pb`), and Phoenix's spans dataframe as Parquet
(shaped as `px.Client().get_spans_dataframe()` shapes it). Every export must give the
same tables; one of them is built by dbt, after a `label-import`, and the marts checked.
A second folder, with prompts and retrievals only, goes through `lara run`.
"""

from __future__ import annotations

import gzip
import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from google.protobuf import json_format
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langchain_core.vectorstores import InMemoryVectorStore
from llama_index.core import VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.schema import TextNode
from llama_index.core.tools import FunctionTool
from openinference.instrumentation import (
    OITracer,
    TraceConfig,
    using_metadata,
    using_session,
    using_user,
)
from openinference.instrumentation.langchain import LangChainInstrumentor
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from openinference.semconv import trace as semconv_trace
from openinference.semconv.trace import DocumentAttributes, SpanAttributes
from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans as encode_json
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as encode_proto
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from lara.dbt import run_dbt
from lara.ingest import IngestConfig, ingest_openinference
from lara.ingest.manifest import MANIFEST_NAME
from lara.labels import label_import
from lara.paths import project_dir

TABLES = ["prompts", "retrievals", "actions", "relevance_labels"]
TEMPLATES = {
    "tpl-blue-logo": "a blue logo template with a round emblem",
    "tpl-red-poster": "a red poster layout for a concert",
    "tpl-green-card": "a green business card with a leaf",
    "tpl-blue-banner": "a wide blue banner for a web page",
    "tpl-mono-menu": "a black and white restaurant menu",
}


# --- the two applications ----------------------------------------------------------------


def _langchain_app(record: dict) -> None:
    """Three requests: one retrieves and calls two tools on returned assets, two only
    retrieve (one of them on another surface, stated in the request's metadata)."""
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    # No Document.id: the instrumentor writes only document.content / document.metadata,
    # so the asset id travels in the metadata (`asset_id`), as applications do.
    store.add_documents(
        [Document(page_content=text, metadata={"asset_id": key}) for key, text in TEMPLATES.items()]
    )
    retriever = store.as_retriever(
        search_kwargs={"k": 3}, metadata={"lara.retrieval.role": "find"}
    ).with_config(run_name="template_search")

    @tool
    def insert_asset(asset_id: str, document_id: str) -> str:
        """Insert a template asset into the design document."""
        return f"inserted {asset_id} into {document_id}"

    @tool
    def read_asset(asset_id: str) -> str:
        """Read a template asset."""
        return f"content of {asset_id}"

    def designer(question: str) -> str:
        documents = retriever.invoke(question)
        record.setdefault("langchain_returned", []).append(
            [d.metadata["asset_id"] for d in documents]
        )
        if question.startswith("use"):
            insert_asset.invoke(
                {"asset_id": documents[1].metadata["asset_id"], "document_id": "doc-1"}
            )
            read_asset.invoke({"asset_id": documents[0].metadata["asset_id"]})
        return "done"

    agent = RunnableLambda(designer).with_config(run_name="designer_agent")
    with using_session("sess-lc-1"), using_user("user-1"):
        agent.invoke("use a blue logo template")
        agent.invoke("anything for a poster")
    with using_session("sess-lc-2"), using_user("user-2"):
        agent.invoke(
            "a card with a leaf", config={"metadata": {"lara.surface": "editor_assistant"}}
        )


def _llama_index_app(provider: TracerProvider, record: dict) -> None:
    """One request under the application's own agent span: retrieve, then a tool call."""
    nodes = [
        TextNode(text=text, id_=f"li-{key}", metadata={"asset_id": f"li-{key}"})
        for key, text in TEMPLATES.items()
    ]
    index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))
    retriever = index.as_retriever(similarity_top_k=2)

    def insert_asset(asset_id: str, document_id: str) -> str:
        """Insert a template asset into the design document."""
        return f"inserted {asset_id} into {document_id}"

    insert = FunctionTool.from_defaults(fn=insert_asset)
    tracer = OITracer(provider.get_tracer("designer-app"), config=TraceConfig())
    with (
        using_session("sess-li-1"),
        using_user("user-3"),
        using_metadata({"lara.retrieval.role": "operate"}),
        tracer.start_as_current_span("designer_agent", openinference_span_kind="agent") as span,
    ):
        span.set_input("insert the best banner")
        found = retriever.retrieve("insert the best banner")
        # Node ids are the asset ids here: the instrumentor writes them as document.id.
        record["llama_index_returned"] = [item.node.node_id for item in found]
        insert.call(asset_id=found[0].node.node_id, document_id="doc-2")


def _retrieval_only_app(record: dict) -> None:
    """Two sessions that only retrieve (no tool, no user action, no outcome)."""
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents(
        [Document(page_content=text, metadata={"asset_id": key}) for key, text in TEMPLATES.items()]
    )
    retriever = store.as_retriever(search_kwargs={"k": 2})
    for session, question in [("sess-ro-1", "a menu"), ("sess-ro-2", "a banner")]:
        with using_session(session):
            found = retriever.invoke(question)
            record.setdefault("retrieval_only_returned", []).append(
                [d.metadata["asset_id"] for d in found]
            )


@pytest.fixture(scope="session")
def instrumented(tmp_path_factory):
    """Spans of both applications (in memory) and the file exporter's JSON Lines."""
    root = tmp_path_factory.mktemp("instrumented")
    (root / "collector").mkdir()
    (root / "retrieval_only").mkdir()
    record: dict = {}
    provider = TracerProvider(resource=Resource.create({"service.name": "lara-designer"}))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    # The file exporter writes what an OpenTelemetry Collector's file exporter writes:
    # one OTLP JSON ExportTraceServiceRequest a line, one line a batch.
    provider.add_span_processor(
        BatchSpanProcessor(FileSpanExporter(root / "collector" / "traces.jsonl"))
    )
    langchain = LangChainInstrumentor()
    llama_index = LlamaIndexInstrumentor()
    langchain.instrument(tracer_provider=provider)
    llama_index.instrument(tracer_provider=provider)
    try:
        _langchain_app(record)
        _llama_index_app(provider, record)
        provider.force_flush()
        spans = list(memory.get_finished_spans())
        memory.clear()
        only = TracerProvider(resource=Resource.create({"service.name": "lara-search"}))
        only.add_span_processor(
            SimpleSpanProcessor(FileSpanExporter(root / "retrieval_only" / "traces.jsonl"))
        )
        langchain.uninstrument()
        langchain.instrument(tracer_provider=only)
        _retrieval_only_app(record)
        only.shutdown()
    finally:
        langchain.uninstrument()
        llama_index.uninstrument()
        provider.shutdown()
    return root, spans, record


# --- Phoenix's spans dataframe ----------------------------------------------------------

# The layout of Phoenix's `get_spans_dataframe()` (phoenix.trace.attributes): attribute
# names of the OpenInference conventions stay whole, the JSON-string attributes
# (metadata, document.metadata, tool.parameters, prompt template variables) are loaded,
# other dotted names nest, and numeric keys followed by objects become lists; one
# `attributes.<top-level name>` column each.
_CONVENTIONS = sorted(
    (
        getattr(klass, name)
        for class_name in dir(semconv_trace)
        if class_name.endswith("Attributes")
        and inspect.isclass(klass := getattr(semconv_trace, class_name))
        for name in dir(klass)
        if name.isupper() and isinstance(getattr(klass, name), str)
    ),
    key=len,
    reverse=True,
)
_JSON_STRING_ATTRIBUTES = (
    DocumentAttributes.DOCUMENT_METADATA,
    SpanAttributes.LLM_PROMPT_TEMPLATE_VARIABLES,
    SpanAttributes.METADATA,
    SpanAttributes.TOOL_PARAMETERS,
)


def _segments(key: str) -> list[str]:
    out = []
    while key:
        for prefix in _CONVENTIONS:
            if key == prefix or key.startswith(prefix + "."):
                out.append(prefix)
                key = key[len(prefix) + 1 :]
                break
        else:
            head, _, key = key.partition(".")
            out.append(head)
    return out


def _lists(node):
    if not isinstance(node, dict):
        return node
    node = {key: _lists(value) for key, value in node.items()}
    if node and all(k.isdigit() for k in node) and all(isinstance(v, dict) for v in node.values()):
        return [node[k] for k in sorted(node, key=int)]
    return node


def _phoenix_attributes(attributes) -> dict:
    nested: dict = {}
    for key, value in attributes.items():
        if key.endswith(_JSON_STRING_ATTRIBUTES) and isinstance(value, str):
            value = json.loads(value)
        elif isinstance(value, tuple):
            value = list(value)
        node = nested
        *heads, last = _segments(key)
        for head in heads:
            node = node.setdefault(head, {})
        node[last] = value
    return _lists(nested)


def phoenix_spans_dataframe(spans) -> pd.DataFrame:
    """ReadableSpans as `px.Client().get_spans_dataframe()` returns them."""
    rows = []
    for span in spans:
        context = span.get_span_context()
        attributes = _phoenix_attributes(dict(span.attributes))
        row = {
            "name": span.name,
            "span_kind": span.attributes.get(SpanAttributes.OPENINFERENCE_SPAN_KIND, "UNKNOWN"),
            "parent_id": format(span.parent.span_id, "016x") if span.parent else None,
            "start_time": pd.Timestamp(span.start_time, unit="ns", tz="UTC"),
            "end_time": pd.Timestamp(span.end_time, unit="ns", tz="UTC"),
            "status_code": span.status.status_code.name,
            "status_message": span.status.description or "",
            "events": [
                {
                    "name": event.name,
                    "timestamp": pd.Timestamp(event.timestamp, unit="ns", tz="UTC").isoformat(),
                    "attributes": dict(event.attributes),
                }
                for event in span.events
            ],
            "context.span_id": format(context.span_id, "016x"),
            "context.trace_id": format(context.trace_id, "032x"),
        }
        row.update({f"attributes.{key}": value for key, value in attributes.items()})
        rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.set_index("context.span_id", drop=False)


@pytest.fixture(scope="session")
def exports(instrumented):
    """The same spans in every input format (file name -> path)."""
    root, spans, _ = instrumented
    out = root / "exports"
    out.mkdir()
    paths = {}
    paths["otlp_hex.json"] = out / "otlp_hex.json"
    paths["otlp_hex.json"].write_text(json.dumps(encode_json(spans).to_dict()))
    request = encode_proto(spans)
    paths["otlp_base64.json"] = out / "otlp_base64.json"
    paths["otlp_base64.json"].write_text(json_format.MessageToJson(request))
    paths["spans.pb"] = out / "spans.pb"
    paths["spans.pb"].write_bytes(request.SerializeToString())
    collector = root / "collector" / "traces.jsonl"
    paths["collector.jsonl"] = collector
    paths["collector.jsonl.gz"] = out / "traces.jsonl.gz"
    with gzip.open(paths["collector.jsonl.gz"], "wb") as handle:
        handle.write(collector.read_bytes())
    paths["phoenix.parquet"] = out / "spans.parquet"
    phoenix_spans_dataframe(spans).reset_index(drop=True).to_parquet(paths["phoenix.parquet"])
    return paths


def _read_table(root: Path, table: str) -> pd.DataFrame:
    files = sorted((root / table).glob("dt=*/*.parquet"))
    if not files:  # an optional table with no rows is not written
        return pd.DataFrame()
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def _comparable(frame: pd.DataFrame) -> list:
    records = frame.astype(object).where(frame.notna(), None).to_dict("records")
    for record in records:
        for key, value in record.items():
            if hasattr(value, "tolist"):
                record[key] = value.tolist()
            elif isinstance(value, pd.Timestamp):
                record[key] = value.isoformat()
    return sorted(records, key=lambda r: json.dumps(r, sort_keys=True, default=str))


CONFIG = IngestConfig(action_type_map={"insert_*": "place"})


@pytest.fixture(scope="session")
def ingested(exports, tmp_path_factory):
    """Every export ingested into its own folder: name -> (folder, report)."""
    root = tmp_path_factory.mktemp("instrumented_raw")
    return {
        name: (root / name, ingest_openinference(path, root / name, CONFIG))
        for name, path in exports.items()
    }


# --- what the ingest finds ----------------------------------------------------------------


def test_the_export_carries_nanosecond_times(exports):
    """Real SDK spans carry nanoseconds: the case that made the write fail before."""
    lines = exports["collector.jsonl"].read_text().splitlines()
    starts = [
        int(span["startTimeUnixNano"])
        for line in lines
        for resource in json.loads(line)["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]
    assert any(start % 1000 for start in starts)


def test_every_export_format_gives_the_same_tables(ingested):
    reference = {t: _comparable(_read_table(ingested["collector.jsonl"][0], t)) for t in TABLES}
    assert len(reference["retrievals"]) == 4
    for name, (folder, _) in ingested.items():
        for table in TABLES:
            assert _comparable(_read_table(folder, table)) == reference[table], (name, table)


def test_returned_lists_and_document_ids_from_metadata(ingested, instrumented):
    _, _, record = instrumented
    folder, report = ingested["phoenix.parquet"]
    retrievals = _read_table(folder, "retrievals").sort_values("ts")
    lists = [list(ids) for ids in retrievals["returned_asset_ids"]]
    assert lists == [*record["langchain_returned"], record["llama_index_returned"]]
    # LangChain documents have no document.id: every id came from document.metadata.asset_id;
    # LlamaIndex writes the node id as document.id. None is missing (was: every one).
    assert report.diagnostics["documents_without_id"] == 0
    assert report.diagnostics["document_ids_by_key"] == {
        "document.metadata.asset_id": 9,
        "document.id": 2,
    }
    # LlamaIndex's retrieve span wraps a _retrieve span of the same kind: one retrieval.
    assert report.diagnostics["nested_retrieval_spans_merged"] == 1
    assert list(retrievals["retrieval_role"]) == ["find", "find", "find", "operate"]
    prompts = _read_table(folder, "prompts").sort_values("ts")
    assert list(prompts["surface"]) == ["chat", "chat", "editor_assistant", "chat"]
    assert list(prompts["session_guid"]) == ["sess-lc-1", "sess-lc-1", "sess-lc-2", "sess-li-1"]
    assert list(prompts["user_id"]) == ["user-1", "user-1", "user-2", "user-3"]
    assert prompts["prompt_text"].iloc[0] == "use a blue logo template"


def test_tool_calls_become_agent_actions(ingested, instrumented):
    _, _, record = instrumented
    folder, _ = ingested["otlp_base64.json"]
    actions = _read_table(folder, "actions")
    retrievals = _read_table(folder, "retrievals").sort_values("ts")
    first, llama = retrievals.iloc[0], retrievals.iloc[3]
    got = {
        (a.consumed_asset_id, a.action_type, a.source_retrieval_id) for a in actions.itertuples()
    }
    assert got == {
        (record["langchain_returned"][0][1], "place", first["retrieval_id"]),  # insert_asset
        (record["langchain_returned"][0][0], "select", first["retrieval_id"]),  # read_asset
        (record["llama_index_returned"][0], "place", llama["retrieval_id"]),
    }
    assert set(actions["actor"]) == {"agent"}


def test_tool_asset_keys_read_the_arguments(exports, tmp_path, instrumented):
    """By key: LangChain's two-argument input is JSON, its one-argument input the bare value;
    LlamaIndex's FunctionTool logs {"kwargs": {...}}."""
    _, _, record = instrumented
    config = CONFIG.replace(tool_asset_keys=("asset_id", "kwargs.asset_id"))
    report = ingest_openinference(exports["spans.pb"], tmp_path, config)
    consumed = set(_read_table(tmp_path, "actions")["consumed_asset_id"])
    assert consumed == {
        record["langchain_returned"][0][1],
        record["langchain_returned"][0][0],
        record["llama_index_returned"][0],
    }
    assert report.diagnostics["tool_asset_keys"] == ["asset_id", "kwargs.asset_id"]
    assert report.diagnostics["tool_assets_not_returned"] == 0


def test_the_run_is_recorded_in_the_folder(ingested):
    folder, _ = ingested["spans.pb"]
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    assert manifest["trace_derived"] is True
    assert set(manifest["tables_without_daily_rows"]) == {"actions", "retrievals"}
    [run] = manifest["runs"]
    assert run["adapter"] == "openinference"
    assert run["rows_written"]["retrievals"] == 4
    assert run["diagnostics"]["document_id_keys"][0] == "document.id"
    assert run["diagnostics"]["formats_read"] == {"otlp_protobuf": 1}


# --- one dbt build on an ingested folder, after a label-import ----------------------------


@pytest.fixture(scope="session")
def built(ingested, instrumented, tmp_path_factory):
    _, _, record = instrumented
    folder, _ = ingested["collector.jsonl.gz"]
    work = tmp_path_factory.mktemp("instrumented_build")
    raw = work / "raw"
    shutil.copytree(folder, raw)
    retrievals = _read_table(raw, "retrievals").sort_values("ts")
    first = retrievals.iloc[0]
    judgements = work / "judgements.csv"
    pd.DataFrame(
        {
            "retrieval_id": [first["retrieval_id"]] * 3,
            "asset_id": record["langchain_returned"][0],
            "grade": ["2", "0", "1"],
            "judge": ["human"] * 3,
            "judged_at": [(first["ts"] + pd.Timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")] * 3,
        }
    ).to_csv(judgements, index=False)
    assert label_import(judgements, raw)["labels_written"] == 3
    result = run_dbt(
        ["build", "--exclude-resource-type", "unit_test"],
        raw,
        work / "lara.duckdb",
        extra_env={"DBT_TARGET_PATH": str(work / "target"), "DBT_LOG_PATH": str(work / "logs")},
        capture=True,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
    return work / "lara.duckdb", retrievals


def _query(warehouse: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_marts_returned_lists_and_consumed_ranks(built, instrumented):
    warehouse, retrievals = built
    _, _, record = instrumented
    lists = _query(
        warehouse,
        "select returned_asset_ids from staging.stg_lara__retrievals order by retrieved_at",
    )
    assert [row[0] for row in lists] == [
        *record["langchain_returned"],
        record["llama_index_returned"],
    ]
    ranks = dict(
        _query(
            warehouse,
            "select consumed_asset_id, consumed_rank from marts.fct_action_attributions "
            "where actor = 'agent'",
        )
    )
    assert ranks == {
        record["langchain_returned"][0][1]: 2,
        record["langchain_returned"][0][0]: 1,
        record["llama_index_returned"][0]: 1,
    }


def test_marts_agent_consumption_rate(built):
    warehouse, _ = built
    [(consumed, in_scope, rate)] = _query(
        warehouse,
        "select agent_consumption_retrieval_count, in_scope_retrieval_count, "
        "agent_consumption_rate from marts.agg_tier2_usage where grouping_level = 'overall'",
    )
    # Two of the four retrievals were consumed by a tool call (LangChain's first, LlamaIndex's).
    assert (consumed, in_scope) == (2, 4)
    assert rate == pytest.approx(0.5)


def test_marts_tier1_after_label_import(built):
    warehouse, retrievals = built
    first = retrievals.iloc[0]["retrieval_id"]
    [(labelled, p_at_1, ndcg)] = _query(
        warehouse,
        "select is_labelled, precision_at_1, ndcg_at_k from marts.fct_retrievals "
        f"where retrieval_id = '{first}'",
    )
    dcg = 2 + 0 / np.log2(3) + 1 / np.log2(4)
    ideal = 2 + 1 / np.log2(3)
    assert labelled and p_at_1 == 1
    assert ndcg == pytest.approx(dcg / ideal)
    [(labelled_count, in_scope)] = _query(
        warehouse,
        "select labelled_retrieval_count, in_scope_retrieval_count from marts.agg_tier1_quality "
        "where grouping_level = 'overall'",
    )
    assert (labelled_count, in_scope) == (1, 4)


# --- lara run on prompts and retrievals only ---------------------------------------------


@pytest.fixture(scope="session")
def trace_only_run(instrumented, tmp_path_factory):
    """`lara run` on a folder ingested from retrieval-only traces, in a copy of the project
    (so that its reports, exports and dbt artifacts stay out of the work tree)."""
    root, _, _ = instrumented
    work = tmp_path_factory.mktemp("trace_only")
    raw = work / "raw"
    report = ingest_openinference(root / "retrieval_only" / "traces.jsonl", raw)
    project = work / "project"
    source = project_dir()
    ignore = shutil.ignore_patterns("target", "logs", "reports", "exports", "warehouse")
    project.mkdir()
    for name in ["dbt_project.yml", "profiles.yml"]:
        shutil.copy(source / name, project / name)
    for name in ["models", "macros", "seeds", "tests", "analyses", "gx"]:
        if (source / name).exists():
            shutil.copytree(source / name, project / name, ignore=ignore)
    env = {
        **os.environ,
        "LARA_RAW_PATH": str(raw),
        "LARA_DUCKDB_PATH": str(work / "lara.duckdb"),
        "DBT_PROJECT_DIR": str(project),
        "DBT_PROFILES_DIR": str(project),
    }
    lara = Path(sys.executable).parent / "lara"
    result = subprocess.run(
        [str(lara), "run", "--resamples", "20"],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    return report, project, work, result


def test_trace_only_folder_has_no_actions(trace_only_run):
    report, _, _, _ = trace_only_run
    assert dict(report) == {"prompts": 2, "retrievals": 2, "actions": 0, "relevance_labels": 0}


def test_lara_run_on_trace_only_logs_exits_0(trace_only_run):
    _, project, _, result = trace_only_run
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-6000:]
    assert (project / "reports" / "dashboard.html").stat().st_size > 0
    assert "no replay documents" in log  # lara bridge said why it wrote no statistics
    assert "no labelled in-scope retrievals" in log  # nor did the production bridge


def test_gate_is_told_which_tables_traces_cannot_fill(trace_only_run):
    _, project, _, _ = trace_only_run
    gate = json.loads((project / "reports" / "gate" / "gate_results.json").read_text())
    assert gate["exit_code"] == 0, gate["failures"]
    assert set(gate["trace_derived"]["row_count_not_applied"]) == {"actions", "retrievals"}
    checked = {(c["table"], c["check"]) for c in gate["checks"]}
    assert ("prompts", "row_count") in checked
    assert ("actions", "row_count") not in checked


def test_exports_of_a_trace_only_warehouse(trace_only_run):
    _, project, _, _ = trace_only_run
    index = json.loads((project / "exports" / "_index.json").read_text())
    assert index
    outcomes = pd.read_parquet(
        project / "exports" / "agg_unattributed_outcomes" / "agg_unattributed_outcomes.parquet"
    )
    assert outcomes["outcome_count"].fillna(0).sum() == 0


def test_reports_on_marts_with_labels_but_no_outcomes_or_replays(built, tmp_path):
    """The statistics and exports `lara run` writes after the build, on traces: labelled
    retrievals and agent use, but no outcome event and no replay experiment."""
    from lara.bridge import run_bridge_statistics
    from lara.export import export_marts
    from lara.production_bridge import run_production_bridge_statistics

    warehouse = tmp_path / "lara.duckdb"
    shutil.copy(built[0], warehouse)
    bridge = run_bridge_statistics(warehouse, resamples=20, seed=0, plot_dir=tmp_path)
    assert bridge["status"] == "no_replay_data" and bridge["plot"] is None
    production = run_production_bridge_statistics(warehouse, resamples=20, seed=0)
    rows = {
        row["outcome_kind"]: row for row in production["rows"] if row["retrieval_role"] == "all"
    }
    # One labelled retrieval, used by the agent; no outcome event at all.
    assert rows["use"]["retrieval_count"] == 1 and rows["use"]["positive_count"] == 1
    assert rows["outcome"]["positive_count"] == 0
    assert rows["outcome"]["spearman_rho"] is None
    exported = export_marts(warehouse, tmp_path / "exports")
    assert (tmp_path / "exports" / "_index.json").exists() and exported
