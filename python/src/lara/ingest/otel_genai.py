"""OpenTelemetry GenAI semantic-convention traces -> log contract.

- Retrieval spans (`gen_ai.operation.name` = `retrieval`, or a span named
  `retrieval` / `retrieval <data source>`) become `retrievals`: ids of
  `gen_ai.retrieval.documents` (a JSON array of `{"id", "score", ...}`, or the
  same as a structured attribute) in order, `gen_ai.retrieval.query.text` the
  query, `gen_ai.conversation.id` (else `session.id`) the session.
- The trace (or top-level span) is the prompt; `user.id` the user; the root
  span's last user message of `gen_ai.input.messages` the prompt text.
- `execute_tool` spans whose `gen_ai.tool.call.arguments` name an asset
  returned earlier in the prompt become agent `actions` with full lineage.
- `gen_ai.evaluation.result` events on a retrieval span that name a document
  (`lara.evaluation.document.id` or `.position`) become `relevance_labels`,
  as do document evaluation files (as for OpenInference).

See docs/ingest.md for every rule and setting.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from lara.ingest.attributes import (
    GEN_AI_CONVERSATION_ID,
    GEN_AI_EVALUATION_NAME,
    GEN_AI_EVALUATION_RESULT_EVENT,
    GEN_AI_EVALUATION_SCORE_LABEL,
    GEN_AI_EVALUATION_SCORE_VALUE,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OPERATION_EXECUTE_TOOL,
    GEN_AI_OPERATION_NAME,
    GEN_AI_OPERATION_RETRIEVAL,
    GEN_AI_RETRIEVAL_DOCUMENTS,
    GEN_AI_RETRIEVAL_QUERY_TEXT,
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_NAME,
    LARA_ACTION_TYPE,
    LARA_ASSET_ID,
    LARA_DOCUMENT_ID,
    LARA_EVALUATION_DOCUMENT_ID,
    LARA_EVALUATION_DOCUMENT_POSITION,
    LARA_EVALUATION_JUDGE,
    LARA_IS_SYNTHETIC,
    OI_SESSION_ID,
    USER_ID,
)
from lara.ingest.config import IngestConfig
from lara.ingest.run import ingest_spans
from lara.ingest.spans import get_attr, indexed, parse_json_value
from lara.ingest.tables import (
    EVALUATION_COLUMNS,
    REFERENCE_COLUMNS,
    RETRIEVAL_COLUMNS,
    SPAN_FACT_COLUMNS,
    Extracted,
    IngestReport,
    as_bool,
    as_text,
    reference_tokens,
)

#: Attributes scanned for returned asset ids on tool spans.
DEFAULT_REFERENCE_ATTRIBUTES = (GEN_AI_TOOL_CALL_ARGUMENTS, LARA_ASSET_ID)


def _operation(attributes: dict, name: str | None) -> str | None:
    value = attributes.get(GEN_AI_OPERATION_NAME)
    if isinstance(value, str) and value.strip():
        return value.strip()
    # Span names follow "{gen_ai.operation.name} {target}" in the conventions.
    first = (name or "").split(" ", 1)[0]
    if first in (GEN_AI_OPERATION_RETRIEVAL, GEN_AI_OPERATION_EXECUTE_TOOL):
        return first
    return None


def retrieval_documents(attributes: dict) -> list[tuple[int, str | None]]:
    """(position, id) of `gen_ai.retrieval.documents`, a JSON string or a structured value."""
    value = parse_json_value(attributes.get(GEN_AI_RETRIEVAL_DOCUMENTS))
    if isinstance(value, list):
        items = dict(enumerate(value))
    else:
        items = indexed(attributes, GEN_AI_RETRIEVAL_DOCUMENTS)
    out = []
    for position, document in items.items():
        if isinstance(document, dict):
            out.append((position, as_text(document.get("id"))))
        else:
            out.append((position, as_text(document)))
    return out


def last_user_text(messages: Any) -> str | None:
    """Text of the last `user` message of `gen_ai.input.messages` (JSON or structured)."""
    messages = parse_json_value(messages)
    if not isinstance(messages, list):
        return as_text(messages) if isinstance(messages, str) else None
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        parts = message.get("parts") or []
        texts = [
            str(part.get("content"))
            for part in parts
            if isinstance(part, dict) and part.get("type") == "text" and part.get("content")
        ]
        if texts:
            return "\n".join(texts)
        if isinstance(message.get("content"), str):
            return message["content"]
    return None


def _messages(attributes: dict) -> Any:
    if GEN_AI_INPUT_MESSAGES in attributes:
        return attributes[GEN_AI_INPUT_MESSAGES]
    # A structured (not JSON-string) value arrives flattened: rebuild the list.
    items = indexed(attributes, GEN_AI_INPUT_MESSAGES)
    if not items:
        return None
    messages = []
    for item in items.values():
        parts = indexed(item, "parts")
        messages.append(
            {
                "role": item.get("role"),
                "parts": list(parts.values()),
                "content": item.get("content"),
            }
        )
    return messages


def _evaluation_rows(span_id: str, events: list, config: IngestConfig) -> list[dict]:
    rows = []
    for event in events or []:
        if event.get("name") != GEN_AI_EVALUATION_RESULT_EVENT:
            continue
        attributes = event.get("attributes") or {}
        position = attributes.get(LARA_EVALUATION_DOCUMENT_POSITION)
        rows.append(
            {
                "span_id": span_id,
                "document_position": position,
                "asset_id": as_text(attributes.get(LARA_EVALUATION_DOCUMENT_ID)),
                "label": as_text(attributes.get(GEN_AI_EVALUATION_SCORE_LABEL)),
                "score": attributes.get(GEN_AI_EVALUATION_SCORE_VALUE),
                "name": as_text(attributes.get(GEN_AI_EVALUATION_NAME)),
                "judge": as_text(attributes.get(LARA_EVALUATION_JUDGE)) or config.judge,
                "judged_at": event.get("time"),
            }
        )
    return rows


def extract_otel_genai(
    spans: pd.DataFrame, config: IngestConfig, evaluations: pd.DataFrame | None = None
) -> Extracted:
    """The facts the contract needs, from canonical OpenTelemetry GenAI spans (one pass)."""
    reference_keys = config.reference_attributes or DEFAULT_REFERENCE_ATTRIBUTES
    facts: list[dict] = []
    retrievals: list[dict] = []
    references: list[dict] = []
    event_rows: list[dict] = []
    for span in spans.itertuples(index=False):
        attributes = span.attributes
        operation = _operation(attributes, span.name)
        facts.append(
            {
                "trace_id": span.trace_id,
                "span_id": span.span_id,
                "parent_id": span.parent_id,
                "name": span.name,
                "start_time": span.start_time,
                "session_id": as_text(
                    attributes.get(GEN_AI_CONVERSATION_ID) or attributes.get(OI_SESSION_ID)
                ),
                "user_id": as_text(attributes.get(USER_ID)),
                "prompt_text": last_user_text(_messages(attributes)),
                "surface": as_text(get_attr(attributes, config.surface_attribute)),
                "is_synthetic": as_bool(attributes.get(LARA_IS_SYNTHETIC)),
            }
        )
        if operation == GEN_AI_OPERATION_RETRIEVAL:
            retrievals.append(
                {
                    "span_id": span.span_id,
                    "query_text": as_text(attributes.get(GEN_AI_RETRIEVAL_QUERY_TEXT)),
                    "role": as_text(get_attr(attributes, config.role_attribute)),
                    "documents": retrieval_documents(attributes),
                }
            )
            event_rows += _evaluation_rows(span.span_id, span.events, config)
        elif operation in config.tool_operations:
            values = [get_attr(attributes, key) for key in reference_keys]
            references.append(
                {
                    "span_id": span.span_id,
                    "tokens": reference_tokens(v for v in values if v is not None),
                    "tool_name": as_text(attributes.get(GEN_AI_TOOL_NAME)) or span.name,
                    "action_type": as_text(attributes.get(LARA_ACTION_TYPE)),
                    "document_id": as_text(get_attr(attributes, LARA_DOCUMENT_ID)),
                }
            )
    from_events = pd.DataFrame.from_records(event_rows, columns=EVALUATION_COLUMNS)
    frames = [f for f in (from_events, evaluations) if f is not None and not f.empty]
    all_evaluations = (
        pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=EVALUATION_COLUMNS)
    )
    return Extracted(
        spans=pd.DataFrame.from_records(facts, columns=SPAN_FACT_COLUMNS),
        retrievals=pd.DataFrame.from_records(retrievals, columns=RETRIEVAL_COLUMNS),
        references=pd.DataFrame.from_records(references, columns=REFERENCE_COLUMNS),
        evaluations=all_evaluations,
        diagnostics={"evaluation_events": len(event_rows)},
    )


def ingest_otel_genai(
    src: Path,
    out: Path,
    config: IngestConfig | None = None,
    evaluations: Iterable[Path] = (),
) -> IngestReport:
    """Read an OpenTelemetry GenAI span export under `src`, write contract tables under `out`.

    Returns the rows written per table (a dict) with `.diagnostics` and `.partitions`.
    """
    return ingest_spans(extract_otel_genai, src, out, config, evaluations)
