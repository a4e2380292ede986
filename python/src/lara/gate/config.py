"""The gate's configuration (`gx/lara_gate.yml`): severities, thresholds, id patterns."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lara.paths import project_dir

SEVERITIES = ("error", "warning")

# Every check the gate knows, in report order. A check missing from the
# configuration file takes these defaults.
CHECK_DEFAULTS: dict[str, dict[str, Any]] = {
    "row_count": {"severity": "error", "min": 1},
    "unsupported_file": {"severity": "error"},
    "file_outside_partition_layout": {"severity": "error"},
    "unreadable_file": {"severity": "error", "mostly": 1.0},
    "json_parse": {"severity": "error", "mostly": 1.0},
    "invalid_partition": {"severity": "error", "mostly": 1.0},
    "parquet_type": {"severity": "error", "mostly": 1.0},
    "missing_required": {"severity": "error", "mostly": 1.0},
    "id_format": {"severity": "error", "mostly": 1.0},
    "invalid_timestamp": {"severity": "error", "mostly": 1.0},
    "timestamp_window": {"severity": "error", "mostly": 1.0},
    "invalid_type": {"severity": "error", "mostly": 1.0},
    "invalid_enum": {"severity": "error", "mostly": 1.0},
    "out_of_range": {"severity": "error", "mostly": 1.0},
    "extra_range": {"severity": "warning", "mostly": 1.0},
    "invalid_list": {"severity": "error", "mostly": 1.0},
    "exact_duplicate": {"severity": "warning", "mostly": 1.0},
    "conflicting_duplicate": {"severity": "error", "mostly": 1.0},
    "lineage_prompt_known": {"severity": "error", "mostly": 0.99},
    "lineage_source_known": {"severity": "error", "mostly": 0.99},
    "lineage_consumed_in_returned": {"severity": "error", "mostly": 0.90},
    "lineage_placement_resolvable": {"severity": "error", "mostly": 0.99},
    "lineage_coverage": {"severity": "warning", "mostly": 0.5},
}

# Lineage faults: a row that breaks the rule is always listed. Below the `mostly`
# threshold the check is a warning naming every failing id; above it, the
# configured severity. (lineage_coverage is a share, not a fault: it follows
# `mostly` like any other check.)
LINEAGE_FAULT_CHECKS = frozenset(
    {
        "lineage_prompt_known",
        "lineage_source_known",
        "lineage_consumed_in_returned",
        "lineage_placement_resolvable",
    }
)


def default_config_path() -> Path:
    return project_dir() / "gx" / "lara_gate.yml"


@dataclass(frozen=True)
class CheckSettings:
    name: str
    severity: str
    enabled: bool = True
    mostly: float = 1.0
    min: float | None = None

    @property
    def gx_severity(self) -> str:
        """GX's own severity levels: `critical` fails the gate, `warning` warns."""
        return "critical" if self.severity == "error" else "warning"


@dataclass(frozen=True)
class GateConfig:
    path: Path | None
    sample_size: int = 20
    memory_limit: str = "1GB"
    threads: int = 2
    id_pattern_default: str = r"^\S+$"
    id_patterns: dict[str, str] = field(default_factory=dict)
    days_before: int = 0
    days_after: int = 2
    window_tables: dict[str, dict[str, int]] = field(default_factory=dict)
    extra_ranges: dict[str, dict[str, float]] = field(default_factory=dict)
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)
    anchor_table: str = "prompts"

    def check(self, name: str, table: str | None = None) -> CheckSettings:
        """Settings of one check, with the per-table override applied."""
        if name not in CHECK_DEFAULTS:
            raise KeyError(f"lara gate: unknown check '{name}'")
        merged: dict[str, Any] = dict(CHECK_DEFAULTS[name])
        entry = dict(self.checks.get(name) or {})
        overrides = entry.pop("tables", None) or {}
        merged.update(entry)
        if table is not None and table in overrides:
            merged.update(overrides[table] or {})
        return CheckSettings(
            name=name,
            severity=str(merged["severity"]),
            enabled=bool(merged.get("enabled", True)),
            mostly=float(merged.get("mostly", 1.0)),
            min=None if merged.get("min") is None else float(merged["min"]),
        )

    def id_pattern(self, table: str, column: str) -> str:
        return self.id_patterns.get(
            f"{table}.{column}", self.id_patterns.get(column, self.id_pattern_default)
        )

    def window(self, table: str) -> tuple[int, int]:
        """(days_before, days_after) allowed around a row's dt= day."""
        entry = self.window_tables.get(table) or {}
        return (
            int(entry.get("days_before", self.days_before)),
            int(entry.get("days_after", self.days_after)),
        )

    def extra_range(self, table: str, column: str) -> tuple[float | None, float | None] | None:
        entry = self.extra_ranges.get(f"{table}.{column}")
        if entry is None:
            return None
        low, high = entry.get("min"), entry.get("max")
        return (
            None if low is None else float(low),
            None if high is None else float(high),
        )


def _validate(config: GateConfig) -> None:
    where = config.path or "gate config"
    for name in config.checks:
        if name not in CHECK_DEFAULTS:
            known = ", ".join(CHECK_DEFAULTS)
            raise ValueError(f"{where}: unknown check '{name}' (known: {known})")
    for name in CHECK_DEFAULTS:
        tables = (config.checks.get(name) or {}).get("tables") or {}
        for table in [None, *tables]:
            settings = config.check(name, table)
            if settings.severity not in SEVERITIES:
                raise ValueError(
                    f"{where}: check '{name}' has severity '{settings.severity}';"
                    f" expected one of {', '.join(SEVERITIES)}"
                )
            if not 0.0 <= settings.mostly <= 1.0:
                raise ValueError(f"{where}: check '{name}' has mostly {settings.mostly}")
    for pattern in [config.id_pattern_default, *config.id_patterns.values()]:
        try:
            re.compile(pattern)
        except re.error as error:
            raise ValueError(f"{where}: invalid id pattern {pattern!r}: {error}") from error
    if config.sample_size < 0:
        raise ValueError(f"{where}: sample_size must be >= 0")


def load_config(path: Path | None = None) -> GateConfig:
    """The gate configuration; `path` defaults to gx/lara_gate.yml of the project."""
    path = path or default_config_path()
    document: dict[str, Any] = yaml.safe_load(Path(path).read_text()) or {}
    ids = document.get("id_patterns") or {}
    window = document.get("timestamp_window") or {}
    duck = document.get("duckdb") or {}
    config = GateConfig(
        path=Path(path),
        sample_size=int(document.get("sample_size", 20)),
        memory_limit=str(duck.get("memory_limit", "1GB")),
        threads=int(duck.get("threads", 2)),
        id_pattern_default=str(ids.get("default", r"^\S+$")),
        id_patterns={str(k): str(v) for k, v in (ids.get("columns") or {}).items()},
        days_before=int(window.get("days_before", 0)),
        days_after=int(window.get("days_after", 2)),
        window_tables=dict(window.get("tables") or {}),
        extra_ranges=dict(document.get("extra_ranges") or {}),
        checks=dict(document.get("checks") or {}),
        anchor_table=str(document.get("anchor_table", "prompts")),
    )
    _validate(config)
    return config
