"""The warehouse connection of the Python steps: DuckDB or Spark.

The statistics that run in Python (`lara bridge`, the production bridge) read
marts through the engine that built them and write their results back as
tables beside them. The engine is the dbt target: env LARA_TARGET, `duckdb`
(default) or `spark` (see profiles.yml).

- duckdb: the warehouse file ($LARA_DUCKDB_PATH).
- spark: a SparkSession. An active session is reused (a notebook, a job on
  the cluster); env LARA_SPARK_REMOTE=sc://host:port connects with Spark
  Connect; otherwise a local session on the same metastore and warehouse as
  the `spark` target of profiles.yml ($LARA_SPARK_DIR, default
  warehouse/spark), so it reads the tables that `dbt build` wrote. The local
  metastore is an embedded Derby database: one process at a time, so this
  runs after dbt, not beside it.

Both give the same small interface (`Warehouse`), used by lara.bridge and
lara.production_bridge.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from lara.paths import project_dir

TARGETS = ("duckdb", "spark")

#: Schema of the dbt marts; the Python steps read marts there and write their tables beside them.
MARTS_SCHEMA = "marts"

# (column, DuckDB type, comment): how lara.bridge declares the tables it writes.
ColumnSpec = tuple[str, str, str]


def target_name(target: str | None = None) -> str:
    """The engine: `target`, else env LARA_TARGET, else duckdb."""
    name = (target or os.environ.get("LARA_TARGET") or "duckdb").strip().lower()
    if name not in TARGETS:
        raise ValueError(f"lara: unknown LARA_TARGET {name!r} (expected one of {TARGETS})")
    return name


class Warehouse(Protocol):
    target: str

    def relation_exists(self, schema: str, name: str) -> bool: ...

    def query_df(self, sql: str) -> pd.DataFrame: ...

    def query_one(self, sql: str) -> tuple | None: ...

    def write_table(
        self,
        schema: str,
        name: str,
        frame: pd.DataFrame,
        columns: Sequence[ColumnSpec],
        description: str,
    ) -> None: ...


def mart_exists(con: Warehouse, name: str) -> bool:
    """Whether marts.<name> exists in the warehouse."""
    return con.relation_exists(MARTS_SCHEMA, name)


def write_mart(
    con: Warehouse,
    name: str,
    frame: pd.DataFrame,
    columns: Sequence[ColumnSpec],
    description: str,
) -> None:
    """Replace marts.<name> with `frame`, typed and commented."""
    con.write_table(MARTS_SCHEMA, name, frame, columns, description)


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of a written frame as plain Python values (None for nulls)."""
    clean = frame.astype(object).where(frame.notna(), None)
    return [
        {
            key: (value.item() if isinstance(value, np.generic) else value)
            for key, value in row.items()
        }
        for row in clean.to_dict(orient="records")
    ]


def sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# ---------------------------------------------------------------- DuckDB


class DuckDBWarehouse:
    target = "duckdb"

    def __init__(self, con: Any):
        self.con = con

    def relation_exists(self, schema: str, name: str) -> bool:
        found = self.con.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = ? and table_name = ?",
            [schema, name],
        ).fetchone()
        return bool(found and found[0])

    def query_df(self, sql: str) -> pd.DataFrame:
        return self.con.execute(sql).df()

    def query_one(self, sql: str) -> tuple | None:
        return self.con.execute(sql).fetchone()

    def write_table(self, schema, name, frame, columns, description) -> None:
        """Replace <schema>.<name> with `frame`, typed and commented."""
        relation = f"{schema}.{name}"
        self.con.execute(f"create schema if not exists {schema}")
        self.con.register("_lara_bridge_frame", frame)
        try:
            casts = ", ".join(
                f"cast({column} as {kind}) as {column}" for column, kind, _ in columns
            )
            self.con.execute(
                f"create or replace table {relation} as select {casts} from _lara_bridge_frame"
            )
        finally:
            self.con.unregister("_lara_bridge_frame")
        self.con.execute(f"comment on table {relation} is {sql_string(description)}")
        for column, _, text in columns:
            self.con.execute(f"comment on column {relation}.{column} is {sql_string(text)}")


# ---------------------------------------------------------------- Spark

_SPARK_TYPES = {
    "varchar": "string",
    "text": "string",
    "string": "string",
    "double": "double",
    "float": "double",
    "bigint": "bigint",
    "integer": "int",
    "int": "int",
    "boolean": "boolean",
    "date": "date",
    "timestamp": "timestamp",
}


def spark_type(duckdb_type: str) -> str:
    return _SPARK_TYPES[duckdb_type.strip().lower()]


def spark_dir() -> Path:
    """Metastore and table files of the local `spark` target (profiles.yml):
    LARA_SPARK_DIR, else warehouse/spark; relative to the project directory
    (where `make` and `lara` run dbt)."""
    path = Path(os.environ.get("LARA_SPARK_DIR", "warehouse/spark"))
    return path if path.is_absolute() else project_dir() / path


def local_spark_conf() -> dict[str, str]:
    """The local session of the `spark` target; keep in step with profiles.yml."""
    base = spark_dir()
    return {
        "spark.master": os.environ.get("LARA_SPARK_MASTER", "local[*]"),
        "spark.app.name": "lara",
        "spark.driver.memory": os.environ.get("LARA_SPARK_DRIVER_MEMORY", "4g"),
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.extraJavaOptions": f"-Duser.timezone=UTC -Dderby.system.home={base}",
        "spark.sql.warehouse.dir": f"{base}/warehouse",
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={base}/metastore_db;create=true"
        ),
        "spark.sql.shuffle.partitions": os.environ.get("LARA_SPARK_SHUFFLE_PARTITIONS", "4"),
        "spark.sql.legacy.createHiveTableByDefault": "false",
        "spark.sql.parquet.mergeSchema": "true",
        "spark.sql.mapKeyDedupPolicy": "LAST_WIN",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
    }


def spark_session() -> Any:
    """An active SparkSession, a Spark Connect one, or the local one of profiles.yml."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as error:  # pragma: no cover - depends on the extra
        raise RuntimeError(
            "lara: LARA_TARGET=spark needs pyspark: pip install -e 'python[spark]'"
        ) from error
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    remote = os.environ.get("LARA_SPARK_REMOTE")
    if remote:
        return SparkSession.builder.remote(remote).getOrCreate()
    builder = SparkSession.builder.enableHiveSupport()
    for key, value in local_spark_conf().items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def _python_value(value: Any, kind: str) -> Any:
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if kind in ("bigint", "int"):
        return int(value)
    if kind == "double":
        return float(value)
    if kind == "boolean":
        return bool(value)
    if kind == "string":
        return str(value)
    return value


class SparkWarehouse:
    target = "spark"

    def __init__(self, session: Any):
        self.spark = session

    def relation_exists(self, schema: str, name: str) -> bool:
        return bool(self.spark.catalog.tableExists(f"{schema}.{name}"))

    def query_df(self, sql: str) -> pd.DataFrame:
        """The result as pandas. Timestamps travel as UTC microseconds (collect()
        would render them in the Python process's local time zone)."""
        from pyspark.sql.types import TimestampType

        frame = self.spark.sql(sql)
        instants = [f.name for f in frame.schema.fields if isinstance(f.dataType, TimestampType)]
        if instants:
            frame = frame.selectExpr(
                *(
                    f"unix_micros(`{name}`) as `{name}`" if name in instants else f"`{name}`"
                    for name in frame.columns
                )
            )
        rows = frame.collect()
        result = pd.DataFrame([tuple(row) for row in rows], columns=frame.columns)
        for name in instants:
            result[name] = pd.to_datetime(result[name], unit="us")
        return result

    def query_one(self, sql: str) -> tuple | None:
        rows = self.spark.sql(sql).take(1)
        return tuple(rows[0]) if rows else None

    def write_table(self, schema, name, frame, columns, description) -> None:
        """Replace <schema>.<name> with `frame`, typed and commented (Parquet table)."""
        from pyspark.sql.types import StructType, _parse_datatype_string

        kinds = [spark_type(kind) for _, kind, _ in columns]
        fields = [
            {
                "name": column,
                "type": _parse_datatype_string(kind).jsonValue(),
                "nullable": True,
                "metadata": {"comment": text},
            }
            for (column, _, text), kind in zip(columns, kinds, strict=True)
        ]
        schema_type = StructType.fromJson({"type": "struct", "fields": fields})
        names = [column for column, _, _ in columns]
        rows = [
            tuple(_python_value(value, kind) for value, kind in zip(record, kinds, strict=True))
            for record in frame[names].astype(object).itertuples(index=False, name=None)
        ]
        data = self.spark.createDataFrame(rows, schema=schema_type)
        relation = f"{schema}.{name}"
        self.spark.sql(f"create database if not exists {schema}")
        self.spark.sql(f"drop table if exists {relation}")
        data.write.format("parquet").saveAsTable(relation)
        self.spark.sql(f"comment on table {relation} is {_spark_string(description)}")


def _spark_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


# ---------------------------------------------------------------- entry


@contextmanager
def connect(warehouse: Path | None = None, target: str | None = None) -> Iterator[Warehouse]:
    """The warehouse of `target` (default LARA_TARGET): the DuckDB file
    `warehouse`, or the Spark session (`warehouse` unused)."""
    name = target_name(target)
    if name == "spark":
        yield SparkWarehouse(spark_session())
        return
    import duckdb

    with duckdb.connect(str(warehouse)) as con:
        yield DuckDBWarehouse(con)
