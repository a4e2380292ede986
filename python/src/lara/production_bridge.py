"""Production bridge evidence: does static Tier 1 quality predict use and outcome?

The production analogue of `lara.bridge` (issue 5, item 6). Runs after
`dbt build`: dbt builds marts.fct_retrieval_bridge (one row per labelled
in-scope retrieval: NDCG@K, `is_used` = GPR or ACR, `has_outcome` = >= 1
retrieval-driven outcome, the session) and marts.agg_production_bridge; this
module computes, per outcome kind (`use`, `outcome`) and per retrieval role
(and `all`), rank statistics of NDCG@K against the binary outcome and writes
them back as marts.production_bridge_statistics.

Statistics (choice). The outcome is binary and NDCG@K is bounded with ties
(a mass at 0), and the question is monotone ("does a higher NDCG@K go with
more use?"), so every statistic is rank-based:

- `spearman_rho` (primary; the replay bridge reports Spearman too): Pearson
  correlation of the mid-ranks. With a binary outcome it is the
  point-biserial correlation computed on the ranks of NDCG@K.
- `kendall_tau_b`: Kendall's tau-b, which corrects for the ties of the binary
  outcome and of NDCG@K; with a binary y it equals
  (2U - n1 n0) / sqrt((n(n-1)/2 - T_x) n1 n0), U the Mann-Whitney statistic of
  the positives and T_x the pairs tied on NDCG@K.
- `ndcg_auc`: U / (n1 n0), the probability that a retrieval with the outcome
  has a higher NDCG@K than one without (ties half): 0.5 = no association.

The plain point-biserial correlation (Pearson on raw NDCG@K) is not reported:
it depends on NDCG@K's skewed distribution, which the rank statistics do not.
p-values come from scipy (`spearmanr`, `kendalltau`) and treat retrievals as
independent; retrievals of one session are not.

Bootstrap. 95% percentile intervals resample SESSIONS with replacement (a
session drawn k times enters with all its retrievals k times), seeded. As in
`lara.bridge`, a resample is a vector of integer multiplicities and each
statistic is computed on the expanded sample from weighted mid-ranks
(`lara.bridge` helpers), vectorised over resamples in chunks. A resample in
which NDCG@K or the outcome is constant defines none of the three statistics
and is dropped for all three (`valid_resample_count`). Every row uses the
same seed, so the `use` and `outcome` rows of one role are computed on the
same session draws (paired).

Degenerate inputs never raise: no labelled retrievals, fewer than 3
retrievals, a constant column, a single session or no resamples give null
statistics (counts kept) and a `note` saying why.

Call `run_production_bridge_statistics(warehouse)` after the build.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from lara import bridge, engine

TABLE_NAME = "production_bridge_statistics"
SOURCE_MODEL = "fct_retrieval_bridge"
ALL_ROLES = "all"
MIN_RETRIEVALS = 3

#: outcome_kind -> (column of fct_retrieval_bridge, what a positive is)
OUTCOME_KINDS: dict[str, tuple[str, str]] = {
    "use": ("is_used", "used (GPR or ACR)"),
    "outcome": ("has_outcome", "with a retrieval-driven outcome"),
}
STATISTICS = ("spearman_rho", "kendall_tau_b", "ndcg_auc")

# (column, DuckDB type, description): the written table's schema and comments.
PRODUCTION_BRIDGE_STATISTICS_COLUMNS: list[tuple[str, str, str]] = [
    ("outcome_kind", "varchar", "use (is_used: GPR or ACR) or outcome (has_outcome: >= 1 outcome)"),
    ("retrieval_role", "varchar", "retrieval role of fct_retrieval_bridge, or all"),
    ("retrieval_count", "bigint", "labelled in-scope retrievals in the population"),
    ("session_count", "bigint", "sessions holding them (bootstrap clusters)"),
    ("positive_count", "bigint", "retrievals with the outcome (is_used / has_outcome true)"),
    ("positive_rate", "double", "positive_count / retrieval_count"),
    ("positive_ndcg_mean", "double", "mean NDCG@K of retrievals with the outcome"),
    ("negative_ndcg_mean", "double", "mean NDCG@K of retrievals without the outcome"),
    ("spearman_rho", "double", "Spearman rho of NDCG@K and the 0/1 outcome (mid-ranks)"),
    ("spearman_p_value", "double", "two-sided p-value of scipy.stats.spearmanr (retrievals iid)"),
    ("spearman_ci_low", "double", "2.5th percentile of rho over session-bootstrap resamples"),
    ("spearman_ci_high", "double", "97.5th percentile of rho over session-bootstrap resamples"),
    ("kendall_tau_b", "double", "Kendall tau-b of NDCG@K and the 0/1 outcome"),
    ("kendall_p_value", "double", "two-sided p-value of scipy.stats.kendalltau (retrievals iid)"),
    ("kendall_ci_low", "double", "2.5th percentile of tau-b over session-bootstrap resamples"),
    ("kendall_ci_high", "double", "97.5th percentile of tau-b over session-bootstrap resamples"),
    ("ndcg_auc", "double", "P(NDCG@K of a positive > of a negative), ties half: U / (n1 n0)"),
    ("ndcg_auc_ci_low", "double", "2.5th percentile of the AUC over session-bootstrap resamples"),
    ("ndcg_auc_ci_high", "double", "97.5th percentile of the AUC over session-bootstrap resamples"),
    ("resample_count", "bigint", "bootstrap resamples drawn"),
    ("valid_resample_count", "bigint", "resamples in which neither column is constant"),
    ("seed", "bigint", "seed of the bootstrap"),
    ("note", "varchar", "why a statistic is null or degenerate; null when all is well"),
]
COLUMN_NAMES = [name for name, _, _ in PRODUCTION_BRIDGE_STATISTICS_COLUMNS]
TABLE_DESCRIPTION = (
    "Production bridge evidence: rank statistics (Spearman rho, Kendall tau-b, AUC) of NDCG@K "
    "against use and outcome per retrieval role, with session-bootstrap intervals "
    "(lara.production_bridge.run_production_bridge_statistics)."
)


# ---------------------------------------------------------------- statistics


def binary_rank_statistics(
    x: np.ndarray, y: np.ndarray, weights: np.ndarray
) -> dict[str, np.ndarray]:
    """Spearman rho, Kendall tau-b and AUC of a score `x` against a 0/1 `y`, on
    the sample expanded by integer `weights` (resamples, n); one value per row,
    nan where x or y is constant in the expanded sample."""
    x = np.asarray(x, dtype=float)
    positive = np.asarray(y, dtype=bool).astype(float)
    weights = np.atleast_2d(weights).astype(float)
    order, starts, sizes = bridge.tie_groups(x)
    ranks, x_groups = bridge.weighted_midranks(weights, order, starts, sizes)
    group_weight = np.add.reduceat(weights[:, order], starts, axis=1)
    n1 = weights @ positive
    n0 = weights.sum(axis=1) - n1
    total = n1 + n0
    u_statistic = (weights * ranks) @ positive - n1 * (n1 + 1.0) / 2.0
    tied_pairs = (group_weight * (group_weight - 1.0) / 2.0).sum(axis=1)
    defined = (x_groups >= 2) & (n1 > 0) & (n0 > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        auc = u_statistic / (n1 * n0)
        tau_b = (2.0 * u_statistic - n1 * n0) / np.sqrt(
            (total * (total - 1.0) / 2.0 - tied_pairs) * n1 * n0
        )
    rho = bridge.weighted_spearman(x, positive, weights)
    nan = np.full(weights.shape[0], np.nan)
    return {
        "spearman_rho": np.where(defined, rho, nan),
        "kendall_tau_b": np.where(defined, np.clip(tau_b, -1.0, 1.0), nan),
        "ndcg_auc": np.where(defined, auc, nan),
    }


def session_bootstrap(
    x: np.ndarray, y: np.ndarray, sessions: np.ndarray, resamples: int, seed: int
) -> dict[str, bridge.BootstrapInterval]:
    """95% percentile intervals of the three statistics, resampling sessions."""
    codes, session_count = bridge.cluster_codes(sessions)
    if session_count < 2:
        empty = bridge.BootstrapInterval(None, None, 0, "fewer than 2 sessions: no interval")
        return dict.fromkeys(STATISTICS, empty)
    if resamples < 1:
        empty = bridge.BootstrapInterval(None, None, 0, "no bootstrap resamples requested")
        return dict.fromkeys(STATISTICS, empty)
    rng = np.random.default_rng(seed)
    draws = [
        binary_rank_statistics(x, y, bridge.cluster_weights(session_count, size, rng)[:, codes])
        for size in bridge.resample_chunks(resamples, len(codes))
    ]
    return {
        name: bridge.percentile_interval(np.concatenate([draw[name] for draw in draws]), resamples)
        for name in STATISTICS
    }


def _empty_statistics() -> dict[str, Any]:
    return {
        "positive_rate": None,
        "positive_ndcg_mean": None,
        "negative_ndcg_mean": None,
        "spearman_rho": None,
        "spearman_p_value": None,
        "spearman_ci_low": None,
        "spearman_ci_high": None,
        "kendall_tau_b": None,
        "kendall_p_value": None,
        "kendall_ci_low": None,
        "kendall_ci_high": None,
        "ndcg_auc": None,
        "ndcg_auc_ci_low": None,
        "ndcg_auc_ci_high": None,
        "valid_resample_count": 0,
        "note": None,
    }


def ndcg_outcome_statistics(
    ndcg: np.ndarray,
    outcome: np.ndarray,
    sessions: np.ndarray,
    resamples: int,
    seed: int,
    positive_label: str = "positive",
) -> dict[str, Any]:
    """Counts, means, the three rank statistics with p-values and session-bootstrap
    intervals of NDCG@K against a 0/1 outcome; nulls and a note when degenerate."""
    x = np.asarray(ndcg, dtype=float)
    y = np.asarray(outcome, dtype=bool)
    sessions = np.asarray(sessions)
    n = len(x)
    positives = int(y.sum())
    result = _empty_statistics() | {
        "retrieval_count": n,
        "session_count": len(np.unique(sessions)) if n else 0,
        "positive_count": positives,
    }
    if n == 0:
        result["note"] = "no labelled in-scope retrievals: statistics not computed"
        return result
    result["positive_rate"] = positives / n
    if positives:
        result["positive_ndcg_mean"] = float(x[y].mean())
    if positives < n:
        result["negative_ndcg_mean"] = float(x[~y].mean())
    reasons = []
    if n < MIN_RETRIEVALS:
        reasons.append(f"fewer than {MIN_RETRIEVALS} retrievals ({n}): statistics undefined")
    else:
        if positives in (0, n):
            which = "every" if positives else "no"
            reasons.append(f"{which} retrieval {positive_label}: statistics undefined")
        if np.all(x == x[0]):
            reasons.append("NDCG@K is constant: statistics undefined")
    if reasons:
        result["note"] = "; ".join(reasons)
        return result
    point = binary_rank_statistics(x, y, np.ones((1, n)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        spearman = stats.spearmanr(x, y.astype(float))
        kendall = stats.kendalltau(x, y.astype(float), variant="b")
    result.update(
        spearman_rho=bridge.finite_or_none(point["spearman_rho"][0]),
        spearman_p_value=bridge.finite_or_none(spearman.pvalue),
        kendall_tau_b=bridge.finite_or_none(point["kendall_tau_b"][0]),
        kendall_p_value=bridge.finite_or_none(kendall.pvalue),
        ndcg_auc=bridge.finite_or_none(point["ndcg_auc"][0]),
    )
    intervals = session_bootstrap(x, y, sessions, resamples, seed)
    for name, prefix in (
        ("spearman_rho", "spearman"),
        ("kendall_tau_b", "kendall"),
        ("ndcg_auc", "ndcg_auc"),
    ):
        result[f"{prefix}_ci_low"] = intervals[name].low
        result[f"{prefix}_ci_high"] = intervals[name].high
    result["valid_resample_count"] = intervals["spearman_rho"].valid_resamples
    result["note"] = intervals["spearman_rho"].note
    return result


def production_bridge_statistics(
    retrievals: pd.DataFrame, resamples: int = 1000, seed: int = 0
) -> pd.DataFrame:
    """One row per (outcome_kind, retrieval_role incl. `all`) from
    fct_retrieval_bridge rows (columns session_guid, retrieval_role, ndcg_at_k,
    is_used, has_outcome)."""
    retrievals = retrievals[retrievals["ndcg_at_k"].notna()]
    roles = [ALL_ROLES, *sorted(retrievals["retrieval_role"].dropna().unique())]
    rows = []
    for kind, (column, label) in OUTCOME_KINDS.items():
        for role in roles:
            population = (
                retrievals
                if role == ALL_ROLES
                else retrievals[retrievals["retrieval_role"] == role]
            )
            row = {"outcome_kind": kind, "retrieval_role": role}
            row |= ndcg_outcome_statistics(
                population["ndcg_at_k"].to_numpy(dtype=float),
                population[column].fillna(False).to_numpy(dtype=bool),
                population["session_guid"].to_numpy(),
                resamples,
                seed,
                label,
            )
            row |= {"resample_count": resamples, "seed": seed}
            rows.append(row)
    return pd.DataFrame(rows, columns=COLUMN_NAMES)


# ---------------------------------------------------------------- warehouse


def run_production_bridge_statistics(
    warehouse: Path, resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """Compute the production bridge statistics from a built warehouse and write
    them back as marts.production_bridge_statistics.

    Reads marts.fct_retrieval_bridge. Returns {"status", "rows", "message"}:
    status `skipped` when the mart is not built (nothing written),
    `no_labelled_retrievals` when it is empty (a row per outcome kind with null
    statistics and a note), else `ok`; `rows` holds the written rows as dicts.
    """
    warehouse = Path(warehouse)
    on_spark = engine.target_name() == "spark"
    if not on_spark and not warehouse.exists():
        raise FileNotFoundError(f"lara production bridge: warehouse {warehouse} does not exist")
    if on_spark:
        warehouse = Path("spark")  # named in messages; the session is the warehouse
    with engine.connect(warehouse) as con:
        if not engine.mart_exists(con, SOURCE_MODEL):
            message = (
                f"lara production bridge: skipped, {engine.MARTS_SCHEMA}.{SOURCE_MODEL} is not "
                f"in {warehouse} (run dbt build first)"
            )
            print(message)
            return {"status": "skipped", "rows": [], "message": message}
        retrievals = con.query_df(
            f"select retrieval_id, session_guid, retrieval_role, ndcg_at_k, is_used, has_outcome "
            f"from {engine.MARTS_SCHEMA}.{SOURCE_MODEL}"
        )
        statistics = production_bridge_statistics(retrievals, resamples, seed)
        engine.write_mart(
            con, TABLE_NAME, statistics, PRODUCTION_BRIDGE_STATISTICS_COLUMNS, TABLE_DESCRIPTION
        )
    status = "ok" if len(retrievals) else "no_labelled_retrievals"
    message = _progress_line(statistics, status)
    print(message)
    return {"status": status, "rows": engine.records(statistics), "message": message}


def _progress_line(statistics: pd.DataFrame, status: str) -> str:
    target = f"{engine.MARTS_SCHEMA}.{TABLE_NAME}"
    if status == "no_labelled_retrievals":
        return f"lara production bridge: no labelled in-scope retrievals; wrote {target} (nulls)"
    overall = statistics[statistics["retrieval_role"] == ALL_ROLES]
    parts = [
        f"{row.outcome_kind}: rho={bridge.format_number(row.spearman_rho)} "
        f"[{bridge.format_number(row.spearman_ci_low)}, "
        f"{bridge.format_number(row.spearman_ci_high)}] "
        f"AUC={bridge.format_number(row.ndcg_auc)} n={row.retrieval_count:,}"
        for row in overall.itertuples(index=False)
    ]
    return f"lara production bridge: {'; '.join(parts)} -> {target}"
