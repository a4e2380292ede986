"""Documentation coverage of the dbt project, and `dbt docs generate`.

`documentation_coverage(manifest, warehouse)` reads a dbt `manifest.json`
(written by `dbt parse`, `build` or `docs generate`) and reports, for every
model, seed, source table, snapshot, macro, exposure, semantic model and
metric of the project, whether it has a description and, for relations,
which columns lack one. With a warehouse, the columns are those the relation
really has (so a column missing from the YAML counts as undocumented);
without, the YAML's.

Public marts (models in schema `marts` named `fct_*` / `agg_*`) must be at
100%; the rest is reported. A dispatched macro implementation
(`<adapter>__<name>`) counts as documented when its dispatcher `<name>` is.

    python -m lara.docs_coverage [target/manifest.json] [warehouse.duckdb]
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

PROJECT = "lara"
PUBLIC_SCHEMA = "marts"
PUBLIC_PREFIXES = ("fct_", "agg_")
_ADAPTER_PREFIXES = ("default__", "duckdb__", "spark__", "databricks__", "postgres__")


@dataclass
class ResourceCoverage:
    unique_id: str
    resource_type: str
    name: str
    is_public: bool
    has_description: bool
    columns: list[str] = field(default_factory=list)
    undocumented_columns: list[str] = field(default_factory=list)

    @property
    def items(self) -> int:
        """Things to document: the resource itself and each column."""
        return 1 + len(self.columns)

    @property
    def documented(self) -> int:
        return int(self.has_description) + len(self.columns) - len(self.undocumented_columns)

    @property
    def complete(self) -> bool:
        return self.documented == self.items


@dataclass
class CoverageReport:
    resources: list[ResourceCoverage]

    def select(self, public: bool | None = None, resource_type: str | None = None):
        return [
            r
            for r in self.resources
            if (public is None or r.is_public == public)
            and (resource_type is None or r.resource_type == resource_type)
        ]

    @staticmethod
    def ratio(resources: Iterable[ResourceCoverage]) -> float:
        resources = list(resources)
        items = sum(r.items for r in resources)
        return 1.0 if items == 0 else sum(r.documented for r in resources) / items

    def summary(self) -> dict[str, dict[str, float | int]]:
        """Coverage per resource type, plus `public_marts`."""
        groups: dict[str, list[ResourceCoverage]] = {"public_marts": self.select(public=True)}
        for resource in self.resources:
            groups.setdefault(resource.resource_type, []).append(resource)
        return {
            name: {
                "resources": len(items),
                "items": sum(r.items for r in items),
                "documented": sum(r.documented for r in items),
                "coverage": round(self.ratio(items), 4),
            }
            for name, items in groups.items()
        }

    def gaps(self, public: bool | None = None) -> list[str]:
        """One line per incomplete resource: what is missing."""
        lines = []
        for r in self.select(public=public):
            if r.complete:
                continue
            missing = [] if r.has_description else ["description"]
            if r.undocumented_columns:
                missing.append("columns " + ", ".join(r.undocumented_columns))
            lines.append(f"{r.resource_type} {r.name}: {'; '.join(missing)}")
        return lines

    def format(self) -> str:
        lines = ["documentation coverage (described / to describe):"]
        for name, row in sorted(self.summary().items()):
            lines.append(
                f"  {name:<16} {row['coverage']:7.1%}  ({row['documented']}/{row['items']}, "
                f"{row['resources']} resources)"
            )
        gaps = self.gaps()
        if gaps:
            lines.append(f"gaps ({len(gaps)}):")
            lines += [f"  {gap}" for gap in gaps]
        return "\n".join(lines)


def _described(node: dict) -> bool:
    return bool((node.get("description") or "").strip())


def _relation_columns(con: duckdb.DuckDBPyConnection | None, node: dict) -> list[str] | None:
    if con is None:
        return None
    name = node.get("alias") or node.get("identifier") or node["name"]
    rows = con.execute(
        "select column_name from duckdb_columns() where schema_name = ? and table_name = ? "
        "order by column_index",
        [node["schema"], name],
    ).fetchall()
    return [row[0] for row in rows] or None


def _column_coverage(
    con: duckdb.DuckDBPyConnection | None, node: dict
) -> tuple[list[str], list[str]]:
    declared = {name.lower(): column for name, column in node.get("columns", {}).items()}
    columns = _relation_columns(con, node) or list(node.get("columns", {}))
    undocumented = [c for c in columns if not _described(declared.get(c.lower(), {}))]
    return columns, undocumented


def is_public_mart(node: dict) -> bool:
    return (
        node.get("resource_type") == "model"
        and node.get("schema") == PUBLIC_SCHEMA
        and node["name"].startswith(PUBLIC_PREFIXES)
    )


def documentation_coverage(manifest_path: Path, warehouse: Path | None = None) -> CoverageReport:
    """Coverage of every documentable resource of the project in `manifest_path`."""
    manifest = json.loads(Path(manifest_path).read_text())
    con = (
        duckdb.connect(str(warehouse), read_only=True)
        if warehouse is not None and Path(warehouse).exists()
        else None
    )
    resources: list[ResourceCoverage] = []
    try:
        for uid, node in sorted(manifest.get("nodes", {}).items()):
            if node.get("package_name") != PROJECT:
                continue
            kind = node["resource_type"]
            if kind not in ("model", "seed", "snapshot"):
                continue
            columns, undocumented = _column_coverage(con, node)
            resources.append(
                ResourceCoverage(
                    uid,
                    kind,
                    node["name"],
                    is_public_mart(node),
                    _described(node),
                    columns,
                    undocumented,
                )
            )
        for uid, source in sorted(manifest.get("sources", {}).items()):
            if source.get("package_name") != PROJECT:
                continue
            columns = list(source.get("columns", {}))
            undocumented = [c for c, v in source.get("columns", {}).items() if not _described(v)]
            described = _described(source) or bool((source.get("source_description") or "").strip())
            resources.append(
                ResourceCoverage(
                    uid,
                    "source",
                    f"{source['source_name']}.{source['name']}",
                    False,
                    described,
                    columns,
                    undocumented,
                )
            )
    finally:
        if con is not None:
            con.close()
    macros = {
        m["name"]: m for m in manifest.get("macros", {}).values() if m["package_name"] == PROJECT
    }
    for name, macro in sorted(macros.items()):
        described = _described(macro)
        if not described and name.startswith(_ADAPTER_PREFIXES):
            dispatcher = name.split("__", 1)[1]
            described = dispatcher in macros and _described(macros[dispatcher])
        resources.append(ResourceCoverage(macro["unique_id"], "macro", name, False, described))
    for section, kind in (
        ("exposures", "exposure"),
        ("semantic_models", "semantic_model"),
        ("metrics", "metric"),
    ):
        for uid, node in sorted(manifest.get(section, {}).items()):
            if node.get("package_name") == PROJECT:
                resources.append(ResourceCoverage(uid, kind, node["name"], False, _described(node)))
    return CoverageReport(resources)


def generate_docs(
    raw_path: Path,
    warehouse: Path,
    extra_env: dict[str, str] | None = None,
    static: bool = True,
    compile_nodes: bool = False,
) -> subprocess.CompletedProcess:
    """Run `dbt docs generate` against the built warehouse; streams dbt's output.

    Writes manifest.json, catalog.json and index.html to the target folder
    and, with `static`, static_index.html: the whole documentation site in
    one file that opens without `dbt docs serve`. Without `compile_nodes`
    (`--no-compile`) the docs keep the SQL the build before them compiled
    and ran, in the same target folder; compiling every node again cost
    about 8 of the 12.5 s of `dbt docs generate` on the bundled sample
    (docs/performance-notes.md, "What parsing costs").
    """
    from lara.dbt import run_dbt

    args = ["docs", "generate", *(["--static"] if static else [])]
    if not compile_nodes:
        args.append("--no-compile")
    return run_dbt(args, Path(raw_path), Path(warehouse), extra_env=extra_env)


def main(argv: list[str] | None = None) -> int:
    from lara.dbt import target_dir
    from lara.paths import warehouse_path

    args = list(sys.argv[1:] if argv is None else argv)
    manifest = Path(args[0]) if args else target_dir() / "manifest.json"
    warehouse = Path(args[1]) if len(args) > 1 else warehouse_path()
    report = documentation_coverage(manifest, warehouse)
    print(report.format())
    public = report.ratio(report.select(public=True))
    return 0 if public == 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
