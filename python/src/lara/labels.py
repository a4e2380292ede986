"""Relevance labelling: a stratified sample to judge, importing judgements, weighted estimates.

- `label_sample`: draws a stratified random sample of retrievals from a built
  warehouse (strata: role x surface x ISO week by default), sizes per stratum
  or a total allocated proportionally or equally, seed fixed, and writes the
  judging file (CSV and JSON Lines: one row per (retrieval, top-K asset)) with
  each retrieval's inclusion probability n_h / N_h.
- `label_import`: validates returned judgements and appends them to the raw
  logs as `relevance_labels` partitions, plus the sample design as the
  contract extension table `label_sample_design`; malformed rows go to a
  rejects file with their reason.
- `weighted_mean`: the Hajek (or, with a known population size, the
  Horvitz-Thompson) estimate of a mean over the sampled population, with a
  linearisation variance and a normal interval. Tier 1 numbers computed on a
  labelled sample are unbiased for the population only when weighted so.

The unit-neutral pieces (`draw_design`, `write_sample_files`, `import_labels`
and the validation helpers, the shared command-line options) also serve the
Tier 0 prompt unit, `lara.prompt_labels`, which owns the `--unit` dispatch of
`lara label-sample` / `lara label-import` (it imports this module, never the
reverse).
"""

from __future__ import annotations

import argparse
import datetime as dt
import fnmatch
import functools
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from lara.arguments import whole_number
from lara.contract import Column, Table
from lara.ingest.writer import contract, write_jsonl_partitions

#: The optional contract extension table written by `label_import` (the sources
#: file may declare it; this definition is used until it does).
LABEL_SAMPLE_DESIGN = Table(
    name="label_sample_design",
    required_table=False,
    key=("retrieval_id", "sampled_at"),
    columns=(
        Column("retrieval_id", "id", required=True),
        Column("stratum", "string", required=True),
        Column("inclusion_probability", "float", required=True, min=0, max=1),
        Column("sampled_at", "timestamp", required=True),
        Column("stratum_population_size", "integer", min=1),
        Column("stratum_sample_size", "integer", min=1),
    ),
)
STRATUM_DIMENSIONS = ("retrieval_role", "surface", "iso_week")
JUDGING_COLUMNS = [
    "retrieval_id",
    "asset_id",
    "asset_rank",
    "query_text",
    "retrieval_role",
    "surface",
    "iso_week",
    "stratum",
    "stratum_population_size",
    "stratum_sample_size",
    "inclusion_probability",
    "sampled_at",
    "grade",
    "judge",
    "judged_at",
]
DEFAULT_RETRIEVAL_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:/#@+=-]{0,255}$"
DEFAULT_K = 10
JUDGES = ("human", "llm")
#: The design columns of sample_design.csv, after the unit's id column.
SAMPLE_DESIGN_COLUMNS = [
    "stratum",
    "stratum_population_size",
    "stratum_sample_size",
    "inclusion_probability",
    "sampled_at",
]


def design_spec() -> Table:
    return contract().get("label_sample_design", LABEL_SAMPLE_DESIGN)


# --- sampling -----------------------------------------------------------------------------


def relation_exists(con: duckdb.DuckDBPyConnection, schema: str, name: str) -> bool:
    found = con.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
        [schema, name],
    ).fetchone()
    return bool(found and found[0])


def _frame_sql(con: duckdb.DuckDBPyConnection, scope: str) -> str:
    """The sampling frame: in-scope retrievals with role, surface and ISO week."""
    if relation_exists(con, "intermediate", "int_retrievals_scoped"):
        where = {
            "tier": "where is_in_tier_scope",
            "non_synthetic": "where not is_synthetic",
            "all": "",
        }[scope]
        return f"""
            select retrieval_id, retrieval_role, surface, query_text, returned_asset_ids,
                retrieved_at, strftime(retrieved_at, '%G-W%V') as iso_week
            from intermediate.int_retrievals_scoped {where}
        """
    if not relation_exists(con, "staging", "stg_lara__retrievals"):
        raise FileNotFoundError(
            "lara label-sample: the warehouse has no staging.stg_lara__retrievals "
            "(run `dbt build` first)"
        )
    where = "" if scope == "all" else "where not coalesce(prompts.is_synthetic, false)"
    return f"""
        select retrievals.retrieval_id,
            coalesce(retrievals.retrieval_role, 'unknown') as retrieval_role,
            coalesce(prompts.surface, 'unknown') as surface,
            retrievals.query_text, retrievals.returned_asset_ids, retrievals.retrieved_at,
            strftime(retrievals.retrieved_at, '%G-W%V') as iso_week
        from staging.stg_lara__retrievals as retrievals
        left join staging.stg_lara__prompts as prompts
            on retrievals.prompt_id = prompts.prompt_id
        {where}
    """


def allocate(
    population: pd.Series,
    total: int,
    allocation: str = "proportional",
    min_per_stratum: int = 1,
) -> pd.Series:
    """Sample sizes per stratum (index) summing to `total` where possible.

    Each stratum first gets `min_per_stratum` (capped at its size), the rest is
    spread proportionally to the stratum sizes (`proportional`) or evenly
    (`equal`), largest remainders first (ties by stratum name), never above a
    stratum's size. When the minimums alone exceed `total`, they win.
    """
    if allocation not in ("proportional", "equal"):
        raise ValueError(f"allocation {allocation!r} is not 'proportional' or 'equal'")
    population = population.sort_index().astype("int64")
    caps = population.to_numpy()
    weights = caps.astype(float) if allocation == "proportional" else np.ones(len(caps))
    sizes = np.minimum(caps, max(min_per_stratum, 0))
    remaining = total - int(sizes.sum())
    while remaining > 0:
        room = caps - sizes
        eligible = room > 0
        if not eligible.any():
            break
        share = np.where(eligible, weights, 0.0)
        share = share / share.sum() * remaining
        add = np.minimum(np.floor(share).astype("int64"), room)
        if add.sum() == 0:
            order = np.lexsort((np.arange(len(caps)), -(share - np.floor(share))))
            for position in order[:remaining]:
                if eligible[position]:
                    add[position] = 1
        sizes = sizes + add
        remaining = total - int(sizes.sum())
    return pd.Series(sizes, index=population.index, dtype="int64")


def _sizes_from_patterns(
    population: pd.Series, sizes: Mapping[str, int], default_size: int
) -> pd.Series:
    def size_of(stratum: str) -> int:
        for pattern, size in sizes.items():
            if fnmatch.fnmatchcase(stratum, pattern):
                return int(size)
        return int(default_size)

    wanted = pd.Series([size_of(s) for s in population.index], index=population.index)
    return np.minimum(wanted, population).astype("int64")


def draw_stratified(
    frame: pd.DataFrame,
    sizes: pd.Series,
    seed: int,
    stratum_column: str = "stratum",
    id_column: str = "retrieval_id",
) -> pd.DataFrame:
    """Simple random samples without replacement of `sizes[h]` units per stratum h.

    The frame is put in `id_column` order first, so the same units and seed give
    the same sample whatever order the warehouse returned them in.
    """
    ordered = frame.sort_values(id_column, kind="stable").reset_index(drop=True)
    keys = np.random.default_rng(seed).random(len(ordered))
    ordered = ordered.assign(_key=keys).sort_values([stratum_column, "_key"], kind="stable")
    rank = ordered.groupby(stratum_column, sort=False).cumcount()
    wanted = ordered[stratum_column].map(sizes).fillna(0)
    return ordered[rank < wanted].drop(columns="_key").reset_index(drop=True)


def check_sample_options(
    total: int | None, sizes: Mapping[str, int] | None, strata: Sequence[str], dimensions: Sequence
) -> None:
    """The size and strata options every unit shares (ValueError on a bad one)."""
    if sizes is None and total is None:
        raise ValueError("lara label-sample: give a total or per-stratum sizes")
    unknown = [s for s in strata if s not in dimensions]
    if unknown or not strata:
        raise ValueError(f"lara label-sample: strata must be among {tuple(dimensions)}")


@dataclass(frozen=True)
class StratifiedDesign:
    """A drawn stratified sample: the units and N_h / n_h per stratum."""

    frame_size: int  # units in the frame
    population: pd.Series  # N_h by stratum name
    sizes: pd.Series  # n_h by stratum name
    #: The sampled units (in stratum, then random order) with `stratum`,
    #: `stratum_population_size`, `stratum_sample_size`, `inclusion_probability`.
    sample: pd.DataFrame

    def strata_sizes(self) -> dict[str, dict[str, int]]:
        """`_sample.json`'s strata_sizes: N_h and n_h per stratum."""
        table = pd.DataFrame(
            {
                "population_size": self.population,
                "sample_size": self.sizes.reindex(self.population.index),
            }
        )
        return {
            stratum: {
                "population_size": int(row.population_size),
                "sample_size": int(row.sample_size),
            }
            for stratum, row in table.iterrows()
        }


def draw_design(
    frame: pd.DataFrame,
    strata: Sequence[str],
    *,
    id_column: str,
    seed: int,
    total: int | None = None,
    allocation: str = "proportional",
    sizes: Mapping[str, int] | None = None,
    default_size: int = 0,
    min_per_stratum: int = 1,
) -> StratifiedDesign:
    """Stratify `frame` (one row per unit) by the `strata` columns and draw the sample.

    Stratum names are the dimension values joined by `|`. Sizes: `sizes`
    (fnmatch pattern -> n, first match wins, others `default_size`), else
    `total` allocated by `allocation` with `min_per_stratum`. Inclusion
    probability of a sampled unit: n_h / N_h. An empty frame is a ValueError.
    """
    if frame.empty:
        raise ValueError("lara label-sample: the sampling frame is empty (nothing in scope)")
    parts = [frame[name].astype(str) for name in strata]
    frame = frame.assign(
        stratum=parts[0].str.cat(parts[1:], sep="|") if len(parts) > 1 else parts[0]
    )
    population = frame.groupby("stratum").size()
    if sizes is not None:
        wanted = _sizes_from_patterns(population, sizes, default_size)
    else:
        wanted = allocate(population, int(total or 0), allocation, min_per_stratum)
    sample = draw_stratified(frame, wanted, seed, id_column=id_column)
    sample["stratum_population_size"] = sample["stratum"].map(population).astype("int64")
    sample["stratum_sample_size"] = sample["stratum"].map(wanted).astype("int64")
    sample["inclusion_probability"] = (
        sample["stratum_sample_size"] / sample["stratum_population_size"]
    )
    return StratifiedDesign(len(frame), population, wanted, sample)


def sampled_details(
    con: duckdb.DuckDBPyConnection,
    frame_sql: str,
    sample: pd.DataFrame,
    id_column: str,
    columns: Sequence[str],
) -> pd.DataFrame:
    """`sample` with `columns` of its units read from the frame query (the frame
    itself is read with ids and strata only: texts are fetched for the sample)."""
    con.register("sampled_ids", sample[[id_column]])
    selected = ", ".join(f"frame.{column}" for column in (id_column, *columns))
    details = con.execute(
        f"select {selected} from ({frame_sql}) as frame "
        f"inner join sampled_ids on frame.{id_column} = sampled_ids.{id_column}"
    ).df()
    return sample.merge(details, on=id_column, how="left")


def design_rows(sample: pd.DataFrame, id_column: str) -> pd.DataFrame:
    """sample_design.csv: the unit's id and its design columns, `sampled_at` as ISO text."""
    return sample[[id_column, *SAMPLE_DESIGN_COLUMNS]].assign(
        sampled_at=lambda d: d["sampled_at"].map(iso_utc)
    )


def write_sample_files(
    out: Path, judging: pd.DataFrame, design: pd.DataFrame, summary: Mapping[str, Any]
) -> None:
    """judging.csv, judging.jsonl (the same rows), sample_design.csv and _sample.json."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    judging.to_csv(out / "judging.csv", index=False)
    judging.to_json(out / "judging.jsonl", orient="records", lines=True, force_ascii=False)
    design.to_csv(out / "sample_design.csv", index=False)
    (out / "_sample.json").write_text(json.dumps(summary, indent=2))


def top_k_assets(returned: pd.Series, k: int) -> pd.Series:
    """First k distinct asset ids of each list (first occurrences, as trec_eval ranks)."""
    return returned.map(lambda ids: list(dict.fromkeys(ids if ids is not None else []))[:k])


def label_sample(
    warehouse: Path,
    out: Path,
    *,
    total: int | None = None,
    allocation: str = "proportional",
    sizes: Mapping[str, int] | None = None,
    default_size: int = 0,
    min_per_stratum: int = 1,
    k: int = DEFAULT_K,
    seed: int = 7,
    scope: str = "tier",
    include_empty: bool = False,
    strata: Sequence[str] = STRATUM_DIMENSIONS,
    sampled_at: dt.datetime | None = None,
) -> dict[str, Any]:
    """Draw the sample from `warehouse` and write the judging files under `out`.

    Strata: the values of `strata` (of retrieval_role, surface, iso_week) joined
    by `|`, e.g. `find|chat|2026-W32`. Sizes: `sizes` (stratum pattern -> n,
    fnmatch, first match wins, others `default_size`), else `total` allocated by
    `allocation`. `scope`: `tier` (Tier 1-3 population: not synthetic, not
    misrouted), `non_synthetic` or `all`. Empty results cannot be judged and are
    left out of the frame unless `include_empty`.

    Writes `judging.csv`, `judging.jsonl` (one row per retrieval x top-k asset,
    `grade` / `judge` / `judged_at` left blank for the judge), `sample_design.csv`
    (one row per sampled retrieval) and `_sample.json` (parameters and strata).
    """
    check_sample_options(total, sizes, strata, STRATUM_DIMENSIONS)
    if scope not in ("tier", "non_synthetic", "all"):
        raise ValueError(f"lara label-sample: scope {scope!r} is not tier|non_synthetic|all")
    sampled_at = (sampled_at or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        frame_sql = _frame_sql(con, scope)
        length = "" if include_empty else "where coalesce(len(returned_asset_ids), 0) > 0"
        frame = con.execute(
            f"select retrieval_id, {', '.join(STRATUM_DIMENSIONS)} from ({frame_sql}) {length}"
        ).df()
        design = draw_design(
            frame,
            strata,
            id_column="retrieval_id",
            seed=seed,
            total=total,
            allocation=allocation,
            sizes=sizes,
            default_size=default_size,
            min_per_stratum=min_per_stratum,
        )
        sample = sampled_details(
            con, frame_sql, design.sample, "retrieval_id", ["query_text", "returned_asset_ids"]
        )
    sample["sampled_at"] = pd.Timestamp(sampled_at)
    sample["asset_id"] = top_k_assets(sample["returned_asset_ids"], k)
    judging = sample.explode("asset_id")
    judging = judging[judging["asset_id"].notna()].copy()
    judging["asset_rank"] = judging.groupby("retrieval_id").cumcount() + 1
    judging = judging.sort_values(["stratum", "retrieval_id", "asset_rank"])
    for column in ("grade", "judge", "judged_at"):
        judging[column] = None
    judging = judging[JUDGING_COLUMNS].reset_index(drop=True)
    judging["sampled_at"] = judging["sampled_at"].map(iso_utc)
    summary = {
        "warehouse": str(warehouse),
        "sampled_at": iso_utc(sampled_at),
        "seed": seed,
        "k": k,
        "scope": scope,
        "strata_dimensions": list(strata),
        "allocation": "per_stratum" if sizes is not None else allocation,
        "total_requested": total,
        "min_per_stratum": min_per_stratum,
        "include_empty": include_empty,
        "retrievals_in_frame": design.frame_size,
        "strata": len(design.population),
        "retrievals_sampled": len(sample),
        "judging_rows": len(judging),
        "strata_sizes": design.strata_sizes(),
    }
    write_sample_files(out, judging, design_rows(sample, "retrieval_id"), summary)
    return summary


def iso_utc(value: Any) -> str:
    """A time as the contract's ISO-8601 UTC text, microseconds and `Z`."""
    stamp = pd.Timestamp(value)
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# --- importing judgements ---------------------------------------------------------------

REJECT_REASONS = (
    "json_parse_error",
    "missing_retrieval_id",
    "invalid_retrieval_id",
    "unknown_retrieval_id",
    "empty_asset_id",
    "invalid_grade",
    "invalid_judge",
    "invalid_judged_at",
    "invalid_inclusion_probability",
    "invalid_sampled_at",
    "missing_stratum",
    "conflicting_duplicate",
)
#: The reasons of a broken sample design, in the order `design_columns` checks them.
DESIGN_REJECT_REASONS = ("invalid_inclusion_probability", "invalid_sampled_at", "missing_stratum")


def read_judgements(path: Path) -> pd.DataFrame:
    """Every row as text, with its 1-based line (CSV: data row) and parse status.

    Columns `_line`, `_parse_error` (a JSON Lines line that is not a JSON object)
    and `_raw` (the row as read, for the rejects file) are added.
    """
    name = path.name
    if name.endswith(".csv"):
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
        raw["_line"] = np.arange(2, len(raw) + 2)
        raw["_parse_error"] = False
        raw["_raw"] = raw.drop(columns=["_line", "_parse_error"]).to_dict("records")
        return raw
    if not name.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
        raise ValueError(f"lara label-import: {path} is not .csv or .jsonl")
    import gzip

    opener = gzip.open if name.endswith(".gz") else open
    records = []
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
                ok = isinstance(value, dict)
            except ValueError:
                value, ok = None, False
            row = {k: ("" if v is None else str(v)) for k, v in value.items()} if ok else {}
            row.update({"_line": number, "_parse_error": not ok, "_raw": value if ok else line})
            records.append(row)
    return pd.DataFrame.from_records(records)


def text_column(frame: pd.DataFrame, column: str) -> pd.Series:
    """`column` as stripped text, "" where blank or absent."""
    if column not in frame.columns:
        return pd.Series([""] * len(frame), index=frame.index, dtype=object)
    return frame[column].fillna("").astype(str).str.strip()


def id_checks(
    ids: pd.Series, pattern: str, known_ids: Iterable[str] | None
) -> tuple[pd.Series, pd.Series]:
    """(matches `pattern` in full, is among `known_ids` (all True without them))."""
    compiled = re.compile(pattern)
    id_ok = ids.map(lambda v: bool(compiled.fullmatch(v)))
    known = ids.isin(set(known_ids)) if known_ids is not None else pd.Series(True, index=ids.index)
    return id_ok, known


def judge_columns(
    frame: pd.DataFrame, default_judge: str | None, imported_at: dt.datetime
) -> tuple[pd.Series, pd.Series, pd.Series]:
    """(judge lower-cased, blanks `default_judge`; judged_at UTC microseconds, blanks
    the import time; judged_at given but unparseable)."""
    judge = text_column(frame, "judge").str.lower()
    if default_judge:
        judge = judge.where(judge != "", default_judge)
    judged_text = text_column(frame, "judged_at")
    judged_at = pd.to_datetime(
        judged_text.where(judged_text != ""), utc=True, errors="coerce", format="mixed"
    )
    judged_at = judged_at.dt.as_unit("us")
    judged_bad = (judged_text != "") & judged_at.isna()
    judged_at = judged_at.fillna(pd.Timestamp(imported_at).as_unit("us"))
    return judge, judged_at, judged_bad


def design_columns(frame: pd.DataFrame) -> tuple[dict[str, pd.Series], list[pd.Series]]:
    """The sample design columns a judging file carries, typed, and the masks of
    `DESIGN_REJECT_REASONS` (all False when the file has no `inclusion_probability`)."""
    has_design = "inclusion_probability" in frame.columns
    probability = pd.to_numeric(text_column(frame, "inclusion_probability"), errors="coerce")
    sampled_text = text_column(frame, "sampled_at")
    sampled_at = pd.to_datetime(
        sampled_text.where(sampled_text != ""), utc=True, errors="coerce", format="mixed"
    )
    stratum = text_column(frame, "stratum")
    columns = {
        "stratum": stratum,
        "inclusion_probability": probability,
        "sampled_at": sampled_at,
        "stratum_population_size": pd.to_numeric(
            text_column(frame, "stratum_population_size"), errors="coerce"
        ),
        "stratum_sample_size": pd.to_numeric(
            text_column(frame, "stratum_sample_size"), errors="coerce"
        ),
    }
    problems = [
        has_design & ~((probability > 0) & (probability <= 1)),
        has_design & sampled_at.isna(),
        has_design & (stratum == ""),
    ]
    return columns, problems


def first_reason(
    frame: pd.DataFrame, conditions: Sequence[Any], reasons: Sequence[str]
) -> pd.Series:
    """Per row, the reason of the first true condition, None where none is."""
    masks = [np.asarray(condition, dtype=bool) for condition in conditions]
    reason = np.select(masks, list(reasons[: len(masks)]), default="")
    return pd.Series(reason, index=frame.index).replace("", None)


def mark_conflicting_duplicates(
    checked: pd.DataFrame, key: Sequence[str], values: Sequence[str]
) -> pd.DataFrame:
    """Refuse, as `conflicting_duplicate`, every valid row whose judgement `key`
    occurs with different `values` (no version is preferred)."""
    valid = checked[checked["reject_reason"].isna()]
    if valid.empty:
        return checked
    texts = [valid[column].astype(str) for column in values]
    signature = texts[0].str.cat(texts[1:], sep="\x1f") if len(texts) > 1 else texts[0]
    versions = signature.groupby([valid[column] for column in key]).transform("nunique")
    checked.loc[versions.index[versions > 1], "reject_reason"] = "conflicting_duplicate"
    return checked


def validate_judgements(
    frame: pd.DataFrame,
    *,
    default_judge: str | None = None,
    retrieval_id_pattern: str = DEFAULT_RETRIEVAL_ID_PATTERN,
    known_retrieval_ids: Iterable[str] | None = None,
    imported_at: dt.datetime,
) -> pd.DataFrame:
    """The rows with typed columns and `reject_reason` (null = valid, first failure wins)."""
    retrieval_id = text_column(frame, "retrieval_id")
    asset_id = text_column(frame, "asset_id")
    grade_text = text_column(frame, "grade")
    grade_number = pd.to_numeric(grade_text, errors="coerce")
    grade_ok = grade_text.str.fullmatch(r"[+]?\d+(\.0*)?") & grade_number.between(0, 3)
    judge, judged_at, judged_bad = judge_columns(frame, default_judge, imported_at)
    id_ok, known = id_checks(retrieval_id, retrieval_id_pattern, known_retrieval_ids)
    design, design_problems = design_columns(frame)
    conditions = [
        frame["_parse_error"].astype(bool),
        retrieval_id == "",
        ~id_ok,
        ~known,
        asset_id == "",
        ~grade_ok,
        ~judge.isin(JUDGES),
        judged_bad,
        *design_problems,
    ]
    out = pd.DataFrame(
        {
            "retrieval_id": retrieval_id,
            "asset_id": asset_id,
            "grade": grade_number,
            "judge": judge,
            "judged_at": judged_at,
            **design,
            "reject_reason": first_reason(frame, conditions, REJECT_REASONS),
            "_line": frame["_line"],
            "_raw": frame["_raw"],
        }
    )
    # The same judgement key with different grades: every version is refused.
    return mark_conflicting_duplicates(
        out, ["retrieval_id", "asset_id", "judge", "judged_at"], ["grade"]
    )


def write_rejects(refused: pd.DataFrame, target: Path) -> None:
    """One JSON line per refused row: its line, reason and the row as read."""
    with open(target, "w", encoding="utf-8") as handle:
        for record in refused[["_line", "reject_reason", "_raw"]].to_dict("records"):
            handle.write(
                json.dumps(
                    {
                        "line": int(record["_line"]),
                        "reject_reason": record["reject_reason"],
                        "row": record["_raw"],
                    },
                    default=str,
                )
                + "\n"
            )


def import_labels(
    file: Path,
    raw: Path,
    *,
    validate: Callable[..., pd.DataFrame],
    judged_column: str,
    labels_table: str,
    label_types: Mapping[str, str | None],
    design: Table,
    rejects: Path | None = None,
    skip_unjudged: bool = True,
    write_design: bool = True,
    imported_at: dt.datetime | None = None,
) -> dict[str, Any]:
    """The import of any unit: read, skip unjudged rows, validate, write, report.

    `validate(frame, imported_at=...)` returns the rows with typed columns (those of
    `label_types` and of the `design` table) and `reject_reason`. A row whose
    `judged_column` is blank is unjudged. Valid rows go to
    `<raw>/<labels_table>/dt=<judged day>/labels-<stamp>.jsonl`, exact duplicates
    once, the columns of `label_types` cast to their dtype (None: as they are);
    the design rows, where the file carries them, once per design key to
    `<raw>/<design.name>/dt=<sampled day>/design-<stamp>.jsonl`; refused rows to
    `rejects` (default `<file>.rejects.jsonl`).
    """
    file = Path(file)
    imported_at = (imported_at or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    stamp = imported_at.strftime("%Y%m%dT%H%M%S%fZ")
    frame = read_judgements(file)
    report: dict[str, Any] = {"rows_read": len(frame)}
    if frame.empty:
        return report | {"labels_written": 0, "rejected": 0, "unjudged_skipped": 0}  # no rows
    unjudged = (text_column(frame, judged_column) == "") & ~frame["_parse_error"].astype(bool)
    if skip_unjudged:
        frame = frame[~unjudged]
    report["unjudged_skipped"] = int(unjudged.sum()) if skip_unjudged else 0
    if frame.empty:
        return report | {"labels_written": 0, "rejected": 0, "design_rows_written": 0}
    checked = validate(frame, imported_at=imported_at)
    refused = checked[checked["reject_reason"].notna()]
    valid = checked[checked["reject_reason"].isna()]
    labels = valid[list(label_types)]
    before = len(labels)
    casts = {column: dtype for column, dtype in label_types.items() if dtype}
    labels = labels.drop_duplicates().astype(casts)
    report["exact_duplicates_dropped"] = before - len(labels)
    written = write_jsonl_partitions(
        labels, labels_table, Path(raw), "judged_at", f"labels-{stamp}.jsonl"
    )
    report["labels_written"] = len(labels)
    report["label_partitions"] = written
    design_written: dict[str, int] = {}
    if write_design and "inclusion_probability" in frame.columns and not valid.empty:
        rows = valid[[c.name for c in design.columns]].drop_duplicates(list(design.key))
        design_written = write_jsonl_partitions(
            rows, design, Path(raw), "sampled_at", f"design-{stamp}.jsonl"
        )
    report["design_rows_written"] = sum(design_written.values())
    report["rejected"] = len(refused)
    report["rejected_by_reason"] = refused["reject_reason"].value_counts().sort_index().to_dict()
    if len(refused):
        target = Path(rejects) if rejects else file.with_name(file.name + ".rejects.jsonl")
        write_rejects(refused, target)
        report["rejects_file"] = str(target)
    return report


def label_import(
    file: Path,
    raw: Path,
    *,
    rejects: Path | None = None,
    default_judge: str | None = None,
    retrieval_id_pattern: str = DEFAULT_RETRIEVAL_ID_PATTERN,
    known_retrieval_ids: Iterable[str] | None = None,
    skip_unjudged: bool = True,
    write_design: bool = True,
    imported_at: dt.datetime | None = None,
) -> dict[str, Any]:
    """Validate a returned judging file and append its labels to the raw logs at `raw`.

    Valid rows go to `<raw>/relevance_labels/dt=<judged day>/labels-<timestamp>.jsonl`
    (`judged_at` defaults to the import time where blank); the sample design of
    their retrievals, where the file carries it (label-sample's columns), to
    `<raw>/label_sample_design/dt=<sampled day>/design-<timestamp>.jsonl`.
    Rows with a blank grade are skipped as unjudged (`skip_unjudged`, else
    rejected). Refused rows, with `reject_reason` and their line, go to `rejects`
    (default `<file>.rejects.jsonl`). Exact duplicate rows are written once.
    """
    return import_labels(
        file,
        raw,
        validate=functools.partial(
            validate_judgements,
            default_judge=default_judge,
            retrieval_id_pattern=retrieval_id_pattern,
            known_retrieval_ids=known_retrieval_ids,
        ),
        judged_column="grade",
        labels_table="relevance_labels",
        label_types={
            "retrieval_id": None,
            "asset_id": None,
            "grade": "int64",
            "judge": None,
            "judged_at": None,
        },
        design=design_spec(),
        rejects=rejects,
        skip_unjudged=skip_unjudged,
        write_design=write_design,
        imported_at=imported_at,
    )


# --- weighted estimates -------------------------------------------------------------------


@dataclass(frozen=True)
class WeightedEstimate:
    """A design-weighted mean with its linearisation variance and normal interval."""

    estimate: float
    variance: float
    std_error: float
    ci_low: float
    ci_high: float
    confidence: float
    n: int
    effective_n: float
    estimator: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def weighted_mean(
    values: Sequence[float] | np.ndarray,
    inclusion_probabilities: Sequence[float] | np.ndarray,
    strata: Sequence[Any] | np.ndarray | None = None,
    population_size: float | None = None,
    confidence: float = 0.95,
    finite_population_correction: bool = True,
) -> WeightedEstimate:
    """Design-weighted mean of `values` sampled with `inclusion_probabilities` (pi_i).

    Without `population_size`: the Hajek ratio estimator
        y_hat = sum(y_i / pi_i) / sum(1 / pi_i),
    nearly unbiased, and the one to use when the frame size is only estimated.
    With `population_size` N: the Horvitz-Thompson estimator sum(y_i / pi_i) / N,
    unbiased.

    Variance: Taylor linearisation with z_i = (y_i - y_hat) / (pi_i * N_hat) (Hajek)
    or z_i = y_i / (pi_i * N) (HT), v = sum_h (1 - f_h) n_h / (n_h - 1)
    sum_{i in h} (z_i - mean_h z)^2, over the sampling `strata` (one stratum when
    None); f_h = mean pi in stratum h (the sampling fraction of a simple random
    sample within h), used when `finite_population_correction`. Strata with a
    single sampled unit contribute no variance. Interval: normal, at `confidence`.
    """
    y = np.asarray(values, dtype=float)
    pi = np.asarray(inclusion_probabilities, dtype=float)
    if y.shape != pi.shape or y.ndim != 1:
        raise ValueError("values and inclusion_probabilities must be 1-d and of equal length")
    if len(y) == 0:
        raise ValueError("weighted_mean of an empty sample")
    if np.any(~np.isfinite(y)) or np.any(~np.isfinite(pi)):
        raise ValueError("values and inclusion probabilities must be finite")
    if np.any((pi <= 0) | (pi > 1)):
        raise ValueError("inclusion probabilities must be in (0, 1]")
    weights = 1.0 / pi
    if population_size is None:
        total_weight = weights.sum()
        estimate = float((weights * y).sum() / total_weight)
        z = weights * (y - estimate) / total_weight
        estimator = "hajek"
    else:
        if population_size <= 0:
            raise ValueError("population_size must be positive")
        estimate = float((weights * y).sum() / population_size)
        z = weights * y / population_size
        estimator = "horvitz_thompson"
    if strata is None:
        labels = np.zeros(len(y), dtype=np.int64)
    else:
        labels = pd.factorize(np.asarray(strata, dtype=object))[0]
    counts = np.bincount(labels)
    deviation = z - (np.bincount(labels, weights=z) / counts)[labels]
    squares = np.bincount(labels, weights=deviation**2)
    factor = np.where(counts > 1, counts / np.maximum(counts - 1, 1), 0.0)
    if finite_population_correction:
        factor = factor * (1 - np.bincount(labels, weights=pi) / counts)
    variance = float((factor * squares).sum())
    std_error = math.sqrt(max(variance, 0.0))
    quantile = NormalDist().inv_cdf(0.5 + confidence / 2)
    return WeightedEstimate(
        estimate=estimate,
        variance=variance,
        std_error=std_error,
        ci_low=estimate - quantile * std_error,
        ci_high=estimate + quantile * std_error,
        confidence=confidence,
        n=len(y),
        effective_n=float(weights.sum() ** 2 / (weights**2).sum()),
        estimator=estimator,
    )


# --- command line -------------------------------------------------------------------------
# The shared options and runners; `lara.prompt_labels` builds the `lara label-sample` /
# `lara label-import` commands (with --unit) from them and calls the mains below for
# retrievals.


def size_pairs(values: list[str] | None) -> dict[str, int] | None:
    """`--size PATTERN=N` values as {pattern: n} (None when none were given)."""
    if not values:
        return None
    out: dict[str, int] = {}
    for value in values:
        pattern, sep, size = value.rpartition("=")
        if not sep or not pattern or not size.isdigit():
            raise SystemExit(f"lara label-sample: --size expects STRATUM_PATTERN=N, got {value!r}")
        out[pattern] = int(size)
    return out


def add_sampling_arguments(
    parser: argparse.ArgumentParser, unit: str = "retrievals", example: str = "role|surface|week"
) -> None:
    """The options of every unit's sample: where, how many, how allocated, the seed."""
    parser.add_argument("--warehouse", help="DuckDB warehouse (default: LARA_DUCKDB_PATH)")
    parser.add_argument("--out", required=True, help="folder for the judging files")
    parser.add_argument("--total", type=whole_number(1), help=f"total {unit} to sample")
    parser.add_argument("--allocation", choices=["proportional", "equal"], default="proportional")
    parser.add_argument(
        "--size",
        action="append",
        metavar="STRATUM_PATTERN=N",
        help=f"{unit} per stratum (fnmatch on {example}); repeatable",
    )
    parser.add_argument(
        "--default-size", type=whole_number(0), default=0, help="for strata no --size matches"
    )
    parser.add_argument("--min-per-stratum", type=whole_number(0), default=1)
    parser.add_argument("--seed", type=int, default=7)


def add_label_sample_arguments(parser: argparse.ArgumentParser) -> None:
    """`label-sample` for retrievals alone (`lara.prompt_labels` adds `--unit`)."""
    add_sampling_arguments(parser)
    parser.add_argument(
        "--k", type=whole_number(1), default=DEFAULT_K, help="top-K assets per retrieval"
    )
    parser.add_argument("--scope", choices=["tier", "non_synthetic", "all"], default="tier")
    parser.add_argument("--include-empty", action="store_true")
    parser.add_argument(
        "--strata",
        default=",".join(STRATUM_DIMENSIONS),
        help=f"comma-separated stratum dimensions among {','.join(STRATUM_DIMENSIONS)}",
    )
    parser.set_defaults(func=label_sample_main)


def run_sampler(
    args: argparse.Namespace, sampler: Callable[..., dict[str, Any]], **unit_options: Any
) -> dict[str, Any] | None:
    """`sampler(warehouse, out, ...)` with the shared options of `args`: its summary,
    or None after printing why it could not draw (the command then exits 2)."""
    from lara.paths import warehouse_path

    warehouse = Path(args.warehouse) if args.warehouse else warehouse_path()
    try:
        return sampler(
            warehouse,
            Path(args.out),
            total=args.total,
            allocation=args.allocation,
            sizes=size_pairs(args.size),
            default_size=args.default_size,
            min_per_stratum=args.min_per_stratum,
            seed=args.seed,
            strata=[s.strip() for s in args.strata.split(",") if s.strip()],
            **unit_options,
        )
    except (ValueError, FileNotFoundError, duckdb.Error) as error:
        print(str(error), file=sys.stderr)
        return None


def label_sample_main(args: argparse.Namespace) -> int:
    summary = run_sampler(
        args,
        label_sample,
        k=args.k,
        scope=args.scope,
        include_empty=args.include_empty,
    )
    if summary is None:
        return 2
    print(
        f"lara label-sample: {summary['retrievals_sampled']} of {summary['retrievals_in_frame']} "
        f"retrievals in {summary['strata']} strata, {summary['judging_rows']} pairs to judge "
        f"-> {args.out}/judging.csv, judging.jsonl"
    )
    return 0


def add_import_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of every unit's import (the id pattern is the unit's own)."""
    parser.add_argument("file", help="returned judging file (.csv or .jsonl)")
    parser.add_argument("--out", required=True, dest="raw", help="raw log root (LARA_RAW_PATH)")
    parser.add_argument("--rejects", help="rejects file (default <file>.rejects.jsonl)")
    parser.add_argument("--default-judge", choices=list(JUDGES))
    parser.add_argument(
        "--sample",
        help="label-sample output folder: only the ids of its sample design are accepted",
    )
    parser.add_argument(
        "--reject-unjudged",
        action="store_true",
        help="rows left unjudged (blank grade, or blank has_retrieval_intent) are errors",
    )
    parser.add_argument(
        "--no-design",
        action="store_true",
        help="do not write the sample design (label_sample_design; prompt_label_sample_design "
        "for prompts)",
    )
    parser.add_argument(
        "--allow-rejects", action="store_true", help="exit 0 even when rows were rejected"
    )


def add_label_import_arguments(parser: argparse.ArgumentParser) -> None:
    """`label-import` for retrievals alone (`lara.prompt_labels` adds `--unit`)."""
    add_import_arguments(parser)
    parser.add_argument("--retrieval-id-pattern", default=DEFAULT_RETRIEVAL_ID_PATTERN)
    parser.set_defaults(func=label_import_main)


def sample_ids(sample: str | Path, id_column: str) -> set[str]:
    """The unit ids of a label-sample output folder (its sample_design.csv)."""
    path = Path(sample) / "sample_design.csv"
    design = pd.read_csv(path, dtype=str, keep_default_na=False)
    if id_column not in design.columns:
        raise ValueError(
            f"lara label-import: {path} has no {id_column} (a sample of another unit?)"
        )
    return set(design[id_column])


def run_import(call: Callable[[], dict[str, Any]], allow_rejects: bool) -> int:
    """Run an import, print its report; exit 2 on invalid input (an unreadable file,
    a bad id pattern, a missing sample), 1 when rows were
    rejected (unless `allow_rejects`), else 0."""
    try:
        report = call()
    except (ValueError, FileNotFoundError, FileExistsError, re.error) as error:
        print(str(error), file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2, default=str))
    if report.get("rejected") and not allow_rejects:
        print(
            f"lara label-import: {report['rejected']} row(s) rejected, see "
            f"{report.get('rejects_file')}",
            file=sys.stderr,
        )
        return 1
    return 0


def label_import_main(args: argparse.Namespace) -> int:
    def call() -> dict[str, Any]:
        return label_import(
            Path(args.file),
            Path(args.raw),
            rejects=Path(args.rejects) if args.rejects else None,
            default_judge=args.default_judge,
            retrieval_id_pattern=args.retrieval_id_pattern,
            known_retrieval_ids=sample_ids(args.sample, "retrieval_id") if args.sample else None,
            skip_unjudged=not args.reject_unjudged,
            write_design=not args.no_design,
        )

    return run_import(call, args.allow_rejects)
