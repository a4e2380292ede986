"""Run the gate: read partitions, validate each table-day with GX, write the results."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from lara.contract import Table, load_contract
from lara.gate import reader, safe
from lara.gate.config import LINEAGE_FAULT_CHECKS, GateConfig, load_config
from lara.gate.suites import build_suite, check_ref

VERDICTS = {0: "passed", 1: "warnings", 2: "failed"}
FAILING_COLUMNS = ["partition", "table", "check", "severity", "row_key", "source", "value"]
RESULT_LISTS = (
    "unexpected_list",
    "unexpected_index_list",
    "partial_unexpected_list",
    "partial_unexpected_index_list",
    "partial_unexpected_counts",
)


class GateError(RuntimeError):
    """The gate could not run (nothing to read, bad configuration)."""


@dataclass
class CheckResult:
    """One expectation on one table-day (or one gate-level finding)."""

    partition: str
    table: str
    check: str
    column: str | None
    name: str
    severity: str
    success: bool
    expectation_type: str | None = None
    element_count: int | None = None
    missing_count: int | None = None
    unexpected_count: int | None = None
    unexpected_percent: float | None = None
    observed_value: Any = None
    mostly: float | None = None
    sample: list[dict[str, Any]] = field(default_factory=list)
    exception: str | None = None
    # A lineage fault below its `mostly` threshold: GX passed it, the gate warns.
    below_threshold: bool = False


@dataclass
class GateResult:
    verdict: str  # 'passed' | 'warnings' | 'failed'
    exit_code: int  # 0 | 1 | 2
    out_dir: Path
    results_path: Path
    failing_ids_path: Path
    data_docs_index: Path | None
    partitions: list[str]
    checks: list[CheckResult]
    coverage: list[dict[str, Any]]

    @property
    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.success]

    def failed_checks(self, table: str | None = None) -> set[str]:
        """Names of the failed checks (e.g. `invalid_enum:surface`), optionally of one table."""
        return {c.name for c in self.failures if table is None or c.table == table}


# --- GX plumbing ---------------------------------------------------------------------


class _GxRunner:
    """One ephemeral GX context per gate run: suites, one pandas asset per table."""

    def __init__(self, tables: dict[str, Table], config: GateConfig, docs_dir: Path | None):
        import great_expectations as gx
        from great_expectations.data_context.types.base import ProgressBarsConfig

        self.gx = gx
        self.context = gx.get_context(mode="ephemeral")
        self.context.variables.progress_bars = ProgressBarsConfig(globally=False)
        for site in list((self.context.variables.data_docs_sites or {}).keys()):
            self.context.delete_data_docs_site(site)
        self.docs_dir = docs_dir
        if docs_dir is not None:
            self.context.add_data_docs_site(
                "lara_gate",
                {
                    "class_name": "SiteBuilder",
                    "store_backend": {
                        "class_name": "TupleFilesystemStoreBackend",
                        "base_directory": str(docs_dir),
                    },
                    "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
                },
            )
        source = self.context.data_sources.add_pandas("lara_raw")
        self.definitions = {}
        for name, table in tables.items():
            suite = self.context.suites.add(build_suite(table, config))
            asset = source.add_dataframe_asset(name)
            batch = asset.add_batch_definition_whole_dataframe(f"{name}_partition")
            self.definitions[name] = self.context.validation_definitions.add(
                gx.ValidationDefinition(name=f"lara_{name}", data=batch, suite=suite)
            )
        self.store = self.context.validation_results_store
        self._keys: set[Any] = set(self.store.list_keys())

    def validate(self, table: str, frame: pd.DataFrame, index_columns: list[str], run_id: Any):
        result_format = {
            "result_format": "COMPLETE",
            "unexpected_index_column_names": index_columns,
            "return_unexpected_index_query": False,
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = self.definitions[table].run(
                batch_parameters={"dataframe": frame},
                result_format=result_format,
                run_id=run_id,
            )
        keys = set(self.store.list_keys())
        new_keys = keys - self._keys
        self._keys = keys
        return results, next(iter(new_keys), None)

    def restore(self, key: Any, results: Any) -> None:
        """Put the trimmed results back (the Data Docs render from the store)."""
        if key is not None:
            self.store.set(key, results)

    def build_docs(self) -> Path | None:
        if self.docs_dir is None:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.context.build_data_docs(site_names=["lara_gate"])
        return self.docs_dir / "index.html"


# --- results ------------------------------------------------------------------------


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and value != value:  # NaN
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if hasattr(value, "item"):  # numpy scalars
        return _json_safe(value.item())
    if isinstance(value, dt.datetime | dt.date | pd.Timestamp):
        return value.isoformat()
    if value is pd.NA or value is pd.NaT:
        return None
    return str(value)


def _exception_text(info: Any) -> str | None:
    if not info:
        return None
    if isinstance(info, dict) and "raised_exception" in info:
        if info.get("raised_exception"):
            return str(info.get("exception_message"))
        return None
    if isinstance(info, dict):
        messages = [_exception_text(v) for v in info.values()]
        found = [m for m in messages if m]
        return "; ".join(found) if found else None
    return None


class _FailingIds:
    """failing_ids.csv, appended batch by batch (memory stays bounded)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows = 0
        pd.DataFrame(columns=FAILING_COLUMNS).to_csv(path, index=False)

    def write(self, frame: pd.DataFrame) -> None:
        frame[FAILING_COLUMNS].to_csv(self.path, mode="a", header=False, index=False)
        self.rows += len(frame)

    def add_unsupported(self, check: CheckResult) -> None:
        self.write(
            pd.DataFrame(
                {
                    "partition": [check.partition],
                    "table": [check.table],
                    "check": [check.name],
                    "severity": [check.severity],
                    "row_key": [""],
                    "source": [check.sample[0][reader.SOURCE]],
                    "value": [check.exception],
                }
            )
        )


def _failing_rows(
    partition: str,
    table: str,
    ref: Any,
    key: tuple[str, ...],
    index_list: list[dict[str, Any]],
    result: dict[str, Any],
) -> pd.DataFrame:
    """Every failing row of one check: its key, where it came from, the offending value."""
    frame = pd.DataFrame(index_list)
    row_key = pd.Series("", index=frame.index)
    for position, column in enumerate(k for k in key if k in frame.columns):
        text = frame[column].astype("string").fillna("<null>")
        row_key = text if position == 0 else row_key.str.cat(text, sep="|")
    values = result.get("unexpected_list")
    value = (
        pd.Series(values).astype("string").str.slice(0, 200)
        if isinstance(values, list) and len(values) == len(frame)
        else pd.Series(pd.NA, index=frame.index, dtype="string")
    )
    return pd.DataFrame(
        {
            "partition": partition,
            "table": table,
            "check": ref.name,
            "severity": ref.severity,
            "row_key": row_key,
            "source": frame[reader.SOURCE] if reader.SOURCE in frame else "",
            "value": value,
        }
    )


def _check_results(
    partition: str,
    table: str,
    key: tuple[str, ...],
    results: Any,
    config: GateConfig,
    failing: _FailingIds,
) -> list[CheckResult]:
    """Summary rows of one validation; failing ids go to `failing`; lists get trimmed."""
    sample_size = config.sample_size
    rows = []
    for item in results.results:
        expectation = item.expectation_config
        ref = check_ref(expectation.meta)
        if ref is None:
            continue
        result = item.result or {}
        index_list = result.get("unexpected_index_list") or []
        success, severity = bool(item.success), ref.severity
        below = bool(
            success and ref.check in LINEAGE_FAULT_CHECKS and result.get("unexpected_count")
        )
        if below:
            # Every lineage fault is listed: under the threshold as a warning.
            success, severity = False, "warning"
            ref = replace(ref, severity=severity)
        if index_list and not success:
            failing.write(_failing_rows(partition, table, ref, key, index_list, result))
        rows.append(
            CheckResult(
                partition=partition,
                table=table,
                check=ref.check,
                column=ref.column,
                name=ref.name,
                severity=severity,
                success=success,
                expectation_type=expectation.type,
                element_count=result.get("element_count"),
                missing_count=result.get("missing_count"),
                unexpected_count=result.get("unexpected_count"),
                unexpected_percent=result.get("unexpected_percent"),
                observed_value=_json_safe(result.get("observed_value")),
                mostly=expectation.kwargs.get("mostly"),
                sample=[] if success else _json_safe(_sample(index_list, key, sample_size)),
                exception=_exception_text(item.exception_info),
                below_threshold=below,
            )
        )
        for name in RESULT_LISTS:
            if isinstance(result.get(name), list):
                result[name] = result[name][:sample_size]
    return rows


def _sample(index_list: list[dict[str, Any]], key: tuple[str, ...], size: int) -> list[dict]:
    """The first failing rows, as {key columns..., _source}."""
    wanted = [*key, reader.SOURCE]
    return [{k: row.get(k) for k in wanted if k in row} for row in index_list[:size]]


def _verdict(checks: list[CheckResult]) -> tuple[str, int]:
    failed = [c for c in checks if not c.success]
    if any(c.severity == "error" for c in failed):
        return VERDICTS[2], 2
    if failed:
        return VERDICTS[1], 1
    return VERDICTS[0], 0


def _select_partitions(
    discovery: reader.Discovery, day: dt.date | None, all_days: bool, anchor: str
) -> tuple[str, list[str]]:
    """Which dt= partitions to validate: (mode, partitions)."""
    days = discovery.days()
    invalid = discovery.invalid_partitions()
    if all_days and day is not None:
        raise GateError("lara gate: give either a day or all days, not both")
    if not days and not invalid:
        raise GateError(
            f"lara gate: no log files under {discovery.root} "
            "(expected <table>/dt=YYYY-MM-DD/*.parquet|*.jsonl|*.jsonl.gz)"
        )
    if all_days:
        mode, chosen = "all", [d.isoformat() for d in days]
    elif day is not None:
        if day not in days:
            raise GateError(
                f"lara gate: no log files for dt={day.isoformat()} under {discovery.root}"
            )
        mode, chosen = "day", [day.isoformat()]
    else:
        # The newest day of the logs: the newest day of the anchor table (later
        # partitions hold only late events, e.g. labels judged days later).
        newest = (discovery.days(anchor) or days)[-1:]
        mode, chosen = "newest", [d.isoformat() for d in newest]
    # Folders whose dt= is not a date belong to no day: every run reports them.
    return mode, chosen + invalid


def _unsupported_files(
    discovery: reader.Discovery, partitions: list[str], config: GateConfig
) -> list[CheckResult]:
    """Files in a selected dt= folder that are not data files (dbt would stop on them)."""
    found = []
    for relative in discovery.unsupported:
        table, folder = relative.split("/")[:2]
        partition = folder.removeprefix("dt=")
        settings = config.check("unsupported_file", table)
        if partition not in partitions or not settings.enabled:
            continue
        found.append(
            CheckResult(
                partition=partition,
                table=table,
                check="unsupported_file",
                column=None,
                name="unsupported_file",
                severity=settings.severity,
                success=False,
                unexpected_count=1,
                sample=[{reader.SOURCE: relative}],
                exception="not *.parquet, *.jsonl or *.jsonl.gz",
            )
        )
    return found


def _outside_layout_files(discovery: reader.Discovery, config: GateConfig) -> list[CheckResult]:
    """Files under a table folder but not directly in a dt= folder: the build
    skips them (lara_raw.raw_files, data_quality.dq_raw_files), so their rows
    are in no table. They belong to no day: every run reports them."""
    found = []
    for relative in discovery.outside_layout:
        table = relative.split("/")[0]
        settings = config.check("file_outside_partition_layout", table)
        if not settings.enabled:
            continue
        found.append(
            CheckResult(
                partition="outside_partition_layout",
                table=table,
                check="file_outside_partition_layout",
                column=None,
                name="file_outside_partition_layout",
                severity=settings.severity,
                success=False,
                unexpected_count=1,
                sample=[{reader.SOURCE: relative}],
                exception="not directly in a dt=YYYY-MM-DD folder: never read",
            )
        )
    return found


def _trace_derived(config: GateConfig, raw_path: Path) -> tuple[GateConfig, dict[str, Any] | None]:
    """The configuration for a folder written by `lara ingest` (its `_lara_ingest.json`).

    Traces cannot fill every required table every day (no user actions; a day may have no
    tool call or no retrieval): the manifest names those tables, and their `row_count`
    check is not applied, unless gx/lara_gate.yml sets `row_count` for the table itself.
    Returns the configuration and what was relaxed (None for other folders).
    """
    from lara.ingest.manifest import manifest_path, tables_without_daily_rows

    tables = tables_without_daily_rows(raw_path)
    if not tables:
        return config, None
    row_count = dict(config.checks.get("row_count") or {})
    overrides = dict(row_count.get("tables") or {})
    relaxed = {name: reason for name, reason in tables.items() if name not in overrides}
    for name in relaxed:
        overrides[name] = {"enabled": False}
    row_count["tables"] = overrides
    checks = {**config.checks, "row_count": row_count}
    return replace(config, checks=checks), {
        "manifest": str(manifest_path(raw_path)),
        "row_count_not_applied": relaxed,
        "row_count_kept_by_config": sorted(set(tables) - set(relaxed)),
    }


# --- the run ----------------------------------------------------------------------


def run_gate(
    raw_path: Path,
    out_dir: Path,
    day: dt.date | None = None,
    all_days: bool = False,
    config_path: Path | None = None,
    *,
    tables: Sequence[str] | None = None,
    data_docs: bool = True,
    log: Any = None,
    warehouse: Path | None = None,
) -> GateResult:
    """Validate the raw log files under `raw_path`; write results under `out_dir`.

    Runs on the newest `dt=` partition, on `day`, or on every partition
    (`all_days`). Writes `gate_results.json` (verdict, every check with its
    count and a sample of failing ids, lineage coverage per day),
    `failing_ids.csv` (every failing row of every failed check),
    `validations/<table>/<partition>.json` (GX results, lists trimmed to the
    configured sample) and the Data Docs under `data_docs/` (offline HTML).
    `tables` limits the validation to some contract tables (every table is
    still read: the lineage and duplicate checks look across tables and days).
    `warehouse`: a built DuckDB warehouse whose clean staging rows the lineage
    lookups read too (prompts, retrievals, placements), so that a row naming
    one whose raw file is gone still resolves; unusable -> raw files only, noted.
    """
    say = log or (lambda message: None)
    started = dt.datetime.now(dt.UTC)
    raw_path = Path(raw_path)
    out_dir = Path(out_dir)
    config, trace_tables = _trace_derived(load_config(config_path), raw_path)
    contract = load_contract()
    unknown = sorted(set(tables or []) - set(contract))
    if unknown:
        raise GateError(f"lara gate: unknown table(s) {', '.join(unknown)}")
    selected = [name for name in contract if not tables or name in tables]
    discovery = reader.discover(raw_path, contract)
    mode, partitions = _select_partitions(discovery, day, all_days, config.anchor_table)
    anchor_days = {d.isoformat() for d in discovery.days(config.anchor_table)}

    for owned in ("data_docs", "validations"):
        shutil.rmtree(out_dir / owned, ignore_errors=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    docs_dir = out_dir / "data_docs" if data_docs else None

    checks = _unsupported_files(discovery, partitions, config)
    checks += _outside_layout_files(discovery, config)
    failing = _FailingIds(out_dir / "failing_ids.csv")
    for found in checks:
        failing.add_unsupported(found)

    shown = ", ".join(safe.printable(p) for p in partitions) or "nothing"
    say(f"lara gate: reading {safe.printable(raw_path)} ({mode}: {shown})")
    validation_paths: list[Path] = []
    gx_runner = _GxRunner(contract, config, docs_dir)
    with reader.RawStore(discovery, contract, config, warehouse=warehouse) as store:
        store.load()
        lookups = {
            "raw_partitions": "every",
            "warehouse": str(warehouse) if warehouse else None,
            "warehouse_tables": store.warehouse_lookups,
            "note": store.warehouse_note,
        }
        if store.warehouse_note:
            say(f"lara gate: lineage lookups: {safe.printable(store.warehouse_note)}")
        run_time = started.replace(microsecond=0)
        for partition in partitions:
            run_id = gx_runner.gx.RunIdentifier(
                run_name=safe.run_name(partition), run_time=run_time
            )
            for name in selected:
                table = contract[name]
                if partition not in store.partitions(name) and not (
                    partition in anchor_days and table.required_table
                ):
                    continue  # no files that day, and none required
                frame = store.batch(table, partition)
                index_columns = [*table.key, reader.SOURCE]
                results, key = gx_runner.validate(name, frame, index_columns, run_id)
                # No user id or user text in any output; then the lists are trimmed.
                safe.redact_results(results, table)
                rows = _check_results(partition, name, table.key, results, config, failing)
                checks += rows
                target = out_dir / "validations" / name / f"{safe.run_name(partition)}.json"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps(_json_safe(results.to_json_dict()), indent=1))
                validation_paths.append(target)
                # The Data Docs render from the store: escaped values only.
                safe.escape_results(results)
                gx_runner.restore(key, results)
                bad = sum(1 for r in rows if not r.success)
                say(
                    f"  {safe.printable(partition)} {name}: {len(frame):,} rows, "
                    f"{bad} failed check(s)"
                )
                del frame, results
        coverage = [_json_safe(row) for row in store.coverage() if row["partition"] in partitions]
        unreadable = [
            path
            for report in store.reports.values()
            for path in report.unreadable
            if path.split("/")[1].removeprefix("dt=") in partitions
        ]

    verdict, exit_code = _verdict(checks)
    index = gx_runner.build_docs()
    if index is not None:
        from lara.gate.docs import make_offline

        make_offline(index.parent, checks=checks, verdict=verdict)

    results_path = out_dir / "gate_results.json"
    failures = [c for c in checks if not c.success]
    document = {
        "gate": "lara data-quality gate",
        "verdict": verdict,
        "exit_code": exit_code,
        "raw_path": str(raw_path),
        "config_path": str(config.path),
        "started_at": started.isoformat(),
        "finished_at": dt.datetime.now(dt.UTC).isoformat(),
        "selection": {"mode": mode, "partitions": partitions},
        "trace_derived": trace_tables,
        "summary": {
            "checks": len(checks),
            "failed": len(failures),
            "failed_errors": sum(1 for c in failures if c.severity == "error"),
            "failed_warnings": sum(1 for c in failures if c.severity == "warning"),
            "failing_rows": failing.rows,
        },
        "failures": [asdict(c) for c in failures],
        "lineage_coverage": coverage,
        "lineage_lookups": lookups,
        "files": {
            "unsupported": discovery.unsupported,
            "outside_partition_layout": discovery.outside_layout,
            "unreadable": unreadable,
        },
        "outputs": {
            "failing_ids": str(failing.path),
            "data_docs": str(index) if index else None,
            "validations": [str(p) for p in validation_paths],
        },
        "checks": [asdict(c) for c in checks],
    }
    results_path.write_text(json.dumps(_json_safe(document), indent=1))
    return GateResult(
        verdict=verdict,
        exit_code=exit_code,
        out_dir=out_dir,
        results_path=results_path,
        failing_ids_path=failing.path,
        data_docs_index=index,
        partitions=partitions,
        checks=checks,
        coverage=coverage,
    )
