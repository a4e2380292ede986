"""`lara bench --spans N`: the span flattening of `lara ingest` (reading and OpenInference
extraction of synthetic spans, from OTLP JSON and from a Phoenix Parquet file), beside the
row-by-row loop it replaced, run on the same spans in the same benchmark: its results
(`SpanResult`), the report's section and the target rows (issue 19: 10x the loop).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lara.ingest.bench import ROW_BY_ROW_COMMIT


def met_cell(ok: bool, miss: str) -> str:
    """A targets-table cell: `yes`, or `**no**` with by how much (`miss`)."""
    return "yes" if ok else f"**no** ({miss})"


#: Spans per CPU second of the row-by-row span flattening (a Python loop over spans after
#: `json.loads`, `lara` at commit df8f717) on `lara.ingest.bench_spans(100_000)`: measured
#: three times in docs/ingest.md, section "Speed" (7.38, 7.44, 7.47 CPU s). Used only for
#: results saved before the loop was run beside the columnar reading (`loop_cpu_s`).
ROW_BY_ROW_SPANS_PER_CPU_S = 13_500.0
#: The same for the same spans saved as a Phoenix spans dataframe (Parquet), read from the
#: file (`lara.ingest.bench_phoenix_spans`): the loop at df8f717 measured on the host of
#: the 2026-12-04 runs, 4.04 to 4.21 CPU s for 100,000 spans, median 4.10 (docs/ingest.md).
ROW_BY_ROW_PHOENIX_SPANS_PER_CPU_S = 24_400.0
#: issue 19: columnar span flattening 10x the row-by-row loop
TARGET_SPAN_SPEEDUP = 10.0


#: The inputs of the span-flattening benchmark, as its table names them.
OTLP_JSON = "OTLP JSON"
PHOENIX_PARQUET = "Phoenix Parquet"
#: The row-by-row loop's spans per CPU second on each input, as measured before it ran in
#: the benchmark (results saved without `loop_cpu_s`).
LOOP_SPANS_PER_CPU_S = {
    OTLP_JSON: ROW_BY_ROW_SPANS_PER_CPU_S,
    PHOENIX_PARQUET: ROW_BY_ROW_PHOENIX_SPANS_PER_CPU_S,
}


@dataclass
class SpanResult:
    """One input's run of the span flattening (`lara.ingest.bench_spans` for OTLP JSON,
    `bench_phoenix_spans` for a Phoenix Parquet file): spans read and extracted, wall and
    CPU seconds, the CPU seconds of only parsing the same input, and those of the
    row-by-row loop on the same spans in the same run (each None when not measured;
    `loop_note` says why the loop was not)."""

    spans: int
    wall_s: float
    cpu_s: float
    parse_floor_cpu_s: float | None = None
    input: str = OTLP_JSON
    loop_cpu_s: float | None = None
    loop_note: str | None = None
    #: the columnar reading and the loop each timed as the least CPU seconds of this many runs
    runs: int = 3

    @property
    def spans_per_cpu_s(self) -> float:
        return self.spans / self.cpu_s if self.cpu_s else float("nan")

    @property
    def loop_spans_per_cpu_s(self) -> float:
        """The row-by-row loop's spans per CPU second: measured in the same run, else the
        figure measured before (LOOP_SPANS_PER_CPU_S)."""
        if self.loop_cpu_s:
            return self.spans / self.loop_cpu_s
        return LOOP_SPANS_PER_CPU_S[self.input]

    @property
    def speedup(self) -> float:
        """Spans per CPU second over the row-by-row loop's on the same input."""
        return self.spans_per_cpu_s / self.loop_spans_per_cpu_s

    @property
    def over_floor(self) -> float | None:
        """CPU seconds over those of only parsing the input (None when not measured)."""
        if not self.parse_floor_cpu_s:
            return None
        return self.cpu_s / self.parse_floor_cpu_s


def span_results(saved: dict[str, Any] | list[dict[str, Any]]) -> list[SpanResult]:
    """The span results of a saved bench_results.json: a list (one per input), or the
    single object of earlier runs, which held the Phoenix run as `phoenix_wall_s`,
    `phoenix_cpu_s` and `phoenix_floor_cpu_s` (absent or null when not measured)."""
    if isinstance(saved, list):
        return [SpanResult(**result) for result in saved]
    otlp = {key: value for key, value in saved.items() if not key.startswith("phoenix_")}
    results = [SpanResult(**otlp)]
    if saved.get("phoenix_cpu_s") is not None:
        results.append(
            SpanResult(
                otlp["spans"],
                saved["phoenix_wall_s"],
                saved["phoenix_cpu_s"],
                saved.get("phoenix_floor_cpu_s"),
                PHOENIX_PARQUET,
            )
        )
    return results


def bench_span_flattening(n_spans: int, log: Callable[[str], None] = print) -> list[SpanResult]:
    """Time `lara ingest`'s span flattening on `n_spans` synthetic spans (in this process),
    from OTLP JSON requests, then from a Phoenix Parquet file, each beside the row-by-row
    loop on the same spans (`lara.ingest.bench.row_by_row_cpu_seconds`)."""
    from lara.ingest import bench_phoenix_spans, bench_spans

    log(f"[bench] span flattening: {n_spans:,} spans (OTLP JSON, then a Phoenix Parquet file)")
    results = []
    for name, run in ((OTLP_JSON, bench_spans), (PHOENIX_PARQUET, bench_phoenix_spans)):
        found = run(n_spans)
        loop = found["loop"]
        if "unavailable" in loop:
            log(f"[bench] the row-by-row loop was not run: {loop['unavailable']}")
        else:
            counts = ("n_spans", "retrieval_spans", "documents", "tool_spans")
            differ = [key for key in counts if loop[key] != found[key]]
            if differ:
                raise RuntimeError(
                    f"span flattening ({name}): the row-by-row loop found other counts"
                    f" ({', '.join(f'{k} {loop[k]} vs {found[k]}' for k in differ)})"
                )
        results.append(
            SpanResult(
                found["n_spans"],
                found["seconds"],
                found["cpu_seconds"],
                found["parse_floor_cpu_seconds"],
                name,
                loop.get("cpu_seconds"),
                loop.get("unavailable"),
                found["runs"],
            )
        )
    return results


def render_spans(spans: list[SpanResult] | None) -> list[str]:
    """The report's span-flattening section (nothing when not measured)."""
    if not spans:
        return []
    return (
        [
            "",
            "## Span flattening",
            "",
            "`lara.ingest.bench_spans`: synthetic OpenInference spans (traces of five: agent,"
            " retriever with five documents, tool call, LLM call, chain step) as OTLP JSON"
            " requests of 512 spans held in memory, read into the columnar span set and"
            " extracted (prompts, retrievals, documents, tool references), in this process;"
            f" {_least_of(spans)}. CPU seconds count every thread of the"
            " process. The row-by-row loop is the span flattening it replaced (a Python loop"
            f" over spans after `json.loads`, `lara` at {ROW_BY_ROW_COMMIT}, taken from the"
            " project's git history), run in the same benchmark on the same spans (the"
            " requests saved as a JSON Lines file, which it reads) in a child process of the"
            " same Python and libraries, timed inside it the same way; it must find the same"
            " retrievals, documents and tool spans. The parse"
            " floor is the CPU seconds of only parsing the same requests (Arrow's JSON reader"
            " on one thread, the least of three parses in the same run): no reading of them"
            " costs less. The second row reads the same spans from a Parquet file laid out as"
            " Phoenix's spans dataframe (`lara.ingest.bench_phoenix_spans`), the loop the same"
            " file, the floor reading the file into Arrow.",
            "",
            "| input | spans | wall s | CPU s | spans per CPU second | row-by-row loop CPU s"
            " | vs the row-by-row loop | parse floor CPU s | CPU s / floor |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        + [
            f"| {result.input} | {result.spans:,} | {result.wall_s:.2f} | {result.cpu_s:.2f}"
            f" | {result.spans_per_cpu_s:,.0f} | {_loop_cell(result)}"
            f" | {result.speedup:.1f}x | {_floor_cells(result)} |"
            for result in spans
        ]
        + _loop_notes(spans)
    )


_COUNT_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _least_of(spans: list[SpanResult]) -> str:
    """How the rows' CPU seconds were chosen: "the least CPU seconds of three runs" (the
    `runs` of each row; rows with different counts are named by input)."""

    def phrase(runs: int) -> str:
        if runs <= 1:
            return "the CPU seconds of one run"
        count = _COUNT_WORDS[runs - 1] if runs <= len(_COUNT_WORDS) else f"{runs:,}"
        return f"the least CPU seconds of {count} runs"

    counts = {result.runs for result in spans}
    if len(counts) == 1:
        return phrase(counts.pop())
    return "; ".join(f"{result.input}: {phrase(result.runs)}" for result in spans)


def _loop_cell(spans: SpanResult) -> str:
    """The loop's CPU seconds in this run, else the earlier figure it is compared with."""
    if spans.loop_cpu_s:
        return f"{spans.loop_cpu_s:.2f}"
    return f"not run ({spans.loop_spans_per_cpu_s:,.0f} spans per CPU s measured before)"


def _loop_notes(spans: list[SpanResult]) -> list[str]:
    """Why the loop was not run, under the table (nothing when it ran)."""
    notes = sorted({f"{r.input}: {r.loop_note}" for r in spans if r.loop_note})
    if not notes:
        return []
    return ["", "The row-by-row loop was not run in this benchmark: " + "; ".join(notes) + "."]


def _floor_cells(spans: SpanResult) -> str:
    """The parse floor and the ratio to it, as two table cells (`n/a` when not measured)."""
    if spans.over_floor is None:
        return "n/a | n/a"
    return f"{spans.parse_floor_cpu_s:.2f} | {spans.over_floor:.1f}x"


def span_target(spans: list[SpanResult] | None) -> list[str]:
    """The span-flattening target rows: the first input's (with its parse floor), then one
    per other input."""
    label = f"span flattening >= {TARGET_SPAN_SPEEDUP:g}x the row-by-row loop (issue 19)"
    if not spans:
        return [f"| {label} | not measured | |"]

    def met(result: SpanResult) -> str:
        miss = f"{result.speedup / TARGET_SPAN_SPEEDUP:.2f}x the target"
        return met_cell(result.speedup >= TARGET_SPAN_SPEEDUP, miss)

    def loop(result: SpanResult) -> str:
        if result.loop_cpu_s:
            return f" (the loop {result.loop_cpu_s:.2f} CPU s in the same run)"
        return ""

    first, *others = spans
    floor = ""
    if first.over_floor is not None:
        floor = f"; {first.over_floor:.1f}x the parse floor ({first.parse_floor_cpu_s:.2f} CPU s)"
    return [
        f"| {label} | {first.spans_per_cpu_s:,.0f} spans per CPU s ({first.spans:,} spans)"
        f" = {first.speedup:.1f}x{loop(first)}{floor} | {met(first)} |"
    ] + [
        f"| the same from a {result.input} file | {result.spans_per_cpu_s:,.0f}"
        f" spans per CPU s = {result.speedup:.1f}x the loop on that file{loop(result)}"
        f" | {met(result)} |"
        for result in others
    ]
