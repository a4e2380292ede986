"""`lara bench`'s report: docs/benchmarks.md written from the measurements of a run.

`render_report` writes the report's sections (machine, full build against the
reference with the per-size lines, span flattening, the targets of issues 15 and
19 met or missed, the IR comparison, notes, "Reading the numbers") from
`SizeResult`s and the other parts' results; `render_saved` does the same from
the JSON a run saves beside the report (`load_saved`), which is how `lara bench
--render` writes it again without measuring. The measuring is in lara.bench
(sizes), lara.bench_incremental, lara.bench_ir and lara.bench_spans.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lara.bench_incremental import (
    TOP_MODELS,
    IncrementalResult,
    per_node,
    render_incremental,
    slowest_tests,
    top_seconds,
)
from lara.bench_ir import IrResult, render_ir
from lara.bench_spans import (
    OTLP_JSON,
    PHOENIX_PARQUET,
    TARGET_SPAN_SPEEDUP,
    SpanResult,
    met_cell,
    render_spans,
    span_results,
    span_target,
)

#: floats of marts.fct_retrievals and the reference agree when within this (absolute)
FLOAT_TOLERANCE = 1e-9


@dataclass
class SizeResult:
    target_events: int
    sessions: int
    events: int
    generator_s: float
    dbt_build_s: float | None = None
    dbt_peak_rss_mib: float | None = None
    reference_s: float | None = None
    reference_peak_rss_mib: float | None = None
    agreement: dict = field(default_factory=dict)
    dbt_breakdown: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # Wall seconds of `dbt build` of fct_retrievals' lineage alone (models and seeds, no
    # tests) into a fresh warehouse: the like-for-like figure against the reference.
    lineage_build_s: float | None = None
    # The generator's CPU seconds (every thread) and the part of them spent writing the
    # files (`generate`'s `timings`); None in results saved before they were measured.
    generator_cpu_s: float | None = None
    generator_write_cpu_s: float | None = None

    @property
    def generator_events_per_s(self) -> float:
        return self.events / self.generator_s if self.generator_s else float("nan")

    @property
    def dbt_ok(self) -> bool:
        return not any(note.startswith("dbt build failed") for note in self.notes)

    @property
    def ratio(self) -> float | None:
        if self.dbt_ok and self.dbt_build_s and self.reference_s:
            return self.dbt_build_s / self.reference_s
        return None


def _points(results: list[SizeResult], attr: str) -> list[tuple[int, float]]:
    """(events, seconds) of `attr`; failed dbt builds are left out of the dbt fit."""
    return [
        (r.events, getattr(r, attr))
        for r in results
        if getattr(r, attr) and (r.dbt_ok or attr != "dbt_build_s")
    ]


def _fit(results: list[SizeResult], attr: str) -> tuple[float, float, float] | None:
    pts = _points(results, attr)
    if len(pts) < 2:
        return None
    import numpy as np

    x = np.array([p[0] for p in pts], dtype=float)
    y = np.array([p[1] for p in pts], dtype=float)
    slope, intercept = np.polyfit(x, y, 1)
    exponent = float(np.polyfit(np.log(x), np.log(y), 1)[0])
    return float(slope), float(intercept), exponent


#: the hand-written companion of the report: what the numbers mean, what was tried
NOTES_DOC = "docs/performance-notes.md"


def _provenance(run: dict | None) -> list[str]:
    """The report's first paragraph: which run it shows, and that it is generated."""
    if run is None:
        return ["Written by `lara bench` (python/src/lara/bench.py); re-run it to refresh."]
    return [
        f"Written by `lara bench` (python/src/lara/bench.py): {_run_named(run)}."
        f"{_kept_from_earlier_runs(run)} Its measurements are"
        " saved beside this file (`benchmarks.json`); `lara bench --render` writes the report"
        " again from them, and a test checks that the two agree, so do not edit it by hand."
        " What the numbers mean, what was tried to move them, and earlier runs' figures are"
        f" in {NOTES_DOC}.",
    ]


def _part_label(part: str) -> str:
    if part.startswith("size "):
        return f"the {int(part.split()[1]):,}-event size"
    return {"ir": "the IR comparison", "one-day": "the one-day run", "spans": "span flattening"}[
        part
    ]


#: what names a run (saved with each part a --merge kept)
RUN_KEYS = ("command", "commit", "uncommitted_changes", "utc")


def _run_named(run: dict) -> str:
    """'the run of `lara bench ...` at commit X[ with uncommitted changes], <time> UTC'."""
    command = " ".join(str(run.get("command") or "lara bench").split())  # one line
    fence = "``" if "`" in command else "`"
    pad = " " if fence == "``" else ""
    text = f"the run of {fence}{pad}{command}{pad}{fence}"
    text += f" at commit {run['commit']}" if run.get("commit") else " (no git commit known)"
    if run.get("uncommitted_changes"):
        text += " with uncommitted changes"
    return text + (f", {run['utc']} UTC" if run.get("utc") else "")


def _kept_from_earlier_runs(run: dict) -> str:
    """' Kept from earlier runs (--merge): <parts> from the run of ...' or ''."""
    by_run: dict[tuple, list[str]] = {}
    for part, source in (run.get("parts") or {}).items():
        if source is not None:
            key = tuple(source.get(name) for name in RUN_KEYS)
            by_run.setdefault(key, []).append(_part_label(part))
    if not by_run:
        return ""
    runs = [
        f"{_and(labels)} from {_run_named(dict(zip(RUN_KEYS, key, strict=True)))}"
        for key, labels in by_run.items()
    ]
    return (
        " Kept from earlier runs (`--merge`), each measured on its own run's host (the machine"
        " table is this run's): " + "; ".join(runs) + "."
    )


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def saved_parts(saved: dict) -> list[str]:
    """The parts of the report that saved measurements hold: each size, the IR comparison,
    the one-day run, span flattening."""
    parts = [f"size {r['target_events']}" for r in saved.get("results") or []]
    if saved.get("ir"):
        parts.append("ir")
    if isinstance(saved.get("incremental"), list) and saved["incremental"]:
        parts.append("one-day")
    if saved.get("spans"):
        parts.append("spans")
    return parts


def sources_of(previous: dict) -> dict[str, dict | None]:
    """Which run each part of earlier saved measurements came from (for --merge)."""
    run = previous.get("run") or {}
    this = {key: run.get(key) for key in RUN_KEYS}
    if "parts" in run:
        return {part: source or this for part, source in run["parts"].items()}
    return {part: this for part in saved_parts(previous)}


def render_report(
    machine: dict,
    results: list[SizeResult],
    ir: IrResult | None,
    memory_limit: str,
    threads: int,
    notes: list[str],
    incremental: list[IncrementalResult] | None = None,
    spans: list[SpanResult] | None = None,
    run: dict | None = None,
) -> str:
    lines = ["# Benchmarks", "", *_provenance(run), "", "## Machine"]
    lines += [
        "",
        "| | |",
        "|---|---|",
    ]
    for key, value in machine.items():
        lines.append(f"| {key} | {value} |")
    lines += [
        "",
        f"dbt runs with `LARA_DUCKDB_MEMORY_LIMIT={memory_limit}`, `LARA_THREADS={threads}`; the"
        " reference with the same DuckDB memory limit and threads. Wall times and peak RSS come"
        " from `/usr/bin/time -v` around each child process (dbt runs its models in threads of"
        " one process, so that process's maximum RSS is the tree's peak).",
        "",
        "## Full build vs hand-written reference",
        "",
        "Events = rows of prompts + retrievals + actions. Reference ="
        " `python/src/lara/bench_reference.sql`, one DuckDB script from the raw files (typed"
        " Parquet, JSON Lines where present) that computes every column of `fct_retrievals`.",
        "",
        "| target events | events | sessions | generator s | generator events/s | dbt build s"
        " | dbt peak RSS MiB | reference s | reference peak RSS MiB | dbt / reference"
        " | agreement |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        agree = r.agreement.get("ok")
        agree_s = "n/a" if agree is None else ("yes" if agree else "**no**")
        lines.append(
            f"| {r.target_events:,} | {r.events:,} | {r.sessions:,} | {r.generator_s:.1f}"
            f" | {r.generator_events_per_s:,.0f}"
            f" | {_f(r.dbt_build_s) if r.dbt_ok else f'failed after {r.dbt_build_s:.0f}'}"
            f" | {_f(r.dbt_peak_rss_mib, 0)} | {_f(r.reference_s)}"
            f" | {_f(r.reference_peak_rss_mib, 0)} | {_f(r.ratio, 2)}"
            f" | {agree_s} |"
        )
    lines.append("")
    for r in results:
        if r.generator_cpu_s and r.generator_write_cpu_s is not None:
            lines.append(
                f"- {r.events:,} events, generator: {r.generator_cpu_s:.1f} CPU s (every"
                f" thread) in {r.generator_s:.1f} s wall; writing the files"
                f" {r.generator_write_cpu_s:.1f} CPU s"
                f" ({r.generator_write_cpu_s / r.generator_cpu_s:.0%} of its CPU time)"
            )
        if r.agreement:
            bad = [c for c, v in r.agreement["columns"].items() if not v["ok"]]
            lines.append(
                f"- {r.events:,} events: rows mart/reference {r.agreement['rows']}, missing"
                f" {r.agreement['missing']}, extra {r.agreement['extra']}; columns compared"
                f" row for row (type and value, floats within {FLOAT_TOLERANCE:g}):"
                f" {len(r.agreement['columns'])}, disagreeing: {bad or 'none'}"
            )
        if r.dbt_breakdown:
            b = r.dbt_breakdown
            types = ", ".join(f"{k} {v:.1f}" for k, v in b["by_type_s"].items())
            slow = top_seconds(b["slowest_models_s"], len(b["slowest_models_s"]))
            reference_s = r.reference_s or float("nan")
            summed = b["fct_retrievals_lineage_models_s"]
            alone = (
                f"; built alone {r.lineage_build_s:.1f} s wall,"
                f" {r.lineage_build_s / reference_s:.1f}x"
                if r.lineage_build_s is not None
                else ""
            )
            lines.append(
                f"- {r.events:,} events, dbt node seconds (summed over threads): {types};"
                f" models in fct_retrievals' lineage {summed:.1f}"
                f" ({summed / reference_s:.1f}x the reference{alone}); slowest models: {slow}"
                f"{slowest_tests(b)}"
            )
        for note in r.notes:
            lines.append(f"- {r.events:,} events: {note[:1200]}")
    for attr, label in (
        ("dbt_build_s", "dbt build"),
        ("reference_s", "reference"),
        ("generator_s", "generator"),
    ):
        fit = _fit(results, attr)
        if fit:
            slope, intercept, exponent = fit
            pts = _points(results, attr)
            marginal = ", ".join(
                f"{(b[1] - a[1]) / (b[0] - a[0]) * 1e6:.1f}"
                for a, b in zip(pts, pts[1:], strict=False)
            )
            lines.append(
                f"- {label}: least-squares seconds = {intercept:.1f} + {slope * 1e6:.2f} per"
                f" million events (extrapolated to 20M events: {intercept + slope * 2e7:,.0f} s);"
                f" log-log slope {exponent:.2f} (1 = linear); marginal seconds per million"
                f" events between consecutive sizes: {marginal}"
            )
    lines += render_spans(spans)
    lines += targets(results, incremental or [], spans)
    lines += render_ir(ir)
    if notes:
        lines += ["", "## Notes", ""] + notes
    lines += ["", READING.rstrip("\n")]
    return "\n".join(lines) + "\n"


READING = """\
## Reading the numbers

- **What the reference covers.** `bench_reference.sql` computes every column of
  `fct_retrievals` with the project's definitions: scope (surface, role, misroute, tier
  scope), list counts, Tier 1 (labelled flag, judged assets, precision@1, precision@K,
  DCG, ideal DCG, NDCG@K, label coverage, Tier 1 good), Tier 2 (clicks, genuine positive,
  agent consumption, first use evidence, reject / re-search / substitution failures,
  unobserved, downstream correction), Tier 3 (retrieval-driven and cross-session outcome
  counts), the goal label and the Tier 1 x Tier 2 diagnosis. It is one DuckDB script over
  the raw files, written for speed rather than layering: typed Parquet columns (JSON Lines,
  where present, read as text and parsed as staging parses them), a few passes over each
  raw table, returned lists de-duplicated and ranked as lists, attribution of actions
  (direct, chained placement, document, temporal) in a few joins and one window. It drops the rows
  staging quarantines and counts re-delivered rows once, as far as the generated samples
  need (the script's header lists what it does not check), but keeps no quarantine
  records and runs no tests. The check compares the mart and the reference row for row:
  retrieval ids both ways, then every column's type and value on every row (floats
  within 1e-9); the tests run it on the clean and the bad-rows samples. The target
  "models in fct_retrievals' lineage" times a `dbt build --select +fct_retrievals` of
  models and seeds only (no tests) into a fresh warehouse after the full build: the models
  upstream of the mart, attribution included, on their own (wall seconds, like the
  reference's). The per-size lines also give the sum of those models' node seconds in the
  full build, which counts the time two of them ran side by side twice.
- **Where the build's time goes** (the per-size breakdown above: node seconds summed over
  the two threads). Every intermediate model is a table computed once and read by the
  models and tests after it; Parquet files whose schema passed the contract are read with
  their types (the text path and `_raw_row` only for JSON Lines and failing rows). What
  remains is (a) the base models, which still validate every raw row, hash it for
  duplicate detection and keep quarantine records, none of which the reference does;
  (b) attribution (`int_action_attributions`, `fct_action_attributions`) and the marts
  outside `fct_retrievals`' lineage (`fct_retrieval_reretrievals`: a window over every
  user x asset timeline); (c) the data tests of a full build (`lara run --full-test`),
  several hundred queries over whole tables. On a scheduled run the tests check only the
  rows the run wrote.
- **Memory.** DuckDB's `memory_limit` (`LARA_DUCKDB_MEMORY_LIMIT` above) bounds its buffer
  pool; hash joins and aggregates spill to `<warehouse>.tmp` beyond it. Two things in
  DuckDB (as of 2.0) do not spill and are kept out of the SQL: (1) a CTE read more than
  once is materialised in memory with every column (DuckDB >= 1.4 decides this by itself);
  row-level CTEs read twice are written `as {{ lara_inline_cte() }} (` (`not
  materialized`), which recomputes them per reference instead (`agg_tier3_completion` ran
  out of memory at 20M events without it); (2) a filter DuckDB cannot estimate (`not
  is_synthetic` gets a fixed 20%) can make one wide input the build side of several nested
  joins; `fct_retrievals` filters with `is_synthetic = false`, which DuckDB estimates from
  the column's statistics. The peak RSS in the table is the whole dbt process: the pool
  plus Python, the manifest and DuckDB's allocations outside the pool (machine table: the
  RSS of `dbt parse` alone).
- **The ratios.** The reference computes one mart with the least work and no tests, so
  "dbt / reference" for the whole build is an upper bound on dbt's overhead; "models in
  fct_retrievals' lineage" is the like-for-like figure.
- **Generator.** It builds all sessions in memory with numpy / pyarrow (every stage draws
  its own random stream over all sessions, so generating in day chunks would change the
  data) and is CPU-bound. The per-size lines give its CPU seconds and the share of them
  spent writing the files (Parquet: string id columns, asset lists); the rest is the
  vectorised stages (returned lists and texts of the retrievals, actions, relevance
  labels, replay tables and their realised statistics); no per-row Python loop is left.
  Independent stages run in two threads, files are written by two more while the
  simulation goes on, and without bad rows every table is written and released as soon
  as it is built. On 2 cores the generator's rate is therefore bounded by its total CPU
  time over two; memory still grows with the sessions.
- **One-day incremental run** (section below). The run state is a set of models in schema
  `run_state` (the load log, this run's limits, the sessions, days and users this run):
  base models read only pending partitions, session-grained models replace only the
  sessions this run (with their lineage closure), daily aggregates only the days this run,
  re-retrieval only the retrievals of those sessions and of the users this run, and data
  tests check the rows the run wrote. The run's fixed cost dominates at these volumes,
  which is why the share falls as the day grows. It is dbt's own work per node (rendering,
  logging, a connection and one or more queries per model and test), Python that holds one
  core however many threads run. The one-day lines below give it per model and per data
  test, from the run with nothing new of each history (where the run counted its nodes);
  docs/performance-notes.md ("Where the time goes") breaks a node's cost down. Each node
  removed saves it: the never-null columns of a model are checked by one
  `not_null_columns` test and its row rules by one `expressions_are_true` test, not one
  test each; and dbt's file log (`logs/dbt.log`) is written at info level (project flag
  `log_level_file`), not every query at debug level. Since the lookback window ends at the
  newest day of the whole load, a run with nothing new re-reads no old partition; what
  still grows with the history is the period totals of the daily aggregates
  (`agg_tier3_completion`: distinct prompts and outcome events over every day, which do
  not add up over days; read from the in-scope rows alone). The replay marts no longer do:
  they are recomputed only by a run that loads replay rows.
"""

#: issue 15's targets
TARGET_RSS_MIB = 4096.0
TARGET_LINEAGE_RATIO = 2.0
TARGET_BUILD_RATIO = 4.0
TARGET_DAY_SHARE = 0.10
TARGET_HISTORY_RATIO = 1.3
TARGET_SLOPE = 1.0
TARGET_GENERATOR_EPS = 500_000.0
TARGET_EVENTS = 20_000_000
#: the sizes at which the reference ratios are targets
RATIO_SIZES = (5_000_000, 20_000_000)


def _built(results: list[SizeResult]) -> list[SizeResult]:
    """The sizes whose full build completed."""
    return [r for r in results if r.dbt_build_s and r.dbt_ok]


def _at_ratio_sizes(built: list[SizeResult]) -> list[SizeResult]:
    """The completed sizes (within 10%) at which the reference ratios are targets, with a
    reference time."""
    return [
        r
        for r in built
        if r.reference_s and any(abs(r.target_events - size) <= 0.1 * size for size in RATIO_SIZES)
    ]


def _over(value: float, target: float) -> str:
    return f"{value / target:.2f}x the target"


def targets(
    results: list[SizeResult],
    incremental: list[IncrementalResult],
    spans: list[SpanResult] | None = None,
) -> list[str]:
    """Every target of the scale issue (and issue 19's span flattening): met or missed, and
    by how much."""
    lines = ["", "## Targets", "", "| target | measured | met |", "|---|---|---|"]
    built = _built(results)
    for r in results:
        if not r.dbt_ok:
            lines.append(f"| full build at {r.events:,} events completes | failed | **no** |")
    top = max(built, key=lambda r: r.events, default=None)
    if top is None or top.events < 0.9 * TARGET_EVENTS:
        lines.append(
            f"| full build at {TARGET_EVENTS:,} events, peak RSS under 4 GiB | not measured"
            f" (largest size built: {top.events if top else 0:,} events) | **no** |"
        )
    if top is not None:
        rss = top.dbt_peak_rss_mib or float("nan")
        lines.append(
            f"| peak RSS under 4 GiB (full build, {top.events:,} events) | {rss:,.0f} MiB"
            f" | {met_cell(rss < TARGET_RSS_MIB, f'+{rss - TARGET_RSS_MIB:,.0f} MiB')} |"
        )
    for r in _at_ratio_sizes(built):
        # The lineage built alone (wall seconds); results written before it was measured
        # have only the sum of the lineage's node seconds in the full build.
        lineage = r.lineage_build_s
        how = "built alone"
        if lineage is None:
            lineage = r.dbt_breakdown.get("fct_retrievals_lineage_models_s")
            how = "node seconds summed in the full build"
        if lineage is not None:
            ratio = lineage / r.reference_s
            met = met_cell(ratio <= TARGET_LINEAGE_RATIO, _over(ratio, TARGET_LINEAGE_RATIO))
            lines.append(
                f"| models in fct_retrievals' lineage within {TARGET_LINEAGE_RATIO:g}x of the"
                f" reference ({r.events:,} events) | {lineage:.1f} s ({how}) /"
                f" {r.reference_s:.1f} s = {ratio:.2f}x | {met} |"
            )
        ratio = r.dbt_build_s / r.reference_s
        lines.append(
            f"| whole build with data tests within {TARGET_BUILD_RATIO:g}x of the reference"
            f" ({r.events:,} events) | {r.dbt_build_s:.1f} s / {r.reference_s:.1f} s"
            f" = {ratio:.2f}x"
            f" | {met_cell(ratio <= TARGET_BUILD_RATIO, _over(ratio, TARGET_BUILD_RATIO))} |"
        )
    fit = _fit(results, "dbt_build_s")
    if fit:
        exponent = fit[2]
        span = f"{min(r.events for r in built):,} to {max(r.events for r in built):,} events"
        lines.append(
            f"| cost per event flat or falling: log-log slope of the full build <="
            f" {TARGET_SLOPE:g} ({span}) | {exponent:.2f}"
            f" | {met_cell(exponent <= TARGET_SLOPE, f'{exponent - TARGET_SLOPE:+.2f}')} |"
        )
    done = [r for r in incremental if r.ok]
    for r in done:
        share = r.ratio_build
        if share is not None:
            lines.append(
                f"| one-day incremental build (run + its tests) under"
                f" {TARGET_DAY_SHARE:.0%} of the full build ({r.days}-day warehouse,"
                f" {r.events:,} events) | {r.day_build_s:.1f} s / {r.full_build_s:.1f} s"
                f" = {share:.1%}"
                f" | {met_cell(share < TARGET_DAY_SHARE, _over(share, TARGET_DAY_SHARE))} |"
            )
    if len(done) >= 2:
        short, long_ = min(done, key=lambda r: r.days), max(done, key=lambda r: r.days)
        ratio = long_.day_build_s / short.day_build_s
        lines.append(
            f"| the day's build at {long_.days} days within {TARGET_HISTORY_RATIO:g}x of"
            f" {short.days} days (same events per day) | {long_.day_build_s:.1f} s /"
            f" {short.day_build_s:.1f} s = {ratio:.2f}x"
            f" | {met_cell(ratio <= TARGET_HISTORY_RATIO, _over(ratio, TARGET_HISTORY_RATIO))} |"
        )
    if not done:
        lines.append("| one-day incremental build under 10% of the full build | not measured | |")
    if results:
        eps = min(r.generator_events_per_s for r in results)
        lines.append(
            f"| generator >= 500k events/s (earlier issue) | {eps:,.0f} events/s (slowest size)"
            f" | {met_cell(eps >= TARGET_GENERATOR_EPS, _over(eps, TARGET_GENERATOR_EPS))} |"
        )
    lines += span_target(spans)
    if top is not None and top.dbt_breakdown.get("models_s"):
        ranked = list(top.dbt_breakdown["models_s"].items())[:TOP_MODELS]
        lines += [
            "",
            f"Per-model seconds of the full build at {top.events:,} events (the"
            f" {len(ranked)} slowest of {len(top.dbt_breakdown['models_s'])} models; node"
            " execution time from run_results.json):",
            "",
            "| model | s |",
            "|---|---:|",
        ]
        lines += [f"| {name} | {seconds:.1f} |" for name, seconds in ranked]
    return lines


def _f(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def saved_beside(report: Path) -> Path:
    """Where the measurements of a report are saved: docs/benchmarks.md -> .json."""
    return report.with_suffix(".json")


@dataclass
class Saved:
    """The measurements of one `lara bench` run, as saved (see `bench_main`'s write)."""

    results: list[SizeResult]
    ir: IrResult | None
    incremental: list[IncrementalResult]
    spans: list[SpanResult] | None


def load_saved(saved: dict) -> Saved:
    """The results of a saved JSON, including those of earlier runs (which had no run,
    machine or settings, and a single span object)."""
    incremental = saved.get("incremental") or []
    return Saved(
        [SizeResult(**r) for r in saved.get("results") or []],
        IrResult(**saved["ir"]) if saved.get("ir") else None,
        [IncrementalResult(**r) for r in incremental if isinstance(incremental, list)],
        span_results(saved["spans"]) if saved.get("spans") else None,
    )


def render_saved(saved: dict) -> str:
    """The whole report (the one-day section last) from saved measurements."""
    loaded = load_saved(saved)
    report = render_report(
        saved.get("machine") or {},
        loaded.results,
        loaded.ir,
        saved.get("memory_limit", "?"),
        saved.get("threads", "?"),
        saved.get("notes") or [],
        loaded.incremental,
        loaded.spans,
        saved.get("run"),
    )
    return report + render_incremental(loaded.incremental)


# --------------------------------------------------------------------------- README

#: the lines around the README's table of the latest run (`readme_summary`)
README_BEGIN = "<!-- the latest run, written by `lara bench --render` from docs/benchmarks.json -->"
README_END = "<!-- end of the latest run -->"


def _met(ok: bool) -> str:
    return "met" if ok else "missed"


def _millions(events: int) -> str:
    return f"{events / 1e6:.0f}M events"


def readme_summary(saved: dict) -> list[str]:
    """The README's table of the latest run ("Speed and memory"): the headline figure of
    each target, from the same saved measurements as the report, so the two cannot
    disagree (a test compares the README with it; `lara bench --render` rewrites it)."""
    loaded = load_saved(saved)
    built = _built(loaded.results)
    rows = []
    top = max(built, key=lambda r: r.events, default=None)
    if top is not None:
        rss = top.dbt_peak_rss_mib or float("nan")
        agree = top.agreement.get("ok")
        equal = (
            ""
            if agree is None
            else f"; `fct_retrievals` {'equal' if agree else '**not** equal'} to the reference"
            " row for row"
        )
        rows.append(
            f"| full build of {_millions(top.events)} ({top.sessions / 1e6:.1f}M sessions) with"
            f" its data tests | {top.dbt_build_s / 60:.1f} minutes, peak RSS {rss:,.0f} MiB{equal}"
            f" | RSS under 4 GiB: {_met(rss < TARGET_RSS_MIB)} |"
        )
    at_sizes = _at_ratio_sizes(built)
    lineage = [(r, r.lineage_build_s / r.reference_s) for r in at_sizes if r.lineage_build_s]
    whole = [(r, r.dbt_build_s / r.reference_s) for r in at_sizes]
    for label, ratios, target in (
        ("the models of `fct_retrievals`' lineage built alone", lineage, TARGET_LINEAGE_RATIO),
        ("the whole build with its data tests", whole, TARGET_BUILD_RATIO),
    ):
        if ratios:
            measured = ", ".join(
                f"{x:.1f}x the reference at {_millions(r.events)}" for r, x in ratios
            )
            ok = all(x <= target for _, x in ratios)
            rows.append(f"| {label} | {measured} | {target:g}x: {_met(ok)} |")
    fit = _fit(loaded.results, "dbt_build_s")
    if fit:
        low, high = min(r.events for r in built), max(r.events for r in built)
        rows.append(
            f"| cost per event from {_millions(low)} to {_millions(high)} | log-log slope"
            f" {fit[2]:.2f} | <= {TARGET_SLOPE:g}: {_met(fit[2] <= TARGET_SLOPE)} |"
        )
    done = sorted((r for r in loaded.incremental if r.ok), key=lambda r: r.days)
    day = next((r for r in done if r.ratio_build is not None), None)
    if day is not None:
        idle = ""
        if day.idle_build_s is not None and day.full_build_s:
            cost = per_node(day.idle_breakdown)
            idle = (
                f"; a run with nothing new alone {day.idle_build_s:.1f} s,"
                f" {day.idle_build_s / day.full_build_s:.1%}"
                + (f" (per node: {cost})" if cost else "")
            )
        rows.append(
            f"| the day over {day.days} days ({day.events_per_day / 1e3:,.0f}k events a day;"
            " every table's partition of that day, labels included)"
            f" | {day.day_build_s:.1f} s, {day.ratio_build:.1%} of a full build of the same"
            f" files{idle} | {TARGET_DAY_SHARE:.0%}: {_met(day.ratio_build < TARGET_DAY_SHARE)} |"
        )
    if len(done) >= 2:
        ratio = done[-1].day_build_s / done[0].day_build_s
        rows.append(
            f"| the same day over {done[-1].days} days | {ratio:.2f}x the {done[0].days}-day one"
            f" | {TARGET_HISTORY_RATIO:g}x: {_met(ratio <= TARGET_HISTORY_RATIO)} |"
        )
    if loaded.results:
        eps = min(r.generator_events_per_s for r in loaded.results)
        rows.append(
            f"| the generator (slowest size) | {eps:,.0f} events per second"
            f" | {TARGET_GENERATOR_EPS / 1e3:,.0f}k: {_met(eps >= TARGET_GENERATOR_EPS)} |"
        )
    spans = {s.input: s for s in loaded.spans or []}
    if spans:
        names = {OTLP_JSON: "from OTLP JSON", PHOENIX_PARQUET: "from a Phoenix Parquet file"}
        rows.append(
            "| span reading against the row-by-row loop | "
            + ", ".join(f"{s.speedup:.1f}x as fast {names.get(k, k)}" for k, s in spans.items())
            + f" | {TARGET_SPAN_SPEEDUP:g}x (issue 19):"
            f" {_met(all(s.speedup >= TARGET_SPAN_SPEEDUP for s in spans.values()))} |"
        )
    if not rows:
        return []
    return ["| | latest run | target |", "|---|---|---|", *rows]


def with_readme_summary(readme: str, saved: dict) -> str:
    """`readme` with the lines between README_BEGIN and README_END replaced by
    `readme_summary(saved)`; ValueError when the README lacks the two lines."""
    lines = readme.split("\n")
    try:
        begin, end = lines.index(README_BEGIN), lines.index(README_END)
    except ValueError:
        raise ValueError(f"the README has no lines {README_BEGIN!r} ... {README_END!r}") from None
    if end < begin:
        raise ValueError(f"the README has {README_END!r} before {README_BEGIN!r}")
    # blank lines around the table: a Markdown table must not touch the comment lines
    table = readme_summary(saved)
    return "\n".join([*lines[: begin + 1], *([""] + table + [""] if table else []), *lines[end:]])
