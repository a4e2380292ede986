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

import duckdb
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
from lara.ingest.lookup import Lookup, as_bool_series, clean_text
from lara.ingest.run import SpanAdapter, ingest_spans
from lara.ingest.span_core import KeyFilter, flatten_json
from lara.ingest.spans import SpanSet
from lara.ingest.tables import (
    EVALUATION_COLUMNS,
    SPAN_FACT_COLUMNS,
    Extracted,
    IngestReport,
    documents_frame,
    references_frame,
    tool_tokens,
)

#: Attributes scanned for returned asset ids on tool spans.
DEFAULT_REFERENCE_ATTRIBUTES = (GEN_AI_TOOL_CALL_ARGUMENTS, LARA_ASSET_ID)
#: Where the tool's input arguments are (for `tool_asset_keys`).
TOOL_ARGUMENT_ATTRIBUTES = (GEN_AI_TOOL_CALL_ARGUMENTS,)
#: Where a document's asset id is looked for, first found wins (relative to the document).
DEFAULT_DOCUMENT_ID_KEYS = ("id", "metadata.id", "metadata.asset_id", "metadata.source")
ITEM_COLUMNS = ["entity", "position", "key", "value", "vtype"]


def _operations(lookup: Lookup, frame: pd.DataFrame, rows: pd.Index) -> pd.Series:
    """`gen_ai.operation.name`, else the first word of the span name when it is
    `retrieval` or `execute_tool` (names follow "{operation} {target}")."""
    logged = clean_text(lookup.series([GEN_AI_OPERATION_NAME], rows))
    first = (
        pd.Series(frame["name"].to_numpy(), index=rows).astype("string").str.split(" ", n=1).str[0]
    )
    named = first.where(first.isin([GEN_AI_OPERATION_RETRIEVAL, GEN_AI_OPERATION_EXECUTE_TOOL]))
    return logged.fillna(named.astype(object).where(named.notna(), None))


def _list_items(
    con: duckdb.DuckDBPyConnection, lookup: Lookup, name: str, rows: pd.Index
) -> pd.DataFrame:
    """Items of a list attribute given as JSON text or structured (flattened): ITEM_COLUMNS.

    A list of objects gives one row per (item, field); a list of scalars one row per item
    with key `` (empty)."""
    structured = con.execute(f"from {lookup.indexed(name, rows)}").df()
    raw = lookup.first([name])
    raw = raw[raw["entity"].isin(rows) & raw["value"].notna()]
    parts = [structured]
    texts = raw[raw["vtype"].isin(["string", "list"])]
    if not texts.empty:
        flat = flatten_json(
            con, texts.rename(columns={"entity": "row", "value": "j"})[["row", "j"]]
        )
        nested = flat["key"].str.match(r"^\d+(\.|$)")
        nested_items = flat[nested].copy()
        split = nested_items["key"].str.split(".", n=1)
        nested_items["position"] = split.str[0].astype("int64")
        nested_items["key"] = split.str[1].fillna("")
        parts.append(nested_items.rename(columns={"row": "entity"})[ITEM_COLUMNS])
        scalar_lists = flat[(flat["key"] == "") & (flat["vtype"] == "list")]
        if not scalar_lists.empty:
            con.register("scalar_lists", scalar_lists)
            try:
                parts.append(
                    con.execute(
                        """
                        select
                            row as entity,
                            generate_subscripts(value::json[], 1) - 1 as position,
                            '' as key,
                            unnest(value::json[]) ->> '$' as value,
                            'string' as vtype
                        from scalar_lists
                        """
                    ).df()[ITEM_COLUMNS]
                )
            finally:
                con.unregister("scalar_lists")
    items = pd.concat([p for p in parts if not p.empty] or [parts[0]], ignore_index=True)
    return items[ITEM_COLUMNS].drop_duplicates(["entity", "position", "key"], keep="last")


def _prompt_texts(con: duckdb.DuckDBPyConnection, lookup: Lookup, rows: pd.Index) -> pd.Series:
    """Text of the last `user` message of `gen_ai.input.messages` that has text (its `text`
    parts joined by new lines, else its `content`); a plain string value is the text."""
    raw = lookup.first([GEN_AI_INPUT_MESSAGES]).set_index("entity")
    plain = raw[
        (raw["vtype"] == "string")
        & ~raw["value"].astype("string").str.lstrip().str[:1].isin(["[", "{"]).fillna(False)
    ]["value"]
    items = _list_items(con, lookup, GEN_AI_INPUT_MESSAGES, rows)
    text = pd.Series([None] * len(rows), index=rows, dtype=object)
    if not items.empty:
        con.register("message_items", items)
        try:
            chosen = con.execute(
                r"""
                with messages as (
                    select
                        entity,
                        position,
                        max(value) filter (where key = 'role') as role,
                        max(value) filter (where key = 'content' and vtype = 'string')
                            as content
                    from message_items
                    group by entity, position
                ),
                parts as (
                    select
                        entity,
                        position,
                        cast(regexp_extract(key, '^parts\.(\d+)\.', 1) as bigint) as part,
                        max(value) filter (where regexp_matches(key, '^parts\.\d+\.type$'))
                            as type,
                        max(value) filter (where regexp_matches(key, '^parts\.\d+\.content$'))
                            as content
                    from message_items
                    where regexp_matches(key, '^parts\.\d+\.')
                    group by entity, position, part
                ),
                texts as (
                    select
                        entity,
                        position,
                        string_agg(content, chr(10) order by part) as text
                    from parts
                    where type = 'text' and content is not null and content <> ''
                    group by entity, position
                )
                select
                    m.entity,
                    coalesce(t.text, m.content) as text
                from messages as m
                left join texts as t using (entity, position)
                where m.role = 'user' and coalesce(t.text, m.content) is not null
                qualify row_number() over (partition by m.entity order by m.position desc) = 1
                """
            ).df()
        finally:
            con.unregister("message_items")
        text = text.fillna(chosen.set_index("entity")["text"].reindex(rows))
    return text.fillna(plain.reindex(rows)).where(lambda s: s.notna(), None)


def _evaluations(spans: SpanSet, retrieval_rows: pd.Index, config: IngestConfig) -> pd.DataFrame:
    """`gen_ai.evaluation.result` events of retrieval spans: EVALUATION_COLUMNS."""
    events = spans.events
    events = events[
        (events["name"] == GEN_AI_EVALUATION_RESULT_EVENT) & events["row"].isin(retrieval_rows)
    ]
    if events.empty:
        return pd.DataFrame(columns=EVALUATION_COLUMNS)
    keys = {
        LARA_EVALUATION_DOCUMENT_POSITION: "document_position",
        LARA_EVALUATION_DOCUMENT_ID: "asset_id",
        GEN_AI_EVALUATION_SCORE_LABEL: "label",
        GEN_AI_EVALUATION_SCORE_VALUE: "score",
        GEN_AI_EVALUATION_NAME: "name",
        LARA_EVALUATION_JUDGE: "judge",
    }
    heads = events[["row", "event", "time"]].drop_duplicates(["row", "event"])
    values = events[events["key"].isin(list(keys))].pivot_table(
        index=["row", "event"], columns="key", values="value", aggfunc="last"
    )
    values = values.rename(columns=keys).reset_index()
    merged = heads.merge(values, on=["row", "event"], how="left")
    span_ids = pd.Series(spans.frame["span_id"].to_numpy(), index=spans.frame["row"].to_numpy())
    out = pd.DataFrame({"span_id": span_ids.reindex(merged["row"]).to_numpy()})
    for column in ("document_position", "asset_id", "label", "score", "name", "judge"):
        out[column] = merged[column].to_numpy() if column in merged else None
    out["asset_id"] = clean_text(out["asset_id"])
    out["label"] = clean_text(out["label"])
    out["judge"] = clean_text(out["judge"]).fillna(config.judge)
    out["judged_at"] = merged["time"].to_numpy()
    return out[EVALUATION_COLUMNS]


def otel_genai_keys(config: IngestConfig) -> KeyFilter:
    """Every attribute `extract_otel_genai` reads with `config` (the reader keeps only
    these; a test records every name the extraction asks for and checks it is kept)."""
    names = [
        GEN_AI_OPERATION_NAME,
        GEN_AI_CONVERSATION_ID,
        OI_SESSION_ID,
        USER_ID,
        GEN_AI_INPUT_MESSAGES,
        GEN_AI_RETRIEVAL_QUERY_TEXT,
        GEN_AI_RETRIEVAL_DOCUMENTS,
        GEN_AI_TOOL_NAME,
    ]
    for name in (
        config.surface_attribute,
        LARA_IS_SYNTHETIC,
        config.role_attribute,
        LARA_ACTION_TYPE,
        LARA_DOCUMENT_ID,
        LARA_ASSET_ID,
    ):
        names += config.with_metadata(name)
    names += [*(config.reference_attributes or DEFAULT_REFERENCE_ATTRIBUTES)]
    names += [*TOOL_ARGUMENT_ATTRIBUTES]  # and the tool_asset_keys under them
    return KeyFilter(tuple(dict.fromkeys(names)))


def extract_otel_genai(
    spans: SpanSet, config: IngestConfig, evaluations: pd.DataFrame | None = None
) -> Extracted:
    """The facts the contract needs, from canonical OpenTelemetry GenAI spans (columnar);
    reads only the attributes of `otel_genai_keys(config)`."""
    con = spans.con
    frame = spans.frame
    rows = pd.Index(frame["row"].to_numpy())
    lookup = Lookup(con, spans.attributes_table)
    operation = _operations(lookup, frame, rows)
    facts = pd.DataFrame(
        {
            # `.array`, not `.to_numpy()`: the columns keep their dtypes, not copied to objects
            "trace_id": frame["trace_id"].array,
            "span_id": frame["span_id"].array,
            "parent_id": frame["parent_id"].array,
            "name": frame["name"].array,
            "start_time": frame["start_time"].array,
            "session_id": clean_text(
                lookup.series([GEN_AI_CONVERSATION_ID, OI_SESSION_ID], rows)
            ).to_numpy(),
            "user_id": clean_text(lookup.series([USER_ID], rows)).to_numpy(),
            "prompt_text": clean_text(_prompt_texts(con, lookup, rows)).to_numpy(),
            "surface": clean_text(
                lookup.series(config.with_metadata(config.surface_attribute), rows)
            ).to_numpy(),
            "is_synthetic": as_bool_series(
                lookup.series(config.with_metadata(LARA_IS_SYNTHETIC), rows)
            ).to_numpy(),
        },
        columns=SPAN_FACT_COLUMNS,
    )
    is_retrieval = (operation == GEN_AI_OPERATION_RETRIEVAL).fillna(False).to_numpy(dtype=bool)
    is_tool = operation.isin(list(config.tool_operations)).fillna(False).to_numpy(dtype=bool)
    is_tool = is_tool & ~is_retrieval
    retrieval_rows = rows[is_retrieval]
    retrievals = pd.DataFrame(
        {
            "span_id": frame["span_id"].to_numpy()[is_retrieval],
            "query_text": clean_text(
                lookup.series([GEN_AI_RETRIEVAL_QUERY_TEXT], retrieval_rows)
            ).to_numpy(),
            "role": clean_text(
                lookup.series(config.with_metadata(config.role_attribute), retrieval_rows)
            ).to_numpy(),
        }
    )
    items = _list_items(con, lookup, GEN_AI_RETRIEVAL_DOCUMENTS, retrieval_rows)
    items["key"] = items["key"].where(items["key"] != "", "id")  # a list of plain ids
    documents = documents_frame(
        con, items, frame, config.document_id_keys or DEFAULT_DOCUMENT_ID_KEYS
    )
    tool_rows = rows[is_tool]
    references = references_frame(
        frame,
        tool_rows,
        tool_name=clean_text(lookup.series([GEN_AI_TOOL_NAME], tool_rows)),
        action_type=clean_text(lookup.series(config.with_metadata(LARA_ACTION_TYPE), tool_rows)),
        document_id=clean_text(lookup.series(config.with_metadata(LARA_DOCUMENT_ID), tool_rows)),
    )
    tokens = tool_tokens(
        con,
        lookup,
        frame,
        tool_rows,
        config,
        scanned=config.reference_attributes or DEFAULT_REFERENCE_ATTRIBUTES,
        arguments=TOOL_ARGUMENT_ATTRIBUTES,
    )
    lookup.close()
    from_events = _evaluations(spans, retrieval_rows, config)
    frames = [f for f in (from_events, evaluations) if f is not None and not f.empty]
    all_evaluations = (
        pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=EVALUATION_COLUMNS)
    )
    return Extracted(
        spans=facts,
        retrievals=retrievals,
        documents=documents,
        references=references,
        tokens=tokens,
        evaluations=all_evaluations,
        diagnostics={"evaluation_events": int(len(from_events))},
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
    return ingest_spans(OTEL_GENAI, src, out, config, evaluations)


OTEL_GENAI = SpanAdapter(
    "otel-genai", extract_otel_genai, otel_genai_keys, DEFAULT_DOCUMENT_ID_KEYS
)
