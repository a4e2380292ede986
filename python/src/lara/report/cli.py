"""`lara report`: arguments and entry point (wired into lara.cli)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lara.paths import project_dir, warehouse_path


def add_report_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the dashboard's options to `parser` (the `lara report` sub-command)."""
    parser.add_argument(
        "--out", default=None, help="the HTML file (default: reports/dashboard.html)"
    )
    parser.add_argument(
        "--gate-results",
        default=None,
        help="gate_results.json of `lara check` (default: reports/gate/gate_results.json)",
    )
    parser.add_argument(
        "--bridge-plot",
        default=None,
        help="PNG of `lara bridge` to embed (default: reports/bridge_ctu_vs_sru.png)",
    )
    parser.set_defaults(func=report_main)
    return parser


def _default(value: str | None, fallback: Path) -> Path | None:
    if value:
        return Path(value)
    return fallback if fallback.exists() else None


def report_main(args: argparse.Namespace) -> int:
    """Build the dashboard from the warehouse ($LARA_DUCKDB_PATH); 0 ok, 1 failed."""
    from lara.report.dashboard import build_dashboard

    reports = project_dir() / "reports"
    out = Path(args.out) if args.out else reports / "dashboard.html"
    gate = _default(args.gate_results, reports / "gate" / "gate_results.json")
    plot = _default(args.bridge_plot, reports / "bridge_ctu_vs_sru.png")
    try:
        path = build_dashboard(warehouse_path(), out, gate, plot)
    except (FileNotFoundError, OSError) as error:
        print(f"lara report: {error}", file=sys.stderr)
        return 1
    print(f"lara report: wrote {path}")
    return 0
