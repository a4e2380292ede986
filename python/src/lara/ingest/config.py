"""Settings of the trace adapters (`IngestConfig`), from code, a YAML/JSON file or the CLI."""

from __future__ import annotations

import dataclasses
import fnmatch
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lara.ingest.attributes import LARA_RETRIEVAL_ROLE, LARA_SURFACE
from lara.ingest.writer import contract

#: Phoenix's RAG relevance evaluator answers `relevant` / `unrelated`.
DEFAULT_LABEL_GRADES: dict[str, int] = {
    "relevant": 1,
    "unrelated": 0,
    "irrelevant": 0,
    "not_relevant": 0,
    "not relevant": 0,
}


@dataclass
class IngestConfig:
    """How spans become contract rows. Every field has a documented default (docs/ingest.md).

    surface / surface_attribute: the prompts' `surface`: the attribute's value when a span of
        the prompt carries a valid one, else `surface`.
    prompt_from: `trace` (one prompt per trace, prompt_id = trace id) or `root_span` (one
        prompt per top-level span, prompt_id = its span id).
    role_attribute / role_map / default_role: the retrievals' `retrieval_role`: the attribute
        on the retrieval span, else the first `role_map` entry whose pattern (fnmatch, on the
        span name) matches, else `default_role` (null = unknown).
    judge: judge kind of evaluations that do not state one (`llm` or `human`).
    label_grades / score_thresholds: evaluation label -> grade (case-insensitive), else score
        -> grade = number of thresholds <= score (default (0.5,): a 0/1 score stays 0/1;
        (0.5, 1.5, 2.5) keeps a 0..3 score; (0.25, 0.5, 0.75) maps [0, 1] onto 0..3).
    evaluation_names: only evaluations with these names (empty = all).
    action_span_kinds: OpenInference span kinds scanned for asset references.
    indexing_span_kinds: OpenInference span kinds of index building: a trace made only of
        these (LlamaIndex embedding documents at start-up) is no request and makes no prompt.
    tool_operations: GenAI `gen_ai.operation.name` values scanned for asset references.
    reference_attributes: attributes scanned for returned asset ids (None = the adapter's).
    action_type_map / default_action_type: the agent action's `action_type` by tool name
        (fnmatch pattern), unless the span sets `lara.action.type`.
    lineage_scope: where a referenced asset's source retrieval is looked for: `prompt` (the
        tool call's prompt) or `session` (any earlier prompt of its session too).
    missing_user_id: `user_id` of prompts whose spans carry no user id (None = the session id).
    document_id_keys: where a returned document's asset id is looked for, first found wins,
        relative to the document (None = the adapter's order: OpenInference `document.id`,
        `document.metadata.id`, `document.metadata.asset_id`, `document.metadata.source`;
        GenAI `id`, `metadata.id`, `metadata.asset_id`, `metadata.source`). A dotted name
        also reads into a JSON-object attribute (`document.metadata` as JSON text).
    tool_asset_keys: keys of the tool's input arguments that name the consumed asset
        (e.g. `asset_id`); when set, only these values (and `lara.asset.id`) are matched
        against the returned assets, no free-text token scan.
    metadata_attribute: the span attribute holding application metadata as JSON
        (OpenInference `metadata`); every `lara.*` name is also read from it, so that an
        application can set them where the span itself cannot be written to.
    part_name / overwrite: output file name in each partition, and whether an existing one
        may be replaced.
    """

    surface: str = "chat"
    surface_attribute: str | None = LARA_SURFACE
    prompt_from: str = "trace"
    role_attribute: str | None = LARA_RETRIEVAL_ROLE
    role_map: dict[str, str] = field(default_factory=dict)
    default_role: str | None = None
    judge: str = "llm"
    label_grades: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_LABEL_GRADES))
    score_thresholds: tuple[float, ...] = (0.5,)
    evaluation_names: tuple[str, ...] = ()
    action_span_kinds: tuple[str, ...] = ("TOOL", "AGENT")
    indexing_span_kinds: tuple[str, ...] = ("EMBEDDING",)
    tool_operations: tuple[str, ...] = ("execute_tool",)
    reference_attributes: tuple[str, ...] | None = None
    action_type_map: dict[str, str] = field(default_factory=dict)
    default_action_type: str = "select"
    lineage_scope: str = "prompt"
    missing_user_id: str | None = None
    document_id_keys: tuple[str, ...] | None = None
    tool_asset_keys: tuple[str, ...] = ()
    metadata_attribute: str | None = "metadata"
    part_name: str = "part-0"
    overwrite: bool = False

    def __post_init__(self) -> None:
        self.score_thresholds = tuple(sorted(float(t) for t in self.score_thresholds))
        self.evaluation_names = tuple(self.evaluation_names)
        self.action_span_kinds = tuple(k.upper() for k in self.action_span_kinds)
        self.indexing_span_kinds = tuple(k.upper() for k in self.indexing_span_kinds)
        self.tool_operations = tuple(self.tool_operations)
        if self.reference_attributes is not None:
            self.reference_attributes = tuple(self.reference_attributes)
        if self.document_id_keys is not None:
            self.document_id_keys = tuple(self.document_id_keys)
        self.tool_asset_keys = tuple(self.tool_asset_keys)
        self.label_grades = {str(k).strip().lower(): int(v) for k, v in self.label_grades.items()}
        self.validate()

    def validate(self) -> None:
        tables = contract()
        surfaces = tables["prompts"].column("surface").values
        roles = tables["retrievals"].column("retrieval_role").values
        action_types = tables["actions"].column("action_type").values
        judges = tables["relevance_labels"].column("judge").values
        problems = []
        if self.surface not in surfaces:
            problems.append(f"surface {self.surface!r} is not one of {list(surfaces)}")
        if self.prompt_from not in ("trace", "root_span"):
            problems.append(f"prompt_from {self.prompt_from!r} is not 'trace' or 'root_span'")
        for pattern, role in self.role_map.items():
            if role not in roles:
                problems.append(f"role_map[{pattern!r}] = {role!r} is not one of {list(roles)}")
        if self.default_role is not None and self.default_role not in roles:
            problems.append(f"default_role {self.default_role!r} is not one of {list(roles)}")
        if self.judge not in judges:
            problems.append(f"judge {self.judge!r} is not one of {list(judges)}")
        for label, grade in self.label_grades.items():
            if not 0 <= grade <= 3:
                problems.append(f"label_grades[{label!r}] = {grade} is outside 0..3")
        if len(self.score_thresholds) > 3:
            problems.append("score_thresholds: at most 3 thresholds (grades 0..3)")
        for pattern, action_type in self.action_type_map.items():
            if action_type not in action_types:
                problems.append(
                    f"action_type_map[{pattern!r}] = {action_type!r} is not one of "
                    f"{list(action_types)}"
                )
        if self.default_action_type not in action_types:
            problems.append(f"default_action_type {self.default_action_type!r} is not valid")
        if self.lineage_scope not in ("prompt", "session"):
            problems.append(f"lineage_scope {self.lineage_scope!r} is not 'prompt' or 'session'")
        if not self.part_name or "/" in self.part_name or self.part_name.startswith(("_", ".")):
            problems.append(f"part_name {self.part_name!r} must be a plain visible file name")
        if self.document_id_keys is not None and not all(
            isinstance(k, str) and k.strip() for k in self.document_id_keys
        ):
            problems.append("document_id_keys: names must be non-empty strings")
        if self.document_id_keys is not None and not self.document_id_keys:
            problems.append("document_id_keys: give at least one name (or null for the default)")
        if not all(isinstance(k, str) and k.strip() for k in self.tool_asset_keys):
            problems.append("tool_asset_keys: names must be non-empty strings")
        if problems:
            raise ValueError("lara ingest: invalid configuration: " + "; ".join(problems))

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> IngestConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"lara ingest: unknown configuration keys {unknown}")
        return cls(**dict(values))

    @classmethod
    def from_file(cls, path: Path) -> IngestConfig:
        """Read a YAML (or JSON) file whose keys are the field names."""
        text = Path(path).read_text()
        values = json.loads(text) if Path(path).suffix == ".json" else yaml.safe_load(text)
        return cls.from_mapping(values or {})

    def replace(self, **changes: Any) -> IngestConfig:
        return dataclasses.replace(self, **changes)

    def with_metadata(self, name: str | None) -> tuple[str, ...]:
        """`name`, then the same name inside the metadata attribute (when configured)."""
        if not name:
            return ()
        if not self.metadata_attribute or name.startswith(self.metadata_attribute + "."):
            return (name,)
        return (name, f"{self.metadata_attribute}.{name}")

    def as_record(self) -> dict[str, Any]:
        """The settings as plain JSON-able values (recorded with each ingest run)."""
        return json.loads(json.dumps(dataclasses.asdict(self)))


def match_pattern(mapping: Mapping[str, str], name: str | None) -> str | None:
    """The value of the first pattern (fnmatch, case-sensitive) matching `name`."""
    if name is None:
        return None
    for pattern, value in mapping.items():
        if fnmatch.fnmatchcase(name, pattern):
            return value
    return None
