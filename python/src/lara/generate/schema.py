"""What the generator writes, read from the log contract (:mod:`lara.contract`).

The tables, their columns, column order and types, required columns, ids,
enum values, ranges, list and timestamp columns and conflict keys all come
from ``models/staging/lara/_lara__sources.yml`` through
:func:`lara.contract.load_contract`. The generator adds only what the
contract does not say:

- which contract tables it writes (:data:`TABLES`, in writing order; the
  contract's ``label_sample_design`` and ``prompt_label_sample_design``
  are not simulated);
- the code order of each enum (:func:`coded`): the simulation draws integer
  codes (``CHAT = 0``, role shares in :data:`ROLES` order, ...), so the order
  is part of its parameters; the values must be exactly the contract's, or
  the import fails with the column's name;
- one physical type: ``stage_spans.latency_ms`` is written as whole
  milliseconds (int64), a value the contract's ``float`` accepts.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from lara.contract import Table, load_contract

STRING = pa.string()
TIMESTAMP = pa.timestamp("us", tz="UTC")
INT64 = pa.int64()
FLOAT64 = pa.float64()
BOOLEAN = pa.bool_()
STRING_LIST = pa.list_(pa.string())

#: Arrow type of each ``lara_type`` of the contract
ARROW_TYPES: dict[str, pa.DataType] = {
    "id": STRING,
    "string": STRING,
    "enum": STRING,
    "timestamp": TIMESTAMP,
    "boolean": BOOLEAN,
    "integer": INT64,
    "float": FLOAT64,
    "string_list": STRING_LIST,
}
#: columns written with another type than ARROW_TYPES gives their ``lara_type``
PHYSICAL_TYPES: dict[tuple[str, str], pa.DataType] = {("stage_spans", "latency_ms"): INT64}

CONTRACT_TABLES: dict[str, Table] = load_contract()

TABLES = (
    "prompts",
    "retrievals",
    "actions",
    "relevance_labels",
    "prompt_labels",
    "goal_labels",
    "stage_spans",
    "replay_documents",
    "replay_queries",
    "document_entities",
)
REPLAY_TABLES = ("replay_documents", "replay_queries", "document_entities")

_unknown = set(TABLES) - set(CONTRACT_TABLES)
if _unknown:  # pragma: no cover - guards edits of the contract
    raise RuntimeError(f"lara.generate: tables {sorted(_unknown)} are not in the log contract")


def coded(table: str, column: str, order: tuple[str, ...]) -> tuple[str, ...]:
    """The contract's values of enum ``table.column`` in the generator's code order.

    Raises RuntimeError when the contract's values differ from ``order``'s.
    """
    values = CONTRACT_TABLES[table].column(column).values
    if sorted(values) != sorted(order):
        raise RuntimeError(
            f"lara.generate: the contract allows {list(values)} in {table}.{column}, the "
            f"generator codes {list(order)}: update lara/generate/schema.py"
        )
    return order


SURFACES = coded("prompts", "surface", ("chat", "editor_assistant", "template_search"))
CHAT, EDITOR, TEMPLATE = range(len(SURFACES))
ROLES = coded(
    "retrievals",
    "retrieval_role",
    ("find", "browse", "operate", "generation_reference", "task_step", "context_dependent"),
)
FIND, BROWSE, OPERATE = range(3)
KINDS = coded("prompts", "prompt_kind", ("new_request", "rewrite", "follow_up"))
NEW, REWRITE, FOLLOW = range(len(KINDS))
ACTORS = coded("actions", "actor", ("user", "agent"))
USER, AGENT = range(len(ACTORS))
ACTION_TYPES = coded(
    "actions",
    "action_type",
    (
        "click",
        "select",
        "place",
        "edit",
        "follow_up",
        "export",
        "share",
        "download",
        "reject_result",
    ),
)
A_CLICK, A_SELECT, A_PLACE, A_EDIT, A_FOLLOW, A_EXPORT, A_SHARE, A_DOWNLOAD, A_REJECT = range(
    len(ACTION_TYPES)
)
#: judge codes: 0 llm, 1 human (label resolution: the higher code wins)
JUDGES = coded("relevance_labels", "judge", ("llm", "human"))
for _table in ("prompt_labels", "goal_labels"):
    coded(_table, "judge", JUDGES)
STAGES = coded("stage_spans", "stage", ("planner", "retrieval", "generation", "other"))
CF_STATUSES = coded("replay_documents", "counterfactual_status", ("ok", "agent_failed", "timeout"))

#: file schema of every table: the contract's columns, in its order
SCHEMAS: dict[str, pa.Schema] = {
    t: pa.schema(
        [
            (c.name, PHYSICAL_TYPES.get((t, c.name), ARROW_TYPES[c.lara_type]))
            for c in CONTRACT_TABLES[t].columns
        ]
    )
    for t in TABLES
}

_LIST_DICT = pa.list_(pa.dictionary(pa.int32(), pa.string()))
_ENUM = pa.dictionary(pa.int8(), pa.string())


def _memory_type(table: str, field: pa.Field) -> pa.DataType:
    if field.type == STRING_LIST:
        return _LIST_DICT
    enum = CONTRACT_TABLES[table].column(field.name).lara_type == "enum"
    return _ENUM if enum and table not in REPLAY_TABLES else field.type


#: in memory, asset lists and the enum columns of the log and label tables stay
#: dictionary-encoded; files get SCHEMAS (list<string>, string)
MEMORY_SCHEMAS: dict[str, pa.Schema] = {
    t: pa.schema([pa.field(f.name, _memory_type(t, f)) for f in schema])
    for t, schema in SCHEMAS.items()
}


def _rules(table: Table) -> dict[str, Any]:
    def names(lara_type: str) -> list[str]:
        return [c.name for c in table.columns if c.lara_type == lara_type]

    return {
        "required": [c.name for c in table.columns if c.required],
        "ids": names("id"),
        "enums": {c.name: c.values for c in table.columns if c.lara_type == "enum"},
        "ranges": {
            c.name: (c.min, c.max) for c in table.columns if c.min is not None or c.max is not None
        },
        "lists": names("string_list"),
        "timestamps": names("timestamp"),
        "key": list(table.key) or None,
    }


#: Validation rules of the contract per table, as the generator uses them (to
#: construct one-reason defects) and the tests' reference validator reads them.
#: ``ranges`` are inclusive ``(min, max)`` (``None`` = unbounded); ``ids`` are
#: id columns that must be non-blank when present; ``key`` is the conflict key
#: (``None``: only exact duplicates apply).
CONTRACT: dict[str, dict[str, Any]] = {t: _rules(CONTRACT_TABLES[t]) for t in TABLES}

REASONS = (
    "json_parse_error",
    "missing_required",
    "empty_id",
    "invalid_timestamp",
    "invalid_type",
    "invalid_enum",
    "out_of_range",
    "invalid_list",
    "conflicting_duplicate",
)
