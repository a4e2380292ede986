"""Building and writing the contract tables from an adapter's `Extracted` (both adapters)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from lara.ingest.config import IngestConfig
from lara.ingest.manifest import record_run
from lara.ingest.span_core import KeyFilter
from lara.ingest.spans import SpanSet, read_spans
from lara.ingest.tables import (
    Extracted,
    IngestReport,
    assign_prompts,
    build_actions,
    build_prompts,
    build_relevance_labels,
    build_retrievals,
    explode_assets,
    read_evaluations,
    retrieval_documents,
)
from lara.ingest.writer import contract, write_empty_parquet, write_parquet_partitions

logger = logging.getLogger("lara.ingest")

#: The partition column of each written table.
PARTITION_COLUMNS = {
    "prompts": "ts",
    "retrievals": "ts",
    "actions": "ts",
    "relevance_labels": "judged_at",
}


def build_tables(
    extracted: Extracted, config: IngestConfig
) -> tuple[dict[str, pd.DataFrame], dict[str, int]]:
    """The contract tables (prompts, retrievals, actions, relevance_labels) and diagnostics."""
    diagnostics = dict(extracted.diagnostics)
    if extracted.spans.empty:
        raise ValueError("lara ingest: the export holds no spans")
    spans = assign_prompts(extracted.spans, config)
    prompts = build_prompts(spans, config)
    retrievals, found = build_retrievals(
        extracted.retrievals, extracted.documents, spans, prompts, config
    )
    diagnostics.update(found)
    # A prompt is a request that reached the agent: keep every prompt, with or
    # without retrieval (Tier 0 needs the ones without).
    assets = explode_assets(retrievals)
    actions, found = build_actions(
        extracted.references, extracted.tokens, spans, prompts, assets, config
    )
    diagnostics.update(found)
    labels, found = build_relevance_labels(
        extracted.evaluations, retrievals, retrieval_documents(extracted.documents), config
    )
    diagnostics.update(found)
    tables = {
        "prompts": prompts,
        "retrievals": retrievals,
        "actions": actions,
        "relevance_labels": labels,
    }
    return tables, diagnostics


def write_tables(
    tables: dict[str, pd.DataFrame], out: Path, config: IngestConfig
) -> dict[str, dict[str, int]]:
    """Write each table day-partitioned; a required table with no rows gets an empty file."""
    tables_spec = contract()
    partitions: dict[str, dict[str, int]] = {}
    first_day = pd.to_datetime(tables["prompts"]["ts"], utc=True).min().strftime("%Y-%m-%d")
    for name, frame in tables.items():
        partitions[name] = write_parquet_partitions(
            frame,
            name,
            Path(out),
            PARTITION_COLUMNS[name],
            part_name=config.part_name,
            overwrite=config.overwrite,
        )
        if frame.empty and tables_spec[name].required_table:
            write_empty_parquet(name, Path(out), first_day, config.part_name, config.overwrite)
            partitions[name] = {first_day: 0}
    return partitions


def ingest_extracted(
    extracted: Extracted, out: Path, config: IngestConfig, run: dict[str, Any] | None = None
) -> IngestReport:
    """Build and write the tables; record the run in the folder's ingest manifest."""
    tables, diagnostics = build_tables(extracted, config)
    partitions = write_tables(tables, out, config)
    counts = {name: len(frame) for name, frame in tables.items()}
    record_run(
        Path(out),
        {
            **(run or {}),
            "rows_written": counts,
            "partitions": partitions,
            "diagnostics": diagnostics,
            "config": config.as_record(),
        },
    )
    logger.info("lara ingest: wrote %s to %s (%s)", counts, out, diagnostics)
    return IngestReport(counts, diagnostics, partitions)


def _first(names: list[str], n: int) -> list[str]:
    """The first `n` of `names`, then how many more there are."""
    return names[:n] + ([f"(and {len(names) - n} more)"] if len(names) > n else [])


@dataclass(frozen=True)
class SpanAdapter:
    """One trace adapter of `lara ingest`: its name (the run record's `adapter`), its
    extraction, the attributes that extraction reads with a configuration (the reader keeps
    only those), and the document id keys it tries when the configuration names none."""

    name: str
    extract: Callable[[SpanSet, IngestConfig, pd.DataFrame | None], Extracted]
    keys: Callable[[IngestConfig], KeyFilter]
    default_document_id_keys: tuple[str, ...] = ()


def ingest_spans(
    adapter: SpanAdapter,
    src: Path,
    out: Path,
    config: IngestConfig | None = None,
    evaluations: Iterable[Path] = (),
) -> IngestReport:
    """Read a span export under `src` (only the attributes the adapter's extraction
    reads), extract them, write contract tables.

    Shared by the OpenInference and OpenTelemetry GenAI adapters; adds the
    reading diagnostics (files, spans, dropped spans, the document id keys used) to the
    report and records the run in `<out>/_lara_ingest.json`.
    """
    config = config or IngestConfig()
    span_set = read_spans(Path(src), adapter.keys(config))
    evaluations = list(evaluations)
    extracted = adapter.extract(
        span_set, config, read_evaluations(evaluations) if evaluations else None
    )
    extracted.diagnostics.update(
        {
            "files_read": len(span_set.files),
            "formats_read": dict(span_set.formats),
            "spans_read": len(span_set.frame),
            "duplicate_spans_dropped": span_set.dropped_duplicates,
            "spans_without_id_dropped": span_set.dropped_without_id,
            "attributes_not_read": _first(span_set.attributes_not_read, 30),
            "document_id_keys": list(config.document_id_keys or adapter.default_document_id_keys),
            "tool_asset_keys": list(config.tool_asset_keys),
        }
    )
    run = {
        "adapter": adapter.name,
        "source": str(Path(src).resolve()),
        "evaluations": [str(Path(p).resolve()) for p in evaluations],
        "part_name": config.part_name,
    }
    return ingest_extracted(extracted, Path(out), config, run)
