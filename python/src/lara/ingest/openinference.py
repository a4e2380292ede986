"""OpenInference traces (Arize Phoenix, OpenInference instrumentations) -> log contract.

- `RETRIEVER` spans (`openinference.span.kind`) become `retrievals`: the span
  id is the retrieval id, `retrieval.documents.{i}.document.id` in order the
  returned list, `input.value` the query, `session.id` the session.
- The trace (or the top-level span, `prompt_from: root_span`) is the prompt:
  one `prompts` row each, `user.id` the user, the root span's `input.value`
  the prompt text, the configured surface (default `chat`).
- `TOOL` and `AGENT` spans whose input names an asset returned earlier in the
  prompt become agent `actions` with full lineage.
- Document evaluations (Phoenix `DocumentEvaluations`: span id + document
  position + label / score) become `relevance_labels` through the grade map.

See docs/ingest.md for every rule and setting.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from lara.ingest.attributes import (
    LARA_ACTION_TYPE,
    LARA_ASSET_ID,
    LARA_DOCUMENT_ID,
    LARA_IS_SYNTHETIC,
    OI_DOCUMENT_ID,
    OI_INPUT_VALUE,
    OI_KIND_RETRIEVER,
    OI_RETRIEVAL_DOCUMENTS,
    OI_SESSION_ID,
    OI_SPAN_KIND,
    OI_TOOL_NAME,
    OI_TOOL_PARAMETERS,
    OI_USER_ID,
)
from lara.ingest.config import IngestConfig
from lara.ingest.run import ingest_spans
from lara.ingest.spans import get_attr, indexed
from lara.ingest.tables import (
    EVALUATION_COLUMNS,
    REFERENCE_COLUMNS,
    RETRIEVAL_COLUMNS,
    SPAN_FACT_COLUMNS,
    Extracted,
    IngestReport,
    as_bool,
    as_text,
    empty_frame,
    reference_tokens,
)

#: Attributes scanned for returned asset ids on tool / agent spans.
DEFAULT_REFERENCE_ATTRIBUTES = (OI_INPUT_VALUE, OI_TOOL_PARAMETERS, LARA_ASSET_ID)


def _kind(attributes: dict, column_kind: object) -> str:
    value = attributes.get(OI_SPAN_KIND) or column_kind
    return str(value).strip().upper() if isinstance(value, str) else ""


def extract_openinference(
    spans: pd.DataFrame, config: IngestConfig, evaluations: pd.DataFrame | None = None
) -> Extracted:
    """The facts the contract needs, from canonical OpenInference spans (one pass)."""
    reference_keys = config.reference_attributes or DEFAULT_REFERENCE_ATTRIBUTES
    facts: list[dict] = []
    retrievals: list[dict] = []
    references: list[dict] = []
    for span in spans.itertuples(index=False):
        attributes = span.attributes
        kind = _kind(attributes, span.span_kind)
        facts.append(
            {
                "trace_id": span.trace_id,
                "span_id": span.span_id,
                "parent_id": span.parent_id,
                "name": span.name,
                "start_time": span.start_time,
                "session_id": as_text(attributes.get(OI_SESSION_ID)),
                "user_id": as_text(attributes.get(OI_USER_ID)),
                "prompt_text": as_text(attributes.get(OI_INPUT_VALUE)),
                "surface": as_text(get_attr(attributes, config.surface_attribute)),
                "is_synthetic": as_bool(attributes.get(LARA_IS_SYNTHETIC)),
            }
        )
        if kind == OI_KIND_RETRIEVER:
            documents = indexed(attributes, OI_RETRIEVAL_DOCUMENTS)
            retrievals.append(
                {
                    "span_id": span.span_id,
                    "query_text": as_text(attributes.get(OI_INPUT_VALUE)),
                    "role": as_text(get_attr(attributes, config.role_attribute)),
                    "documents": [
                        (position, as_text(document.get(OI_DOCUMENT_ID)))
                        for position, document in documents.items()
                    ],
                }
            )
        elif kind in config.action_span_kinds:
            values = [get_attr(attributes, key) for key in reference_keys]
            references.append(
                {
                    "span_id": span.span_id,
                    "tokens": reference_tokens(v for v in values if v is not None),
                    "tool_name": as_text(attributes.get(OI_TOOL_NAME)) or span.name,
                    "action_type": as_text(attributes.get(LARA_ACTION_TYPE)),
                    "document_id": as_text(get_attr(attributes, LARA_DOCUMENT_ID)),
                }
            )
    return Extracted(
        spans=pd.DataFrame.from_records(facts, columns=SPAN_FACT_COLUMNS),
        retrievals=pd.DataFrame.from_records(retrievals, columns=RETRIEVAL_COLUMNS),
        references=pd.DataFrame.from_records(references, columns=REFERENCE_COLUMNS),
        evaluations=evaluations if evaluations is not None else empty_frame(EVALUATION_COLUMNS),
    )


def ingest_openinference(
    src: Path,
    out: Path,
    config: IngestConfig | None = None,
    evaluations: Iterable[Path] = (),
) -> IngestReport:
    """Read an OpenInference span export under `src`, write contract tables under `out`.

    Returns the rows written per table (a dict) with `.diagnostics` and `.partitions`.
    """
    return ingest_spans(extract_openinference, src, out, config, evaluations)
