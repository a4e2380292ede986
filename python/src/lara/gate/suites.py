"""GX Expectation Suites of the gate, built from the log contract and gx/lara_gate.yml.

One suite per contract table. Every expectation carries, in `meta`, the gate
check it implements (`lara_check`, e.g. `invalid_enum:surface`), and the
configured severity as GX's own `severity` (error -> critical, warning ->
warning). The suites are code, so they cannot drift from the contract; a
reviewable snapshot of them is kept under gx/expectations/ (refresh it with
`python -m lara.gate --write-suites`; a test compares it with this module).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import great_expectations as gx
import great_expectations.expectations as gxe

from lara.contract import Column, Table
from lara.gate import reader
from lara.gate.config import CheckSettings, GateConfig
from lara.paths import project_dir

# The staging layer's reason codes (macros/staging/stage_source.sql), which
# are also the defect kinds the sample generator injects, and the gate check
# that catches each of them.
DEFECT_CHECKS: dict[str, str] = {
    "json_parse_error": "json_parse",
    "invalid_partition": "invalid_partition",
    "missing_required": "missing_required",
    "empty_id": "id_format",
    "invalid_timestamp": "invalid_timestamp",
    "invalid_type": "invalid_type",
    "invalid_enum": "invalid_enum",
    "out_of_range": "out_of_range",
    "invalid_list": "invalid_list",
    "conflicting_duplicate": "conflicting_duplicate",
    "duplicate": "exact_duplicate",
    "exact_duplicate": "exact_duplicate",
}


@dataclass(frozen=True)
class CheckRef:
    """What an expectation checks, as recorded in its meta."""

    check: str
    column: str | None
    table: str
    severity: str

    @property
    def name(self) -> str:
        return f"{self.check}:{self.column}" if self.column else self.check


class _SuiteBuilder:
    def __init__(self, table: Table, config: GateConfig) -> None:
        self.table = table
        self.config = config
        self.expectations: list[gxe.Expectation] = []

    def settings(self, check: str) -> CheckSettings:
        return self.config.check(check, self.table.name)

    def add(
        self,
        check: str,
        target: str | None,
        expectation_cls: type[gxe.Expectation],
        text: str,
        *,
        use_mostly: bool = True,
        **kwargs: Any,
    ) -> None:
        settings = self.settings(check)
        if not settings.enabled:
            return
        if use_mostly and settings.mostly < 1.0:
            kwargs["mostly"] = settings.mostly
            text += f" (at least {settings.mostly:.2%} of rows)"
        name = f"{check}:{target}" if target else check
        self.expectations.append(
            expectation_cls(
                **kwargs,
                severity=settings.gx_severity,
                description=f"[{settings.severity}] {name}: {text}",
                meta={
                    "lara_check": check,
                    "lara_column": target,
                    "lara_table": self.table.name,
                    "lara_severity": settings.severity,
                },
            )
        )

    def build(self) -> list[gxe.Expectation]:
        table = self.table
        if table.required_table:
            minimum = self.settings("row_count").min
            if minimum is not None:
                self.add(
                    "row_count",
                    None,
                    gxe.ExpectTableRowCountToBeBetween,
                    f"a required table has at least {int(minimum)} row(s) every day",
                    use_mostly=False,
                    min_value=int(minimum),
                )
        null_checks = [
            ("unreadable_file", reader.FILE_ERROR, "every file can be read"),
            ("json_parse", reader.PARSE_ERROR, "every JSON line is a JSON object"),
            ("invalid_partition", reader.PARTITION_ERROR, "the dt= folder is a date"),
            (
                "parquet_type",
                reader.PARQUET_TYPE_ERROR,
                "Parquet columns have the types the contract accepts",
            ),
        ]
        for check, column, text in null_checks:
            self.add(check, None, gxe.ExpectColumnValuesToBeNull, text, column=column)
        for column in table.columns:
            self._column(column)
        self.add(
            "exact_duplicate",
            None,
            gxe.ExpectColumnValuesToBeNull,
            "no row re-delivers the content of an earlier row (any partition)",
            column=reader.DUPLICATE_OF,
        )
        if table.key:
            key = ",".join(table.key)
            self.add(
                "conflicting_duplicate",
                key,
                gxe.ExpectColumnValuesToBeNull,
                f"the key ({key}) has one content across every partition",
                column=reader.CONFLICTING_KEY,
            )
        if table.name == "actions":
            self._lineage()
        if table.name == "retrievals":
            self.add(
                "lineage_prompt_known",
                None,
                gxe.ExpectColumnValuesToBeInSet,
                "prompt_id names a prompt of any partition (or of the warehouse)",
                column=reader.LINEAGE_PROMPT_KNOWN,
                value_set=[True],
            )
        return self.expectations

    def _column(self, column: Column) -> None:
        name = column.name
        if column.required:
            # On the one column listing each row's missing required columns
            # ('' when none; null on lines that do not parse, left to json_parse):
            # much cheaper in GX than a row_condition on every column.
            self.add(
                "missing_required",
                name,
                gxe.ExpectColumnValuesToNotMatchRegex,
                f"{name} is present on every row",
                column=reader.MISSING_REQUIRED,
                regex=f"(^|,){re.escape(name)}(,|$)",
            )
        if column.lara_type == "id":
            pattern = self.config.id_pattern(self.table.name, name)
            self.add(
                "id_format",
                name,
                gxe.ExpectColumnValuesToMatchRegex,
                f"{name} matches {pattern}",
                column=name,
                regex=pattern,
            )
        check = reader.invalid_check_name(column)
        if check is not None:
            kind = {"string_list": "a list of non-empty strings"}.get(
                column.lara_type, f"a valid {column.lara_type}"
            )
            self.add(
                check,
                name,
                gxe.ExpectColumnValuesToBeNull,
                f"{name} is {kind}",
                column=reader.issue_column(name, check),
            )
        if column.lara_type == "timestamp":
            before, after = self.config.window(self.table.name)
            self.add(
                "timestamp_window",
                name,
                gxe.ExpectColumnValuesToBeInSet,
                f"{name} lies in its dt= day, from {before} day(s) before it to "
                f"{after} day(s) after it",
                column=reader.window_column(name),
                value_set=[True],
            )
        if column.values:
            self.add(
                "invalid_enum",
                name,
                gxe.ExpectColumnValuesToBeInSet,
                f"{name} is one of {', '.join(column.values)} (after trim + lower-case)",
                column=name,
                value_set=list(column.values),
            )
        if column.min is not None or column.max is not None:
            self._range("out_of_range", name, column.min, column.max)
        extra = self.config.extra_range(self.table.name, name)
        if extra is not None and column.lara_type in ("integer", "float"):
            self._range("extra_range", name, *extra)

    def _range(self, check: str, name: str, low: float | None, high: float | None) -> None:
        bounds = {}
        if low is not None:
            bounds["min_value"] = low
        if high is not None:
            bounds["max_value"] = high
        lower = "-inf" if low is None else f"{low:g}"
        upper = "inf" if high is None else f"{high:g}"
        shown = f"[{lower}, {upper}]"
        self.add(
            check,
            name,
            gxe.ExpectColumnValuesToBeBetween,
            f"{name} lies in {shown}",
            column=reader.value_column(name),
            **bounds,
        )

    def _lineage(self) -> None:
        self.add(
            "lineage_source_known",
            None,
            gxe.ExpectColumnValuesToBeInSet,
            "source_retrieval_id names a retrieval of any partition (or of the warehouse)",
            column=reader.LINEAGE_SOURCE_KNOWN,
            value_set=[True],
        )
        self.add(
            "lineage_consumed_in_returned",
            None,
            gxe.ExpectColumnValuesToBeInSet,
            "consumed_asset_id is in the source retrieval's returned_asset_ids",
            column=reader.LINEAGE_CONSUMED_IN_RETURNED,
            value_set=[True],
        )
        self.add(
            "lineage_placement_resolvable",
            None,
            gxe.ExpectColumnValuesToBeInSet,
            "an action with an asset and a document but no source id follows a place "
            "of that asset in that document",
            column=reader.LINEAGE_PLACEMENT_RESOLVABLE,
            value_set=[True],
        )
        self.add(
            "lineage_coverage",
            None,
            gxe.ExpectColumnValuesToBeInSet,
            "an asset action carries lineage: a source id, or (not being a place) a "
            "document to inherit it from",
            column=reader.LINEAGE_COVERAGE,
            value_set=[True],
        )


def build_expectations(table: Table, config: GateConfig) -> list[gxe.Expectation]:
    """The expectations of one contract table."""
    return _SuiteBuilder(table, config).build()


def build_suite(table: Table, config: GateConfig) -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=f"lara_{table.name}")
    for expectation in build_expectations(table, config):
        suite.add_expectation(expectation)
    return suite


def check_ref(meta: dict[str, Any] | None) -> CheckRef | None:
    meta = meta or {}
    if "lara_check" not in meta:
        return None
    return CheckRef(
        check=meta["lara_check"],
        column=meta.get("lara_column"),
        table=meta["lara_table"],
        severity=meta["lara_severity"],
    )


# --- snapshot under gx/expectations ---------------------------------------------------


def snapshot_dir() -> Path:
    return project_dir() / "gx" / "expectations"


def render_snapshot(table: Table, config: GateConfig) -> str:
    """The suite of one table as stable JSON (no GX-generated ids)."""
    entries = []
    for expectation in build_expectations(table, config):
        entry = expectation.configuration.to_json_dict()
        entry.pop("id", None)
        entries.append(entry)
    document = {
        "name": f"lara_{table.name}",
        "generated_by": "python -m lara.gate --write-suites",
        "source": "models/staging/lara/_lara__sources.yml + gx/lara_gate.yml",
        "expectations": entries,
    }
    return json.dumps(document, indent=2, sort_keys=False) + "\n"


def write_snapshots(tables: dict[str, Table], config: GateConfig, target: Path) -> list[Path]:
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for table in tables.values():
        path = target / f"lara_{table.name}.json"
        path.write_text(render_snapshot(table, config))
        written.append(path)
    return written
