"""Running `dbt source freshness` over a raw folder, for the freshness tests."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

from lara.dbt import run_dbt


def freshness_results(
    raw: Path, warehouse: Path, root: Path, extra_env: dict | None = None
) -> tuple[dict[str, dict], subprocess.CompletedProcess]:
    """`dbt source freshness` over `raw`: its results by table, and the process."""
    output = root / "sources.json"
    env = {"DBT_TARGET_PATH": str(root / "target"), "DBT_LOG_PATH": str(root / "logs")}
    env.update(extra_env or {})
    result = run_dbt(
        ["source", "freshness", "--output", str(output)],
        raw,
        warehouse,
        extra_env=env,
        capture=True,
    )
    assert output.exists(), result.stdout[-3000:] + result.stderr[-3000:]
    results = json.loads(output.read_text())["results"]
    return {r["unique_id"].split(".")[-1]: r for r in results}, result


def utc(value) -> dt.datetime:
    """A reported or queried time as an aware UTC datetime (naive = UTC)."""
    parsed = (
        dt.datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else value
    )
    return parsed.astimezone(dt.UTC) if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
