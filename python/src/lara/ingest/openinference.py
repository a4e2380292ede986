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
    OI_DOCUMENT_METADATA,
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
from lara.ingest.lookup import Lookup, as_bool_series, clean_text
from lara.ingest.run import SpanAdapter, ingest_spans
from lara.ingest.span_core import KeyFilter
from lara.ingest.spans import SpanSet
from lara.ingest.tables import (
    EVALUATION_COLUMNS,
    SPAN_FACT_COLUMNS,
    Extracted,
    IngestReport,
    documents_frame,
    empty_frame,
    has_ancestor,
    references_frame,
    tool_tokens,
)

#: Attributes scanned for returned asset ids on tool / agent spans.
DEFAULT_REFERENCE_ATTRIBUTES = (OI_INPUT_VALUE, OI_TOOL_PARAMETERS, LARA_ASSET_ID)
#: Where the tool's input arguments are (for `tool_asset_keys`).
TOOL_ARGUMENT_ATTRIBUTES = (OI_INPUT_VALUE,)
#: Where a document's asset id is looked for, first found wins (relative to the document).
DEFAULT_DOCUMENT_ID_KEYS = (
    OI_DOCUMENT_ID,
    f"{OI_DOCUMENT_METADATA}.id",
    f"{OI_DOCUMENT_METADATA}.asset_id",
    f"{OI_DOCUMENT_METADATA}.source",
)


def _span_lookups(config: IngestConfig) -> dict[str, tuple[str, ...]]:
    """The span-level look-ups: per column, the attribute names tried in order."""
    return {
        "kind": (OI_SPAN_KIND,),
        "session_id": (OI_SESSION_ID,),
        "user_id": (OI_USER_ID,),
        "input": (OI_INPUT_VALUE,),
        "surface": config.with_metadata(config.surface_attribute),
        "is_synthetic": config.with_metadata(LARA_IS_SYNTHETIC),
        "role": config.with_metadata(config.role_attribute),
        "tool_name": (OI_TOOL_NAME,),
        "action_type": config.with_metadata(LARA_ACTION_TYPE),
        "document_id": config.with_metadata(LARA_DOCUMENT_ID),
    }


def openinference_keys(config: IngestConfig) -> KeyFilter:
    """Every attribute `extract_openinference` reads with `config`: the span look-ups, the
    retrieval documents and what the tool spans are scanned for. The reader keeps only
    these (a test records every name the extraction asks for and checks it is kept)."""
    names = [name for keys in _span_lookups(config).values() for name in keys]
    names += [OI_RETRIEVAL_DOCUMENTS, *config.with_metadata(LARA_ASSET_ID)]
    names += [*(config.reference_attributes or DEFAULT_REFERENCE_ATTRIBUTES)]
    names += [*TOOL_ARGUMENT_ATTRIBUTES]  # and the tool_asset_keys under them
    return KeyFilter(tuple(dict.fromkeys(names)))


def extract_openinference(
    spans: SpanSet, config: IngestConfig, evaluations: pd.DataFrame | None = None
) -> Extracted:
    """The facts the contract needs, from canonical OpenInference spans (columnar); reads
    only the attributes of `openinference_keys(config)`."""
    con = spans.con
    frame = spans.frame
    rows = pd.Index(frame["row"].to_numpy())
    lookup = Lookup(con, spans.attributes_table)
    found = lookup.frame(_span_lookups(config), rows)
    kind = found["kind"].fillna(clean_text(pd.Series(frame["span_kind"].to_numpy(), index=rows)))
    kind = kind.astype("string").str.upper()
    facts = pd.DataFrame(
        {
            # `.array`, not `.to_numpy()`: the columns keep their dtypes, not copied to objects
            "trace_id": frame["trace_id"].array,
            "span_id": frame["span_id"].array,
            "parent_id": frame["parent_id"].array,
            "name": frame["name"].array,
            "start_time": frame["start_time"].array,
            "session_id": found["session_id"].to_numpy(),
            "user_id": found["user_id"].to_numpy(),
            "prompt_text": found["input"].to_numpy(),
            "surface": found["surface"].to_numpy(),
            "is_synthetic": as_bool_series(found["is_synthetic"]).to_numpy(),
        },
        columns=SPAN_FACT_COLUMNS,
    )
    is_retrieval = (kind == OI_KIND_RETRIEVER).fillna(False).to_numpy(dtype=bool)
    is_action = (
        kind.isin(list(config.action_span_kinds)).fillna(False).to_numpy(dtype=bool) & ~is_retrieval
    )
    # A retriever span inside another one (LlamaIndex's `retrieve` wraps `_retrieve`) is
    # part of it: the outermost is the retrieval.
    nested = has_ancestor(frame, is_retrieval) & is_retrieval
    is_retrieval = is_retrieval & ~nested
    retrieval_rows = rows[is_retrieval]
    retrievals = pd.DataFrame(
        {
            "span_id": frame["span_id"].to_numpy()[is_retrieval],
            "query_text": facts["prompt_text"].to_numpy()[is_retrieval],
            "role": found["role"].to_numpy()[is_retrieval],
        }
    )
    items = lookup.indexed(OI_RETRIEVAL_DOCUMENTS, retrieval_rows)
    documents = documents_frame(
        con, items, frame, config.document_id_keys or DEFAULT_DOCUMENT_ID_KEYS
    )
    action_rows = rows[is_action]
    references = references_frame(
        frame,
        action_rows,
        tool_name=found["tool_name"],
        action_type=found["action_type"],
        document_id=found["document_id"],
    )
    tokens = tool_tokens(
        con,
        lookup,
        frame,
        action_rows,
        config,
        scanned=config.reference_attributes or DEFAULT_REFERENCE_ATTRIBUTES,
        arguments=TOOL_ARGUMENT_ATTRIBUTES,
    )
    lookup.close()
    # A trace made only of index-building spans (embedding documents at start-up) is no
    # request: it makes no prompt.
    indexing = kind.isin(list(config.indexing_span_kinds)).fillna(False)
    only_indexing = indexing.groupby(frame["trace_id"].to_numpy()).transform("all").to_numpy()
    return Extracted(
        diagnostics={
            "nested_retrieval_spans_merged": int(nested.sum()),
            "indexing_traces_skipped": int(frame["trace_id"][only_indexing].nunique()),
        },
        spans=facts[~only_indexing].reset_index(drop=True),
        retrievals=retrievals,
        documents=documents,
        references=references,
        tokens=tokens,
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
    return ingest_spans(OPENINFERENCE, src, out, config, evaluations)


OPENINFERENCE = SpanAdapter(
    "openinference", extract_openinference, openinference_keys, DEFAULT_DOCUMENT_ID_KEYS
)
