"""Raw log files -> one pandas batch per table and day, through DuckDB.

The files (`<root>/<table>/dt=YYYY-MM-DD/*.parquet|*.jsonl|*.jsonl.gz`, formats
mixed freely) are loaded file by file into a temporary on-disk DuckDB
database, every contract column as text, exactly as delivered (the same shape
as the dbt raw views of macros/raw/register.sql). A JSON Lines
file is read one line per row, so a line that does not parse is a row with
`_is_parseable = false`, never an error. A file that cannot be read at all
becomes one row with `_file_error` set.

On top of that, SQL computes everything a single table-day cannot see on its
own (duplicates across partitions, lineage lookups into every partition of
`retrievals` and `actions`), and the per-row "issue" columns the GX suites
validate. pandas only ever holds one table-day (`RawStore.batch`); the rest
stays in DuckDB, which spills to disk under its memory limit.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pandas as pd

from lara.contract import Column, Table
from lara.gate.config import GateConfig

PARTITION_PATTERN = re.compile(r"^dt=(.*)$")
ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")

# DuckDB types a Parquet file may use for each contract type (as the dbt
# registration macro accepts them). "NULL" is a column with no value at all.
PARQUET_TYPES: dict[str, tuple[str, ...]] = {
    "id": ("VARCHAR",),
    "string": ("VARCHAR",),
    "enum": ("VARCHAR",),
    "timestamp": (
        "TIMESTAMP",
        "TIMESTAMP WITH TIME ZONE",
        "TIMESTAMP_NS",
        "TIMESTAMP_MS",
        "TIMESTAMP_S",
        "VARCHAR",
    ),
    "boolean": ("BOOLEAN",),
    "integer": (
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "HUGEINT",
    ),
    "float": (
        "FLOAT",
        "DOUBLE",
        "DECIMAL",
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
    ),
    "string_list": ("VARCHAR[]",),
}
NULL_TYPES = ('"NULL"', "NULL")


# --- names of the derived columns (the suites validate these) -----------------

SOURCE = "_source"  # "<table>/dt=<day>/<file>:<line>": where a row came from
FILE_ERROR = "_file_error"
PARSE_ERROR = "_json_parse_error"
PARTITION_ERROR = "_partition_error"
PARQUET_TYPE_ERROR = "_parquet_type_error"
MISSING_REQUIRED = "_missing_required"  # "col1,col2": required columns absent or null
IS_PARSEABLE = "_is_parseable"
DUPLICATE_OF = "_duplicate_of"
CONFLICTING_KEY = "_conflicting_key"
LINEAGE_SOURCE_KNOWN = "_lineage_source_known"
LINEAGE_CONSUMED_IN_RETURNED = "_lineage_consumed_in_returned"
LINEAGE_PLACEMENT_RESOLVABLE = "_lineage_placement_resolvable"
LINEAGE_COVERAGE = "_lineage_coverage"
LINEAGE_COLUMNS = (
    LINEAGE_SOURCE_KNOWN,
    LINEAGE_CONSUMED_IN_RETURNED,
    LINEAGE_PLACEMENT_RESOLVABLE,
    LINEAGE_COVERAGE,
)
LINEAGE_PROMPT_KNOWN = "_lineage_prompt_known"  # on retrievals: prompt_id names a prompt

# The built warehouse's clean rows the lineage lookups also read (retention may
# have removed old raw files that the warehouse still holds).
WAREHOUSE_ALIAS = "lara_warehouse"
WAREHOUSE_LOOKUPS = {
    "prompts": "select prompt_id from {db}.staging.stg_lara__prompts",
    "retrievals": (
        "select retrieval_id, cast(returned_asset_ids as varchar[]) as returned "
        "from {db}.staging.stg_lara__retrievals"
    ),
    "placements": (
        "select consumed_asset_id as asset_id, document_id, acted_at "
        "from {db}.staging.stg_lara__actions where action_type = 'place'"
    ),
}


def value_column(column: str) -> str:
    """The numeric value of a number column (NULL when the text is not a number)."""
    return f"{column}__value"


def issue_column(column: str, check: str) -> str:
    """Text of an invalid value (NULL when the value is fine or absent)."""
    return f"{column}__{check}"


def window_column(column: str) -> str:
    """True when a timestamp lies in its partition's window (NULL when not a timestamp)."""
    return f"{column}__in_window"


# --- discovery ------------------------------------------------------------------


@dataclass(frozen=True)
class RawFile:
    table: str
    path: Path
    relative: str
    partition: str
    fmt: str  # 'parquet' | 'jsonl'

    @property
    def day(self) -> dt.date | None:
        return parse_day(self.partition)


@dataclass
class Discovery:
    root: Path
    files: dict[str, list[RawFile]] = field(default_factory=dict)
    unsupported: list[str] = field(default_factory=list)
    # Files under a table folder but not directly in a dt= folder (never read).
    outside_layout: list[str] = field(default_factory=list)

    def days(self, table: str | None = None) -> list[dt.date]:
        """Valid dt= days with files (of one table, or of any)."""
        groups = [self.files.get(table, [])] if table else list(self.files.values())
        return sorted({f.day for files in groups for f in files if f.day is not None})

    def invalid_partitions(self) -> list[str]:
        found = {f.partition for files in self.files.values() for f in files if f.day is None}
        return sorted(found)


def parse_day(value: str) -> dt.date | None:
    if not ISO_DAY.match(value):
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def discover(root: Path, tables: dict[str, Table]) -> Discovery:
    """Every data file of every contract table under `root` (sorted), and the
    files under a table folder that are not where data files go."""
    found = Discovery(root=root)
    for name in tables:
        files: list[RawFile] = []
        table_dir = root / name
        every = sorted(p for p in table_dir.rglob("*") if p.is_file()) if table_dir.is_dir() else []
        for path in every:
            parts = path.relative_to(table_dir).parts
            if any(part.startswith(("_", ".")) for part in parts):
                continue  # _SUCCESS, .crc, _temporary/ and the like are not data
            relative = path.relative_to(root).as_posix()
            match = PARTITION_PATTERN.match(parts[0]) if len(parts) == 2 else None
            if match is None:
                found.outside_layout.append(relative)
                continue
            value = match.group(1)
            base = path.name
            if base.endswith(".parquet"):
                files.append(RawFile(name, path, relative, value, "parquet"))
            elif base.endswith((".jsonl", ".jsonl.gz")):
                files.append(RawFile(name, path, relative, value, "jsonl"))
            else:
                found.unsupported.append(relative)
        found.files[name] = files
    return found


# --- SQL helpers ----------------------------------------------------------------


def lit(value: object) -> str:
    """A SQL literal."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _parsed_timestamp(expr: str) -> str:
    return f"timezone('UTC', try_cast({expr} as timestamptz))"


def _parsed_list(expr: str) -> str:
    return (
        f"case when json_valid({expr}) and json_type({expr}) = 'ARRAY' "
        f"then try(from_json({expr}, '[\"VARCHAR\"]')) end"
    )


def _list_is_valid(expr: str) -> str:
    """A JSON array of non-blank strings (assumes `expr` is not null)."""
    return (
        f"(case when json_valid({expr}) and json_type({expr}) = 'ARRAY' then "
        f"coalesce(list_bool_and(list_transform(json_type({expr}, '$[*]'), "
        f"lambda t: t = 'VARCHAR')), true) "
        f"and not coalesce(list_bool_or(list_transform({_parsed_list(expr)}, "
        f"lambda e: coalesce(trim(e), '') = '')), false) "
        f"else false end)"
    )


def _typed(column: Column) -> str:
    """The normalised typed value (what staging compares), as SQL."""
    c = ident(column.name)
    kind = column.lara_type
    if kind in ("id", "string"):
        return c
    if kind == "enum":
        return f"lower(trim({c}))"
    if kind == "timestamp":
        return _parsed_timestamp(c)
    if kind == "boolean":
        return f"try_cast(lower(trim({c})) as boolean)"
    if kind in ("integer", "float"):
        return f"try_cast({c} as double)"
    if kind == "string_list":
        return _parsed_list(c)
    raise ValueError(f"lara gate: unknown lara_type '{kind}' on column {column.name}")


def _required_when_sql(column: Column) -> str:
    """The rows on which a conditionally required column is required (contract
    `required_when`, e.g. counterfactual outcomes when counterfactual_status is
    ok), compared as staging does: enum values trimmed and lower-cased."""
    terms = []
    for other, values in column.required_when:
        listed = ", ".join(lit(v) for v in values)
        terms.append(f"coalesce(lower(trim(cast({ident(other)} as varchar))) in ({listed}), false)")
    return " and ".join(terms)


def _invalid_condition(column: Column) -> str | None:
    """SQL condition: the (non-null) text is not a value of the column's type."""
    c = ident(column.name)
    kind = column.lara_type
    if kind == "timestamp":
        return f"{c} is not null and {_parsed_timestamp(c)} is null"
    if kind == "boolean":
        return f"{c} is not null and try_cast(lower(trim({c})) as boolean) is null"
    number = f"try_cast({c} as double)"
    if kind == "integer":
        return (
            f"{c} is not null and ({number} is null or not isfinite({number}) "
            f"or {number} <> floor({number}))"
        )
    if kind == "float":
        return f"{c} is not null and ({number} is null or not isfinite({number}))"
    if kind == "string_list":
        return f"{c} is not null and not {_list_is_valid(c)}"
    return None


def invalid_check_name(column: Column) -> str | None:
    return {
        "timestamp": "invalid_timestamp",
        "boolean": "invalid_type",
        "integer": "invalid_type",
        "float": "invalid_type",
        "string_list": "invalid_list",
    }.get(column.lara_type)


def batch_columns(table: Table) -> list[str]:
    """The columns of a table-day batch, in order."""
    columns = [SOURCE, IS_PARSEABLE, FILE_ERROR, PARSE_ERROR, PARTITION_ERROR, PARQUET_TYPE_ERROR]
    columns.append(MISSING_REQUIRED)
    for column in table.columns:
        columns.append(column.name)
        if column.lara_type in ("integer", "float"):
            columns.append(value_column(column.name))
        check = invalid_check_name(column)
        if check is not None:
            columns.append(issue_column(column.name, check))
        if column.lara_type == "timestamp":
            columns.append(window_column(column.name))
    columns += [DUPLICATE_OF]
    if table.key:
        columns.append(CONFLICTING_KEY)
    if table.name == "actions":
        columns += list(LINEAGE_COLUMNS)
    if table.name == "retrievals":
        columns.append(LINEAGE_PROMPT_KNOWN)
    return columns


# --- the store ------------------------------------------------------------------


@dataclass
class LoadReport:
    table: str
    files: int = 0
    unreadable: list[str] = field(default_factory=list)


class RawStore:
    """A temporary DuckDB database holding the raw rows of every contract table.

    `warehouse`: a built DuckDB warehouse whose clean staging rows the lineage
    lookups read as well (attached read-only; skipped, with a note in
    `warehouse_note`, when it cannot be opened, e.g. while a build writes it).
    """

    def __init__(
        self,
        discovery: Discovery,
        tables: dict[str, Table],
        config: GateConfig,
        workdir: Path | None = None,
        warehouse: Path | None = None,
    ) -> None:
        self.discovery = discovery
        self.tables = tables
        self.config = config
        self.warehouse = warehouse
        self.warehouse_lookups: list[str] = []
        self.warehouse_note: str | None = None
        self._tmp = tempfile.TemporaryDirectory(prefix="lara_gate_", dir=workdir)
        tmp = Path(self._tmp.name)
        self._links = tmp / "files"
        self._links.mkdir()
        self.con = duckdb.connect(str(tmp / "gate.duckdb"))
        self.con.execute("set TimeZone = 'UTC'")
        self.con.execute(f"set memory_limit = {lit(config.memory_limit)}")
        self.con.execute(f"set threads = {int(config.threads)}")
        self.con.execute(f"set temp_directory = {lit(str(tmp / 'spill'))}")
        self.con.execute("set preserve_insertion_order = true")
        self.reports: dict[str, LoadReport] = {}
        self._file_ids: dict[str, int] = {}

    def close(self) -> None:
        self.con.close()
        self._tmp.cleanup()

    def __enter__(self) -> RawStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- loading -------------------------------------------------------------------

    def load(self) -> None:
        for name, table in self.tables.items():
            self._create_raw_table(table)
            report = LoadReport(name)
            for raw_file in self.discovery.files.get(name, []):
                self._load_file(table, raw_file, report)
            self.reports[name] = report
            self._create_batch_view(table)
        for table in self.tables.values():
            self._create_duplicates(table)
        warehouse = self._warehouse_lookups()
        if "retrievals" in self.tables:
            self._create_prompt_lineage(warehouse)
        if "actions" in self.tables:
            self._create_lineage(warehouse)

    def _warehouse_lookups(self) -> dict[str, str]:
        """SQL of the lookups the warehouse can serve ({} without a usable warehouse)."""
        if self.warehouse is None:
            return {}
        if not Path(self.warehouse).is_file():
            self.warehouse_note = f"no warehouse at {self.warehouse}: raw files only"
            return {}
        try:
            self.con.execute(f"attach {lit(str(self.warehouse))} as {WAREHOUSE_ALIAS} (read_only)")
        except duckdb.Error as error:
            first = str(error).splitlines()[0][:300]
            self.warehouse_note = f"cannot open {self.warehouse} ({first}): raw files only"
            return {}
        usable, missing = {}, []
        for name, template in WAREHOUSE_LOOKUPS.items():
            sql = template.format(db=WAREHOUSE_ALIAS)
            try:
                self.con.execute(f"describe {sql}")
            except duckdb.Error:
                missing.append(name)
                continue
            usable[name] = sql
        if missing:
            self.warehouse_note = (
                f"{self.warehouse} has no staging rows for {', '.join(missing)} (not built?)"
            )
        self.warehouse_lookups = sorted(usable)
        return usable

    def _create_raw_table(self, table: Table) -> None:
        columns = ", ".join(f"{ident(c.name)} varchar" for c in table.columns)
        self.con.execute(
            f"create or replace table {ident('raw_' + table.name)} ("
            "_file_id integer, _source_file varchar, _source_line bigint, "
            "_source_format varchar, _partition_value varchar, "
            f"{PARTITION_ERROR} varchar, {PARQUET_TYPE_ERROR} varchar, "
            f"{FILE_ERROR} varchar, {IS_PARSEABLE} boolean, {PARSE_ERROR} varchar, "
            f"{columns})"
        )

    def _file_constants(self, raw_file: RawFile) -> tuple[int, str]:
        file_id = self._file_ids.setdefault(raw_file.relative, len(self._file_ids) + 1)
        partition_error = None if raw_file.day is not None else f"dt={raw_file.partition}"
        return file_id, lit(partition_error)

    def _readable_path(self, raw_file: RawFile) -> Path:
        """The file under a safe name: DuckDB treats `*`, `?` and `[...]` in a path as a glob,
        so a hostile file name could read other files (or none). A symbolic link named
        by the file's id (a copy where links are not possible) is read instead; the
        rows keep the real name in `_source`."""
        file_id = self._file_ids.setdefault(raw_file.relative, len(self._file_ids) + 1)
        name = raw_file.path.name
        suffix = (
            ".parquet"
            if raw_file.fmt == "parquet"
            else (".jsonl.gz" if name.endswith(".gz") else ".jsonl")
        )
        link = self._links / f"{file_id}{suffix}"
        if not link.exists():
            try:
                link.symlink_to(raw_file.path.resolve())
            except OSError:
                shutil.copyfile(raw_file.path, link)
        return link

    def _load_file(self, table: Table, raw_file: RawFile, report: LoadReport) -> None:
        report.files += 1
        try:
            if raw_file.fmt == "parquet":
                sql = self._parquet_insert(table, raw_file)
            else:
                sql = self._json_insert(table, raw_file)
            self.con.execute(sql)
        except duckdb.Error as error:
            report.unreadable.append(raw_file.relative)
            self._insert_unreadable(table, raw_file, error)

    def _insert_unreadable(self, table: Table, raw_file: RawFile, error: Exception) -> None:
        file_id, partition_error = self._file_constants(raw_file)
        # DuckDB names the link it read: name the file as delivered instead.
        text = str(error).replace(str(self._readable_path(raw_file)), raw_file.relative)
        message = f"cannot read {raw_file.fmt} file: {text.splitlines()[0][:300]}"
        nulls = ", ".join("null" for _ in table.columns)
        self.con.execute(
            f"insert into {ident('raw_' + table.name)} values ("
            f"{file_id}, {lit(raw_file.relative)}, 0, {lit(raw_file.fmt)}, "
            f"{lit(raw_file.partition)}, {partition_error}, null, {lit(message)}, "
            f"false, null, {nulls})"
        )

    def _parquet_insert(self, table: Table, raw_file: RawFile) -> str:
        path = lit(str(self._readable_path(raw_file)))
        schema = dict(
            self.con.execute(
                f"select column_name, column_type from "
                f"(describe select * from read_parquet({path}))"
            ).fetchall()
        )
        problems = []
        for column in table.columns:
            actual = schema.get(column.name)
            if actual is None:
                continue
            base = actual.split("(")[0].upper()
            if base in NULL_TYPES or base in PARQUET_TYPES[column.lara_type]:
                continue
            problems.append(f"{column.name}: {actual} (contract: {column.lara_type})")
        file_id, partition_error = self._file_constants(raw_file)
        selects = []
        for column in table.columns:
            actual = schema.get(column.name)
            if actual is None:
                selects.append(f"cast(null as varchar) as {ident(column.name)}")
            elif actual.endswith("[]"):
                selects.append(f"cast(to_json({ident(column.name)}) as varchar)")
            else:
                selects.append(f"cast({ident(column.name)} as varchar)")
        type_error = lit("; ".join(problems) if problems else None)
        return (
            f"insert into {ident('raw_' + table.name)} select "
            f"{file_id}, {lit(raw_file.relative)}, file_row_number + 1, 'parquet', "
            f"{lit(raw_file.partition)}, {partition_error}, {type_error}, null, true, null, "
            + ", ".join(selects)
            + f" from read_parquet({path}, file_row_number = true)"
        )

    def _json_insert(self, table: Table, raw_file: RawFile) -> str:
        path = lit(str(self._readable_path(raw_file)))
        file_id, partition_error = self._file_constants(raw_file)
        selects = []
        for column in table.columns:
            json_path = lit('$."' + column.name + '"')
            if column.lara_type == "string_list":
                selects.append(
                    f"nullif(cast(json_extract(_object, {json_path}) as varchar), 'null')"
                )
            else:
                selects.append(f"json_extract_string(_object, {json_path})")
        return (
            f"insert into {ident('raw_' + table.name)} select "
            f"{file_id}, {lit(raw_file.relative)}, _line_number, 'jsonl', "
            f"{lit(raw_file.partition)}, {partition_error}, null, null, _ok, "
            "case when not _ok then left(_line, 300) end, "
            + ", ".join(selects)
            + " from (select *, case when _ok then _line else '{}' end as _object from ("
            "select line as _line, row_number() over () as _line_number, "
            "case when json_valid(line) then json_type(line) = 'OBJECT' else false end as _ok "
            f"from read_csv({path}, columns = {{'line': 'VARCHAR'}}, delim = chr(31), "
            "quote = '', escape = '', header = false, auto_detect = false, "
            "filename = false, strict_mode = false, parallel = false))) "
            "where trim(coalesce(_line, '')) <> ''"
        )

    # -- derived columns -------------------------------------------------------------

    def _row_is_valid(self, table: Table) -> str:
        """Rows that pass every row check: the scope of duplicate detection (as in staging)."""
        conditions = [
            IS_PARSEABLE,
            f"{PARTITION_ERROR} is null",
        ]
        for column in table.columns:
            c = ident(column.name)
            if column.required:
                conditions.append(f"{c} is not null")
            if column.required_when:
                conditions.append(f"not ({c} is null and {_required_when_sql(column)})")
            if column.lara_type == "id":
                conditions.append(f"coalesce(trim({c}), 'x') <> ''")
            invalid = _invalid_condition(column)
            if invalid is not None:
                conditions.append(f"not coalesce({invalid}, false)")
            if column.values:
                values = ", ".join(lit(v) for v in column.values)
                conditions.append(f"coalesce(lower(trim({c})) in ({values}), true)")
            bounds = []
            if column.min is not None:
                bounds.append(f"try_cast({c} as double) >= {float(column.min)!r}")
            if column.max is not None:
                bounds.append(f"try_cast({c} as double) <= {float(column.max)!r}")
            if bounds:
                conditions.append(f"coalesce({' and '.join(bounds)}, true)")
        return " and ".join(f"({condition})" for condition in conditions)

    def _create_batch_view(self, table: Table) -> None:
        selects = [
            "_file_id",
            "_source_line",
            "_source_file",
            "_partition_value",
            "_source_file || ':' || _source_line as " + SOURCE,
            IS_PARSEABLE,
            FILE_ERROR,
            PARSE_ERROR,
            PARTITION_ERROR,
            PARQUET_TYPE_ERROR,
        ]
        # One text column naming the required columns a row lacks ('' when none):
        # null on a line that does not parse, which json_parse reports alone, so
        # that `mostly` counts over the parseable rows.
        required = [
            f"case when {ident(c.name)} is null then {lit(c.name)} end"
            for c in table.columns
            if c.required
        ] + [
            f"case when {ident(c.name)} is null and {_required_when_sql(c)} then {lit(c.name)} end"
            for c in table.columns
            if c.required_when
        ]
        missing = f"concat_ws(',', {', '.join(required)})" if required else "''"
        selects.append(f"case when {IS_PARSEABLE} then {missing} end as {MISSING_REQUIRED}")
        day = "try_cast(_partition_value as date)"
        before, after = self.config.window(table.name)
        hashed = []
        for column in table.columns:
            c = ident(column.name)
            if column.lara_type == "enum":
                selects.append(f"lower(trim({c})) as {c}")
            else:
                selects.append(c)
            if column.lara_type in ("integer", "float"):
                selects.append(f"try_cast({c} as double) as {ident(value_column(column.name))}")
            invalid = _invalid_condition(column)
            check = invalid_check_name(column)
            if invalid is not None and check is not None:
                selects.append(
                    f"case when {invalid} then {c} end as {ident(issue_column(column.name, check))}"
                )
            if column.lara_type == "timestamp":
                parsed = _parsed_timestamp(c)
                selects.append(f"{parsed} as {ident(column.name + '__parsed')}")
                selects.append(
                    f"case when {parsed} is null or {day} is null then null else "
                    f"{parsed} >= cast({day} - interval {before} day as timestamp) and "
                    f"{parsed} < cast({day} + interval {after + 1} day as timestamp) end "
                    f"as {ident(window_column(column.name))}"
                )
            hashed.append(f"coalesce(cast({_typed(column)} as varchar), {c}, chr(0))")
        selects.append(f"md5(concat_ws(chr(31), {', '.join(hashed)})) as _row_hash")
        if table.key:
            # Typed, normalised values, as staging compares them: the same key
            # delivered as Parquet and as JSON (timestamps rendered differently,
            # other UTC offsets) is one key.
            key = [
                f"coalesce(cast({_typed(table.column(k))} as varchar), {ident(k)}, chr(0))"
                for k in table.key
            ]
            selects.append(f"md5(concat_ws(chr(31), {', '.join(key)})) as _key_hash")
            complete = " and ".join(f"{ident(k)} is not null" for k in table.key)
            selects.append(f"({complete}) as _key_complete")
        selects.append(f"({self._row_is_valid(table)}) as _row_is_valid")
        self.con.execute(
            f"create or replace view {ident('batch_' + table.name)} as select "
            + ", ".join(selects)
            + f" from {ident('raw_' + table.name)}"
        )

    def _create_duplicates(self, table: Table) -> None:
        """Exact re-deliveries and conflicting versions of a key, over every partition."""
        batch = ident("batch_" + table.name)
        order = "order by _partition_value, _source_file, _source_line"
        if table.key:
            versions = (
                "versions as (select _key_hash, count(distinct _row_hash) as n_versions "
                "from valid where _key_complete group by _key_hash "
                "having count(distinct _row_hash) > 1), "
            )
            conflict_join = "left join versions using (_key_hash)"
            conflict = (
                "case when versions.n_versions is not null then versions.n_versions "
                f"|| ' versions of {','.join(table.key)}' end"
            )
        else:
            versions, conflict_join, conflict = "", "", "cast(null as varchar)"
        self.con.execute(
            f"create or replace table {ident('dups_' + table.name)} as "
            f"with valid as (select * from {batch} where _row_is_valid), "
            "ranked as (select _file_id, _source_line, "
            + ("_key_hash, " if table.key else "")
            + f"row_number() over (partition by _row_hash {order}) as _delivery, "
            f"first_value({SOURCE}) over (partition by _row_hash {order}) as _first_source "
            "from valid), " + versions + "flagged as (select _file_id, _source_line, "
            f"case when _delivery > 1 then _first_source end as {DUPLICATE_OF}, "
            f"{conflict} as {CONFLICTING_KEY} from ranked {conflict_join}) "
            f"select * from flagged where {DUPLICATE_OF} is not null "
            f"or {CONFLICTING_KEY} is not null"
        )

    def _create_prompt_lineage(self, warehouse: dict[str, str]) -> None:
        """Does each retrieval's prompt_id name a prompt (any partition, or the warehouse)?"""
        sources = []
        if "prompts" in self.tables:
            sources.append(
                "select prompt_id from batch_prompts "
                "where _is_parseable and nullif(trim(prompt_id), '') is not null"
            )
        if "prompts" in warehouse:
            sources.append(warehouse["prompts"])
        if not sources:
            sources.append("select cast(null as varchar) as prompt_id where false")
        self.con.execute(
            "create or replace table lookup_prompts as select distinct prompt_id from ("
            + " union all ".join(sources)
            + ")"
        )
        self.con.execute(
            f"""
            create or replace table lineage_retrievals as
            select
                batch_retrievals._file_id,
                batch_retrievals._source_line,
                case when nullif(trim(batch_retrievals.prompt_id), '') is not null
                    then lookup_prompts.prompt_id is not null end as {LINEAGE_PROMPT_KNOWN}
            from batch_retrievals
            left join lookup_prompts
                on lookup_prompts.prompt_id = batch_retrievals.prompt_id
            where batch_retrievals._row_is_valid
            """
        )

    def _create_lineage(self, warehouse: dict[str, str]) -> None:
        """Lineage lookups of every action into every partition of retrievals / actions.

        The lookups read every raw partition and, when given, the warehouse's
        clean staging rows: a row is checked against everything known, not
        against its own day.
        """
        sources = []
        if "retrievals" in self.tables:
            sources.append(
                "select retrieval_id, "
                + _parsed_list("returned_asset_ids")
                + " as returned from batch_retrievals "
                "where _is_parseable and nullif(trim(retrieval_id), '') is not null"
            )
        if "retrievals" in warehouse:
            sources.append(warehouse["retrievals"])
        if not sources:
            sources.append(
                "select cast(null as varchar) as retrieval_id, cast([] as varchar[]) as returned "
                "where false"
            )
        self.con.execute(
            "create or replace table lookup_retrievals as " + " union all ".join(sources)
        )
        placements = f" union all {warehouse['placements']}" if "placements" in warehouse else ""
        self.con.execute(
            f"""
            create or replace table lineage_actions as
            with actions as (
                select
                    _file_id,
                    _source_line,
                    nullif(trim(source_retrieval_id), '') as source_id,
                    nullif(trim(consumed_asset_id), '') as asset_id,
                    nullif(trim(document_id), '') as document_id,
                    ts__parsed as acted_at,
                    action_type,
                    _row_is_valid
                from batch_actions
                where _is_parseable
            ),
            checked as (
                select * from actions where _row_is_valid
            ),
            membership as (
                select
                    checked._file_id,
                    checked._source_line,
                    bool_or(coalesce(list_contains(lookup_retrievals.returned,
                        checked.asset_id), false)) as is_returned
                from checked
                inner join lookup_retrievals
                    on lookup_retrievals.retrieval_id = checked.source_id
                group by checked._file_id, checked._source_line
            ),
            placements as (
                select asset_id, document_id, min(acted_at) as first_placed_at
                from (
                    select asset_id, document_id, acted_at from actions
                    where action_type = 'place'{placements}
                )
                where asset_id is not null
                    and document_id is not null and acted_at is not null
                group by asset_id, document_id
            )
            select
                checked._file_id,
                checked._source_line,
                case when checked.source_id is not null
                    then membership._file_id is not null end as {LINEAGE_SOURCE_KNOWN},
                case when checked.source_id is not null and checked.asset_id is not null
                    and membership._file_id is not null
                    then membership.is_returned end as {LINEAGE_CONSUMED_IN_RETURNED},
                case when checked.source_id is null and checked.asset_id is not null
                    and checked.document_id is not null and checked.acted_at is not null
                    and coalesce(checked.action_type, '') <> 'place'
                    then coalesce(placements.first_placed_at <= checked.acted_at, false)
                    end as {LINEAGE_PLACEMENT_RESOLVABLE},
                case
                    when checked.asset_id is null then null
                    else checked.source_id is not null
                        or (checked.document_id is not null
                            and coalesce(checked.action_type, '') <> 'place')
                end as {LINEAGE_COVERAGE}
            from checked
            left join membership
                on membership._file_id = checked._file_id
                and membership._source_line = checked._source_line
            left join placements
                on placements.asset_id = checked.asset_id
                and placements.document_id = checked.document_id
            """
        )

    # -- reading -----------------------------------------------------------------

    def partitions(self, table: str) -> list[str]:
        rows = self.con.execute(
            f"select distinct _partition_value from {ident('raw_' + table)} order by 1"
        ).fetchall()
        return [row[0] for row in rows]

    def batch(self, table: Table, partition: str) -> pd.DataFrame:
        """One table-day as a pandas frame (the only thing pandas ever holds)."""
        columns = batch_columns(table)
        joins = f" left join {ident('dups_' + table.name)} using (_file_id, _source_line)"
        if table.name == "actions":
            joins += " left join lineage_actions using (_file_id, _source_line)"
        if table.name == "retrievals":
            joins += " left join lineage_retrievals using (_file_id, _source_line)"
        select = ", ".join(ident(c) for c in columns)
        return self.con.execute(
            f"select {select} from {ident('batch_' + table.name)}{joins} "
            "where _partition_value = ? order by _source_file, _source_line",
            [partition],
        ).df()

    def coverage(self) -> list[dict[str, object]]:
        """Lineage coverage of actions per partition (reported for every day)."""
        rows = self.con.execute(
            f"""
            select
                batch_actions._partition_value as partition,
                count(*) as actions,
                count(nullif(trim(batch_actions.consumed_asset_id), '')) as asset_actions,
                count(nullif(trim(batch_actions.source_retrieval_id), ''))
                    as with_source_retrieval_id,
                count(lineage_actions.{LINEAGE_PLACEMENT_RESOLVABLE}) as needing_placement,
                count(case when lineage_actions.{LINEAGE_COVERAGE} then 1 end)
                    as asset_actions_with_lineage,
                avg(case when lineage_actions.{LINEAGE_COVERAGE} then 1.0
                    when lineage_actions.{LINEAGE_COVERAGE} is not null then 0.0 end)
                    as lineage_coverage,
                avg(case when lineage_actions.{LINEAGE_SOURCE_KNOWN} then 1.0
                    when lineage_actions.{LINEAGE_SOURCE_KNOWN} is not null then 0.0 end)
                    as source_known_share,
                avg(case when lineage_actions.{LINEAGE_CONSUMED_IN_RETURNED} then 1.0
                    when lineage_actions.{LINEAGE_CONSUMED_IN_RETURNED} is not null then 0.0 end)
                    as consumed_in_returned_share,
                avg(case when lineage_actions.{LINEAGE_PLACEMENT_RESOLVABLE} then 1.0
                    when lineage_actions.{LINEAGE_PLACEMENT_RESOLVABLE} is not null
                    then 0.0 end) as placement_resolvable_share
            from batch_actions
            left join lineage_actions using (_file_id, _source_line)
            where batch_actions._row_is_valid
            group by 1
            order by 1
            """
        ).fetchall()
        names = [d[0] for d in self.con.description]
        return [dict(zip(names, row, strict=True)) for row in rows]
