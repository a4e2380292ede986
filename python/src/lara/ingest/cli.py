"""Command-line wiring of `lara ingest openinference|otel-genai` (see lara.cli)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from lara.ingest.config import IngestConfig
from lara.ingest.manifest import MANIFEST_NAME


def _pairs(values: list[str] | None, option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values or []:
        key, sep, target = value.partition("=")
        if not sep or not key or not target:
            raise SystemExit(f"lara ingest: {option} expects PATTERN=VALUE, got {value!r}")
        out[key] = target
    return out


def _add_adapter_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("src", help="span export: a file or a folder (read recursively)")
    parser.add_argument("--out", required=True, help="root of the contract tables to write")
    parser.add_argument("--config", help="YAML/JSON file of IngestConfig settings")
    parser.add_argument(
        "--evaluations",
        action="append",
        default=[],
        metavar="FILE",
        help="document evaluations file (span id, document position, label/score); repeatable",
    )
    parser.add_argument("--surface", help="surface of the prompts (default chat)")
    parser.add_argument("--judge", choices=["llm", "human"], help="judge of evaluations")
    parser.add_argument("--prompt-from", choices=["trace", "root_span"], dest="prompt_from")
    parser.add_argument(
        "--role-attribute", dest="role_attribute", help="span attribute of the role"
    )
    parser.add_argument(
        "--role-map",
        action="append",
        dest="role_map",
        metavar="SPAN_NAME_PATTERN=ROLE",
        help="retrieval role by span name (fnmatch); repeatable",
    )
    parser.add_argument(
        "--action-type-map",
        action="append",
        dest="action_type_map",
        metavar="TOOL_NAME_PATTERN=ACTION_TYPE",
        help="agent action type by tool name (fnmatch); repeatable",
    )
    parser.add_argument("--lineage-scope", choices=["prompt", "session"], dest="lineage_scope")
    parser.add_argument(
        "--document-id-key",
        action="append",
        dest="document_id_keys",
        metavar="NAME",
        help="where a returned document's asset id is, relative to the document, first found "
        "wins (e.g. document.id, document.metadata.asset_id); repeatable, replaces the default",
    )
    parser.add_argument(
        "--tool-asset-key",
        action="append",
        dest="tool_asset_keys",
        metavar="KEY",
        help="key of the tool's input arguments naming the consumed asset (e.g. asset_id); "
        "repeatable; set, it replaces the free-text token scan",
    )
    parser.add_argument("--part-name", dest="part_name", help="file name in each partition")
    parser.add_argument("--overwrite", action="store_true", default=None)
    parser.add_argument("--quiet", action="store_true")


def add_ingest_arguments(parser: argparse.ArgumentParser) -> None:
    """Sub-commands `openinference` and `otel-genai` under `parser` (the `ingest` command)."""
    sub = parser.add_subparsers(dest="ingest_format", required=True)
    openinference = sub.add_parser(
        "openinference", help="OpenInference / Phoenix spans (Parquet, JSON Lines, OTLP JSON)"
    )
    _add_adapter_arguments(openinference)
    openinference.set_defaults(func=ingest_main)
    genai = sub.add_parser("otel-genai", help="OpenTelemetry GenAI spans (OTLP JSON, Parquet)")
    _add_adapter_arguments(genai)
    genai.set_defaults(func=ingest_main)


def config_from_args(args: argparse.Namespace) -> IngestConfig:
    values: dict = {}
    if getattr(args, "config", None):
        values.update(IngestConfig.from_file(Path(args.config)).__dict__)
    for name in ("surface", "judge", "prompt_from", "role_attribute", "lineage_scope"):
        if getattr(args, name, None) is not None:
            values[name] = getattr(args, name)
    for name in ("document_id_keys", "tool_asset_keys"):
        if getattr(args, name, None):
            values[name] = list(getattr(args, name))
    if getattr(args, "part_name", None):
        values["part_name"] = args.part_name
    if getattr(args, "overwrite", None):
        values["overwrite"] = True
    if getattr(args, "role_map", None):
        values["role_map"] = {**values.get("role_map", {}), **_pairs(args.role_map, "--role-map")}
    if getattr(args, "action_type_map", None):
        values["action_type_map"] = {
            **values.get("action_type_map", {}),
            **_pairs(args.action_type_map, "--action-type-map"),
        }
    return IngestConfig.from_mapping(values)


def ingest_main(args: argparse.Namespace) -> int:
    from lara.ingest.openinference import ingest_openinference
    from lara.ingest.otel_genai import ingest_otel_genai

    try:
        config = config_from_args(args)
        run = ingest_openinference if args.ingest_format == "openinference" else ingest_otel_genai
        report = run(Path(args.src), Path(args.out), config, [Path(p) for p in args.evaluations])
    except (ValueError, FileNotFoundError, FileExistsError) as error:
        print(str(error), file=sys.stderr)
        return 2
    if not args.quiet:
        print(f"lara ingest {args.ingest_format}: wrote {dict(report)} to {args.out}")
        print(json.dumps(report.diagnostics, indent=2, sort_keys=True, default=str))
        print(f"(run recorded in {Path(args.out) / MANIFEST_NAME})")
    return 0
