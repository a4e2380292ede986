"""The data-quality gate: Great Expectations suites over the raw log files.

    run_gate(raw_path, out_dir, day=None, all_days=False, config_path=None) -> GateResult

Validates each table-day of the log contract (one pandas batch per table and
`dt=` partition, read through DuckDB) against a GX suite built from the
contract (models/staging/lara/_lara__sources.yml) and gx/lara_gate.yml, plus
the lineage-integrity checks across tables. Exit codes: 0 passed, 1 warnings
only, 2 failed. See gx/README.md.
"""

from __future__ import annotations

from typing import Any

from lara.gate.cli import add_gate_arguments, gate_main

# Great Expectations takes seconds to import: load the runner on first use, so
# that `lara --help` and the other commands stay fast.
_LAZY = {
    "CheckResult": "lara.gate.runner",
    "GateError": "lara.gate.runner",
    "GateResult": "lara.gate.runner",
    "run_gate": "lara.gate.runner",
    "DEFECT_CHECKS": "lara.gate.suites",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'lara.gate' has no attribute {name!r}")


__all__ = [
    "DEFECT_CHECKS",
    "CheckResult",
    "GateError",
    "GateResult",
    "add_gate_arguments",
    "gate_main",
    "run_gate",
]
