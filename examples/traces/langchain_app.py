"""A small LangChain assistant, traced with OpenInference, exported as OTLP JSON Lines.

Runs offline: langchain-core's in-memory vector store over its deterministic fake
embeddings (no model, no network), a retriever and two tools, instrumented by
`openinference-instrumentation-langchain`; the OpenTelemetry SDK's file exporter
writes the spans as the OpenTelemetry Collector's file exporter does (one OTLP JSON
ExportTraceServiceRequest a line). The application states what a trace cannot
guess: the asset id in each document's metadata (`asset_id`), the retrieval role in
the retriever's metadata (`lara.retrieval.role`), the surface in the request's
metadata (`lara.surface`), the session and user with OpenInference's context
managers. See docs/ingest.md ("Five minutes from a trace export to the dashboard").

    .venv/bin/python examples/traces/langchain_app.py --out /tmp/lara-demo/traces.jsonl
"""

from __future__ import annotations

import argparse
from pathlib import Path

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langchain_core.vectorstores import InMemoryVectorStore
from openinference.instrumentation import using_session, using_user
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

TEMPLATES = {
    f"tpl-{colour}-{kind}": f"a {colour} {kind} template"
    for colour in ("blue", "red", "green", "black", "gold")
    for kind in ("logo", "poster", "card", "banner", "menu", "flyer")
}
QUESTIONS = [
    "use a blue logo",
    "a poster for a concert",
    "use a green business card",
    "a banner for the web page",
    "use a gold menu",
    "a flyer in red",
]


def build_assistant():
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=64))
    store.add_documents(
        [Document(page_content=text, metadata={"asset_id": key}) for key, text in TEMPLATES.items()]
    )
    retriever = store.as_retriever(
        search_kwargs={"k": 5}, metadata={"lara.retrieval.role": "find"}
    ).with_config(run_name="template_search")

    @tool
    def insert_asset(asset_id: str, document_id: str) -> str:
        """Insert a template asset into the open design document."""
        return f"inserted {asset_id} into {document_id}"

    @tool
    def preview_asset(asset_id: str) -> str:
        """Show a preview of a template asset."""
        return f"preview of {asset_id}"

    def designer(question: str) -> str:
        documents = retriever.invoke(question)
        ids = [d.metadata["asset_id"] for d in documents]
        preview_asset.invoke({"asset_id": ids[0]})
        if question.startswith("use"):
            insert_asset.invoke({"asset_id": ids[1], "document_id": "doc-1"})
        return f"found {len(ids)} templates"

    return RunnableLambda(designer).with_config(run_name="designer_agent")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the JSON Lines file to write")
    parser.add_argument("--sessions", type=int, default=12)
    args = parser.parse_args()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    provider = TracerProvider(resource=Resource.create({"service.name": "designer-assistant"}))
    provider.add_span_processor(BatchSpanProcessor(FileSpanExporter(out)))
    LangChainInstrumentor().instrument(tracer_provider=provider)
    assistant = build_assistant()
    for session in range(args.sessions):
        surface = "editor_assistant" if session % 3 == 0 else "chat"
        with using_session(f"session-{session}"), using_user(f"user-{session % 5}"):
            for turn in range(1 + session % 3):
                question = QUESTIONS[(session + turn) % len(QUESTIONS)]
                assistant.invoke(question, config={"metadata": {"lara.surface": surface}})
    provider.shutdown()
    print(f"wrote the spans of {args.sessions} sessions to {out}")


if __name__ == "__main__":
    main()
