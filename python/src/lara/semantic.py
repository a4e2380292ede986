"""`lara mf`: MetricFlow's `mf` against the current warehouse, whatever its file name.

dbt writes the warehouse's catalog name into `target/semantic_manifest.json`
at parse time, and DuckDB names the catalog after the file
(`/data/lara.duckdb` -> `"lara"."marts"."fct_retrievals"`). `mf query` run
later with `LARA_DUCKDB_PATH` pointing at a file of another name
(`exports/lara_marts.duckdb`, a copy, a dated snapshot) then fails: the
catalog it names does not exist. `lara mf` compares the two names first and
re-parses the project (`dbt parse`, no warehouse access) when they differ or
when there is no semantic manifest yet, then runs `mf` with the same
arguments and environment. Plain `mf` works as before where the names agree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from lara.paths import default_sample_dir, project_dir, warehouse_path

# `mf` itself, minus its PyPI update check (an HTTP request on every call).
MF_BOOTSTRAP = (
    "import sys, update_checker\n"
    "update_checker.UpdateChecker.check = lambda *args, **kwargs: None\n"
    "from dbt_metricflow.cli.main import cli\n"
    "sys.exit(cli())\n"
)


def semantic_manifest_path(project: Path | None = None) -> Path:
    """Where `mf` reads the semantic manifest: <project>/target (it ignores DBT_TARGET_PATH)."""
    return (project or project_dir()) / "target" / "semantic_manifest.json"


def manifest_databases(path: Path) -> set[str]:
    """The catalog names the semantic manifest's relations use (empty if none)."""
    manifest = json.loads(path.read_text())
    relations = [model["node_relation"] for model in manifest.get("semantic_models", [])]
    config = manifest.get("project_configuration", {})
    relations += [spine["node_relation"] for spine in config.get("time_spines", [])]
    return {r["database"] for r in relations if r.get("database")}


def warehouse_database(path: Path) -> str:
    """The catalog name DuckDB (and dbt-duckdb) give the warehouse file at `path`."""
    from dbt.adapters.duckdb.credentials import DuckDBCredentials

    return DuckDBCredentials.path_derived_database_name(str(path))


def semantic_manifest_is_current(warehouse: Path, project: Path | None = None) -> bool:
    """The semantic manifest exists and names the catalog of `warehouse`."""
    path = semantic_manifest_path(project)
    if not path.exists():
        return False
    return manifest_databases(path) == {warehouse_database(warehouse)}


def reparse(warehouse: Path) -> subprocess.CompletedProcess:
    """`dbt parse` into <project>/target for `warehouse` (reads no data)."""
    from lara.dbt import run_dbt

    raw = Path(os.environ.get("LARA_RAW_PATH") or default_sample_dir())
    target = project_dir() / "target"
    return run_dbt(["parse", "--quiet"], raw, warehouse, extra_env={"DBT_TARGET_PATH": str(target)})


def mf_main(args: argparse.Namespace) -> int:
    """Re-parse when the semantic manifest names another warehouse, then run `mf`."""
    try:
        import dbt_metricflow  # noqa: F401
    except ImportError:
        print(
            "lara mf: dbt-metricflow is not installed (pip install 'lara[semantic]')",
            file=sys.stderr,
        )
        return 1
    warehouse = warehouse_path()
    if not semantic_manifest_is_current(warehouse):
        print(
            f"lara mf: the semantic manifest does not name {warehouse.name}: "
            "re-parsing the project (dbt parse)",
            file=sys.stderr,
        )
        parsed = reparse(warehouse)
        if parsed.returncode != 0:
            print("lara mf: dbt parse failed", file=sys.stderr)
            return 1
    env = dict(os.environ)
    env["LARA_DUCKDB_PATH"] = str(warehouse)
    env.setdefault("DBT_PROFILES_DIR", str(project_dir()))
    env.setdefault("DBT_PROJECT_DIR", str(project_dir()))
    env.pop("DBT_TARGET_PATH", None)
    command = [sys.executable, "-c", MF_BOOTSTRAP, *args.mf_args]
    return subprocess.run(command, cwd=project_dir(), env=env, check=False).returncode
