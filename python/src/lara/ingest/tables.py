"""From what an adapter extracted out of spans to the contract tables (shared by both adapters).

An adapter (OpenInference, OpenTelemetry GenAI) turns the canonical span table
into an `Extracted`: per-span facts (session, user, prompt text, ...), the
retrieval spans with their documents, the spans that may reference assets
(tool calls) with the candidate tokens, and document evaluations. This module
does the rest in pandas, the same way for both:

- prompts: one per trace (`prompt_from: trace`) or per top-level span
  (`root_span`); `ts` = the earliest span start, session / user = the first
  value found, the root span first, then by start time;
- retrievals: one per retrieval span, `returned_asset_ids` in document order
  (documents whose id no configured key gives are left out and counted);
- actions: one agent action per (tool span, returned asset it references),
  lineage to the latest retrieval of the same prompt (or session) at or before
  the tool call whose returned list holds the asset;
- relevance_labels: evaluations mapped to grades, with their asset resolved
  from the document position where needed.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from lara.ingest.config import IngestConfig, match_pattern
from lara.ingest.lookup import Lookup, clean_text, clean_text_array, reference_tokens
from lara.ingest.span_core import empty_frame, normalize_ids, utc_microseconds
from lara.ingest.writer import contract

SPAN_FACT_COLUMNS = [
    "trace_id",
    "span_id",
    "parent_id",
    "name",
    "start_time",
    "session_id",
    "user_id",
    "prompt_text",
    "surface",
    "is_synthetic",
]
RETRIEVAL_COLUMNS = ["span_id", "query_text", "role"]
DOCUMENT_COLUMNS = ["span_id", "position", "asset_id", "id_key"]
REFERENCE_COLUMNS = ["span_id", "tool_name", "action_type", "document_id"]
TOKEN_COLUMNS = ["span_id", "token", "keyed"]
EVALUATION_COLUMNS = [
    "span_id",
    "document_position",
    "asset_id",
    "label",
    "score",
    "name",
    "judge",
    "judged_at",
]
MAX_SPAN_DEPTH = 1000


@dataclass
class Extracted:
    """What an adapter found in the spans, before the contract tables are built.

    spans: SPAN_FACT_COLUMNS, one row per span.
    retrievals: RETRIEVAL_COLUMNS, one row per retrieval span.
    documents: DOCUMENT_COLUMNS, one row per returned document (asset_id null when no key
        gave one; id_key the key that did).
    references: REFERENCE_COLUMNS, one row per span that may act on an asset (tool calls).
    tokens: TOKEN_COLUMNS, the strings of those spans that may name a returned asset.
    evaluations: EVALUATION_COLUMNS; the asset by id or by 0-based document position.
    """

    spans: pd.DataFrame
    retrievals: pd.DataFrame
    documents: pd.DataFrame
    references: pd.DataFrame
    tokens: pd.DataFrame
    evaluations: pd.DataFrame
    diagnostics: dict[str, int] = field(default_factory=dict)


class IngestReport(dict):
    """Rows written per contract table (a dict), with `diagnostics` and `partitions`."""

    def __init__(
        self,
        counts: dict[str, int],
        diagnostics: dict[str, Any],
        partitions: dict[str, dict[str, int]],
    ) -> None:
        super().__init__(counts)
        self.diagnostics = diagnostics
        self.partitions = partitions


# --- small helpers ----------------------------------------------------------------------


def _lower(values: pd.Series) -> pd.Series:
    """Stripped, lower-cased text (null stays null), object dtype."""
    text = values.astype(object).where(values.notna(), None).astype("string").str.strip()
    text = text.str.lower()
    return text.astype(object).where(text.notna(), None)


# --- extraction helpers shared by the adapters ---------------------------------------------


def documents_frame(
    con: Any, items: pd.DataFrame | str, frame: pd.DataFrame, id_keys: tuple[str, ...]
) -> pd.DataFrame:
    """The documents of retrieval spans with their asset ids: DOCUMENT_COLUMNS.

    `items` (a DataFrame, or the name of a DuckDB table of `con`) holds each document's
    attributes: `entity` = span row, `position`, `key` relative to the document,
    `value`, `vtype`. The id is the first of `id_keys` found (see `Lookup`).
    """
    if isinstance(items, pd.DataFrame):
        con.register("document_items_frame", items[["entity", "position", "key", "value", "vtype"]])
        con.execute("create or replace temp table document_items as from document_items_frame")
        con.unregister("document_items_frame")
        items = "document_items"
    con.register(
        "document_spans",
        pa.table({"row": pa.array(frame["row"].to_numpy("int64")), "span_id": frame["span_id"]}),
    )
    # A document is the pair (span row, position): the look-up's entity is that pair, so
    # that the documents need no numbering of their own.
    document = "{'row': entity, 'position': position}"
    lookup = Lookup(con, items, entity=document)
    try:
        found = lookup.joined(
            id_keys,
            f"select distinct {document} as entity, s.span_id, i.position "
            f"from (select * from {items}) as i join document_spans as s on s.row = i.entity",
            keep="e.span_id, e.position",
            order="e.span_id, e.position",
        )
    finally:
        lookup.close()
        con.unregister("document_spans")
    if found.num_rows == 0:
        return empty_frame(DOCUMENT_COLUMNS)
    return pd.DataFrame(
        {
            "span_id": found.column("span_id").to_numpy(),
            "position": found.column("position").to_numpy().astype("int64"),
            "asset_id": clean_text_array(found.column("value")),
            "id_key": found.column("found_key").to_numpy(),
        }
    )


def has_ancestor(frame: pd.DataFrame, mask: np.ndarray) -> np.ndarray:
    """For each span of `frame`, whether an ancestor present in the export is flagged in
    `mask` (parents followed level by level, at most MAX_SPAN_DEPTH levels)."""
    ids = pd.Index(frame["span_id"].to_numpy(dtype=object))
    # The position of each span's parent in `frame` (-1: no parent, or not in the export).
    parent = ids.get_indexer(frame["parent_id"].to_numpy(dtype=object))
    flagged = np.asarray(mask, dtype=bool)
    current = parent
    found = np.zeros(len(ids), dtype=bool)
    for _ in range(MAX_SPAN_DEPTH):  # bounded: a malformed export may hold a parent cycle
        known = current >= 0
        if not known.any():
            break
        at = np.where(known, current, 0)
        found |= known & flagged[at]
        current = np.where(known, parent[at], -1)
    return found


def references_frame(
    frame: pd.DataFrame,
    rows: pd.Index,
    tool_name: pd.Series,
    action_type: pd.Series,
    document_id: pd.Series,
) -> pd.DataFrame:
    """REFERENCE_COLUMNS for the spans at `rows` (tool name falls back to the span name)."""
    spans = frame.set_index("row").reindex(rows)
    return pd.DataFrame(
        {
            "span_id": spans["span_id"].to_numpy(),
            "tool_name": tool_name.reindex(rows).fillna(spans["name"]).to_numpy(),
            "action_type": action_type.reindex(rows).to_numpy(),
            "document_id": document_id.reindex(rows).to_numpy(),
        },
        columns=REFERENCE_COLUMNS,
    )


def _all_values(lookup: Lookup, names: tuple[str, ...], rows: pd.Index) -> pd.DataFrame:
    """Every one of `names` each entity at `rows` has: (entity, value, vtype)."""
    values = lookup.values({f"n{i}": [name] for i, name in enumerate(names)})
    return values[values["entity"].isin(rows)][["entity", "value", "vtype"]]


def tool_tokens(
    con: Any,
    lookup: Lookup,
    frame: pd.DataFrame,
    rows: pd.Index,
    config: IngestConfig,
    scanned: tuple[str, ...],
    arguments: tuple[str, ...],
) -> pd.DataFrame:
    """TOKEN_COLUMNS: what each tool span at `rows` may name.

    With `config.tool_asset_keys`: the values of those keys in the tool's arguments (a
    list value gives each item; an argument attribute that is not JSON counts whole, the
    input of a one-argument tool) and `lara.asset.id`, whole. Otherwise every string leaf
    and integer of the `scanned` attributes (and of their flattened children, for a
    structured value), whole and split (see `reference_tokens`).
    """
    from lara.ingest.attributes import LARA_ASSET_ID

    span_ids = pd.Series(frame["span_id"].to_numpy(), index=frame["row"].to_numpy())
    if config.tool_asset_keys:
        names = tuple(f"{a}.{k}" for a in arguments for k in config.tool_asset_keys)
        names += config.with_metadata(LARA_ASSET_ID)
        values = _all_values(lookup, names, rows)
        # A tool of one argument may log its input as the bare value (LangChain does):
        # such an input, when not a JSON object or list, is taken whole.
        bare = _all_values(lookup, arguments, rows)
        text = bare["value"].astype("string").str.lstrip()
        bare = bare[(bare["vtype"] == "string") & ~text.str[:1].isin(["{", "["]).fillna(False)]
        keyed = exact_tokens(con, values).assign(keyed=True)
        whole = exact_tokens(con, bare).assign(keyed=False)
        tokens = pd.concat([keyed, whole], ignore_index=True).drop_duplicates(
            ["entity", "token"], keep="first"
        )
    else:
        # A structured (not JSON-text) argument value arrives flattened: its children count.
        scanned_values = lookup.under(scanned, rows)
        tokens = reference_tokens(con, scanned_values).assign(keyed=False)
        con.execute(f"drop table {scanned_values}")
    return pd.DataFrame(
        {
            "span_id": span_ids.reindex(tokens["entity"]).to_numpy(),
            "token": tokens["token"].to_numpy(),
            "keyed": tokens["keyed"].to_numpy(dtype=bool),
        },
        columns=TOKEN_COLUMNS,
    )


def exact_tokens(con: Any, values: pd.DataFrame) -> pd.DataFrame:
    """(entity, token): each value whole (stripped); a list value gives each of its items."""
    if values.empty:
        return pd.DataFrame({"entity": pd.Series(dtype="int64"), "token": pd.Series(dtype=object)})
    con.register("exact_values", values[["entity", "value", "vtype"]])
    try:
        return con.execute(
            """
            with items as (
                select entity, value as token from exact_values where vtype <> 'list'
                union all
                select entity, unnest(value::json[]) ->> '$' as token
                from exact_values
                where vtype = 'list' and json_valid(value)
            )
            select distinct entity, trim(token) as token
            from items
            where token is not null and trim(token) <> ''
            order by entity, token
            """
        ).df()
    finally:
        con.unregister("exact_values")


# --- prompts ------------------------------------------------------------------------------


def _top_ancestors(spans: pd.DataFrame) -> pd.Series:
    """The top-most ancestor present in the export of every span (itself for roots)."""
    ids = spans["span_id"].to_numpy()
    parent = pd.Series(spans["parent_id"].to_numpy(), index=ids)
    parent = parent.where(parent.isin(set(ids)))
    top = pd.Series(ids, index=ids, dtype=object)
    current = parent.copy()
    for _ in range(MAX_SPAN_DEPTH):  # bounded: a malformed export may hold a parent cycle
        known = current.notna()
        if not known.any():
            break
        top[known] = current[known]
        current = current.map(parent).where(known)
    return top


def assign_prompts(spans: pd.DataFrame, config: IngestConfig) -> pd.DataFrame:
    spans = spans.copy()
    top = _top_ancestors(spans)
    spans["root_span_id"] = top.to_numpy()
    known = set(spans["span_id"])
    spans["is_root"] = ~spans["parent_id"].isin(known)
    if config.prompt_from == "trace":
        spans["prompt_id"] = spans["trace_id"]
    else:
        spans["prompt_id"] = spans["root_span_id"]
    return spans


def build_prompts(spans: pd.DataFrame, config: IngestConfig) -> pd.DataFrame:
    surfaces = set(contract()["prompts"].column("surface").values)
    ordered = spans.sort_values(
        ["prompt_id", "is_root", "start_time"], ascending=[True, False, True]
    )
    surface = _lower(ordered["surface"])
    ordered = ordered.assign(surface=surface.where(surface.isin(surfaces), None))
    grouped = ordered.groupby("prompt_id", sort=True)
    firsts = grouped[["trace_id", "session_id", "user_id", "surface"]].first()
    prompts = pd.DataFrame(
        {
            "prompt_id": firsts.index,
            "session_guid": firsts["session_id"].fillna(firsts["trace_id"]).to_numpy(),
            "user_id": firsts["user_id"].to_numpy(),
            "surface": firsts["surface"].to_numpy(),
            "ts": grouped["start_time"].min().to_numpy(),
        }
    )
    # A prompt whose spans name no surface takes its session's (session-level metadata,
    # e.g. set once on the conversation), else the configured default.
    by_session = prompts.dropna(subset=["surface"]).groupby("session_guid")["surface"].first()
    prompts["surface"] = (
        prompts["surface"].fillna(prompts["session_guid"].map(by_session)).fillna(config.surface)
    )
    roots = ordered[ordered["is_root"]].groupby("prompt_id")["prompt_text"].first()
    prompts["prompt_text"] = prompts["prompt_id"].map(roots)
    flags = ordered["is_synthetic"]
    flagged = flags.notna().groupby(ordered["prompt_id"]).any()
    synthetic = flags.fillna(False).astype(bool).groupby(ordered["prompt_id"]).any()
    synthetic = synthetic.astype(object).where(flagged, None)
    prompts["is_synthetic"] = prompts["prompt_id"].map(synthetic)
    fallback_user = (
        pd.Series(config.missing_user_id, index=prompts.index)
        if config.missing_user_id
        else prompts["session_guid"]
    )
    prompts["user_id"] = prompts["user_id"].fillna(fallback_user)
    prompts["ts"] = pd.to_datetime(prompts["ts"], utc=True)
    return prompts


# --- retrievals ---------------------------------------------------------------------------


def map_names(names: pd.Series, patterns: dict[str, str]) -> pd.Series:
    """The value of the first fnmatch pattern matching each name (null when none)."""
    unique = pd.unique(names.dropna())
    mapping = {name: match_pattern(patterns, name) for name in unique}
    return names.map(mapping).astype(object).where(lambda s: s.notna(), None)


def build_retrievals(
    retrievals: pd.DataFrame,
    documents: pd.DataFrame,
    spans: pd.DataFrame,
    prompts: pd.DataFrame,
    config: IngestConfig,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    roles = set(contract()["retrievals"].column("retrieval_role").values)
    merged = retrievals.merge(
        spans[["span_id", "name", "start_time", "session_id", "prompt_id"]],
        on="span_id",
        how="inner",
    ).merge(prompts[["prompt_id", "session_guid"]], on="prompt_id", how="left")
    logged = _lower(merged["role"])
    invalid_roles = int((logged.notna() & ~logged.isin(roles)).sum())
    logged = logged.where(logged.isin(roles), None)
    mapped = map_names(merged["name"], config.role_map)
    role = logged.fillna(mapped)
    if config.default_role:
        role = role.fillna(config.default_role)
    # Returned lists in document order; documents without an id are left out (counted).
    named = documents[documents["asset_id"].notna()].sort_values(["span_id", "position"])
    lists = named.groupby("span_id", sort=False)["asset_id"].agg(list)
    asset_ids = merged["span_id"].map(lists)
    asset_ids = asset_ids.map(lambda v: v if isinstance(v, list) else [])
    in_scope = documents["span_id"].isin(set(merged["span_id"]))
    missing_ids = int((documents["asset_id"].isna() & in_scope).sum())
    id_keys = documents.loc[in_scope & documents["asset_id"].notna(), "id_key"]
    out = pd.DataFrame(
        {
            "retrieval_id": merged["span_id"],
            "prompt_id": merged["prompt_id"],
            "session_guid": merged["session_id"].fillna(merged["session_guid"]),
            "ts": pd.to_datetime(merged["start_time"], utc=True),
            "query_text": merged["query_text"],
            "retrieval_role": role.astype(object).where(role.notna(), None),
            "returned_asset_ids": asset_ids,
        }
    )
    diagnostics = {
        "retrieval_spans": len(out),
        "documents_read": int(in_scope.sum()),
        "documents_without_id": missing_ids,
        "document_ids_by_key": {str(k): int(v) for k, v in id_keys.value_counts().items()},
        "invalid_roles_dropped": invalid_roles,
        "retrievals_without_role": int(out["retrieval_role"].isna().sum()),
    }
    return out, diagnostics


def explode_assets(retrievals: pd.DataFrame) -> pd.DataFrame:
    """One row per (retrieval, returned asset, rank)."""
    exploded = retrievals[
        ["retrieval_id", "prompt_id", "session_guid", "ts", "returned_asset_ids"]
    ].explode("returned_asset_ids")
    exploded = exploded[exploded["returned_asset_ids"].notna()]
    exploded = exploded.rename(columns={"returned_asset_ids": "asset_id", "ts": "retrieved_at"})
    exploded["rank"] = exploded.groupby(level=0).cumcount() + 1
    return exploded.reset_index(drop=True)


# --- actions ------------------------------------------------------------------------------


def build_actions(
    references: pd.DataFrame,
    tokens: pd.DataFrame,
    spans: pd.DataFrame,
    prompts: pd.DataFrame,
    assets: pd.DataFrame,
    config: IngestConfig,
) -> tuple[pd.DataFrame, dict[str, int]]:
    columns = [
        "action_id",
        "session_guid",
        "prompt_id",
        "ts",
        "actor",
        "action_type",
        "consumed_asset_id",
        "source_retrieval_id",
        "document_id",
    ]
    action_types = set(contract()["actions"].column("action_type").values)
    calls = references.merge(
        spans[["span_id", "start_time", "prompt_id", "session_id"]], on="span_id", how="inner"
    ).merge(prompts[["prompt_id", "session_guid"]], on="prompt_id", how="left")
    calls["session_guid"] = calls["session_id"].fillna(calls["session_guid"])
    calls = calls.drop(columns=["session_id"])
    tokens = tokens[tokens["span_id"].isin(set(calls["span_id"]))]
    keyed = tokens[tokens["keyed"]].rename(columns={"token": "asset_id"})
    tokens = tokens.rename(columns={"token": "asset_id"})[["span_id", "asset_id"]]
    tokens = tokens.dropna().drop_duplicates()
    scope = "prompt_id" if config.lineage_scope == "prompt" else "session_guid"
    candidates = tokens.merge(
        calls[["span_id", "start_time", scope]], on="span_id", how="inner"
    ).merge(
        assets[["asset_id", "retrieval_id", "retrieved_at", scope]],
        on=["asset_id", scope],
        how="inner",
    )
    candidates = candidates[
        (candidates["retrieved_at"] <= candidates["start_time"])
        & (candidates["retrieval_id"] != candidates["span_id"])
    ]
    # The latest retrieval at or before the call whose list holds the asset.
    latest = candidates.sort_values(
        ["span_id", "asset_id", "retrieved_at", "retrieval_id"]
    ).drop_duplicates(["span_id", "asset_id"], keep="last")
    actions = latest[["span_id", "asset_id", "retrieval_id", "start_time"]].merge(
        calls[["span_id", "prompt_id", "session_guid", "tool_name", "action_type", "document_id"]],
        on="span_id",
        how="left",
    )
    explicit = _lower(actions["action_type"])
    explicit = explicit.where(explicit.isin(action_types), None)
    mapped = map_names(actions["tool_name"], config.action_type_map)
    out = pd.DataFrame(
        {
            "action_id": actions["span_id"] + ":" + actions["asset_id"],
            "session_guid": actions["session_guid"],
            "prompt_id": actions["prompt_id"],
            "ts": pd.to_datetime(actions["start_time"], utc=True),
            "actor": "agent",
            "action_type": explicit.fillna(mapped).fillna(config.default_action_type),
            "consumed_asset_id": actions["asset_id"],
            "source_retrieval_id": actions["retrieval_id"],
            "document_id": actions["document_id"],
        },
        columns=columns,
    )
    out = out.sort_values(["ts", "action_id"]).reset_index(drop=True)
    diagnostics = {
        "tool_spans_scanned": int(calls["span_id"].nunique()),
        "tool_spans_with_asset": int(actions["span_id"].nunique()),
    }
    if config.tool_asset_keys:
        # Named by a key of the arguments, but returned by no earlier retrieval of the scope.
        matched = actions[["span_id", "asset_id"]].assign(matched=True)
        named = keyed[["span_id", "asset_id"]].merge(matched, how="left")
        diagnostics["tool_assets_not_returned"] = int(named["matched"].isna().sum())
    return out, diagnostics


# --- relevance labels ---------------------------------------------------------------------


def grades(labels: pd.Series, scores: pd.Series, config: IngestConfig) -> pd.Series:
    """The label through `label_grades`, else the score through `score_thresholds`
    (grade = number of thresholds <= score); null when neither gives one (Int64)."""
    by_label = _lower(labels).map(config.label_grades)
    values = pd.to_numeric(scores, errors="coerce").astype("float64")
    by_score = pd.Series(
        np.searchsorted(np.asarray(config.score_thresholds, dtype=float), values, side="right"),
        index=scores.index,
    ).where(values.notna())
    return pd.array(by_label.fillna(by_score), dtype="Int64")


def build_relevance_labels(
    evaluations: pd.DataFrame,
    retrievals: pd.DataFrame,
    documents: pd.DataFrame,
    config: IngestConfig,
) -> tuple[pd.DataFrame, dict[str, int]]:
    columns = ["retrieval_id", "asset_id", "grade", "judge", "judged_at"]
    diagnostics = {"evaluations_read": len(evaluations)}
    if evaluations.empty:
        return empty_frame(columns), diagnostics
    frame = evaluations.copy()
    if config.evaluation_names:
        keep = frame["name"].isna() | frame["name"].isin(config.evaluation_names)
        diagnostics["evaluations_other_name"] = int((~keep).sum())
        frame = frame[keep]
    known = frame["span_id"].isin(set(retrievals["retrieval_id"]))
    diagnostics["evaluations_unknown_retrieval"] = int((~known).sum())
    frame = frame[known]
    positions = pd.to_numeric(frame["document_position"], errors="coerce")
    frame = frame.assign(document_position=positions)
    by_position = frame.merge(
        documents.rename(columns={"asset_id": "position_asset_id"}),
        left_on=["span_id", "document_position"],
        right_on=["retrieval_id", "document_position"],
        how="left",
    )
    named = clean_text(by_position["asset_id"].astype(object))
    asset = named.where(named.notna(), by_position["position_asset_id"])
    judge = _lower(by_position["judge"])
    judge = judge.where(judge.isin(["human", "llm"]), config.judge)
    labels = pd.DataFrame(
        {
            "retrieval_id": by_position["span_id"],
            "asset_id": asset,
            "grade": grades(by_position["label"], by_position["score"], config),
            "judge": judge,
            "judged_at": utc_microseconds(by_position["judged_at"]),
        }
    )
    no_asset = labels["asset_id"].isna()
    no_grade = labels["grade"].isna()
    diagnostics["evaluations_unknown_document"] = int(no_asset.sum())
    diagnostics["evaluations_without_grade"] = int((no_grade & ~no_asset).sum())
    labels = labels[~no_asset & ~no_grade]
    before = len(labels)
    labels = labels.drop_duplicates(columns, keep="last").reset_index(drop=True)
    diagnostics["evaluations_exact_duplicates"] = before - len(labels)
    labels["grade"] = labels["grade"].astype("int64")
    return labels, diagnostics


def retrieval_documents(documents: pd.DataFrame) -> pd.DataFrame:
    """(retrieval_id, document_position, asset_id) of every document, ids or not."""
    return pd.DataFrame(
        {
            "retrieval_id": documents["span_id"].to_numpy(dtype=object),
            "document_position": documents["position"].to_numpy(dtype="float64"),
            "asset_id": documents["asset_id"].to_numpy(dtype=object),
        }
    )


# --- evaluation files ---------------------------------------------------------------------

_EVAL_ALIASES = {
    "span_id": ("context.span_id", "span_id", "retrieval_id"),
    "document_position": ("document_position", "position"),
    "asset_id": ("document_id", "document.id", "asset_id"),
    "label": ("label", "result.label"),
    "score": ("score", "result.score"),
    "name": ("eval_name", "annotation_name", "name"),
    "judge": ("judge", "annotator_kind"),
    "judged_at": ("judged_at", "updated_at", "created_at", "timestamp"),
}


def read_evaluations(paths: Iterable[Path]) -> pd.DataFrame:
    """Document evaluations (Phoenix `DocumentEvaluations` / document annotations) files.

    Parquet, CSV, JSON Lines or JSON: one row per (span, document position) with a
    `label` and/or `score`; optional evaluation name, annotator kind (HUMAN / LLM)
    and time. Where a file has no time column, its modification time (UTC) is used.
    """
    frames = []
    for path in paths:
        path = Path(path)
        if path.name.endswith(".parquet"):
            raw = pd.read_parquet(path)
        elif path.name.endswith(".csv"):
            raw = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        elif path.name.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
            raw = pd.read_json(path, lines=True, dtype=False, convert_dates=False)
        elif path.name.endswith(".json"):
            raw = pd.DataFrame.from_records(json.loads(path.read_text()))
        else:
            raise ValueError(f"lara ingest: unsupported evaluations file {path}")
        if any(name is not None for name in raw.index.names):
            raw = raw.reset_index()
        frame = pd.DataFrame(index=raw.index)
        for target, aliases in _EVAL_ALIASES.items():
            source = next((a for a in aliases if a in raw.columns), None)
            frame[target] = raw[source] if source else None
        frame["span_id"] = normalize_ids(frame["span_id"])
        modified = dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.UTC)
        judged = utc_microseconds(frame["judged_at"])
        frame["judged_at"] = judged.fillna(pd.Timestamp(modified).floor("us").as_unit("us"))
        frames.append(frame[EVALUATION_COLUMNS])
    if not frames:
        return empty_frame(EVALUATION_COLUMNS)
    return pd.concat(frames, ignore_index=True)
