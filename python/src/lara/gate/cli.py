"""Command-line wiring of the gate: `lara check` (and `python -m lara.gate`)."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path

from lara.paths import default_sample_dir, project_dir


def _day(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a day (YYYY-MM-DD): {value!r}") from error


def add_gate_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the gate's options to `parser` (e.g. the `lara check` sub-command)."""
    parser.add_argument(
        "--raw-path",
        default=None,
        help="folder of the log tables (default: $LARA_RAW_PATH, else the bundled sample)",
    )
    parser.add_argument(
        "--out",
        default=None,
        help="where results and Data Docs go (default: reports/gate in the project)",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--day", type=_day, default=None, help="validate one dt= day (YYYY-MM-DD)")
    which.add_argument(
        "--all", dest="all_days", action="store_true", help="validate every dt= partition"
    )
    parser.add_argument(
        "--table",
        dest="tables",
        action="append",
        default=None,
        help="validate only this contract table (repeatable; default: every table)",
    )
    parser.add_argument(
        "--config", default=None, help="gate configuration (default: gx/lara_gate.yml)"
    )
    lookups = parser.add_mutually_exclusive_group()
    lookups.add_argument(
        "--warehouse",
        default=None,
        help="built DuckDB warehouse whose staging rows the lineage lookups also read "
        "(default: $LARA_DUCKDB_PATH, else warehouse/lara.duckdb, when the file exists)",
    )
    lookups.add_argument(
        "--no-warehouse",
        action="store_true",
        help="lineage lookups into the raw files only",
    )
    parser.add_argument("--no-docs", action="store_true", help="skip the Data Docs HTML")
    parser.add_argument("--quiet", action="store_true", help="print the verdict only")
    return parser


def _raw_path(args: argparse.Namespace) -> Path:
    if args.raw_path:
        return Path(args.raw_path)
    env = os.environ.get("LARA_RAW_PATH")
    return Path(env) if env else default_sample_dir()


def _warehouse(args: argparse.Namespace) -> Path | None:
    if getattr(args, "no_warehouse", False):
        return None
    if getattr(args, "warehouse", None):
        return Path(args.warehouse)
    from lara.paths import warehouse_path

    default = warehouse_path()
    return default if default.is_file() else None


def _describe(item: dict) -> str:
    """A failing row as `key|key @ file:line`, control characters escaped."""
    from lara.gate.safe import printable

    source = printable(item.get("_source", ""))
    key = "|".join(printable(v) for k, v in item.items() if k != "_source")
    return f"{key} @ {source}" if key else source


def _print_report(result: object, quiet: bool) -> None:
    from lara.gate.runner import GateResult
    from lara.gate.safe import printable

    assert isinstance(result, GateResult)
    if not quiet:
        for row in result.coverage:
            share = row.get("lineage_coverage")
            shown = "n/a" if share is None else f"{share:.1%}"
            print(
                f"  lineage coverage {printable(row['partition'])}: {shown} of "
                f"{row['asset_actions']:,} asset actions ({row['actions']:,} actions)"
            )
        for check in result.failures:
            count = "" if check.unexpected_count is None else f" {check.unexpected_count:,} rows"
            observed = "" if check.observed_value is None else f" observed {check.observed_value}"
            sample = ", ".join(_describe(item) for item in check.sample[:3])
            print(
                f"  {check.severity.upper():7} {printable(check.partition)} {check.table} "
                f"{check.name}:"
                f"{count}{observed}" + (f" e.g. {sample}" if sample else "")
            )
    print(
        f"lara gate: {result.verdict} (exit {result.exit_code}); "
        f"results {result.results_path}, failing ids {result.failing_ids_path}"
        + (f", Data Docs {result.data_docs_index}" if result.data_docs_index else "")
    )


def gate_main(args: argparse.Namespace) -> int:
    """Run the gate from parsed arguments; returns the exit code (0 / 1 / 2)."""
    from lara.gate.runner import GateError, run_gate

    raw_path = _raw_path(args)
    out_dir = Path(args.out) if args.out else project_dir() / "reports" / "gate"
    try:
        result = run_gate(
            raw_path,
            out_dir,
            day=args.day,
            all_days=args.all_days,
            config_path=Path(args.config) if args.config else None,
            tables=args.tables,
            data_docs=not args.no_docs,
            log=None if args.quiet else print,
            warehouse=_warehouse(args),
        )
    except (GateError, FileNotFoundError, ValueError) as error:
        print(f"lara gate: cannot run: {error}", file=sys.stderr)
        return 2
    _print_report(result, args.quiet)
    return result.exit_code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lara.gate", description=__doc__)
    add_gate_arguments(parser)
    parser.add_argument(
        "--write-suites",
        action="store_true",
        help="write the suite snapshots under gx/expectations/ and exit",
    )
    args = parser.parse_args(argv)
    if args.write_suites:
        from lara.contract import load_contract
        from lara.gate.config import load_config
        from lara.gate.suites import snapshot_dir, write_snapshots

        config = load_config(Path(args.config) if args.config else None)
        for path in write_snapshots(load_contract(), config, snapshot_dir()):
            print(f"wrote {path}")
        return 0
    return gate_main(args)
