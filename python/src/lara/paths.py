"""Where the project, the raw logs and the warehouse are."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from lara.arguments import whole_number


class SettingError(ValueError):
    """A LARA_* environment setting holds a value the command cannot use; `lara` prints
    the message (naming the setting) and exits 2, as for a usage error."""


def whole_number_setting(name: str, text: str) -> int:
    """The setting `name`'s value `text` as a whole number of at least 1 (threads),
    read as the command-line options read one (lara.arguments.whole_number), else
    SettingError naming the setting and the value."""
    try:
        return whole_number(1)(text)
    except argparse.ArgumentTypeError:
        raise SettingError(f"{name} must be a whole number of at least 1, got {text!r}") from None


def project_dir() -> Path:
    """The dbt project root (the folder holding dbt_project.yml)."""
    env = os.environ.get("DBT_PROJECT_DIR")
    if env and (Path(env) / "dbt_project.yml").exists():
        return Path(env).resolve()
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "dbt_project.yml").exists():
            return parent
    cwd = Path.cwd()
    if (cwd / "dbt_project.yml").exists():
        return cwd
    raise FileNotFoundError("lara: cannot find dbt_project.yml; set DBT_PROJECT_DIR")


def default_sample_dir() -> Path:
    return project_dir() / "data" / "sample"


def warehouse_path() -> Path:
    """The DuckDB file: LARA_DUCKDB_PATH, else warehouse/lara.duckdb."""
    env = os.environ.get("LARA_DUCKDB_PATH")
    path = Path(env) if env else Path("warehouse") / "lara.duckdb"
    return path if path.is_absolute() else project_dir() / path


def sources_yaml() -> Path:
    return project_dir() / "models" / "staging" / "lara" / "_lara__sources.yml"
