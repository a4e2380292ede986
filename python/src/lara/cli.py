"""The `lara` command line."""

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
    parser = argparse.ArgumentParser(prog="lara", description=__doc__)
    parser.add_argument("--version", action="version", version=f"lara {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    gen = sub.add_parser("generate", help="write sample logs of the log contract")
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

    run = sub.add_parser("run", help="generate the sample (unless LARA_RAW_PATH) and build")
    run.add_argument("--sessions", type=int, default=20000)
    run.add_argument("--days", type=int, default=14)
    run.add_argument("--seed", type=int, default=7)
    run.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
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
    run.set_defaults(func=_cmd_run)

    bridge = sub.add_parser("bridge", help="bridge statistics and plot on a built warehouse")
    bridge.add_argument("--resamples", type=int, default=1000)
    bridge.add_argument("--seed", type=int, default=0)
    bridge.add_argument("--plot-dir", default=None)
    bridge.set_defaults(func=_cmd_bridge)

    from lara.gate import add_gate_arguments, gate_main

    check = sub.add_parser("check", help="data-quality gate (Great Expectations) on the raw logs")
    add_gate_arguments(check)
    check.set_defaults(func=gate_main)

    from lara.export import add_export_arguments
    from lara.report.cli import add_report_arguments

    add_export_arguments(sub.add_parser("export", help="public marts as Parquet for BI tools"))
    add_report_arguments(sub.add_parser("report", help="the static HTML dashboard"))

    from lara.bench import add_bench_arguments, bench_main

    bench = sub.add_parser("bench", help="benchmark: dbt build vs a hand-written reference")
    add_bench_arguments(bench)
    bench.set_defaults(func=bench_main)

    from lara.ingest import add_ingest_arguments
    from lara.labels import add_label_import_arguments, add_label_sample_arguments

    add_ingest_arguments(sub.add_parser("ingest", help="trace exports -> log contract tables"))
    add_label_sample_arguments(
        sub.add_parser("label-sample", help="stratified sample of retrievals to judge")
    )
    add_label_import_arguments(
        sub.add_parser("label-import", help="validate judgements, append relevance_labels")
    )

    man = sub.add_parser("manifest", help="print a generated sample's manifest")
    man.add_argument("path")
    man.set_defaults(func=_cmd_manifest)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
