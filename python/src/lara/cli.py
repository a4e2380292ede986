"""lara: retrieval metrics (Tier 0-3) from assistant logs, built with dbt."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lara import __version__
from lara.arguments import iso_date, seconds, whole_number
from lara.paths import default_sample_dir, project_dir, warehouse_path

if TYPE_CHECKING:
    from lara.gate.runner import GateResult

# Exit codes of `lara run` (documented in docs/scheduling.md).
EXIT_OK = 0
EXIT_BUILD_FAILED = 1  # dbt build or docs failed, or the raw folder is missing
EXIT_GATE_FAILED = 2  # the build succeeded but the data-quality gate failed
EXIT_LOCKED = 75  # another `lara run` holds the warehouse's lock: nothing done (EX_TEMPFAIL)

# Where a run whose gate failed writes its exports and dashboard (beside the published ones).
UNPUBLISHED = "unpublished"


# ---------------------------------------------------------------- help texts
# Every command's --help: a one-line purpose (the description), then the
# environment variables it reads and its exit codes (the epilog). A usage
# error (unknown option, missing argument) always exits 2 before anything
# runs, as argparse does.

_PROJECT_ENV = (
    ("DBT_PROJECT_DIR", "the lara project folder (default: found from the installed package)"),
)
_WAREHOUSE_ENV = (("LARA_DUCKDB_PATH", "the DuckDB warehouse (default: warehouse/lara.duckdb)"),)
_RAW_ENV = (
    ("LARA_RAW_PATH", "root of the raw logs, <table>/dt=YYYY-MM-DD/ (default: data/sample)"),
)
_USAGE = ("2", "usage error: unknown option or missing argument (nothing ran)")


def _epilog(env: tuple[tuple[str, str], ...], codes: tuple[tuple[str, str], ...]) -> str:
    width = max(len(name) for name, _ in env) if env else 0
    lines = ["environment variables:"]
    lines += [f"  {name.ljust(width)}  {text}" for name, text in env] or ["  none"]
    lines += ["", "exit codes:"]
    lines += [f"  {code}  {text}" for code, text in codes]
    return "\n".join(lines)


def _command(
    sub: argparse._SubParsersAction,
    name: str,
    purpose: str,
    env: tuple[tuple[str, str], ...],
    codes: tuple[tuple[str, str], ...],
) -> argparse.ArgumentParser:
    """A sub-command whose --help states its purpose, environment and exit codes."""
    return sub.add_parser(
        name,
        help=purpose,
        description=purpose,
        epilog=_epilog(env, codes),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _inherit_help(parser: argparse.ArgumentParser) -> None:
    """Give the sub-commands of `parser` (lara ingest FORMAT) its environment and exit codes."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                help_line = next(
                    (c.help for c in action._choices_actions if c.dest == name), parser.description
                )
                child.description = f"{parser.description} Input: {help_line}."
                child.epilog = parser.epilog
                child.formatter_class = argparse.RawDescriptionHelpFormatter


_RUN_ENV = (
    (
        "LARA_RAW_PATH",
        "root of the raw logs; set: build on it incrementally, nothing generated; "
        "unset: generate the bundled sample into data/sample and rebuild from scratch",
    ),
    *_WAREHOUSE_ENV,
    ("LARA_USER_ID_SALT", "secret salt of the pseudonymous user_key (set your own in production)"),
    ("LARA_THREADS", "dbt threads (default 2)"),
    ("LARA_DUCKDB_MEMORY_LIMIT", "DuckDB memory limit (default 3GB; spills beyond)"),
    ("LARA_TARGET", "dbt target and engine: duckdb (default) or spark"),
    ("LARA_SPARK_DIR, LARA_SPARK_*", "local Spark target settings (README: Running on Spark)"),
    ("DBT_PROFILES_DIR", "folder of profiles.yml (default: the project folder)"),
    *_PROJECT_ENV,
)
_RUN_CODES = (
    ("0", "built and published: every dbt model and test passed; gate passed or only warned"),
    (
        "1",
        "build failed (a dbt model or test, or dbt docs), or LARA_RAW_PATH is not a folder, "
        "or the warehouse loaded no file under it (moved files: --full-refresh); "
        "nothing new published",
    ),
    (
        "2",
        "built, but the data-quality gate failed on the newest partition (or could not run); "
        "this run's exports and dashboard are written beside the published ones, marked as "
        "not published",
    ),
    (
        "75",
        "another `lara run` holds the warehouse's lock: nothing done (--wait-lock SECONDS waits)",
    ),
)
_TOP_EPILOG = (
    "Run `lara COMMAND --help` for a command's options, environment variables and exit codes.\n"
    "The daily job is `lara run` (docs/scheduling.md).\n\n"
    + _epilog(
        (
            *_RAW_ENV,
            *_WAREHOUSE_ENV,
            ("LARA_USER_ID_SALT", "salt of the pseudonymous user_key"),
            ("LARA_TARGET", "duckdb (default) or spark"),
            *_PROJECT_ENV,
        ),
        (
            ("0", "success; lara run and lara check: the data-quality gate passed or only warned"),
            ("1", "failure; lara check: warnings only; lara label-import: some rows rejected"),
            (
                "2",
                "lara run, lara check: the data-quality gate failed; other commands: invalid "
                "input; any command: a usage error",
            ),
        ),
    )
)


def _cmd_generate(args: argparse.Namespace) -> int:
    from lara.generate import GeneratorConfig, generate

    config = GeneratorConfig(
        sessions=args.sessions,
        days=args.days,
        seed=args.seed,
        fmt=args.format,
        gzip=args.gzip,
        bad_rows=args.bad_rows,
        replay=not args.no_replay,
        start_date=args.start_date,
    )
    manifest = generate(config, Path(args.out), progress=not args.quiet)
    if not args.quiet:
        tables = manifest.get("tables", {})
        total = sum(int(t.get("rows_written", 0)) for t in tables.values())
        print(f"lara: wrote {total:,} rows to {args.out} (manifest: {args.out}/_manifest.json)")
    return 0


def _lock_target(warehouse: Path) -> Path:
    """What a run writes, and so what its lock sits beside: the DuckDB file, or the Spark dir."""
    from lara.engine import spark_dir, target_name

    return spark_dir() if target_name() == "spark" else warehouse


def _cmd_run(args: argparse.Namespace) -> int:
    """`lara run`, one at a time per warehouse (lock file beside it, see lara.lock)."""
    from lara.lock import LockHeld, RunLock, held_message

    warehouse = warehouse_path()
    target = _lock_target(warehouse)
    lock = RunLock(target)
    try:
        # Flushed at once: a scheduler's log shows whom a run waits for while it waits.
        lock.acquire(wait_seconds=args.wait_lock, log=lambda line: print(line, flush=True))
    except LockHeld as error:
        print(held_message(error, target), file=sys.stderr)
        return EXIT_LOCKED
    with lock:
        return _run(args, warehouse)


def _unpublished_reason(gate: GateResult | None, gate_error: str | None) -> str:
    if gate is None:
        return f"The data-quality gate could not run ({gate_error})."
    from lara.gate.safe import printable

    # Partition names are raw folder names: printed, written to files and escaped in HTML.
    partitions = ", ".join(printable(p) for p in gate.partitions) or "no partition"
    return (
        f"The data-quality gate {gate.verdict} (exit {gate.exit_code}) on {partitions}: "
        f"see {gate.results_path} and {gate.failing_ids_path}."
    )


def _moved_raw_root(warehouse: Path, raw_path: Path) -> str | None:
    """The folders the warehouse loaded its raw files from (printable), when none is `raw_path`.

    Read from the load log (run_state.lara_incremental_manifest, which knows
    files by their path as dbt listed them: `<root>/<table>/...`, relative
    paths from the project folder, where `lara run` runs dbt). None when there
    is no DuckDB warehouse or load log yet, when it cannot be read (another
    process writes it), or when some file was loaded from `raw_path`.
    """
    from lara.engine import target_name

    if target_name() == "spark" or not warehouse.is_file():
        return None
    import duckdb

    try:
        with duckdb.connect(str(warehouse), read_only=True) as con:
            loaded = con.execute(
                "select distinct table_name, source_file from run_state.lara_incremental_manifest"
            ).fetchall()
    except duckdb.Error:
        return None
    roots = {file.rsplit(f"/{table}/", 1)[0] for table, file in loaded if f"/{table}/" in file}
    if not roots or any((project_dir() / root).resolve() == raw_path for root in roots):
        return None
    # A root ends at a file's last `/<table>/`, so a delivered folder name can be part of
    # it: printed with control characters escaped.
    from lara.gate.safe import printable

    return ", ".join(printable(root) for root in sorted(roots))


def _print_out_of_memory_hint(full_refresh: bool) -> None:
    """After a failed build: what to do when DuckDB ran out of its memory limit."""
    from lara.dbt import out_of_memory_nodes, target_dir

    nodes = out_of_memory_nodes(target_dir())
    if not nodes:
        return
    limit = os.environ.get("LARA_DUCKDB_MEMORY_LIMIT", "3GB")
    print(
        f"lara: {', '.join(nodes)} ran out of DuckDB's memory limit "
        f"(LARA_DUCKDB_MEMORY_LIMIT={limit}).",
        file=sys.stderr,
    )
    if not full_refresh:
        # README, "Incremental runs and late events": an incremental run that
        # recomputes many sessions but fewer than var lara_bulk_run_share
        # plans its joins for a small run and can need more memory than a
        # full build of the same files.
        print(
            "   If this run loaded many days at once, rebuild with `lara run --full-refresh`, "
            "or lower LARA_BULK_RUN_SHARE (default 0.5) so that runs recomputing that share of "
            "the sessions are built like a full build.",
            file=sys.stderr,
        )
    print(
        "   Otherwise raise LARA_DUCKDB_MEMORY_LIMIT (about 1 GB under the memory the "
        "process may use) or lower LARA_THREADS.",
        file=sys.stderr,
    )


def _run(args: argparse.Namespace, warehouse: Path) -> int:
    from lara.dbt import run_dbt, target_dir
    from lara.generate import GeneratorConfig, generate

    reports_dir = Path(args.reports_dir) if args.reports_dir else project_dir() / "reports"
    exports_root = Path(args.exports_dir) if args.exports_dir else project_dir() / "exports"
    raw_env = os.environ.get("LARA_RAW_PATH")
    if raw_env:
        raw_path = Path(raw_env).resolve()
        print(f"== lara: building on LARA_RAW_PATH={raw_path} (nothing generated)")
        if not raw_path.is_dir():
            print(f"lara: LARA_RAW_PATH {raw_path} is not a folder", file=sys.stderr)
            return EXIT_BUILD_FAILED
    else:
        raw_path = default_sample_dir()
        print(
            f"== lara: generating the bundled sample ({args.sessions:,} sessions, "
            f"{args.days} days, seed {args.seed}) into {raw_path}"
        )
        config = GeneratorConfig(sessions=args.sessions, days=args.days, seed=args.seed)
        generate(config, raw_path, progress=True)

    # A regenerated sample rewrites files in place, which an incremental run
    # would not re-read: rebuild it from scratch. Real logs (LARA_RAW_PATH)
    # build incrementally unless --full-refresh is given.
    full_refresh = args.full_refresh or not raw_env
    moved_from = None if full_refresh else _moved_raw_root(warehouse, raw_path)
    if moved_from:
        print(
            f"lara: the warehouse {warehouse} has loaded files under {moved_from}, and none under "
            f"LARA_RAW_PATH={raw_path}. If the raw files moved, rebuild with "
            "`lara run --full-refresh` (an incremental run would read every file again as new and "
            'recompute every session, README "Incremental runs and late events"); otherwise '
            "point LARA_RAW_PATH back. Nothing was done.",
            file=sys.stderr,
        )
        return EXIT_BUILD_FAILED
    dbt_args = ["build", "--full-refresh"] if full_refresh else ["build"]
    if args.full_test:
        # The weekly full test run: data tests over whole tables and the unit
        # tests too (a daily run tests the rows it wrote, selectors.yml
        # `production` leaves unit tests out).
        dbt_args += ["--selector", "with_unit_tests", "--vars", "{lara_full_test: true}"]
    print(f"== lara: dbt {' '.join(dbt_args)} into {warehouse}")
    build = run_dbt(dbt_args, raw_path, warehouse)
    if build.returncode != 0:
        print(
            f"lara: dbt build failed (dbt exit code {build.returncode}; "
            "see the log above and logs/dbt.log)",
            file=sys.stderr,
        )
        _print_out_of_memory_hint(full_refresh)
        return EXIT_BUILD_FAILED

    from lara.engine import target_name

    on_spark = target_name() == "spark"
    # The gate first: whether this run publishes decides where its outputs go.
    print("== lara: data-quality gate (newest partition)")
    from lara.gate.runner import GateError, run_gate

    gate_dir = reports_dir / "gate"
    gate_error = None
    try:
        gate = run_gate(raw_path, gate_dir, warehouse=None if on_spark else warehouse)
        gate_code = gate.exit_code
        print(f"   verdict: {gate.verdict} (exit code {gate.exit_code})")
    except GateError as error:
        gate, gate_code, gate_error = None, 2, str(error)
        print(f"   the gate could not run: {error}", file=sys.stderr)
    # Published only when the gate passed or only warned (lara check exit 0 / 1).
    out_reports = reports_dir if gate_publishes(gate) else reports_dir / UNPUBLISHED

    print("== lara: bridge evidence statistics (replay experiments)")
    from lara.bridge import run_bridge_statistics

    # Both statistics steps print their own one-line summary.
    bridge = run_bridge_statistics(
        warehouse, resamples=args.resamples, seed=0, plot_dir=out_reports
    )

    print("== lara: production analogue (does Tier 1 quality predict use and outcome?)")
    from lara.production_bridge import run_production_bridge_statistics

    run_production_bridge_statistics(warehouse, resamples=args.resamples, seed=0)

    print("== lara: documentation (dbt docs generate)")
    from lara.docs_coverage import generate_docs

    docs = generate_docs(raw_path, warehouse)
    if docs.returncode != 0:
        print("lara: dbt docs generate failed", file=sys.stderr)
        return EXIT_BUILD_FAILED

    if on_spark:
        # Exports and the dashboard read the DuckDB warehouse file.
        print("== lara: done on Spark (marts in the metastore's `marts` database);")
        print("   exports and the dashboard read a DuckDB warehouse: skipped (LARA_TARGET=spark)")
        return EXIT_GATE_FAILED if gate_code == 2 else EXIT_OK

    outputs = publish_outputs(
        warehouse,
        gate,
        gate_error,
        Path(bridge["plot"]) if bridge.get("plot") else None,
        reports_dir,
        exports_root,
    )

    print("== lara: done. Outputs:")
    print(f"   warehouse (DuckDB): {warehouse}")
    if outputs.published:
        print(f"   dashboard:          {outputs.dashboard}")
        print(
            f"   exports (Parquet):  {outputs.exports_dir} ({len(outputs.exported)} files, "
            "see _index.json)"
        )
    else:
        print(f"   dashboard (NOT PUBLISHED): {outputs.dashboard}")
        print(
            f"   exports (NOT PUBLISHED):   {outputs.exports_dir} ({len(outputs.exported)} files)"
        )
        print(
            f"   the published dashboard ({reports_dir / 'dashboard.html'}) and exports "
            f"({exports_root}) were left as they were"
        )
    print(f"   dbt docs:           {target_dir() / 'static_index.html'}")
    if gate is not None:
        print(f"   gate results:       {gate.results_path}")
        if gate.data_docs_index:
            print(f"   gate Data Docs:     {gate.data_docs_index}")
    if bridge.get("plot"):
        print(f"   CTU vs SRU plot:    {bridge['plot']}")
    print(f"   raw logs read:      {raw_path}")
    print(f"   dbt artifacts:      {target_dir()}")
    if not outputs.published:
        print(f"lara: NOT PUBLISHED. {outputs.reason}", file=sys.stderr)
    # Gate warnings are printed, not fatal; a failed gate fails the run for the scheduler.
    return EXIT_GATE_FAILED if gate_code == 2 else EXIT_OK


@dataclass(frozen=True)
class Outputs:
    """What `lara run` wrote for readers, and whether it was published."""

    published: bool
    reason: str | None  # why not published
    dashboard: Path
    exports_dir: Path
    exported: list[Path]


def gate_publishes(gate: GateResult | None) -> bool:
    """A run publishes when its gate ran and passed or only warned (exit 0 / 1)."""
    return gate is not None and gate.exit_code in (0, 1)


def publish_outputs(
    warehouse: Path,
    gate: GateResult | None,
    gate_error: str | None,
    bridge_plot: Path | None,
    reports_dir: Path,
    exports_root: Path,
) -> Outputs:
    """The exports and the dashboard of a built warehouse: published only when the gate passed.

    Published: `<exports_root>/` and `<reports_dir>/dashboard.html` are replaced
    (each file atomically), and the unpublished outputs of an earlier run are
    removed. Otherwise they go beside, to `<exports_root>/unpublished/` and
    `<reports_dir>/unpublished/dashboard.html`, marked as not published (index
    field, Parquet metadata, marker file; a banner on the page), and the
    published ones are left untouched.
    """
    from lara.export import export_marts
    from lara.report import build_dashboard
    from lara.report.publish import mark_unpublished

    published = gate_publishes(gate)
    reason = None if published else _unpublished_reason(gate, gate_error)
    out_reports = reports_dir if published else reports_dir / UNPUBLISHED
    exports_dir = exports_root if published else exports_root / UNPUBLISHED
    summary = (
        None
        if gate is None
        else {
            "verdict": gate.verdict,
            "exit_code": gate.exit_code,
            "results": str(gate.results_path),
        }
    )
    if published:
        print("== lara: publishing the exports for BI tools and the dashboard (gate passed)")
    else:
        print(
            "== lara: NOT PUBLISHING (the data-quality gate failed): exports and dashboard "
            f"go to {exports_dir} and {out_reports}, marked as not published"
        )
    exported = export_marts(warehouse, exports_dir, unpublished_reason=reason, gate=summary)
    dashboard = build_dashboard(
        warehouse,
        out_reports / "dashboard.html",
        gate.results_path if gate is not None else None,
        bridge_plot,
    )
    if published:
        for stale in (reports_dir / UNPUBLISHED, exports_root / UNPUBLISHED):
            if stale.is_dir():
                shutil.rmtree(stale)
                print(f"   removed the unpublished outputs of an earlier run: {stale}")
    else:
        mark_unpublished(dashboard, reason or "")
    return Outputs(published, reason, dashboard, exports_dir, exported)


def _cmd_bridge(args: argparse.Namespace) -> int:
    from lara.bridge import run_bridge_statistics

    plot_dir = Path(args.plot_dir) if args.plot_dir else None
    result = run_bridge_statistics(
        warehouse_path(), resamples=args.resamples, seed=args.seed, plot_dir=plot_dir
    )
    return 0 if result.get("status") in ("ok", "no_replay_data") else 1


def _cmd_manifest(args: argparse.Namespace) -> int:
    path = Path(args.path) / "_manifest.json"
    print(json.dumps(json.loads(path.read_text()), indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lara",
        description=__doc__,
        epilog=_TOP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"lara {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    gen = _command(
        sub,
        "generate",
        "Write synthetic sample logs of the log contract (with planted truth) to --out.",
        (),
        (("0", "written"), ("1", "could not write (the error is printed)"), _USAGE),
    )
    gen.add_argument("--sessions", type=whole_number(1), default=20000)
    gen.add_argument("--days", type=whole_number(1), default=14)
    gen.add_argument("--seed", type=int, default=7)
    gen.add_argument("--out", required=True)
    gen.add_argument("--format", choices=["parquet", "jsonl", "mixed"], default="parquet")
    gen.add_argument("--gzip", action="store_true", help="gzip JSON Lines files")
    gen.add_argument("--bad-rows", action="store_true", help="inject malformed rows")
    gen.add_argument("--no-replay", action="store_true", help="skip the replay tables")
    gen.add_argument("--start-date", type=iso_date, default="2026-08-01")
    gen.add_argument("--quiet", action="store_true")
    gen.set_defaults(func=_cmd_generate)

    run = _command(
        sub,
        "run",
        "The daily job: dbt build (incremental on LARA_RAW_PATH), statistics, data-quality "
        "gate, docs, exports and dashboard.",
        _RUN_ENV,
        _RUN_CODES + (("", "(a usage error also exits 2, before anything runs)"),),
    )
    run.add_argument("--sessions", type=whole_number(1), default=20000)
    run.add_argument("--days", type=whole_number(1), default=14)
    run.add_argument("--seed", type=int, default=7)
    run.add_argument("--resamples", type=whole_number(1), default=1000, help="bootstrap resamples")
    run.add_argument(
        "--full-refresh",
        action="store_true",
        help="rebuild the incremental models from scratch (always so for the generated sample)",
    )
    run.add_argument(
        "--full-test",
        action="store_true",
        help=(
            "data tests check whole tables, not only the rows this run wrote, and the dbt "
            "unit tests run too (schedule it weekly)"
        ),
    )
    run.add_argument(
        "--wait-lock",
        type=seconds,
        default=0.0,
        metavar="SECONDS",
        help="when another `lara run` holds the warehouse's lock, wait up to SECONDS for it "
        "(default 0: stop at once with exit code 75)",
    )
    run.add_argument(
        "--reports-dir",
        default=None,
        help="dashboard, gate results and plots (default: reports/ in the project)",
    )
    run.add_argument("--exports-dir", default=None, help="exports for BI tools (default: exports/)")
    run.set_defaults(func=_cmd_run)

    bridge = _command(
        sub,
        "bridge",
        "Bridge-evidence statistics (Spearman, bridge share, OER) and the CTU-SRU plot on a "
        "built warehouse.",
        (*_WAREHOUSE_ENV, ("LARA_TARGET", "duckdb (default) or spark"), *_PROJECT_ENV),
        (
            ("0", "written, or no replay experiments logged (nothing to compute)"),
            ("1", "the statistics could not be computed"),
            _USAGE,
        ),
    )
    bridge.add_argument("--resamples", type=whole_number(1), default=1000)
    bridge.add_argument("--seed", type=int, default=0)
    bridge.add_argument("--plot-dir", default=None)
    bridge.set_defaults(func=_cmd_bridge)

    from lara.gate import add_gate_arguments, gate_main

    check = _command(
        sub,
        "check",
        "Data-quality gate (Great Expectations) on the raw logs' newest partition (--day, --all).",
        (
            (
                "LARA_RAW_PATH",
                "root of the raw logs when --raw-path is not given (default: data/sample)",
            ),
            *_PROJECT_ENV,
        ),
        (
            ("0", "every check passed"),
            ("1", "warnings only (checks of severity warning failed): publish, read them"),
            (
                "2",
                "an error-severity check failed, the gate could not run, or a usage error: "
                "do not publish",
            ),
        ),
    )
    add_gate_arguments(check)
    check.set_defaults(func=gate_main)

    from lara.export import add_export_arguments
    from lara.report.cli import add_report_arguments

    add_export_arguments(
        _command(
            sub,
            "export",
            "Copy the public marts to Parquet files and a marts-only DuckDB file for BI tools.",
            (*_WAREHOUSE_ENV, *_PROJECT_ENV),
            (
                ("0", "written (files replaced atomically)"),
                ("1", "no warehouse or no marts"),
                _USAGE,
            ),
        )
    )
    add_report_arguments(
        _command(
            sub,
            "report",
            "Write the static HTML dashboard (one file, nothing fetched) from the warehouse.",
            (*_WAREHOUSE_ENV, *_PROJECT_ENV),
            (
                ("0", "written (replaced atomically)"),
                ("1", "no warehouse, or it could not be read"),
                _USAGE,
            ),
        )
    )

    from lara.bench import add_bench_arguments, bench_main

    bench = _command(
        sub,
        "bench",
        "Benchmark: generate logs of several sizes, time dbt build against a hand-written "
        "reference, write docs/benchmarks.md and its measurements (docs/benchmarks.json).",
        (
            ("LARA_DUCKDB_MEMORY_LIMIT", "default of --memory-limit"),
            ("LARA_THREADS", "default of --threads"),
            *_PROJECT_ENV,
        ),
        (
            ("0", "done, every size agreed with the reference"),
            ("1", "a size disagreed with the reference"),
            _USAGE,
        ),
    )
    add_bench_arguments(bench)
    bench.set_defaults(func=bench_main)

    from lara.ingest import add_ingest_arguments
    from lara.prompt_labels import add_label_import_arguments, add_label_sample_arguments

    ingest = _command(
        sub,
        "ingest",
        "Turn trace exports (OpenInference / Phoenix, OpenTelemetry GenAI) into log contract "
        "tables.",
        (),
        (("0", "tables written"), ("2", "unreadable or invalid input, or a usage error")),
    )
    add_ingest_arguments(ingest)
    _inherit_help(ingest)
    add_label_sample_arguments(
        _command(
            sub,
            "label-sample",
            "Draw a stratified sample to judge: retrievals (relevance grades, Tier 1) or, "
            "with --unit prompts, prompts (retrieval intent, Tier 0).",
            (("LARA_DUCKDB_PATH", "the warehouse when --warehouse is not given"), *_PROJECT_ENV),
            (("0", "sample written"), ("2", "invalid options, no warehouse, or a usage error")),
        )
    )
    add_label_import_arguments(
        _command(
            sub,
            "label-import",
            "Validate returned judgements and append them under the raw root: relevance_labels, "
            "or prompt_labels with --unit prompts (and the sample design).",
            (),
            (
                ("0", "imported"),
                ("1", "imported, but some rows were rejected (see the rejects file)"),
                ("2", "invalid input, or a usage error"),
            ),
        )
    )

    from lara.semantic import mf_main

    mf = _command(
        sub,
        "mf",
        "MetricFlow's mf against the current warehouse: re-parses the project first when the "
        "semantic manifest names another DuckDB file.",
        (
            ("LARA_DUCKDB_PATH", "the warehouse mf queries (default: warehouse/lara.duckdb)"),
            ("DBT_PROFILES_DIR", "folder of profiles.yml (default: the project folder)"),
            *_PROJECT_ENV,
        ),
        (
            ("0", "mf succeeded"),
            ("1", "dbt-metricflow missing, dbt parse failed, or mf failed (mf's own code)"),
            ("2", "usage error (of lara mf, or of mf itself)"),
        ),
    )
    mf.add_argument(
        "mf_args",
        nargs=argparse.REMAINDER,
        metavar="MF_ARGUMENTS",
        help="passed to mf, e.g. query --metrics trigger_rate --group-by metric_time__day",
    )
    mf.set_defaults(func=mf_main)

    man = _command(
        sub,
        "manifest",
        "Print a generated sample's _manifest.json (parameters and planted truth).",
        (),
        (("0", "printed"), ("1", "no manifest in that folder"), _USAGE),
    )
    man.add_argument("path")
    man.set_defaults(func=_cmd_manifest)
    return parser


def main(argv: list[str] | None = None) -> int:
    from lara.paths import SettingError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except SettingError as error:
        from lara.gate.safe import printable

        print(f"lara {args.command}: {printable(error)}", file=sys.stderr)
        return 2  # a usage error, as argparse's


if __name__ == "__main__":
    sys.exit(main())
