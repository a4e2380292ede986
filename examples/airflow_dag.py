"""Airflow: lara's daily run as a DAG (an example: copy it into your dags folder).

Two tasks, one after the other:

- `source_freshness`: `dbt source freshness` on the raw logs. Exit 1 when an
  event table's newest event is older than 72 hours (the log exporter is
  late); the task is retried, and the build waits for it.
- `lara_run`: `lara run`, the incremental build with its tests, the
  statistics, the data-quality gate, the docs, the exports and the
  dashboard. Exit 0: built and published. Exit 1: the build failed, nothing
  new published. Exit 2: built, but the data-quality gate failed on the
  newest partition: do not publish (see docs/scheduling.md). Airflow fails
  the task on either.

Adjust LARA_HOME (the clone where `make setup` ran) and the paths in ENV.
Works with Airflow 2.7+ and 3.x.
"""

from __future__ import annotations

import datetime as dt

import pendulum
from airflow import DAG

try:  # Airflow 3
    from airflow.providers.standard.operators.bash import BashOperator
except ImportError:  # Airflow 2
    from airflow.operators.bash import BashOperator

LARA_HOME = "/srv/lara"
ENV = {
    "LARA_RAW_PATH": "/data/lara-logs",
    "LARA_DUCKDB_PATH": "/data/lara/lara.duckdb",
    # A secret salt for the pseudonymous user_key, from an Airflow Variable.
    "LARA_USER_ID_SALT": "{{ var.value.lara_user_id_salt }}",
    "DBT_PROFILES_DIR": LARA_HOME,
    "DBT_PROJECT_DIR": LARA_HOME,
}

with DAG(
    dag_id="lara_daily",
    schedule="30 3 * * *",  # after the exporter's nightly drop
    start_date=pendulum.datetime(2026, 8, 1, tz="UTC"),
    catchup=False,  # each run reads every pending file: no need to backfill days
    max_active_runs=1,  # one writer of the DuckDB file at a time
    tags=["lara"],
) as dag:
    freshness = BashOperator(
        task_id="source_freshness",
        bash_command=f"cd {LARA_HOME} && .venv/bin/dbt source freshness",
        env=ENV,
        append_env=True,
        retries=3,
        retry_delay=dt.timedelta(minutes=30),
    )
    run = BashOperator(
        task_id="lara_run",
        bash_command=f"cd {LARA_HOME} && .venv/bin/lara run",
        env=ENV,
        append_env=True,
        execution_timeout=dt.timedelta(hours=3),
    )
    freshness >> run
