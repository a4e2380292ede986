"""Trace adapters: OpenInference and OpenTelemetry GenAI span exports -> log contract tables.

    from lara.ingest import IngestConfig, ingest_openinference, ingest_otel_genai
    counts = ingest_openinference(Path("spans.parquet"), Path("raw"), IngestConfig())

See docs/ingest.md.
"""

from lara.ingest.bench import bench_phoenix_spans, bench_spans
from lara.ingest.cli import add_ingest_arguments, ingest_main
from lara.ingest.config import IngestConfig
from lara.ingest.openinference import ingest_openinference
from lara.ingest.otel_genai import ingest_otel_genai
from lara.ingest.tables import IngestReport

__all__ = [
    "IngestConfig",
    "IngestReport",
    "add_ingest_arguments",
    "bench_phoenix_spans",
    "bench_spans",
    "ingest_main",
    "ingest_openinference",
    "ingest_otel_genai",
]
