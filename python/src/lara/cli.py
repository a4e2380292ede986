"""lara: retrieval metrics (Tier 0-3) from assistant logs, built with dbt."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from pathlib import Path

from lara import __version__
from lara.paths import default_sample_dir, project_dir, warehouse_path

# Exit codes of `lara run` (documented in docs/scheduling.md).
EXIT_OK = 0
EXIT_BUILD_FAILED = 1  # dbt build or docs failed, or the raw folder is missing
EXIT_GATE_FAILED = 2  # the build succeeded but the data-quality gate failed


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
    ("LARA_DUCKDB_MEMORY_LIMIT", "DuckDB memory limit (default 4GB; spills beyond)"),
    ("LARA_TARGET", "dbt target and engine: duckdb (default) or spark"),
    ("LARA_SPARK_DIR, LARA_SPARK_*", "local Spark target settings (README: Running on Spark)"),
    ("DBT_PROFILES_DIR", "folder of profiles.yml (default: the project folder)"),
    *_PROJECT_ENV,
)
_RUN_CODES = (
    ("0", "built and published: every dbt model and test passed; gate passed or only warned"),
    (
        "1",
        "build failed (a dbt model or test, or dbt docs), or LARA_RAW_PATH is not a folder; "
        "nothing new published",
    ),
    ("2", "built, but the data-quality gate failed on the newest partition (or could not run)"),
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
        start_date=dt.date.fromisoformat(args.start_date),
    )
    manifest = generate(config, Path(args.out), progress=not args.quiet)
    if not args.quiet:
        tables = manifest.get("tables", {})
        total = sum(int(t.get("rows_written", 0)) for t in tables.values())
        print(f"lara: wrote {total:,} rows to {args.out} (manifest: {args.out}/_manifest.json)")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from lara.dbt import run_dbt
    from lara.generate import GeneratorConfig, generate

    raw_env = os.environ.get("LARA_RAW_PATH")
    warehouse = warehouse_path()
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
    dbt_args = ["build", "--full-refresh"] if full_refresh else ["build"]
    print(f"== lara: dbt {' '.join(dbt_args)} into {warehouse}")
    build = run_dbt(dbt_args, raw_path, warehouse)
    if build.returncode != 0:
        print(
            f"lara: dbt build failed (dbt exit code {build.returncode}; "
            "see the log above and logs/dbt.log)",
            file=sys.stderr,
        )
        return EXIT_BUILD_FAILED

    print("== lara: bridge evidence statistics (replay experiments)")
    from lara.bridge import run_bridge_statistics

    # Both statistics steps print their own one-line summary.
    bridge = run_bridge_statistics(warehouse, resamples=args.resamples, seed=0)

    print("== lara: production analogue (does Tier 1 quality predict use and outcome?)")
    from lara.production_bridge import run_production_bridge_statistics

    run_production_bridge_statistics(warehouse, resamples=args.resamples, seed=0)

    print("== lara: data-quality gate (newest partition)")
    from lara.gate.runner import GateError, run_gate

    gate_dir = project_dir() / "reports" / "gate"
    try:
        gate = run_gate(raw_path, gate_dir)
        gate_code = gate.exit_code
        print(f"   verdict: {gate.verdict} (exit code {gate.exit_code})")
    except GateError as error:
        gate, gate_code = None, 2
        print(f"   the gate could not run: {error}", file=sys.stderr)

    print("== lara: documentation (dbt docs generate)")
    from lara.docs_coverage import generate_docs

    docs = generate_docs(raw_path, warehouse)
    if docs.returncode != 0:
        print("lara: dbt docs generate failed", file=sys.stderr)
        return EXIT_BUILD_FAILED

    from lara.engine import target_name

    if target_name() == "spark":
        # Exports and the dashboard read the DuckDB warehouse file.
        print("== lara: done on Spark (marts in the metastore's `marts` database);")
        print("   exports and the dashboard read a DuckDB warehouse: skipped (LARA_TARGET=spark)")
        return EXIT_GATE_FAILED if gate_code == 2 else EXIT_OK

    print("== lara: exports for BI tools and the dashboard")
    from lara.export import export_marts
    from lara.report import build_dashboard

    exports_dir = project_dir() / "exports"
    exported = export_marts(warehouse, exports_dir)
    dashboard = build_dashboard(
        warehouse,
        project_dir() / "reports" / "dashboard.html",
        gate.results_path if gate is not None else None,
        Path(bridge["plot"]) if bridge.get("plot") else None,
    )

    print("== lara: done. Outputs:")
    print(f"   warehouse (DuckDB): {warehouse}")
    print(f"   dashboard:          {dashboard}")
    print(f"   exports (Parquet):  {exports_dir} ({len(exported)} files, see _index.json)")
    print(f"   dbt docs:           {project_dir() / 'target' / 'static_index.html'}")
    if gate is not None:
        print(f"   gate results:       {gate.results_path}")
        if gate.data_docs_index:
            print(f"   gate Data Docs:     {gate.data_docs_index}")
    if bridge.get("plot"):
        print(f"   CTU vs SRU plot:    {bridge['plot']}")
    print(f"   raw logs read:      {raw_path}")
    print(f"   dbt artifacts:      {project_dir() / 'target'}")
    # Gate warnings are printed, not fatal; a failed gate fails the run for the scheduler.
    return EXIT_GATE_FAILED if gate_code == 2 else EXIT_OK


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
    gen.add_argument("--sessions", type=int, default=20000)
    gen.add_argument("--days", type=int, default=14)
    gen.add_argument("--seed", type=int, default=7)
    gen.add_argument("--out", required=True)
    gen.add_argument("--format", choices=["parquet", "jsonl", "mixed"], default="parquet")
    gen.add_argument("--gzip", action="store_true", help="gzip JSON Lines files")
    gen.add_argument("--bad-rows", action="store_true", help="inject malformed rows")
    gen.add_argument("--no-replay", action="store_true", help="skip the replay tables")
    gen.add_argument("--start-date", default="2026-08-01")
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
    run.add_argument("--sessions", type=int, default=20000)
    run.add_argument("--days", type=int, default=14)
    run.add_argument("--seed", type=int, default=7)
    run.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    run.add_argument(
        "--full-refresh",
        action="store_true",
        help="rebuild the incremental models from scratch (always so for the generated sample)",
    )
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
    bridge.add_argument("--resamples", type=int, default=1000)
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
        "reference, write docs/benchmarks.md.",
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
    from lara.labels import add_label_import_arguments, add_label_sample_arguments

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
            "Draw a stratified sample of retrievals to judge (relevance labelling files).",
            (("LARA_DUCKDB_PATH", "the warehouse when --warehouse is not given"), *_PROJECT_ENV),
            (("0", "sample written"), ("2", "invalid options, no warehouse, or a usage error")),
        )
    )
    add_label_import_arguments(
        _command(
            sub,
            "label-import",
            "Validate returned judgements and append them as relevance_labels under the raw root.",
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
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
