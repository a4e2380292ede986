"""What the gate's outputs may show of a raw value: no user id, no user text, no markup.

Every raw value is hostile (ids, enum values, file and folder names). The gate
shows failing values so that a reader can find and fix them, with two limits:

- **Privacy** (every output: gate_results.json, failing_ids.csv, the GX
  results JSON, the Data Docs, the terminal): a user id (`user_id`) is shown
  only as its salted hash, `sha256:<64 hex>`, the same hash as the marts'
  hashed user keys (macros/privacy/hash_user_id.sql, salt
  `LARA_USER_ID_SALT`); user content (contract columns with `sensitive: true`,
  such as prompt and query texts, and the text of a line that is not JSON) is
  withheld, its length shown. The row is still named by its key and its
  `file:line`.
- **HTML** (the Data Docs): GX writes values into its pages as they are, so
  the results GX renders from are escaped first (`escape_results`): every
  string of every result becomes `html.escape(value)`, which is inert in
  text, in quoted attributes and in the JavaScript GX inlines. The run name
  GX puts into file paths and links is a safe token (`run_name`).
"""

from __future__ import annotations

import hashlib
import html
import os
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from lara.contract import Table
from lara.gate import reader

DEFAULT_SALT = "lara-sample-salt"
# Columns that identify a person: shown hashed.
USER_ID_COLUMNS = frozenset({"user_id"})
# Lists of failing values inside a GX result.
VALUE_LISTS = ("unexpected_list", "partial_unexpected_list")
INDEX_LISTS = ("unexpected_index_list", "partial_unexpected_index_list")
SAFE_RUN_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def user_id_salt() -> str:
    return os.environ.get("LARA_USER_ID_SALT", DEFAULT_SALT)


def hash_user_id(value: object, salt: str | None = None) -> object:
    """`sha256:` + sha256 of '<salt>|<user id>' (hex), as the marts' hashed keys; None stays."""
    if value is None:
        return None
    salt = user_id_salt() if salt is None else salt
    return "sha256:" + hashlib.sha256(f"{salt}|{value}".encode()).hexdigest()


def withhold(value: object) -> object:
    """User content: its length only."""
    if value is None:
        return None
    return f"[withheld user content: {len(str(value))} characters]"


def redactors(table: Table) -> dict[str, Any]:
    """Column -> how its values are shown in every gate output (absent: as they are)."""
    found: dict[str, Any] = {reader.PARSE_ERROR: withhold}
    for column in table.columns:
        if column.name in USER_ID_COLUMNS:
            found[column.name] = hash_user_id
        elif column.sensitive:
            found[column.name] = withhold
    return found


def _redact_index_rows(rows: list[Any], rules: dict[str, Any]) -> list[Any]:
    return [
        {k: rules[k](v) if k in rules else v for k, v in row.items()}
        if isinstance(row, dict)
        else row
        for row in rows
    ]


def redact_results(results: Any, table: Table) -> None:
    """Hash user ids and withhold user content in GX validation results, in place."""
    rules = redactors(table)
    for item in results.results:
        result = item.result or {}
        column = item.expectation_config.kwargs.get("column")
        rule = rules.get(column)
        if rule is not None:
            for name in VALUE_LISTS:
                if isinstance(result.get(name), list):
                    result[name] = [rule(v) for v in result[name]]
            if isinstance(result.get("partial_unexpected_counts"), list):
                result["partial_unexpected_counts"] = [
                    {**entry, "value": rule(entry.get("value"))}
                    if isinstance(entry, dict)
                    else entry
                    for entry in result["partial_unexpected_counts"]
                ]
        for name in INDEX_LISTS:
            if isinstance(result.get(name), list):
                result[name] = _redact_index_rows(result[name], rules)


def _escape(value: Any) -> Any:
    if isinstance(value, str):
        return html.escape(value, quote=True)
    if isinstance(value, dict):
        return {k: _escape(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_escape(v) for v in value]
    return value


def escape_results(results: Any) -> None:
    """HTML-escape every string GX renders from the data (values, ids, sources), in place."""
    for item in results.results:
        if item.result:
            for name in list(item.result):
                item.result[name] = _escape(item.result[name])
        info = item.exception_info
        if isinstance(info, dict):
            item.exception_info = _escape(info)


def run_name(partition: str) -> str:
    """The GX run name of a partition: the day, or a token for a folder that is not a day.

    GX puts run names into file paths, links and inline JavaScript unescaped;
    a `dt=` folder name is hostile, so only a plain date is used as is.
    """
    if SAFE_RUN_NAME.match(partition):
        return partition
    digest = hashlib.sha256(partition.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f"invalid-partition-{digest}"


def printable(text: object) -> str:
    """One line for a terminal: control and format characters as escapes."""
    return "".join(
        ch if unicodedata.category(ch)[0] != "C" else ch.encode("unicode_escape").decode()
        for ch in str(text)
    )


def run_names(partitions: Iterable[str]) -> dict[str, str]:
    return {p: run_name(p) for p in partitions}
