"""The data-quality gate: Great Expectations suites over the raw log files.

    run_gate(raw_path, out_dir, day=None, all_days=False, config_path=None) -> GateResult

Validates each table-day of the log contract (one pandas batch per table and
`dt=` partition, read through DuckDB) against a GX suite built from the
contract (models/staging/lara/_lara__sources.yml) and gx/lara_gate.yml, plus
the lineage-integrity checks across tables. Exit codes: 0 passed, 1 warnings
only, 2 failed. See gx/README.md.
"""

from __future__ import annotations

from lara.gate.cli import add_gate_arguments, gate_main
from lara.gate.runner import CheckResult, GateError, GateResult, run_gate
from lara.gate.suites import DEFECT_CHECKS

__all__ = [
    "DEFECT_CHECKS",
    "CheckResult",
    "GateError",
    "GateResult",
    "add_gate_arguments",
    "gate_main",
    "run_gate",
]
