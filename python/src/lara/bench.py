"""`lara bench`: generator throughput, full `dbt build` time and peak RSS, and a
hand-written DuckDB reference for fct_retrievals, at increasing log sizes;
plus the project's NDCG@K SQL against pytrec_eval on labelled lists, and the
speed of span flattening (`lara ingest`'s reading and OpenInference extraction
of synthetic OTLP spans, in spans per CPU second).

Sizes are in events (rows of prompts + retrievals + actions). Every dbt build
and every reference run is a child process run under `/usr/bin/time -v` (or,
without it, timed with `resource.getrusage(RUSAGE_CHILDREN)`), so wall time
and peak RSS are measured the same way for both. The report goes to
docs/benchmarks.md and its measurements to docs/benchmarks.json beside it
(`lara bench --render` writes the report again from them, measuring nothing);
the work folder keeps a copy for `--merge`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from lara.arguments import whole_number
from lara.bench_incremental import (
    TOP_MODELS,
    TOP_TESTS,
    IncrementalResult,
    bench_incremental,
    render_incremental,
    slowest_tests,
    top_seconds,
)
from lara.bench_ir import IrResult, bench_ir, compiled_relevance, render_ir
from lara.bench_spans import (
    SpanResult,
    bench_span_flattening,
    met_cell,
    render_spans,
    span_results,
    span_target,
)
from lara.dbt import dbt_env, dbt_executable
from lara.paths import project_dir

EVENT_TABLES = ("prompts", "retrievals", "actions")
SIZES: dict[str, list[int]] = {
    "tiny": [20_000],
    "small": [200_000],
    "default": [1_000_000, 5_000_000, 20_000_000],
}
REFERENCE_SQL = Path(__file__).with_name("bench_reference.sql")
#: floats of marts.fct_retrievals and the reference agree when within this (absolute)
FLOAT_TOLERANCE = 1e-9
DEFAULT_MEMORY_LIMIT = "3GB"
DEFAULT_THREADS = "2"


def _log(message: str) -> None:
    print(message, flush=True)


@dataclass
class Measured:
    seconds: float
    max_rss_kib: int
    returncode: int
    output: str = ""


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


# --------------------------------------------------------------------------- machine


def machine_info() -> dict:
    info: dict = {"nproc": os.cpu_count(), "python": platform.python_version()}
    try:
        cpu = Path("/proc/cpuinfo").read_text()
        m = re.search(r"model name\s*:\s*(.+)", cpu)
        info["cpu"] = m.group(1).strip() if m else platform.processor()
    except OSError:
        info["cpu"] = platform.processor()
    try:
        mem = Path("/proc/meminfo").read_text()
        m = re.search(r"MemTotal:\s*(\d+) kB", mem)
        info["memory_gib"] = round(int(m.group(1)) / 1024**2, 1) if m else None
    except OSError:
        info["memory_gib"] = None
    info["kernel"] = platform.release()
    for pkg in ("duckdb", "dbt-core", "dbt-duckdb", "pyarrow", "pytrec-eval-terrier", "numpy"):
        try:
            from importlib.metadata import version

            info[pkg] = version(pkg)
        except Exception:  # not installed
            continue
    return info


def run_info() -> dict:
    """What was measured: the project's commit (and whether tracked files differed from
    it), the UTC time, and the command line."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=project_dir(), capture_output=True, text=True, check=False
            )
        except OSError:  # no git on the machine
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    argv = sys.argv[1:]
    if argv[:1] == ["bench"]:
        argv = argv[1:]
    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "uncommitted_changes": bool(git("status", "--porcelain", "--untracked-files=no")),
        "utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "command": shlex.join(["lara", "bench", *argv]),
    }


# --------------------------------------------------------------------------- measuring


def measure(command: list[str], env: dict | None = None, cwd: Path | None = None) -> Measured:
    """Run `command`, returning wall seconds and peak RSS (KiB) of the process tree's
    largest process (GNU time's "Maximum resident set size", else getrusage)."""
    gnu_time = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)
    if gnu_time:
        full = [gnu_time, "-v", *command]
    else:
        full = command
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(full, env=env, cwd=cwd, text=True, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    output = proc.stdout + proc.stderr
    rss = 0
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    if m:
        rss = int(m.group(1))
    else:
        after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        rss = after if after > before else 0  # a lower bound when an earlier child was bigger
    return Measured(seconds, rss, proc.returncode, output)


def count_events(raw: Path) -> int:
    import pyarrow.parquet as pq

    total = 0
    for table in EVENT_TABLES:
        for f in (raw / table).rglob("*.parquet"):
            total += pq.ParquetFile(f).metadata.num_rows
    return total


def events_per_session(work: Path, days: int, seed: int, sessions: int = 5000) -> float:
    """Events per session on a small run with the same parameters."""
    from lara.generate import GeneratorConfig, generate

    probe = work / "probe"
    shutil.rmtree(probe, ignore_errors=True)
    generate(GeneratorConfig(sessions=sessions, days=days, seed=seed), probe, progress=False)
    events = count_events(probe)
    shutil.rmtree(probe, ignore_errors=True)
    return events / sessions


# --------------------------------------------------------------------------- reference


def reference_sql(raw: Path) -> str:
    """bench_reference.sql with the raw folder and the project's vars filled in."""
    import yaml

    dbt_vars = yaml.safe_load((project_dir() / "dbt_project.yml").read_text())["vars"]
    roles = ", ".join(
        "'" + str(role).replace("'", "''") + "'" for role in dbt_vars["orf_substitution_roles"]
    )
    values = {
        "raw": str(raw).replace("'", "''"),
        "k": str(int(dbt_vars["lara_k"])),
        "grade_min": str(int(dbt_vars["relevant_grade_min"])),
        "good_ndcg": repr(float(dbt_vars["tier1_good_ndcg"])),
        "research_window_s": repr(float(dbt_vars["research_window_s"])),
        "research_similarity_min": repr(float(dbt_vars["research_similarity_min"])),
        "substitution_roles": f"({roles})",
        "rewrite_window_s": repr(float(dbt_vars["rewrite_window_s"])),
        "rewrite_similarity_min": repr(float(dbt_vars["rewrite_similarity_min"])),
        "user_id_salt": os.environ.get("LARA_USER_ID_SALT", "lara-sample-salt").replace("'", "''"),
    }
    sql = REFERENCE_SQL.read_text()
    for name, value in values.items():
        sql = sql.replace("{" + name + "}", value)
    return sql


def run_reference(raw: Path, database: Path, memory_limit: str, threads: int) -> None:
    """Run the reference script into `database` (table ref_fct_retrievals)."""
    import duckdb

    database.unlink(missing_ok=True)
    with duckdb.connect(str(database)) as con:
        con.execute("set TimeZone = 'UTC'")
        con.execute(f"set memory_limit = '{memory_limit}'")
        con.execute(f"set threads = {int(threads)}")
        con.execute("set preserve_insertion_order = true")
        con.execute(reference_sql(raw))


def _columns(con, relation: str) -> dict[str, str]:
    catalog, schema, table = relation.split(".")
    rows = con.execute(
        "select column_name, data_type from information_schema.columns"
        " where table_catalog = ? and table_schema = ? and table_name = ?"
        " order by ordinal_position",
        [catalog, schema, table],
    ).fetchall()
    return dict(rows)


def compare(warehouse: Path, reference_db: Path) -> dict:
    """marts.fct_retrievals vs the reference, row for row: rows matched on
    retrieval_id both ways, then every column of the mart but the bookkeeping
    _lara_loaded_at compared on the matched rows (nulls equal to nulls; floats
    within FLOAT_TOLERANCE; others exactly), with the data types of both sides."""
    import duckdb

    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute(f"attach '{reference_db}' as ref (read_only)")
        mart_db = con.execute("select current_database()").fetchone()[0]
        # _lara_loaded_at is incremental bookkeeping (when the row was last
        # recomputed), not a value of the mart: the reference has no such column.
        mart_columns = {
            c: t
            for c, t in _columns(con, f"{mart_db}.marts.fct_retrievals").items()
            if not c.startswith("_lara_")
        }
        ref_columns = _columns(con, "ref.main.ref_fct_retrievals")
        counts = con.execute(
            "select (select count(*) from marts.fct_retrievals),"
            " (select count(*) from ref.ref_fct_retrievals),"
            " (select count(*) from marts.fct_retrievals m anti join ref.ref_fct_retrievals r"
            " using (retrieval_id)),"
            " (select count(*) from ref.ref_fct_retrievals r anti join marts.fct_retrievals m"
            " using (retrieval_id))"
        ).fetchone()
        shared = [c for c in mart_columns if c in ref_columns]
        tests = []
        for c in shared:
            m, r = f'm."{c}"', f'r."{c}"'
            if mart_columns[c] in ("DOUBLE", "FLOAT") or ref_columns[c] in ("DOUBLE", "FLOAT"):
                differs = (
                    f"({m} is null) <> ({r} is null)"
                    f" or abs({m}::double - {r}::double) > {FLOAT_TOLERANCE!r}"
                )
            else:
                differs = f"{m} is distinct from {r}"
            tests.append(f"count(*) filter (where {differs})")
        mismatches = con.execute(
            f"select {', '.join(tests)} from marts.fct_retrievals m"
            " inner join ref.ref_fct_retrievals r using (retrieval_id)"
        ).fetchone()
    rows_mart, rows_ref, missing, extra = counts
    columns: dict[str, dict] = {}
    ok = rows_mart == rows_ref and missing == 0 and extra == 0
    for c, mart_type in mart_columns.items():
        ref_type = ref_columns.get(c)
        n = mismatches[shared.index(c)] if c in ref_columns else None
        agrees = ref_type == mart_type and n == 0
        ok = ok and agrees
        columns[c] = {"mismatched_rows": n, "types": [mart_type, ref_type], "ok": agrees}
    return {
        "ok": ok and bool(columns),
        "rows": [rows_mart, rows_ref],
        "missing": missing,
        "extra": extra,
        "columns": columns,
        "extra_columns": [c for c in ref_columns if c not in mart_columns],
    }


def dbt_breakdown(target: Path) -> dict:
    """Summed node execution seconds and node counts by resource type (model, test,
    unit_test, ...), the fct_retrievals lineage's models, every model's and the slowest data tests'
    seconds (by test name), from run_results.json."""
    try:
        results = json.loads((target / "run_results.json").read_text())
        manifest = json.loads((target / "manifest.json").read_text())
    except (OSError, ValueError):
        return {}
    parents = manifest.get("parent_map", {})
    lineage: set[str] = set()
    stack = ["model.lara.fct_retrievals"]
    while stack:
        node = stack.pop()
        if node in lineage:
            continue
        lineage.add(node)
        stack.extend(parents.get(node, []))
    by_type: dict[str, float] = {}
    nodes: dict[str, int] = {}
    models: dict[str, float] = {}
    tests: dict[str, float] = {}
    for row in results["results"]:
        kind = row["unique_id"].split(".")[0]
        by_type[kind] = by_type.get(kind, 0.0) + row["execution_time"]
        nodes[kind] = nodes.get(kind, 0) + 1
        if kind == "model":
            models[row["unique_id"].split(".")[-1]] = row["execution_time"]
        elif kind == "test":
            tests[row["unique_id"].split(".")[2]] = row["execution_time"]
    lineage_s = sum(t for name, t in models.items() if f"model.lara.{name}" in lineage)
    ranked = sorted(models.items(), key=lambda kv: -kv[1])
    return {
        "elapsed_s": results.get("elapsed_time"),
        "by_type_s": {k: round(v, 2) for k, v in by_type.items()},
        "nodes_by_type": nodes,
        "fct_retrievals_lineage_models_s": round(lineage_s, 2),
        "slowest_models_s": {k: round(v, 2) for k, v in ranked[:5]},
        "models_s": {k: round(v, 2) for k, v in ranked},
        "slowest_tests_s": {
            k: round(v, 2) for k, v in sorted(tests.items(), key=lambda kv: -kv[1])[:TOP_TESTS]
        },
    }


# --------------------------------------------------------------------------- one size


def generate_logs(
    raw: Path, sessions: int, days: int, seed: int, timings: dict[str, float] | None = None
) -> float:
    """Generate the logs into `raw`; their wall seconds. `timings`, when given, receives
    the generator's CPU seconds and those of writing the files (`generate`'s `timings`)."""
    from lara.generate import GeneratorConfig, generate

    shutil.rmtree(raw, ignore_errors=True)
    start = time.perf_counter()
    generate(
        GeneratorConfig(sessions=sessions, days=days, seed=seed),
        raw,
        progress=False,
        timings=timings,
    )
    return time.perf_counter() - start


def bench_size(
    work: Path,
    target_events: int,
    sessions: int,
    days: int,
    seed: int,
    memory_limit: str,
    threads: int,
    keep_raw: bool = False,
    log=_log,
) -> SizeResult:
    raw = work / f"raw_{target_events}"
    warehouse = work / f"lara_{target_events}.duckdb"
    reference_db = work / f"reference_{target_events}.duckdb"
    stamp = raw / "_bench.json"
    previous = json.loads(stamp.read_text()) if stamp.exists() else {}
    if previous.get("config") == [sessions, days, seed]:
        gen_s = float(previous["generator_s"])
        timings = previous.get("timings") or {}
        log(f"[bench] {target_events:,} events: reusing {raw} (generated in {gen_s:.1f} s)")
    else:
        log(f"[bench] {target_events:,} events: generating {sessions:,} sessions over {days} days")
        timings = {}
        gen_s = generate_logs(raw, sessions, days, seed, timings)
        stamp.write_text(
            json.dumps({"config": [sessions, days, seed], "generator_s": gen_s, "timings": timings})
        )
    events = count_events(raw)
    result = SizeResult(
        target_events,
        sessions,
        events,
        gen_s,
        generator_cpu_s=timings.get("cpu_seconds"),
        generator_write_cpu_s=timings.get("write_cpu_seconds"),
    )
    log(f"[bench]   generated {events:,} events in {gen_s:.1f} s")

    warehouse.unlink(missing_ok=True)
    env = _bench_dbt_env(raw, warehouse, work, "", memory_limit, threads)
    command = [dbt_executable(), "build", "--project-dir", str(project_dir())]
    built = measure(command, env=env, cwd=project_dir())
    if built.returncode != 0:
        errors = [
            line.strip()
            for line in built.output.splitlines()
            if "Error in" in line or "Memory Error" in line or "Done. PASS" in line
        ]
        result.notes.append("dbt build failed: " + " / ".join(dict.fromkeys(errors))[:1200])
        log(built.output[-3000:])
    result.dbt_build_s = built.seconds
    result.dbt_breakdown = dbt_breakdown(work / "target")
    result.dbt_peak_rss_mib = built.max_rss_kib / 1024
    log(f"[bench]   dbt build {built.seconds:.1f} s, peak RSS {built.max_rss_kib / 1024:.0f} MiB")
    if built.returncode == 0:
        try:
            result.lineage_build_s = build_lineage(work, raw, target_events, memory_limit, threads)
            log(f"[bench]   fct_retrievals' lineage alone {result.lineage_build_s:.1f} s")
        except RuntimeError as error:
            result.notes.append(f"lineage build failed: {error}"[:1500])
            log(str(error))

    ref_cmd = [
        sys.executable,
        "-c",
        "import sys; from pathlib import Path; from lara.bench import run_reference; "
        "run_reference(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]))",
        str(raw),
        str(reference_db),
        memory_limit,
        str(threads),
    ]
    ref = measure(ref_cmd)
    if ref.returncode != 0:
        result.notes.append("reference failed: " + ref.output[-1500:])
        log(ref.output[-3000:])
    result.reference_s = ref.seconds
    result.reference_peak_rss_mib = ref.max_rss_kib / 1024
    log(f"[bench]   reference {ref.seconds:.1f} s, peak RSS {ref.max_rss_kib / 1024:.0f} MiB")
    if built.returncode == 0 and ref.returncode == 0:
        result.agreement = compare(warehouse, reference_db)
        log(f"[bench]   agreement: {result.agreement['ok']} rows {result.agreement['rows']}")
    if not keep_raw:
        shutil.rmtree(raw, ignore_errors=True)
        warehouse.unlink(missing_ok=True)
        reference_db.unlink(missing_ok=True)
        for tmp in work.glob("*.duckdb.tmp"):
            shutil.rmtree(tmp, ignore_errors=True)
    return result


def _bench_dbt_env(
    raw: Path, warehouse: Path, work: Path, suffix: str, memory_limit: str, threads: int
) -> dict[str, str]:
    """The environment of a benchmark's dbt process: dbt's target and log folders in
    `work` (`target<suffix>`, `logs<suffix>`), the memory limit and threads."""
    return dbt_env(
        raw,
        warehouse,
        {
            "DBT_TARGET_PATH": str(work / f"target{suffix}"),
            "DBT_LOG_PATH": str(work / f"logs{suffix}"),
            "LARA_DUCKDB_MEMORY_LIMIT": memory_limit,
            "LARA_THREADS": str(threads),
        },
    )


def build_lineage(
    work: Path, raw: Path, target_events: int, memory_limit: str, threads: int
) -> float:
    """Wall seconds of `dbt build --select +fct_retrievals` (models and seeds only: no
    data or unit tests) into a fresh warehouse of its own: what the models in
    fct_retrievals' lineage cost on their own, as the reference computes that mart alone.
    The sum of their node seconds in the full build counts time spent side by side on two
    threads twice. Raises RuntimeError when the build fails."""
    warehouse = work / f"lineage_{target_events}.duckdb"
    warehouse.unlink(missing_ok=True)
    env = _bench_dbt_env(raw, warehouse, work, "-lineage", memory_limit, threads)
    command = [
        dbt_executable(),
        "build",
        "--select",
        "+fct_retrievals",
        "--resource-type",
        "model",
        "--resource-type",
        "seed",
        "--project-dir",
        str(project_dir()),
    ]
    try:
        lineage = measure(command, env=env, cwd=project_dir())
        if lineage.returncode != 0:
            raise RuntimeError(
                "dbt build of fct_retrievals' lineage failed:\n" + lineage.output[-3000:]
            )
        return lineage.seconds
    finally:
        warehouse.unlink(missing_ok=True)
        shutil.rmtree(work / f"lineage_{target_events}.duckdb.tmp", ignore_errors=True)


# --------------------------------------------------------------------------- report


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


def _sources(previous: dict) -> dict[str, dict | None]:
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
    lines += _targets(results, incremental or [], spans)
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


def _over(value: float, target: float) -> str:
    return f"{value / target:.2f}x the target"


def _targets(
    results: list[SizeResult],
    incremental: list[IncrementalResult],
    spans: list[SpanResult] | None = None,
) -> list[str]:
    """Every target of the scale issue (and issue 19's span flattening): met or missed, and
    by how much."""
    lines = ["", "## Targets", "", "| target | measured | met |", "|---|---|---|"]
    built = [r for r in results if r.dbt_build_s and r.dbt_ok]
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
    for r in built:
        if not any(abs(r.target_events - size) <= 0.1 * size for size in RATIO_SIZES):
            continue
        if not r.reference_s:
            continue
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


# --------------------------------------------------------------------------- CLI


def _thread_count(text: str) -> int:
    """--threads / LARA_THREADS: a whole number of at least 1."""
    from lara.paths import SettingError, whole_number_setting

    try:
        return whole_number_setting("--threads (default LARA_THREADS)", text)
    except SettingError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sizes",
        default="default",
        help="'tiny', 'small', 'default' (1M,5M,20M events) or comma-separated event counts",
    )
    parser.add_argument("--days", type=whole_number(1), default=7)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench"))
    parser.add_argument("--out", type=Path, default=project_dir() / "docs" / "benchmarks.md")
    parser.add_argument(
        "--memory-limit", default=os.environ.get("LARA_DUCKDB_MEMORY_LIMIT", DEFAULT_MEMORY_LIMIT)
    )
    parser.add_argument(
        "--threads",
        type=_thread_count,
        # a string default goes through `type` only when `lara bench` runs: a bad
        # LARA_THREADS is its usage error, not every command's traceback
        default=os.environ.get("LARA_THREADS", str(DEFAULT_THREADS)),
        help=f"dbt and DuckDB threads (default: LARA_THREADS, else {DEFAULT_THREADS})",
    )
    parser.add_argument(
        "--ir-lists",
        type=whole_number(0),
        default=1_000_000,
        help="labelled lists for the IR comparison (0 = skip)",
    )
    parser.add_argument("--ir-only", action="store_true", help="only the IR comparison")
    parser.add_argument(
        "--spans",
        type=whole_number(0),
        default=100_000,
        help="synthetic spans for the span-flattening measurement (0 = skip)",
    )
    parser.add_argument(
        "--incremental-events-per-day",
        type=whole_number(0),
        default=200_000,
        help="events per day of the one-day incremental benchmark's warehouses (0 = skip)",
    )
    parser.add_argument(
        "--incremental-days",
        default="30,60",
        help="history lengths of the one-day incremental benchmark (comma-separated days;"
        " the full build is timed for the shortest)",
    )
    parser.add_argument("--keep-raw", action="store_true")
    parser.add_argument(
        "--note", action="append", default=[], help="a line for the report's Notes (repeatable)"
    )
    parser.add_argument(
        "--render",
        action="store_true",
        help="measure nothing: write --out again from the measurements saved beside it"
        " (benchmarks.json for benchmarks.md), e.g. after a change to the report's text",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="keep the parts this run does not measure (sizes, IR, one-day run, spans) from the"
        " measurements beside --out (docs/benchmarks.json), else from the work folder's"
        " bench_results.json; the report names the runs they came from",
    )


def dbt_parse_rss_mib(work: Path) -> float:
    """Peak RSS of `dbt parse` from scratch: what the dbt process holds before any
    data (Python, dbt, the manifest of every node), the part of a build's RSS
    that DuckDB's memory_limit does not bound."""
    env = dbt_env(
        work / "none",
        work / "parse.duckdb",
        {"DBT_TARGET_PATH": str(work / "target-parse"), "DBT_LOG_PATH": str(work / "logs")},
    )
    shutil.rmtree(work / "target-parse", ignore_errors=True)
    parsed = measure(
        [dbt_executable(), "parse", "--project-dir", str(project_dir())],
        env=env,
        cwd=project_dir(),
    )
    return parsed.max_rss_kib / 1024


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


def render_main(out: Path) -> int:
    """`lara bench --render`: the report written again from its saved measurements."""
    source = saved_beside(out)
    if not source.exists():
        print(
            f"lara bench --render: no saved measurements at {source} (a `lara bench` run"
            f" with --out {out} writes them)",
            file=sys.stderr,
        )
        return 2
    out.write_text(render_saved(json.loads(source.read_text())))
    print(f"[bench] {out} written from {source}", flush=True)
    return 0


def parse_sizes(spec: str) -> list[int]:
    if spec in SIZES:
        return SIZES[spec]
    return [int(float(s)) for s in spec.split(",") if s.strip()]


def bench_main(args: argparse.Namespace) -> int:
    """Run the IR comparison, then every size; the report is rewritten after each step.
    With --render, only write the report again from the measurements saved beside it."""
    if args.render:
        return render_main(args.out)
    run = run_info()
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    machine = machine_info()
    if not args.ir_only:
        machine["dbt process without data (peak RSS of `dbt parse`, MiB)"] = round(
            dbt_parse_rss_mib(work)
        )
    results: list[SizeResult] = []
    notes: list[str] = [f"- {note}" for note in args.note]
    args.out.parent.mkdir(parents=True, exist_ok=True)

    incremental: list[IncrementalResult] = []

    def write() -> None:
        measured = {
            *(f"size {target}" for target in (parse_sizes(args.sizes) if not args.ir_only else [])),
            *(["ir"] if args.ir_lists else []),
            *(["one-day"] if args.incremental_events_per_day and not args.ir_only else []),
            *(["spans"] if args.spans else []),
        }
        saved = {
            "run": run,
            "machine": machine,
            "memory_limit": args.memory_limit,
            "threads": args.threads,
            "notes": notes,
            "results": [asdict(r) for r in results],
            "ir": ir and asdict(ir),
            "incremental": [asdict(r) for r in incremental],
            "spans": spans and [asdict(result) for result in spans],
        }
        run["parts"] = {
            part: None if part in measured else sources.get(part) for part in saved_parts(saved)
        }
        text = json.dumps(saved, indent=2, default=str) + "\n"
        args.out.write_text(render_saved(json.loads(text)))
        saved_beside(args.out).write_text(text)
        (work / "bench_results.json").write_text(text)

    ir: IrResult | None = None
    spans: list[SpanResult] | None = None
    sources: dict[str, dict | None] = {}
    # --merge keeps what this run does not measure: from the measurements beside the
    # report (docs/benchmarks.json), else from the work folder's copy
    earlier_path = next(
        (path for path in (saved_beside(args.out), work / "bench_results.json") if path.exists()),
        None,
    )
    if args.merge and earlier_path is not None:
        earlier = json.loads(earlier_path.read_text())
        sources = _sources(earlier)
        previous = load_saved(earlier)
        wanted = set(parse_sizes(args.sizes)) if not args.ir_only else set()
        results = [r for r in previous.results if r.target_events not in wanted]
        if not args.ir_lists:
            ir = previous.ir
        if not args.incremental_events_per_day:
            incremental = previous.incremental
        if not args.spans:
            spans = previous.spans
    if args.spans:
        spans = bench_span_flattening(args.spans, _log)
        write()
    if args.ir_lists:
        compiled = compiled_relevance(work)
        ir = bench_ir(args.ir_lists, args.seed, compiled, args.threads, args.memory_limit, _log)
        write()
    if not args.ir_only and parse_sizes(args.sizes):
        ratio = events_per_session(work, args.days, args.seed)
        print(f"[bench] {ratio:.2f} events per session", flush=True)
        for target in parse_sizes(args.sizes):
            sessions = max(100, round(target / ratio))
            results.append(
                bench_size(
                    work,
                    target,
                    sessions,
                    args.days,
                    args.seed,
                    args.memory_limit,
                    args.threads,
                    args.keep_raw,
                )
            )
            results.sort(key=lambda r: r.target_events)
            write()
    if not args.ir_only and args.incremental_events_per_day:
        histories = sorted({int(d) for d in args.incremental_days.split(",") if d.strip()})
        for days in histories:
            per_session = events_per_session(work, days, args.seed)
            sessions = max(100, round(args.incremental_events_per_day * days / per_session))
            incremental.append(
                bench_incremental(
                    work,
                    sessions,
                    days,
                    args.seed,
                    args.memory_limit,
                    args.threads,
                    full_build=days == histories[0],
                    generate_logs=generate_logs,
                    count_events=count_events,
                    measure=measure,
                    dbt_breakdown=dbt_breakdown,
                )
            )
            write()
    write()
    print(args.out.read_text())
    failed = [r for r in results if r.agreement and not r.agreement["ok"]]
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lara bench", description=__doc__)
    add_bench_arguments(parser)
    return bench_main(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
