"""Columnar attribute look-ups over the long attribute table of a span set (DuckDB).

A look-up asks, for every entity (a span, a document of a retrieval span, an
event), for the first of several attribute names that it carries. A name is
found

1. as an attribute of that exact name, else
2. as a path into a JSON-object attribute: `metadata.lara_role` finds
   `{"lara_role": ...}` inside a `metadata` attribute holding JSON text
   (OpenInference's layout for metadata, LangChain's `document.metadata`);
   `metadata.lara.role` finds `{"lara.role": ...}` and `{"lara": {"role": ...}}`;
   the longest such head first.

Names are query parameters, never SQL text; values never leave the data.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lara.ingest.span_core import fetch_frame, flatten_json_sql

LOOKUP_COLUMNS = ["entity", "value", "vtype", "found_key"]
MAX_PATH_PARTS = 6
_CANDIDATE_COLUMNS = ["alias", "rank", "head", "path", "found_key"]
_ids = itertools.count()


def _groupings(parts: list[str]) -> list[list[str]]:
    """Every way to read dotted parts as nested keys: a.b -> [[a.b], [a, b]]."""
    if len(parts) <= 1:
        return [parts]
    out = []
    for rest in _groupings(parts[1:]):
        out.append([parts[0], *rest])
        out.append([parts[0] + "." + rest[0], *rest[1:]])
    return out


def _json_path(keys: list[str]) -> str:
    return "$" + "".join('."' + key + '"' for key in keys)


def _candidates(spec: dict[str, Sequence[str]]) -> pd.DataFrame:
    """(alias, rank, head, path, found_key): each wanted name exactly (path null), then as a
    JSON path below each shorter head (longest head first)."""
    rows = []
    for alias, keys in spec.items():
        rank = 0
        for key in keys:
            if not key:
                continue
            rows.append((alias, rank, key, None, key))
            rank += 1
            parts = key.split(".")
            if '"' in key or len(parts) > MAX_PATH_PARTS:
                continue
            for cut in range(len(parts) - 1, 0, -1):
                for grouping in _groupings(parts[cut:]):
                    rows.append((alias, rank, ".".join(parts[:cut]), _json_path(grouping), key))
                rank += 1
    return pd.DataFrame(rows, columns=_CANDIDATE_COLUMNS)


# Every hit of a wanted name (entity, alias, value, vtype, found_key, rank; lower ranks win).
_HITS_SQL = """
with exact as (
    select t.entity, w.alias, t.value, t.vtype, w.found_key, w.rank
    from {table} as t
    join lookup_wanted as w on w.head = t.key and w.path is null
),
best_exact as (
    select entity, alias, min(rank) as rank from exact group by entity, alias
),
objects as (
    -- JSON-object attributes that may hold a wanted name, only where no better exact hit
    select t.entity, t.key, t.value
    from {table} as t
    where
        t.vtype = 'string'
        and t.key in (select head from lookup_wanted where path is not null)
        and ltrim(t.value) like '{{%'
),
nested as (
    select o.entity, w.alias, o.value, w.path, w.found_key, w.rank
    from objects as o
    join lookup_wanted as w on w.head = o.key and w.path is not null
    left join best_exact as b on b.entity = o.entity and b.alias = w.alias
    where b.rank is null or b.rank > w.rank
),
nested_values as (
    -- validity checked here, not in `nested`, so that only the values left are checked
    select
        entity,
        alias,
        case when json_valid(value) then json_extract(value, path) end as j,
        found_key,
        rank
    from nested
),
typed as (
    select
        entity,
        alias,
        case when json_type(j) = 'ARRAY' then j::varchar else j ->> '$' end as value,
        lara_vtype(json_type(j)) as vtype,
        found_key,
        rank
    from nested_values
    where j is not null and json_type(j) not in ('OBJECT', 'NULL')
)
select entity, alias, value, vtype, found_key, rank
from exact
union all
select entity, alias, value, vtype, found_key, rank
from typed
"""

# Per entity and alias, the value of the best-ranked hit.
_WANTED_SCHEMA = pa.schema(
    [(name, pa.int64() if name == "rank" else pa.string()) for name in _CANDIDATE_COLUMNS]
)

# Per entity and alias, the value of the best-ranked hit (as `_LOOKUP_SQL`, grouped: no window).
_BEST_SQL = f"""
select
    entity,
    alias,
    arg_min_null(value, rank) as value,
    arg_min_null(found_key, rank) as found_key
from ({_HITS_SQL})
group by entity, alias
"""

_LOOKUP_SQL = f"""
select entity, alias, value, vtype, found_key
from ({_HITS_SQL})
qualify row_number() over (partition by entity, alias order by rank) = 1
"""


class Lookup:
    """Attribute look-ups over a long table (`entity`, `key`, `value`, `vtype`)."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, long: pd.DataFrame | str, entity: str = "row"
    ):
        """`long`: a DataFrame, or the name of a DuckDB table of `con` (not copied);
        `entity`: its column naming the entity (for a table, any SQL expression over its
        columns, e.g. a struct of two)."""
        self.con = con
        self.name = f"lookup_{next(_ids)}"
        if isinstance(long, str):
            con.execute(
                f"create temp view {self.name} as "
                f"select {entity} as entity, key, value, vtype from {long}"
            )
            self.registered = False
        else:
            frame = long.rename(columns={entity: "entity"})
            table = pa.table(
                {
                    "entity": pa.array(frame["entity"].to_numpy(dtype="int64")),
                    "key": _text(frame["key"]),
                    "value": _text(frame["value"]),
                    "vtype": _text(frame["vtype"]),
                }
            )
            con.register(self.name, table)
            self.registered = True

    def close(self) -> None:
        if self.registered:
            self.con.unregister(self.name)
        else:
            self.con.execute(f"drop view {self.name}")

    def values(self, spec: dict[str, Sequence[str]]) -> pd.DataFrame:
        """Per entity and alias, the first of the alias's names found:
        (entity, alias, value, vtype, found_key)."""
        wanted = _candidates(spec)
        if wanted.empty:
            return pd.DataFrame(columns=["entity", "alias", "value", "vtype", "found_key"])
        self.con.register("lookup_wanted", wanted)
        try:
            return self.con.execute(_LOOKUP_SQL.format(table=self.name)).df()
        finally:
            self.con.unregister("lookup_wanted")

    def first(self, keys: Sequence[str]) -> pd.DataFrame:
        """Per entity, the value of the first of `keys` it has: LOOKUP_COLUMNS."""
        return self.values({"v": list(keys)})[LOOKUP_COLUMNS].reset_index(drop=True)

    def frame(self, spec: dict[str, Sequence[str]], index: pd.Index) -> pd.DataFrame:
        """One text column per alias (stripped, blanks null; object dtype), aligned to
        `index` (entities): the value of the alias's first name found, as in `values`."""
        best = self._best(spec, "select entity, alias, value from best")
        entities = best.column("entity").to_numpy()
        if index.equals(pd.RangeIndex(len(index))):  # the span rows 0..n-1: no look-up
            at = np.where((entities >= 0) & (entities < len(index)), entities, -1)
        else:
            at = index.get_indexer(entities)
        out = pd.DataFrame(index=index)
        for alias in spec:
            hit = pc.and_(pc.equal(best.column("alias"), alias), pa.array(at >= 0)).to_numpy(
                zero_copy_only=False
            )
            column = np.full(len(index), None, dtype=object)
            column[at[hit]] = clean_text_array(best.column("value").filter(hit))
            out[alias] = pd.Series(column, index=index, dtype=object)
        return out

    def joined(self, keys: Sequence[str], entities: str, keep: str, order: str) -> pa.Table:
        """The rows of the query `entities` (a column `entity`) with the first of `keys`
        each has (as in `first`), as an Arrow table: the columns `keep` (SQL over `e`),
        `value` and `found_key` (null when none), in `order`."""
        return self._best(
            {"v": list(keys)},
            f"select {keep}, b.value, b.found_key from ({entities}) as e "
            f"left join best as b using (entity) order by {order}",
        )

    def _best(self, spec: dict[str, Sequence[str]], query: str) -> pa.Table:
        """`query` run over `best` (entity, alias, value, found_key: per entity and alias,
        the value of the alias's first name found, as in `values`), as an Arrow table."""
        wanted = pa.Table.from_pandas(_candidates(spec), _WANTED_SCHEMA, preserve_index=False)
        self.con.register("lookup_wanted", wanted)
        try:
            return self.con.sql(
                f"with best as ({_BEST_SQL.format(table=self.name)}) {query}"
            ).to_arrow_table()
        finally:
            self.con.unregister("lookup_wanted")

    def series(self, keys: Sequence[str], index: pd.Index) -> pd.Series:
        """The first of `keys` per entity as text, aligned to `index` (entities), null if none."""
        return self.frame({"v": list(keys)}, index)["v"]

    def under(self, names: Sequence[str], entities: pd.Index) -> str:
        """Every value of `names` and of their flattened children (`name.<rest>`, a
        structured value) that the `entities` have, as a new temp table of `con` with
        (entity, value, vtype), each row once. Returns the table's name."""
        name = f"under_{next(_ids)}"
        self.con.register("under_names", pa.table({"name": pa.array(list(names), pa.string())}))
        self.con.register(
            "under_entities", pa.table({"entity": pa.array(entities.to_numpy("int64"))})
        )
        try:
            self.con.execute(
                f"""
                create temp table {name} as
                select distinct t.entity, t.value, t.vtype
                from {self.name} as t
                join under_names as n
                    on t.key = n.name or starts_with(t.key, n.name || '.')
                where t.entity in (select entity from under_entities)
                """
            )
        finally:
            self.con.unregister("under_names")
            self.con.unregister("under_entities")
        return name

    def indexed(self, prefix: str, entities: pd.Index | None = None) -> str:
        """Items of a flattened list attribute, `prefix.{i}.{rest}`, as a new temp table of
        `con` with (entity, position, key, value, vtype), `key` = rest; only `entities`
        when given. Returns the table's name."""
        name = f"items_{next(_ids)}"
        keep = ""
        if entities is not None:
            self.con.register(
                "indexed_entities", pa.table({"entity": pa.array(entities.to_numpy("int64"))})
            )
            keep = "and entity in (select entity from indexed_entities)"
        self.con.execute(
            f"""
            create temp table {name} as
            with items as (
                select
                    entity,
                    substr(key, length($prefix) + 2) as tail,
                    value,
                    vtype
                from {self.name}
                where starts_with(key, $prefix || '.') {keep}
            )
            select
                entity,
                cast(regexp_extract(tail, '^(\\d+)\\.', 1) as bigint) as position,
                regexp_replace(tail, '^\\d+\\.', '') as key,
                value,
                vtype
            from items
            where regexp_matches(tail, '^\\d+\\.')
            """,
            {"prefix": prefix},
        )
        if entities is not None:
            self.con.unregister("indexed_entities")
        return name


def _text(values: pd.Series) -> pa.Array:
    return pa.array(
        values.astype(object).where(values.notna(), None), pa.string(), from_pandas=True
    )


def clean_text(values: pd.Series) -> pd.Series:
    """Text with surrounding white space removed; blanks and nulls as None (object dtype)."""
    return pd.Series(clean_text_array(_text(values)), index=values.index, dtype=object)


def clean_text_array(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Arrow text as `clean_text` makes it: a numpy object array."""
    trimmed = pc.utf8_trim_whitespace(values.cast(pa.string()))
    trimmed = pc.if_else(pc.equal(trimmed, ""), pa.scalar(None, pa.string()), trimmed)
    return trimmed.to_numpy(zero_copy_only=False)


def as_bool_series(values: pd.Series) -> pd.Series:
    """true / 1 / yes -> True, false / 0 / no -> False, anything else null (object dtype)."""
    text = values.astype(object).where(values.notna(), None).astype("string").str.strip()
    text = text.str.lower()
    out = pd.Series([None] * len(values), index=values.index, dtype=object)
    out[text.isin(["true", "1", "yes", "1.0"]).fillna(False).to_numpy(dtype=bool)] = True
    out[text.isin(["false", "0", "no", "0.0"]).fillna(False).to_numpy(dtype=bool)] = False
    return out


TOKEN_SPLIT = r"[\s,;\"'()\[\]{}<>|]+"


# White space as Python's `str.isspace` has it (what `str.lstrip` strips), for RE2.
_SPACE = r"[\t\n\v\f\r\x1c-\x1f\x85\pZ]"

# (entity, token) of `reference_tokens`: the string leaves of the JSON values (`{values}`
# with entity, value, vtype), the other strings and integers whole, each whole and split.
_REFERENCE_TOKENS_SQL = r"""
with
typed as (
    select
        entity,
        value,
        vtype,
        vtype = 'list' or (vtype = 'string' and regexp_matches(value, '^{space}*[\[{{]'))
            as is_json
    from {values}
),
flat as materialized (
    {flat}
),
leaves as (
    select entity, value from typed where not is_json and vtype in ('string', 'int')
    union all
    -- a JSON-looking string of an entity none of whose JSON values could be read
    select entity, value from typed
    where is_json and vtype = 'string' and entity not in (select row from flat)
    union all
    select row as entity, value from flat where vtype in ('string', 'int')
    union all
    select entity, item ->> '$' as value
    from (select row as entity, unnest(value::json[]) as item from flat where vtype = 'list')
    where json_type(item) in ('VARCHAR', 'BIGINT', 'UBIGINT')
),
parts as (
    select entity, regexp_replace(value, '^\s+|\s+$', '', 'g') as token from leaves
    union all
    select entity, unnest(regexp_split_to_array(value, ?)) as token from leaves
)
select distinct entity, token from parts where token <> ''
order by entity, token
"""


def reference_tokens(con: duckdb.DuckDBPyConnection, values: pd.DataFrame | str) -> pd.DataFrame:
    """Strings in attribute values that may name an asset, as (entity, token), sorted.

    `values` (a DataFrame, or the name of a DuckDB table of `con`) has `entity`, `value`,
    `vtype`. JSON objects and lists (text starting with `{` or `[` after white space, or
    list values) contribute their string leaves and integers; plain strings themselves;
    integers their digits. Each string is a token whole and split on white space and
    punctuation. All in one DuckDB query.
    """
    if isinstance(values, pd.DataFrame):
        if values.empty:
            return pd.DataFrame(
                {"entity": pd.Series(dtype="int64"), "token": pd.Series(dtype=object)}
            )
        con.register("token_values", values[["entity", "value", "vtype"]])
        table = "token_values"
    else:
        table = values
    flat = flatten_json_sql(
        "select entity as row, 0::bigint as priority, null::varchar as prefix, value as j "
        "from typed where is_json"
    )
    try:
        return fetch_frame(
            con,
            _REFERENCE_TOKENS_SQL.format(space=_SPACE, values=table, flat=flat),
            [TOKEN_SPLIT],
        )
    finally:
        if isinstance(values, pd.DataFrame):
            con.unregister("token_values")
