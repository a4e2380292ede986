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
the work folder keeps a copy for `--merge`. This module measures the sizes and
runs the command; the report is written by lara.bench_report.
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
from dataclasses import asdict, dataclass
from pathlib import Path

from lara.arguments import whole_number
from lara.bench_incremental import TOP_TESTS, IncrementalResult, bench_incremental
from lara.bench_ir import IrResult, bench_ir, compiled_relevance
from lara.bench_report import (
    FLOAT_TOLERANCE,
    SizeResult,
    load_saved,
    render_saved,
    saved_beside,
    saved_parts,
    sources_of,
    with_readme_summary,
)
from lara.bench_spans import SpanResult, bench_span_flattening
from lara.dbt import dbt_env, dbt_executable
from lara.paths import project_dir

EVENT_TABLES = ("prompts", "retrievals", "actions")
SIZES: dict[str, list[int]] = {
    "tiny": [20_000],
    "small": [200_000],
    "default": [1_000_000, 5_000_000, 20_000_000],
}
REFERENCE_SQL = Path(__file__).with_name("bench_reference.sql")
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
        " (benchmarks.json for benchmarks.md), and for the project's docs/benchmarks.md the"
        " README's table of the latest run, e.g. after a change to the report's text",
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


def refresh_readme(out: Path, saved: dict, project: Path | None = None) -> bool:
    """When `out` is the project's own report (docs/benchmarks.md), rewrite the README's
    table of the latest run from the same measurements; False (nothing written) for a
    report elsewhere, or when the README lacks the table's two comment lines (said on
    stderr: a long run must not stop at the README)."""
    project = project or project_dir()
    if out.resolve() != (project / "docs" / "benchmarks.md").resolve():
        return False
    readme = project / "README.md"
    text = readme.read_text()
    try:
        updated = with_readme_summary(text, saved)
    except ValueError as error:
        print(
            f"[bench] {readme}: {error}; its table of the latest run not written", file=sys.stderr
        )
        return False
    if updated != text:
        readme.write_text(updated)
    return True


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
    saved = json.loads(source.read_text())
    out.write_text(render_saved(saved))
    print(f"[bench] {out} written from {source}", flush=True)
    if refresh_readme(out, saved):
        print("[bench] README.md: the table of the latest run written from it", flush=True)
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
        refresh_readme(args.out, json.loads(text))
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
        sources = sources_of(earlier)
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
