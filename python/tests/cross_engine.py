"""What the cross-engine tests share: the Spark stack check, a dbt build on either
engine, and the comparison of rows read from both (test_spark.py,
test_spark_emptied_days.py)."""

from __future__ import annotations

import datetime as dt
import decimal
import importlib.util
import math
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lara.dbt import run_dbt

REL_TOL = 1e-9
ABS_TOL = 1e-12


def importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def missing_spark_stack() -> str | None:
    missing = [
        label
        for label, module in (("pyspark", "pyspark"), ("dbt-spark", "dbt.adapters.spark"))
        if not importable(module)
    ]
    if missing:
        return (
            f"{' and '.join(missing)} not installed (optional extra `spark`: "
            "pip install -e 'python[spark]', or run `make test-spark`)"
        )
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no Java runtime (pyspark needs Java 17)"
    return None


def require_spark() -> None:
    reason = missing_spark_stack()
    if reason is None:
        return
    if os.environ.get("LARA_SPARK_TESTS") == "1":
        # `make test-spark` installs the stack first: a missing piece is a failure.
        pytest.fail(f"Spark tests are required here (LARA_SPARK_TESTS=1): {reason}")
    pytest.skip(f"Spark tests skipped: {reason}")


def build(
    root: Path, raw: Path, target: str, command: str = "build", extra: tuple[str, ...] = ()
) -> tuple[float, str]:
    """dbt `command` of `raw` on `target`; returns the wall time in seconds and the log."""
    env = {
        "LARA_TARGET": target,
        # Spark spends most of a small build planning queries and waiting on
        # the metastore, not computing: more dbt threads than cores help.
        "LARA_THREADS": os.environ.get("LARA_THREADS", "4" if target == "spark" else "2"),
        "DBT_TARGET_PATH": str(root / f"target-{target}"),
        "DBT_LOG_PATH": str(root / f"logs-{target}"),
        "LARA_SPARK_DIR": str(root / "spark"),
    }
    started = time.monotonic()
    # Unit tests test engine-independent logic and add about 5 minutes on
    # Spark (query planning of their fixture CTEs); they pass there too, and
    # run on DuckDB in `make test`.
    args = [command, *extra]
    if target == "spark" and command == "build":
        args += ["--exclude-resource-type", "unit_test"]
    result = run_dbt(args, raw, root / "lara.duckdb", extra_env=env, capture=True)
    elapsed = time.monotonic() - started
    if result.returncode != 0:
        # dbt's own output (stdout) says what failed; Spark's JVM fills stderr
        # with warnings, so only its last lines are shown.
        failures = [
            line
            for line in result.stdout.splitlines()
            if "ERROR" in line or "FAIL" in line or "Error" in line
        ]
        raise AssertionError(
            f"dbt {command} on {target} failed ({elapsed:.0f} s):\n"
            + "\n".join(failures[-40:])
            + "\n...\n"
            + result.stdout[-4000:]
            + "\n... stderr:\n"
            + result.stderr[-1000:]
        )
    return elapsed, result.stdout + result.stderr


def normal(value):
    """A comparable plain value: None, float, str, bool, or an ISO timestamp."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, int | decimal.Decimal):
        return float(value)
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day).isoformat(sep=" ")
    return str(value)


def sort_key(row: tuple) -> tuple:
    # Floats rounded for ordering only, so last-bit noise cannot swap two rows.
    return tuple(
        (0, "") if v is None else (1, f"{v:.6g}") if isinstance(v, float) else (2, str(v))
        for v in row
    )


def normal_rows(frame: pd.DataFrame, columns: list[str]) -> list[tuple]:
    rows = [
        tuple(normal(v) for v in record)
        for record in frame[columns].astype(object).itertuples(index=False, name=None)
    ]
    # Non-float columns first in the sort order: they hold the keys.
    return sorted(rows, key=sort_key)


def diff(mart: str, columns: list[str], left: list[tuple], right: list[tuple]) -> list[str]:
    problems = []
    for index, (a_row, b_row) in enumerate(zip(left, right, strict=True)):
        for column, a, b in zip(columns, a_row, b_row, strict=True):
            if isinstance(a, float) and isinstance(b, float):
                if not math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL):
                    problems.append(f"{mart} row {index} {column}: duckdb {a!r} spark {b!r}")
            elif a != b:
                problems.append(f"{mart} row {index} {column}: duckdb {a!r} spark {b!r}")
        if len(problems) > 20:
            break
    return problems
