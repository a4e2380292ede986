"""Running dbt from Python with the project's profile and environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from lara.paths import project_dir


def dbt_executable() -> str:
    """The dbt next to this Python (the project's venv), else the one on PATH."""
    candidate = Path(sys.executable).parent / "dbt"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("dbt")
    if not found:
        raise FileNotFoundError("lara: dbt is not installed in this environment")
    return found


def dbt_env(raw_path: Path, warehouse: Path, extra: Mapping[str, str] | None = None) -> dict:
    env = dict(os.environ)
    env["LARA_RAW_PATH"] = str(raw_path)
    env["LARA_DUCKDB_PATH"] = str(warehouse)
    env.setdefault("DBT_PROFILES_DIR", str(project_dir()))
    env.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    if extra:
        env.update(extra)
    return env


def run_dbt(
    args: Sequence[str],
    raw_path: Path,
    warehouse: Path,
    extra_env: Mapping[str, str] | None = None,
    capture: bool = False,
) -> subprocess.CompletedProcess:
    """Run `dbt <args>` in the project directory; output streams unless captured."""
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    command = [dbt_executable(), *args, "--project-dir", str(project_dir())]
    return subprocess.run(
        command,
        cwd=project_dir(),
        env=dbt_env(raw_path, warehouse, extra_env),
        text=True,
        capture_output=capture,
        check=False,
    )


def target_dir() -> Path:
    """Where dbt writes its artifacts (run_results.json, the docs): DBT_TARGET_PATH, else
    <project>/target; a relative DBT_TARGET_PATH is under the project folder, where
    `run_dbt` runs dbt."""
    configured = Path(os.environ.get("DBT_TARGET_PATH") or "target")
    return configured if configured.is_absolute() else project_dir() / configured


def out_of_memory_nodes(target: Path) -> list[str]:
    """The nodes of the last dbt invocation that failed with DuckDB's out-of-memory error.

    Read from `target`/run_results.json; empty when the file is missing or
    unreadable (dbt failed before running a node) or no node ran out of memory.
    """
    import json

    try:
        results = json.loads((target / "run_results.json").read_text())["results"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [
        str(result.get("unique_id", "?")).split(".")[-1]
        for result in results
        if result.get("status") == "error" and "Out of Memory" in str(result.get("message") or "")
    ]
