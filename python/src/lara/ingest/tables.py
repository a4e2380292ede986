"""From what an adapter extracted out of spans to the contract tables (shared by both adapters).

An adapter (OpenInference, OpenTelemetry GenAI) turns the canonical span table
into an `Extracted`: per-span facts (session, user, prompt text, ...), the
retrieval spans with their documents, the spans that may reference assets
(tool calls) with the candidate tokens, and document evaluations. This module
does the rest in pandas, the same way for both:

- prompts: one per trace (`prompt_from: trace`) or per top-level span
  (`root_span`); `ts` = the earliest span start, session / user = the first
  value found, the root span first, then by start time;
- retrievals: one per retrieval span, `returned_asset_ids` in document order;
- actions: one agent action per (tool span, returned asset it references),
  lineage to the latest retrieval of the same prompt (or session) at or before
  the tool call whose returned list holds the asset;
- relevance_labels: evaluations mapped to grades, with their asset resolved
  from the document position where needed.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lara.ingest.config import IngestConfig, match_pattern
from lara.ingest.spans import parse_json_value
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
RETRIEVAL_COLUMNS = ["span_id", "query_text", "role", "documents"]
REFERENCE_COLUMNS = ["span_id", "tokens", "tool_name", "action_type", "document_id"]
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
_TOKEN_SPLIT = re.compile(r"[\s,;\"'()\[\]{}<>|]+")


@dataclass
class Extracted:
    """What an adapter found in the spans, before the contract tables are built.

    spans: SPAN_FACT_COLUMNS, one row per span.
    retrievals: RETRIEVAL_COLUMNS; `documents` is a list of (position, asset_id or None).
    references: REFERENCE_COLUMNS; `tokens` the strings that may name a returned asset.
    evaluations: EVALUATION_COLUMNS; the asset by id or by 0-based document position.
    """

    spans: pd.DataFrame
    retrievals: pd.DataFrame
    references: pd.DataFrame
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


def as_text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, list | dict):
        return json.dumps(value)
    text = str(value).strip()
    return text or None


def as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and not (isinstance(value, float) and np.isnan(value)):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "0", "no"):
        return False
    return None


def _leaves(value: Any, out: set[str]) -> None:
    if isinstance(value, dict):
        for item in value.values():
            _leaves(item, out)
    elif isinstance(value, list | tuple | np.ndarray):
        for item in value:
            _leaves(item, out)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        out.add(str(value))
    elif isinstance(value, str):
        text = value.strip()
        if text:
            out.add(text)
            out.update(token for token in _TOKEN_SPLIT.split(text) if token)


def reference_tokens(values: Iterable[Any]) -> list[str]:
    """Strings in attribute values that may name an asset: JSON leaves and their tokens."""
    out: set[str] = set()
    for value in values:
        _leaves(parse_json_value(value), out)
    return sorted(out)


def empty_frame(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({column: pd.Series(dtype=object) for column in columns})


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
    surface = ordered["surface"].map(lambda v: v.strip().lower() if isinstance(v, str) else None)
    ordered = ordered.assign(surface=surface.where(surface.isin(surfaces)))
    grouped = ordered.groupby("prompt_id", sort=True)
    firsts = grouped[["trace_id", "session_id", "user_id", "surface"]].first()
    prompts = pd.DataFrame(
        {
            "prompt_id": firsts.index,
            "session_guid": firsts["session_id"].fillna(firsts["trace_id"]).to_numpy(),
            "user_id": firsts["user_id"].to_numpy(),
            "surface": firsts["surface"].fillna(config.surface).to_numpy(),
            "ts": grouped["start_time"].min().to_numpy(),
        }
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


def build_retrievals(
    retrievals: pd.DataFrame, spans: pd.DataFrame, prompts: pd.DataFrame, config: IngestConfig
) -> tuple[pd.DataFrame, dict[str, int]]:
    roles = set(contract()["retrievals"].column("retrieval_role").values)
    merged = retrievals.merge(
        spans[["span_id", "name", "start_time", "session_id", "prompt_id"]],
        on="span_id",
        how="inner",
    ).merge(prompts[["prompt_id", "session_guid"]], on="prompt_id", how="left")
    logged = merged["role"].map(lambda v: v.strip().lower() if isinstance(v, str) else None)
    invalid_roles = int((logged.notna() & ~logged.isin(roles)).sum())
    logged = logged.where(logged.isin(roles))
    mapped = merged["name"].map(lambda name: match_pattern(config.role_map, name))
    role = logged.fillna(mapped)
    if config.default_role:
        role = role.fillna(config.default_role)
    asset_ids = merged["documents"].map(lambda docs: [a for _, a in docs if a])
    missing_ids = int(merged["documents"].map(lambda docs: sum(1 for _, a in docs if not a)).sum())
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
        "documents_without_id": missing_ids,
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
    tokens = calls[["span_id", "tokens"]].explode("tokens").dropna()
    tokens = tokens.rename(columns={"tokens": "asset_id"}).drop_duplicates()
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
    explicit = actions["action_type"].map(
        lambda v: v.strip().lower() if isinstance(v, str) else None
    )
    explicit = explicit.where(explicit.isin(action_types))
    mapped = actions["tool_name"].map(lambda name: match_pattern(config.action_type_map, name))
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
    return out, diagnostics


# --- relevance labels ---------------------------------------------------------------------


def grade_of(label: Any, score: Any, config: IngestConfig) -> int | None:
    if isinstance(label, str) and label.strip().lower() in config.label_grades:
        return config.label_grades[label.strip().lower()]
    try:
        value = float(score)
    except (TypeError, ValueError):
        return None
    if np.isnan(value):
        return None
    return int(sum(1 for threshold in config.score_thresholds if value >= threshold))


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
    asset = by_position["asset_id"].where(
        by_position["asset_id"].map(lambda v: isinstance(v, str) and bool(v.strip())),
        by_position["position_asset_id"],
    )
    grade = [
        grade_of(label, score, config)
        for label, score in zip(by_position["label"], by_position["score"], strict=True)
    ]
    judge = by_position["judge"].map(lambda v: v.strip().lower() if isinstance(v, str) else None)
    judge = judge.where(judge.isin(["human", "llm"]), config.judge)
    labels = pd.DataFrame(
        {
            "retrieval_id": by_position["span_id"],
            "asset_id": asset,
            "grade": pd.array(grade, dtype="Int64"),
            "judge": judge,
            "judged_at": pd.to_datetime(by_position["judged_at"], utc=True),
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


def retrieval_documents(retrievals: pd.DataFrame) -> pd.DataFrame:
    """(retrieval_id, document_position, asset_id) of every document, ids or not."""
    rows = retrievals[["span_id", "documents"]].explode("documents").dropna()
    if rows.empty:
        return pd.DataFrame({"retrieval_id": [], "document_position": [], "asset_id": []}).astype(
            {"document_position": "float64"}
        )
    return pd.DataFrame(
        {
            "retrieval_id": rows["span_id"].to_numpy(),
            "document_position": [float(p) for p, _ in rows["documents"]],
            "asset_id": [a for _, a in rows["documents"]],
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
    from lara.ingest.spans import normalize_id

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
        frame["span_id"] = frame["span_id"].map(normalize_id)
        modified = dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.UTC)
        judged = pd.to_datetime(frame["judged_at"], utc=True, errors="coerce", format="mixed")
        judged = judged.dt.as_unit("us")
        frame["judged_at"] = judged.fillna(pd.Timestamp(modified).as_unit("us"))
        frames.append(frame[EVALUATION_COLUMNS])
    if not frames:
        return empty_frame(EVALUATION_COLUMNS)
    return pd.concat(frames, ignore_index=True)
