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
"""

from __future__ import annotations

import argparse
import datetime as dt
import fnmatch
import json
import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import duckdb
import numpy as np
import pandas as pd

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


def design_spec() -> Table:
    return contract().get("label_sample_design", LABEL_SAMPLE_DESIGN)


# --- sampling -----------------------------------------------------------------------------


def _relation_exists(con: duckdb.DuckDBPyConnection, schema: str, name: str) -> bool:
    found = con.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
        [schema, name],
    ).fetchone()
    return bool(found and found[0])


def _frame_sql(con: duckdb.DuckDBPyConnection, scope: str) -> str:
    """The sampling frame: in-scope retrievals with role, surface and ISO week."""
    if _relation_exists(con, "intermediate", "int_retrievals_scoped"):
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
    if not _relation_exists(con, "staging", "stg_lara__retrievals"):
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
    frame: pd.DataFrame, sizes: pd.Series, seed: int, stratum_column: str = "stratum"
) -> pd.DataFrame:
    """Simple random samples without replacement of `sizes[h]` units per stratum h."""
    ordered = frame.sort_values("retrieval_id", kind="stable").reset_index(drop=True)
    keys = np.random.default_rng(seed).random(len(ordered))
    ordered = ordered.assign(_key=keys).sort_values([stratum_column, "_key"], kind="stable")
    rank = ordered.groupby(stratum_column, sort=False).cumcount()
    wanted = ordered[stratum_column].map(sizes).fillna(0)
    return ordered[rank < wanted].drop(columns="_key").reset_index(drop=True)


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
    k: int = 10,
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
    if sizes is None and total is None:
        raise ValueError("lara label-sample: give a total or per-stratum sizes")
    unknown = [s for s in strata if s not in STRATUM_DIMENSIONS]
    if unknown or not strata:
        raise ValueError(f"lara label-sample: strata must be among {STRATUM_DIMENSIONS}")
    if scope not in ("tier", "non_synthetic", "all"):
        raise ValueError(f"lara label-sample: scope {scope!r} is not tier|non_synthetic|all")
    sampled_at = (sampled_at or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        frame_sql = _frame_sql(con, scope)
        length = "" if include_empty else "where coalesce(len(returned_asset_ids), 0) > 0"
        frame = con.execute(
            f"select retrieval_id, {', '.join(STRATUM_DIMENSIONS)} from ({frame_sql}) {length}"
        ).df()
        parts = [frame[name].astype(str) for name in strata]
        frame["stratum"] = parts[0].str.cat(parts[1:], sep="|") if len(parts) > 1 else parts[0]
        population = frame.groupby("stratum").size()
        if sizes is not None:
            wanted = _sizes_from_patterns(population, sizes, default_size)
        else:
            wanted = allocate(population, int(total), allocation, min_per_stratum)
        sample = draw_stratified(frame, wanted, seed)
        sample["stratum_population_size"] = sample["stratum"].map(population).astype("int64")
        sample["stratum_sample_size"] = sample["stratum"].map(wanted).astype("int64")
        sample["inclusion_probability"] = (
            sample["stratum_sample_size"] / sample["stratum_population_size"]
        )
        con.register("sampled_ids", sample[["retrieval_id"]])
        details = con.execute(
            f"select frame.retrieval_id, frame.query_text, frame.returned_asset_ids "
            f"from ({frame_sql}) as frame "
            f"inner join sampled_ids on frame.retrieval_id = sampled_ids.retrieval_id"
        ).df()
    sample = sample.merge(details, on="retrieval_id", how="left")
    sample["sampled_at"] = pd.Timestamp(sampled_at)
    sample["asset_id"] = top_k_assets(sample["returned_asset_ids"], k)
    judging = sample.explode("asset_id")
    judging = judging[judging["asset_id"].notna()].copy()
    judging["asset_rank"] = judging.groupby("retrieval_id").cumcount() + 1
    judging = judging.sort_values(["stratum", "retrieval_id", "asset_rank"])
    for column in ("grade", "judge", "judged_at"):
        judging[column] = None
    judging = judging[JUDGING_COLUMNS].reset_index(drop=True)
    judging["sampled_at"] = judging["sampled_at"].map(_iso)

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    judging.to_csv(out / "judging.csv", index=False)
    judging.to_json(out / "judging.jsonl", orient="records", lines=True, force_ascii=False)
    design = sample[
        [
            "retrieval_id",
            "stratum",
            "stratum_population_size",
            "stratum_sample_size",
            "inclusion_probability",
            "sampled_at",
        ]
    ].assign(sampled_at=lambda d: d["sampled_at"].map(_iso))
    design.to_csv(out / "sample_design.csv", index=False)
    strata_table = pd.DataFrame(
        {"population_size": population, "sample_size": wanted.reindex(population.index)}
    )
    summary = {
        "warehouse": str(warehouse),
        "sampled_at": _iso(sampled_at),
        "seed": seed,
        "k": k,
        "scope": scope,
        "strata_dimensions": list(strata),
        "allocation": "per_stratum" if sizes is not None else allocation,
        "total_requested": total,
        "min_per_stratum": min_per_stratum,
        "include_empty": include_empty,
        "retrievals_in_frame": len(frame),
        "strata": len(population),
        "retrievals_sampled": len(sample),
        "judging_rows": len(judging),
        "strata_sizes": {
            stratum: {
                "population_size": int(row.population_size),
                "sample_size": int(row.sample_size),
            }
            for stratum, row in strata_table.iterrows()
        },
    }
    (out / "_sample.json").write_text(json.dumps(summary, indent=2))
    return summary


def _iso(value: Any) -> str:
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


def _read_judgements(path: Path) -> pd.DataFrame:
    """Every row as text, with its 1-based line (CSV: data row) and parse status."""
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


def _text(frame: pd.DataFrame, column: str) -> pd.Series:
    if column not in frame.columns:
        return pd.Series([""] * len(frame), index=frame.index, dtype=object)
    return frame[column].fillna("").astype(str).str.strip()


def validate_judgements(
    frame: pd.DataFrame,
    *,
    default_judge: str | None = None,
    retrieval_id_pattern: str = DEFAULT_RETRIEVAL_ID_PATTERN,
    known_retrieval_ids: Iterable[str] | None = None,
    imported_at: dt.datetime,
) -> pd.DataFrame:
    """The rows with typed columns and `reject_reason` (null = valid, first failure wins)."""
    retrieval_id = _text(frame, "retrieval_id")
    asset_id = _text(frame, "asset_id")
    grade_text = _text(frame, "grade")
    judge = _text(frame, "judge").str.lower()
    if default_judge:
        judge = judge.where(judge != "", default_judge)
    judged_text = _text(frame, "judged_at")
    grade_number = pd.to_numeric(grade_text, errors="coerce")
    grade_ok = grade_text.str.fullmatch(r"[+]?\d+(\.0*)?") & grade_number.between(0, 3)
    judged_at = pd.to_datetime(
        judged_text.where(judged_text != ""), utc=True, errors="coerce", format="mixed"
    )
    judged_at = judged_at.dt.as_unit("us")
    judged_bad = (judged_text != "") & judged_at.isna()
    judged_at = judged_at.fillna(pd.Timestamp(imported_at).as_unit("us"))
    pattern = re.compile(retrieval_id_pattern)
    id_ok = retrieval_id.map(lambda v: bool(pattern.fullmatch(v)))
    known = (
        retrieval_id.isin(set(known_retrieval_ids))
        if known_retrieval_ids is not None
        else pd.Series(True, index=frame.index)
    )
    has_design = "inclusion_probability" in frame.columns
    probability = pd.to_numeric(_text(frame, "inclusion_probability"), errors="coerce")
    sampled_text = _text(frame, "sampled_at")
    sampled_at = pd.to_datetime(
        sampled_text.where(sampled_text != ""), utc=True, errors="coerce", format="mixed"
    )
    stratum = _text(frame, "stratum")
    parse_error = frame["_parse_error"].astype(bool)
    conditions = [
        parse_error,
        retrieval_id == "",
        ~id_ok,
        ~known,
        asset_id == "",
        ~grade_ok,
        ~judge.isin(["human", "llm"]),
        judged_bad,
        has_design & ~((probability > 0) & (probability <= 1)),
        has_design & sampled_at.isna(),
        has_design & (stratum == ""),
    ]
    conditions = [np.asarray(condition, dtype=bool) for condition in conditions]
    reason = np.select(conditions, REJECT_REASONS[: len(conditions)], default="")
    out = pd.DataFrame(
        {
            "retrieval_id": retrieval_id,
            "asset_id": asset_id,
            "grade": grade_number,
            "judge": judge,
            "judged_at": judged_at,
            "stratum": stratum,
            "inclusion_probability": probability,
            "sampled_at": sampled_at,
            "stratum_population_size": pd.to_numeric(
                _text(frame, "stratum_population_size"), errors="coerce"
            ),
            "stratum_sample_size": pd.to_numeric(
                _text(frame, "stratum_sample_size"), errors="coerce"
            ),
            "reject_reason": pd.Series(reason, index=frame.index).replace("", None),
            "_line": frame["_line"],
            "_raw": frame["_raw"],
        }
    )
    # The same judgement key with different grades: every version is refused.
    valid = out["reject_reason"].isna()
    key = ["retrieval_id", "asset_id", "judge", "judged_at"]
    grades = out[valid].groupby(key)["grade"].transform("nunique")
    conflicting = grades.index[grades > 1]
    out.loc[conflicting, "reject_reason"] = "conflicting_duplicate"
    return out


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
    file = Path(file)
    imported_at = (imported_at or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    stamp = imported_at.strftime("%Y%m%dT%H%M%S%fZ")
    frame = _read_judgements(file)
    report: dict[str, Any] = {"rows_read": len(frame)}
    if frame.empty:
        return report | {"labels_written": 0, "rejected": 0, "unjudged_skipped": 0}  # no rows
    unjudged = (_text(frame, "grade") == "") & ~frame["_parse_error"].astype(bool)
    if skip_unjudged:
        frame = frame[~unjudged]
    report["unjudged_skipped"] = int(unjudged.sum()) if skip_unjudged else 0
    if frame.empty:
        return report | {"labels_written": 0, "rejected": 0, "design_rows_written": 0}
    checked = validate_judgements(
        frame,
        default_judge=default_judge,
        retrieval_id_pattern=retrieval_id_pattern,
        known_retrieval_ids=known_retrieval_ids,
        imported_at=imported_at,
    )
    refused = checked[checked["reject_reason"].notna()]
    valid = checked[checked["reject_reason"].isna()]
    labels = valid[["retrieval_id", "asset_id", "grade", "judge", "judged_at"]]
    before = len(labels)
    labels = labels.drop_duplicates().assign(grade=lambda d: d["grade"].astype("int64"))
    report["exact_duplicates_dropped"] = before - len(labels)
    written = write_jsonl_partitions(
        labels, "relevance_labels", Path(raw), "judged_at", f"labels-{stamp}.jsonl"
    )
    report["labels_written"] = len(labels)
    report["label_partitions"] = written
    design_written: dict[str, int] = {}
    if write_design and "inclusion_probability" in frame.columns and not valid.empty:
        design = valid[[c.name for c in design_spec().columns]].drop_duplicates(
            ["retrieval_id", "sampled_at"]
        )
        design_written = write_jsonl_partitions(
            design, design_spec(), Path(raw), "sampled_at", f"design-{stamp}.jsonl"
        )
    report["design_rows_written"] = sum(design_written.values())
    report["rejected"] = len(refused)
    report["rejected_by_reason"] = refused["reject_reason"].value_counts().sort_index().to_dict()
    if len(refused):
        target = Path(rejects) if rejects else file.with_name(file.name + ".rejects.jsonl")
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
        report["rejects_file"] = str(target)
    return report


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


def _size_pairs(values: list[str] | None) -> dict[str, int] | None:
    if not values:
        return None
    out: dict[str, int] = {}
    for value in values:
        pattern, sep, size = value.rpartition("=")
        if not sep or not pattern or not size.isdigit():
            raise SystemExit(f"lara label-sample: --size expects STRATUM_PATTERN=N, got {value!r}")
        out[pattern] = int(size)
    return out


def add_label_sample_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--warehouse", help="DuckDB warehouse (default: LARA_DUCKDB_PATH)")
    parser.add_argument("--out", required=True, help="folder for the judging files")
    parser.add_argument("--total", type=int, help="total retrievals to sample")
    parser.add_argument("--allocation", choices=["proportional", "equal"], default="proportional")
    parser.add_argument(
        "--size",
        action="append",
        metavar="STRATUM_PATTERN=N",
        help="retrievals per stratum (fnmatch on role|surface|week); repeatable",
    )
    parser.add_argument("--default-size", type=int, default=0, help="for strata no --size matches")
    parser.add_argument("--min-per-stratum", type=int, default=1)
    parser.add_argument("--k", type=int, default=10, help="top-K assets per retrieval")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scope", choices=["tier", "non_synthetic", "all"], default="tier")
    parser.add_argument("--include-empty", action="store_true")
    parser.add_argument(
        "--strata",
        default=",".join(STRATUM_DIMENSIONS),
        help=f"comma-separated stratum dimensions among {','.join(STRATUM_DIMENSIONS)}",
    )
    parser.set_defaults(func=label_sample_main)


def label_sample_main(args: argparse.Namespace) -> int:
    from lara.paths import warehouse_path

    warehouse = Path(args.warehouse) if args.warehouse else warehouse_path()
    try:
        summary = label_sample(
            warehouse,
            Path(args.out),
            total=args.total,
            allocation=args.allocation,
            sizes=_size_pairs(args.size),
            default_size=args.default_size,
            min_per_stratum=args.min_per_stratum,
            k=args.k,
            seed=args.seed,
            scope=args.scope,
            include_empty=args.include_empty,
            strata=[s.strip() for s in args.strata.split(",") if s.strip()],
        )
    except (ValueError, FileNotFoundError, duckdb.Error) as error:
        print(str(error), file=sys.stderr)
        return 2
    print(
        f"lara label-sample: {summary['retrievals_sampled']} of {summary['retrievals_in_frame']} "
        f"retrievals in {summary['strata']} strata, {summary['judging_rows']} pairs to judge "
        f"-> {args.out}/judging.csv, judging.jsonl"
    )
    return 0


def add_label_import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="returned judging file (.csv or .jsonl)")
    parser.add_argument("--out", required=True, dest="raw", help="raw log root (LARA_RAW_PATH)")
    parser.add_argument("--rejects", help="rejects file (default <file>.rejects.jsonl)")
    parser.add_argument("--default-judge", choices=["human", "llm"])
    parser.add_argument("--retrieval-id-pattern", default=DEFAULT_RETRIEVAL_ID_PATTERN)
    parser.add_argument(
        "--sample", help="label-sample output folder: only its retrieval ids are accepted"
    )
    parser.add_argument("--reject-unjudged", action="store_true", help="blank grades are errors")
    parser.add_argument("--no-design", action="store_true", help="do not write label_sample_design")
    parser.add_argument(
        "--allow-rejects", action="store_true", help="exit 0 even when rows were rejected"
    )
    parser.set_defaults(func=label_import_main)


def label_import_main(args: argparse.Namespace) -> int:
    known = None
    if args.sample:
        design = pd.read_csv(Path(args.sample) / "sample_design.csv", dtype=str)
        known = set(design["retrieval_id"])
    try:
        report = label_import(
            Path(args.file),
            Path(args.raw),
            rejects=Path(args.rejects) if args.rejects else None,
            default_judge=args.default_judge,
            retrieval_id_pattern=args.retrieval_id_pattern,
            known_retrieval_ids=known,
            skip_unjudged=not args.reject_unjudged,
            write_design=not args.no_design,
        )
    except (ValueError, FileNotFoundError, FileExistsError) as error:
        print(str(error), file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2, default=str))
    if report.get("rejected") and not args.allow_rejects:
        print(
            f"lara label-import: {report['rejected']} row(s) rejected, see "
            f"{report.get('rejects_file')}",
            file=sys.stderr,
        )
        return 1
    return 0
