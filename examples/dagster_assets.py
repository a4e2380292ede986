"""Dagster: lara's daily run as two assets and a schedule (an example).

- `lara_raw_freshness`: `dbt source freshness` on the raw logs; fails when
  an event table's newest event is older than 72 hours (exit 1).
- `lara_marts`: `lara run` (incremental build and tests, statistics,
  data-quality gate, docs, exports, dashboard). Exit 0: built and published.
  Exit 1: the build failed, nothing new published. Exit 2: built, but the
  data-quality gate failed: do not publish (docs/scheduling.md). Both fail
  the materialization with the reason.

Load it with `dagster dev -f examples/dagster_assets.py` (dagster installed
in its own environment); adjust LARA_HOME and ENV.
"""

from __future__ import annotations

import os
import shlex
import subprocess

from dagster import (
    AssetExecutionContext,
    Definitions,
    Failure,
    MaterializeResult,
    MetadataValue,
    ScheduleDefinition,
    asset,
    define_asset_job,
)

LARA_HOME = "/srv/lara"
ENV = {
    "LARA_RAW_PATH": "/data/lara-logs",
    "LARA_DUCKDB_PATH": "/data/lara/lara.duckdb",
    "DBT_PROFILES_DIR": LARA_HOME,
    "DBT_PROJECT_DIR": LARA_HOME,
    # LARA_USER_ID_SALT: set it in the Dagster deployment's environment (a secret).
}
EXIT_BUILD_FAILED = 1
EXIT_GATE_FAILED = 2


def _run(context: AssetExecutionContext, command: str) -> int:
    """Run `command` (e.g. "lara run") with the project's .venv, logging its output."""
    program, *args = shlex.split(command)
    argv = [os.path.join(LARA_HOME, ".venv", "bin", program), *args]
    result = subprocess.run(
        argv, cwd=LARA_HOME, env={**os.environ, **ENV}, capture_output=True, text=True
    )
    context.log.info(result.stdout[-20000:])
    if result.stderr:
        context.log.warning(result.stderr[-20000:])
    return result.returncode


@asset(description="The raw logs are fresh enough to build (dbt source freshness).")
def lara_raw_freshness(context: AssetExecutionContext) -> None:
    if _run(context, "dbt source freshness") != 0:
        raise Failure("raw logs are stale: an event table's newest event is older than 72 hours")


@asset(
    deps=[lara_raw_freshness],
    description="Warehouse marts, exports and dashboard of the daily lara run.",
)
def lara_marts(context: AssetExecutionContext) -> MaterializeResult:
    code = _run(context, "lara run")
    if code == EXIT_BUILD_FAILED:
        raise Failure("lara run: the build failed (a dbt model or test); nothing new published")
    if code == EXIT_GATE_FAILED:
        raise Failure("lara run: the data-quality gate failed; do not publish this run")
    if code != 0:
        raise Failure(f"lara run exited {code}")
    return MaterializeResult(
        metadata={
            "warehouse": ENV["LARA_DUCKDB_PATH"],
            "dashboard": MetadataValue.path(os.path.join(LARA_HOME, "reports", "dashboard.html")),
            "exports": MetadataValue.path(os.path.join(LARA_HOME, "exports")),
        }
    )


lara_daily = define_asset_job("lara_daily", selection=[lara_raw_freshness, lara_marts])

defs = Definitions(
    assets=[lara_raw_freshness, lara_marts],
    jobs=[lara_daily],
    schedules=[ScheduleDefinition(job=lara_daily, cron_schedule="30 3 * * *")],
)
