"""Replaying a generated sample as a scheduler sees it: one delivery per day.

Used by the incremental tests (DuckDB day by day, and Spark). A `late-*` file
lands one day after its partition (a file dropped into a day already
loaded); files of days after the schedule and of malformed partition names
arrive in one last delivery.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

from lara.dbt import run_dbt

Batch = list[tuple[Path, Path]]


def next_day(day: str) -> str:
    return (dt.date.fromisoformat(day) + dt.timedelta(days=1)).isoformat()


def delivery_batches(raw: Path, scheduled_days: int = 5) -> list[Batch]:
    """Files per delivery as (source, path relative to `raw`)."""
    files = [p for p in raw.rglob("*") if p.is_file() and "dt=" in str(p)]
    day_of = {}
    for path in files:
        partition = path.parent.name.removeprefix("dt=")
        landing_day = partition
        if path.name.startswith("late-"):
            landing_day = next_day(partition) if partition[:4].isdigit() else partition
        day_of[path] = landing_day
    dated = sorted({d for d in day_of.values() if d[:4].isdigit()})
    schedule = dated[:scheduled_days]
    batches: list[Batch] = [[] for _ in range(len(schedule) + 1)]
    for path, day in sorted(day_of.items()):
        index = len(schedule)
        if day[:4].isdigit():
            index = next((i for i, d in enumerate(schedule) if day <= d), len(schedule))
        batches[index].append((path, path.relative_to(raw)))
    return batches


def land(batch: Batch, landing: Path) -> None:
    """Copy one delivery into the landing folder the project reads."""
    for source, relative in batch:
        target = landing / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def dbt_folders(root: Path, warehouse: Path) -> dict:
    """dbt's target and log folders of one warehouse under `root` (its runs share
    them, so dbt parses the project partially after the first)."""
    return {
        "DBT_TARGET_PATH": str(root / f"target-{warehouse.stem}"),
        "DBT_LOG_PATH": str(root / f"logs-{warehouse.stem}"),
    }


def build(landing: Path, warehouse: Path, root: Path, args: list[str]) -> str:
    """`dbt <args>` on the files under `landing` into `warehouse`; its output, or a
    failed assertion with the end of it."""
    result = run_dbt(args, landing, warehouse, extra_env=dbt_folders(root, warehouse), capture=True)
    log = result.stdout + result.stderr
    assert result.returncode == 0, f"dbt {' '.join(args)} failed:\n{log[-6000:]}"
    return log
