"""Speed of span flattening: synthetic OpenInference spans in memory, read and extracted.

`bench_spans(n)` builds `n` spans (traces of five: an agent root, a retriever
returning five documents with ids, scores, content and JSON metadata, a tool
call naming one of them, an LLM call and a chain step), serialises them the
way the OpenTelemetry Collector's file exporter does (OTLP JSON requests of
512 spans, ids in hex, nanosecond times), and times what `lara ingest
openinference` does with them before building tables: reading them into the
columnar span set and extracting prompts, retrievals, documents and tool
references. It returns spans per second, the CPU seconds of only parsing the
same requests (the floor under any reading of them), and those of the
row-by-row loop the columnar reading replaced (`lara` at commit df8f717, the
baseline of issue 19's target) on the same spans in the same run
(`row_by_row_cpu_seconds`).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.json as pa_json

SPANS_PER_TRACE = 5
SPANS_PER_REQUEST = 512
T0_NANOS = 1_785_751_200_123_456_789  # 2026-08-03T10:00:00.123456789Z


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def _trace(number: int) -> list[dict[str, Any]]:
    """The five spans of trace `number`, their attributes as a plain dict."""
    trace_id = f"{number + 1:032x}"
    start = T0_NANOS + number * 7_000_000_123
    root = f"{number * 8 + 1:016x}"

    def span(offset: int, name: str, parent: str | None, attributes: dict[str, Any]) -> dict:
        return {
            "traceId": trace_id,
            "spanId": f"{number * 8 + offset:016x}",
            "parentSpanId": parent or "",
            "name": name,
            "kind": 1,
            "startTimeUnixNano": str(start + offset * 1_000_017),
            "endTimeUnixNano": str(start + offset * 1_000_017 + 999_999),
            "attributes": attributes,
        }

    documents: dict[str, Any] = {}
    for position in range(5):
        asset = f"asset-{(number + position) % 997}"
        prefix = f"retrieval.documents.{position}.document"
        documents[f"{prefix}.id"] = asset
        documents[f"{prefix}.score"] = round(1.0 - position / 10, 2)
        documents[f"{prefix}.content"] = f"template {asset}"
        documents[f"{prefix}.metadata"] = json.dumps({"source": asset, "page": position})
    return [
        span(
            1,
            "agent",
            None,
            {
                "openinference.span.kind": "AGENT",
                "input.value": f"find a logo for request {number}",
                "session.id": f"session-{number // 3}",
                "user.id": f"user-{number // 9}",
            },
        ),
        span(
            2,
            "retriever",
            root,
            {"openinference.span.kind": "RETRIEVER", "input.value": "logo", **documents},
        ),
        span(
            3,
            "insert_asset",
            root,
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "insert_asset",
                "input.value": json.dumps({"asset_id": f"asset-{number % 997}", "x": 1}),
            },
        ),
        span(
            4,
            "llm",
            root,
            {"openinference.span.kind": "LLM", "llm.token_count.prompt": 120, "output.value": "ok"},
        ),
        span(5, "chain", root, {"openinference.span.kind": "CHAIN", "input.value": "step"}),
    ]


def _spans(n_spans: int) -> list[dict[str, Any]]:
    """The first `n_spans` spans of traces 0, 1, ..., attributes as plain dicts."""
    traces = -(-n_spans // SPANS_PER_TRACE)
    return [span for number in range(traces) for span in _trace(number)][:n_spans]


def synthetic_otlp_requests(n_spans: int) -> list[str]:
    """`n_spans` OpenInference spans as OTLP JSON requests (Collector file exporter lines)."""
    spans = [
        {**span, "attributes": [_kv(key, value) for key, value in span["attributes"].items()]}
        for span in _spans(n_spans)
    ]
    resource = {"attributes": [_kv("service.name", "lara-bench")]}
    return [
        json.dumps(
            {
                "resourceSpans": [
                    {
                        "resource": resource,
                        "scopeSpans": [
                            {
                                "scope": {"name": "lara.bench"},
                                "spans": spans[i : i + SPANS_PER_REQUEST],
                            }
                        ],
                    }
                ]
            }
        )
        for i in range(0, len(spans), SPANS_PER_REQUEST)
    ]


def bench_spans(n_spans: int = 100_000, runs: int = 3) -> dict[str, Any]:
    """Flatten `n_spans` synthetic spans held in memory; spans per second.

    Times reading the OTLP JSON requests into the columnar span set
    (`read_span_documents`, keeping the attributes the extraction reads, as `lara ingest`
    does) and the OpenInference extraction (`extract_openinference`),
    the least CPU seconds of `runs` runs; building the requests is not timed. Returns
    `n_spans`, `runs`, `seconds` (wall, of that run), `spans_per_second`, `cpu_seconds` (all
    threads of the process: steadier than wall time on a shared machine),
    `parse_floor_cpu_seconds` (only parsing the same requests, the least of three parses,
    see `parse_floor_cpu_seconds`, measured after the flattening), the counts found
    (`retrieval_spans`, `documents`, `tool_spans`) as a check, and `loop` (the row-by-row
    loop on the same requests, saved as a JSON Lines file: `row_by_row_cpu_seconds`).
    """
    from lara.ingest.spans import read_span_documents

    if n_spans < 1:
        raise ValueError("bench_spans: n_spans must be at least 1")
    requests = synthetic_otlp_requests(n_spans)
    result = _timed_flattening(lambda: read_span_documents(requests, _keys()), runs)
    result["parse_floor_cpu_seconds"] = round(parse_floor_cpu_seconds(requests), 3)
    with tempfile.TemporaryDirectory(prefix="lara-bench-spans-") as work:
        path = Path(work) / "spans.jsonl"
        path.write_text("".join(request + "\n" for request in requests))
        result["loop"] = _loop_or_reason(path, runs)
    return result


def bench_phoenix_spans(n_spans: int = 100_000, runs: int = 3) -> dict[str, Any]:
    """The same spans as `bench_spans`, as a Phoenix spans dataframe saved to Parquet
    (`synthetic_phoenix_table`), read from the file by `lara ingest`'s reader (`read_spans`)
    and extracted; writing the file is not timed. Returns what `bench_spans` returns, with
    `parse_floor_cpu_seconds` the CPU seconds of only reading the file into Arrow (the least
    of three reads), and `loop` the row-by-row loop on the same file."""
    import pyarrow.parquet as pq

    from lara.ingest.spans import read_spans

    if n_spans < 1:
        raise ValueError("bench_phoenix_spans: n_spans must be at least 1")
    with tempfile.TemporaryDirectory(prefix="lara-bench-spans-") as work:
        path = Path(work) / "spans.parquet"
        pq.write_table(synthetic_phoenix_table(n_spans), path)
        result = _timed_flattening(lambda: read_spans(path, _keys()), runs)
        reads = []
        for _ in range(3):
            started = time.process_time()
            pq.read_table(path)
            reads.append(time.process_time() - started)
        result["loop"] = _loop_or_reason(path, runs)
    result["parse_floor_cpu_seconds"] = round(min(reads), 3)
    return result


def _keys() -> Any:
    """The attributes `lara ingest openinference` reads with the default configuration: the
    reading keeps only those (`openinference_keys`), here as there."""
    from lara.ingest.config import IngestConfig
    from lara.ingest.openinference import openinference_keys

    return openinference_keys(IngestConfig())


def _timed_flattening(read: Any, runs: int) -> dict[str, Any]:
    """Time `read()` (a span set) and the OpenInference extraction of what it read: the
    run of the least CPU seconds of `runs`."""
    from lara.ingest.config import IngestConfig
    from lara.ingest.openinference import extract_openinference

    best: dict[str, Any] | None = None
    for _ in range(max(runs, 1)):
        started, cpu_started = time.perf_counter(), time.process_time()
        spans = read()
        extracted = extract_openinference(spans, IngestConfig())
        seconds = time.perf_counter() - started
        cpu_seconds = time.process_time() - cpu_started
        result = {
            "n_spans": len(spans.frame),
            "seconds": round(seconds, 3),
            "spans_per_second": round(len(spans.frame) / seconds) if seconds > 0 else None,
            "cpu_seconds": round(cpu_seconds, 3),
            "retrieval_spans": len(extracted.retrievals),
            "documents": len(extracted.documents),
            "tool_spans": len(extracted.references),
            "runs": max(runs, 1),
        }
        del spans, extracted  # their memory freed first: the next run starts the same
        if best is None or result["cpu_seconds"] < best["cpu_seconds"]:
            best = result
    assert best is not None
    return best


#: The commit whose span flattening is the row-by-row loop (a Python loop over spans after
#: `json.loads`, `itertuples` over the span rows): the baseline of issue 19's "10x the
#: current spans per second".
ROW_BY_ROW_COMMIT = "df8f717"

# Run in a child process whose `lara` is the package at ROW_BY_ROW_COMMIT: reads the file
# `argv[1]` with that version's `read_spans`, extracts with its `extract_openinference`
# (which took the span frame), `argv[2]` times; prints the CPU seconds of each run and
# the counts found.
_LOOP_CHILD = """
import json, sys, time
from pathlib import Path
import lara
if not lara.__file__.startswith(sys.argv[3]):
    raise SystemExit(f"the row-by-row loop: imported lara from {lara.__file__}")
from lara.ingest.config import IngestConfig
from lara.ingest.openinference import extract_openinference
from lara.ingest.spans import read_spans
seconds = []
for _ in range(int(sys.argv[2])):
    started = time.process_time()
    spans = read_spans(Path(sys.argv[1]))
    extracted = extract_openinference(spans.frame, IngestConfig())
    seconds.append(time.process_time() - started)
    counts = {
        "n_spans": len(spans.frame),
        "retrieval_spans": len(extracted.retrievals),
        "documents": int(extracted.retrievals["documents"].map(len).sum()),
        "tool_spans": len(extracted.references),
    }
    del spans, extracted
print(json.dumps({"cpu_seconds": seconds, **counts}))
"""


def row_by_row_cpu_seconds(path: Path, runs: int = 3) -> dict[str, Any]:
    """The row-by-row loop (`lara` at ROW_BY_ROW_COMMIT) reading and extracting the span
    file `path` (an OTLP JSON Lines or Phoenix Parquet file), in a child process of this
    Python: its package is taken from the project's git history (`git archive`), so the
    baseline runs on the same host and libraries as the columnar reading. The reading is
    timed inside the child (process CPU seconds, not its start-up or imports), `runs`
    times. Returns `cpu_seconds` (the least) and the counts it found (`n_spans`,
    `retrieval_spans`, `documents`, `tool_spans`); raises RuntimeError, saying why, when
    the commit cannot be read (no git, or a checkout without that history)."""
    from lara.paths import project_dir

    project = project_dir()
    try:
        archive = subprocess.run(
            ["git", "-C", str(project), "archive", "--format=tar", ROW_BY_ROW_COMMIT, "python/src"],
            capture_output=True,
            check=False,
        )
    except OSError as error:  # no git on the machine
        raise RuntimeError(f"git archive {ROW_BY_ROW_COMMIT} failed: {error}") from error
    if archive.returncode != 0:
        reason = archive.stderr.decode(errors="replace").strip().splitlines()
        raise RuntimeError(
            f"git archive {ROW_BY_ROW_COMMIT} failed: {reason[-1] if reason else 'no output'}"
        )
    with tempfile.TemporaryDirectory(prefix="lara-row-by-row-") as work:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            try:
                tar.extractall(work, filter="data")
            except TypeError:  # Python before 3.11.4 has no filters; the archive is ours
                tar.extractall(work)
        source = str(Path(work) / "python" / "src")
        env = {**os.environ, "PYTHONPATH": source, "DBT_PROJECT_DIR": str(project)}
        child = subprocess.run(
            [sys.executable, "-c", _LOOP_CHILD, str(path), str(max(runs, 1)), source],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    if child.returncode != 0:
        raise RuntimeError(f"the row-by-row loop failed: {child.stderr.strip()[-2000:]}")
    found = json.loads(child.stdout.strip().splitlines()[-1])
    return {**found, "cpu_seconds": round(min(found["cpu_seconds"]), 3)}


def _loop_or_reason(path: Path, runs: int) -> dict[str, Any]:
    """`row_by_row_cpu_seconds`, or `{"unavailable": <why>}`."""
    try:
        return row_by_row_cpu_seconds(path, runs)
    except RuntimeError as error:
        return {"unavailable": str(error)}


def synthetic_phoenix_table(n_spans: int) -> pa.Table:
    """The spans of `synthetic_otlp_requests(n_spans)` laid out as Phoenix's
    `get_spans_dataframe()` saves them: context columns, `start_time` / `end_time` as
    timestamps, an `events` list, one `attributes.<name>` column per attribute name, the
    retrieval documents as one list of `{"document.id": ...}` objects."""
    prefix = "retrieval.documents."
    rows = []
    for span in _spans(n_spans):
        row: dict[str, Any] = {
            "context.span_id": span["spanId"],
            "context.trace_id": span["traceId"],
            "parent_id": span["parentSpanId"] or None,
            "name": span["name"],
            "start_time": int(span["startTimeUnixNano"]),
            "end_time": int(span["endTimeUnixNano"]),
            "status_code": "UNSET",
        }
        documents: dict[int, dict[str, Any]] = {}
        for key, value in span["attributes"].items():
            if key.startswith(prefix):
                position, _, field = key[len(prefix) :].partition(".")
                documents.setdefault(int(position), {})[field] = value
            else:
                row[f"attributes.{key}"] = value
        row["span_kind"] = row["attributes.openinference.span.kind"]
        if documents:
            row["attributes.retrieval.documents"] = [documents[i] for i in sorted(documents)]
        rows.append(row)
    names = list(dict.fromkeys(name for row in rows for name in row))
    table = pa.table({name: pa.array([row.get(name) for row in rows]) for name in names})
    for name in ("start_time", "end_time"):
        stamps = table.column(name).cast(pa.timestamp("ns", tz="UTC"))
        table = table.set_column(table.schema.get_field_index(name), name, stamps)
    event = pa.struct(
        [("name", pa.string()), ("timestamp", pa.string()), ("attributes", pa.string())]
    )
    return table.append_column("events", pa.array([[]] * len(rows), pa.list_(event)))


def parse_floor_cpu_seconds(requests: list[str], runs: int = 3) -> float:
    """CPU seconds of only parsing `requests` (one JSON object each, no raw newline) with
    the fastest parser at hand: Arrow's JSON reader, on one thread (fewer CPU seconds than
    on several), over the requests joined as JSON Lines in memory; the least of `runs`
    parses (on a shared machine one parse may be slowed by others). Joining them is not
    timed. No reading of the requests can cost less than this parse; the span flattening's
    CPU seconds over it tell how close to that floor it is."""
    lines = "\n".join(requests).encode()
    options = pa_json.ReadOptions(
        use_threads=False, block_size=max(1 << 20, 2 * max(map(len, requests), default=0))
    )
    seconds = []
    for _ in range(runs):
        started = time.process_time()
        pa_json.read_json(io.BytesIO(lines), read_options=options)
        seconds.append(time.process_time() - started)
    return min(seconds)
