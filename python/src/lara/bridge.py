"""Bridge evidence statistics (metrics.md, "Bridge evidence (replay tables)").

Runs after `dbt build`. dbt computes the per-document utilities and the entity
observation units (marts.fct_document_utility, marts.fct_entity_observations,
marts.agg_bridge_quadrants); this module only aggregates and bootstraps:

- marts.bridge_statistics: per SRU variant (reader, proxy), Spearman rho
  between CTU and SRU with scipy's p-value and a 95% percentile bootstrap
  interval that resamples trajectories (cluster bootstrap), the bridge share
  and the failed-replay count.
- marts.entity_observability: the observable entity relevance (OER) ratio,
  appearance rate of discriminative / non-discriminative entities in the next
  query, with a trajectory-bootstrap interval.
- a PNG: CTU percentile against SRU percentile for both variants.

Call `run_bridge_statistics(warehouse)`. Degenerate inputs never raise: a
statistic that is undefined is null and the `note` column says why.

Bootstrap. A resample draws as many trajectories as there are, with
replacement; a trajectory drawn k times enters with all its documents k
times. Rather than materialising each resample, every document carries its
trajectory's multiplicity as a weight: Spearman rho of the expanded sample is
the weighted Pearson correlation of weighted mid-ranks (a tie group of total
weight W above C expanded values gets rank C + (W + 1) / 2), which is exactly
`scipy.stats.spearmanr` on the expanded data. Resamples are processed in
vectorised chunks. A resample in which a column is constant has no rho and is
dropped; the interval is the 2.5th and 97.5th percentile of the others, and
`valid_resample_count` says how many there were.
"""

from __future__ import annotations

import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from lara import engine
from lara.engine import MARTS_SCHEMA, Warehouse, mart_exists, records, write_mart
from lara.paths import project_dir

PLOT_FILENAME = "bridge_ctu_vs_sru.png"
CONFIDENCE = 0.95
MIN_DOCUMENTS = 3
# Elements (resamples x documents) per vectorised bootstrap chunk.
_CHUNK_ELEMENTS = 1_000_000

SRU_VARIANTS: dict[str, dict[str, str]] = {
    "reader": {
        "sru": "sru",
        "sru_percentile": "sru_percentile",
        "ctu_percentile": "ctu_percentile",
        "is_bridge": "is_bridge",
        "label": "reader SRU (reader score with - without the document)",
    },
    "proxy": {
        "sru": "proxy_sru",
        "sru_percentile": "proxy_sru_percentile",
        "ctu_percentile": "proxy_ctu_percentile",
        "is_bridge": "is_proxy_bridge",
        "label": "proxy SRU (reader-free proxy_score)",
    },
}

# (column, DuckDB type, description): the written tables' schemas and comments.
BRIDGE_STATISTICS_COLUMNS: list[tuple[str, str, str]] = [
    ("sru_variant", "varchar", "reader (SRU from reader scores) or proxy (proxy_score)"),
    ("document_count", "bigint", "documents in the variant's population (CTU and SRU known)"),
    ("trajectory_count", "bigint", "trajectories holding those documents (bootstrap clusters)"),
    ("failed_replay_count", "bigint", "of the documents, failed replays (worst outcome imputed)"),
    ("spearman_rho", "double", "Spearman rho between CTU and SRU (average ranks for ties)"),
    (
        "spearman_p_value",
        "double",
        "two-sided p-value of scipy.stats.spearmanr (documents as if independent)",
    ),
    ("rho_ci_low", "double", "2.5th percentile of rho over trajectory-bootstrap resamples"),
    ("rho_ci_high", "double", "97.5th percentile of rho over trajectory-bootstrap resamples"),
    ("bridge_share", "double", "share of the documents in the bridge cell (low SRU, high CTU)"),
    ("resample_count", "bigint", "bootstrap resamples drawn"),
    ("valid_resample_count", "bigint", "resamples with a defined rho (no constant column)"),
    ("seed", "bigint", "seed of the bootstrap"),
    ("note", "varchar", "why a statistic is null or degenerate; null when all is well"),
]

ENTITY_OBSERVABILITY_COLUMNS: list[tuple[str, str, str]] = [
    ("trajectory_count", "bigint", "trajectories with at least one unit (bootstrap clusters)"),
    ("discriminative_count", "bigint", "discriminative (trajectory, step, entity) units"),
    ("non_discriminative_count", "bigint", "non-discriminative units"),
    ("discriminative_appearance_count", "bigint", "discriminative units in the next query"),
    ("non_discriminative_appearance_count", "bigint", "non-discriminative units in the next query"),
    ("discriminative_rate", "double", "discriminative_appearance_count / discriminative_count"),
    ("non_discriminative_rate", "double", "non_discriminative_appearance_count / count"),
    ("oer_ratio", "double", "discriminative_rate / non_discriminative_rate"),
    ("oer_ci_low", "double", "2.5th percentile of the ratio over trajectory-bootstrap resamples"),
    ("oer_ci_high", "double", "97.5th percentile of the ratio over trajectory-bootstrap resamples"),
    ("resample_count", "bigint", "bootstrap resamples drawn"),
    ("valid_resample_count", "bigint", "resamples with a defined ratio"),
    ("seed", "bigint", "seed of the bootstrap"),
    ("note", "varchar", "why a statistic is null or degenerate; null when all is well"),
]


@dataclass(frozen=True)
class BootstrapInterval:
    low: float | None
    high: float | None
    valid_resamples: int
    note: str | None = None


# ---------------------------------------------------------------- bootstrap


def cluster_weights(cluster_count: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(resamples, clusters) multiplicities: each row draws `cluster_count`
    clusters with replacement."""
    return rng.multinomial(cluster_count, np.full(cluster_count, 1.0 / cluster_count), resamples)


def resample_chunks(resamples: int, width: int) -> list[int]:
    """Sizes of the chunks of `resamples` drawn at once (about a million weights each)."""
    size = max(1, _CHUNK_ELEMENTS // max(width, 1))
    return [min(size, resamples - start) for start in range(0, resamples, size)]


def tie_groups(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort order, start offsets and sizes of the groups of equal values."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sizes = np.diff(np.r_[starts, len(values)])
    return order, starts, sizes


def weighted_midranks(
    weights: np.ndarray, order: np.ndarray, starts: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Mid-ranks of every value in the sample expanded by integer `weights`
    (resamples, n), and the number of tie groups with positive weight."""
    group_weight = np.add.reduceat(weights[:, order], starts, axis=1)
    below = np.cumsum(group_weight, axis=1) - group_weight
    group_rank = below + (group_weight + 1.0) / 2.0
    ranks = np.empty(weights.shape, dtype=float)
    ranks[:, order] = np.repeat(group_rank, sizes, axis=1)
    return ranks, (group_weight > 0).sum(axis=1)


def weighted_spearman(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Spearman rho of (x, y) expanded by integer weights, one per row of
    `weights` (resamples, n); nan where a column is constant."""
    weights = np.atleast_2d(weights).astype(float)
    rank_x, groups_x = weighted_midranks(weights, *tie_groups(np.asarray(x, dtype=float)))
    rank_y, groups_y = weighted_midranks(weights, *tie_groups(np.asarray(y, dtype=float)))
    total = weights.sum(axis=1, keepdims=True)
    centred_x = rank_x - (weights * rank_x).sum(axis=1, keepdims=True) / total
    centred_y = rank_y - (weights * rank_y).sum(axis=1, keepdims=True) / total
    covariance = (weights * centred_x * centred_y).sum(axis=1)
    variance_x = (weights * centred_x**2).sum(axis=1)
    variance_y = (weights * centred_y**2).sum(axis=1)
    defined = (groups_x >= 2) & (groups_y >= 2)
    rho = np.full(weights.shape[0], np.nan)
    rho[defined] = covariance[defined] / np.sqrt(variance_x[defined] * variance_y[defined])
    return np.clip(rho, -1.0, 1.0)


def percentile_interval(values: np.ndarray, resamples: int) -> BootstrapInterval:
    """95% percentile interval of the finite `values` (one per resample; nan = undefined)."""
    valid = values[np.isfinite(values)]
    if valid.size == 0:
        return BootstrapInterval(None, None, 0, "no resample had a defined value")
    tail = (1.0 - CONFIDENCE) / 2.0 * 100.0
    low, high = np.percentile(valid, [tail, 100.0 - tail])
    note = None
    if valid.size < resamples:
        note = (
            f"{resamples - valid.size} of {resamples} resamples undefined (constant column "
            "or empty group) and dropped"
        )
    return BootstrapInterval(float(low), float(high), int(valid.size), note)


def spearman_cluster_bootstrap(
    x: np.ndarray, y: np.ndarray, clusters: np.ndarray, resamples: int, seed: int
) -> BootstrapInterval:
    """95% percentile interval of Spearman rho, resampling clusters (trajectories)."""
    codes, cluster_count = cluster_codes(clusters)
    if cluster_count < 2:
        return BootstrapInterval(None, None, 0, "fewer than 2 trajectories: no bootstrap interval")
    if resamples < 1:
        return BootstrapInterval(None, None, 0, "no bootstrap resamples requested")
    rng = np.random.default_rng(seed)
    rhos = [
        weighted_spearman(x, y, cluster_weights(cluster_count, size, rng)[:, codes])
        for size in resample_chunks(resamples, len(codes))
    ]
    return percentile_interval(np.concatenate(rhos), resamples)


def cluster_codes(clusters: np.ndarray) -> tuple[np.ndarray, int]:
    """Cluster index of every row (0..k-1) and the number of clusters k."""
    uniques, codes = np.unique(np.asarray(clusters), return_inverse=True)
    return codes.ravel(), len(uniques)


def spearman_statistics(
    x: np.ndarray, y: np.ndarray, clusters: np.ndarray, resamples: int, seed: int
) -> dict[str, Any]:
    """Spearman rho of (x, y) with scipy's p-value and a trajectory-bootstrap
    interval; nulls and a note for degenerate inputs."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    result: dict[str, Any] = {
        "spearman_rho": None,
        "spearman_p_value": None,
        "rho_ci_low": None,
        "rho_ci_high": None,
        "valid_resample_count": 0,
        "note": None,
    }
    reasons = []
    if len(x) < MIN_DOCUMENTS:
        reasons.append(f"fewer than {MIN_DOCUMENTS} documents ({len(x)}): rho undefined")
    else:
        if np.all(x == x[0]):
            reasons.append("SRU is constant: rho undefined")
        if np.all(y == y[0]):
            reasons.append("CTU is constant: rho undefined")
    if reasons:
        result["note"] = "; ".join(reasons)
        return result
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        test = stats.spearmanr(y, x)
    result["spearman_rho"] = finite_or_none(test.statistic)
    result["spearman_p_value"] = finite_or_none(test.pvalue)
    interval = spearman_cluster_bootstrap(x, y, clusters, resamples, seed)
    result.update(
        rho_ci_low=interval.low,
        rho_ci_high=interval.high,
        valid_resample_count=interval.valid_resamples,
        note=interval.note,
    )
    return result


def finite_or_none(value: float) -> float | None:
    """`value` as a float, None when it is nan or infinite."""
    value = float(value)
    return value if np.isfinite(value) else None


def oer_statistics(
    is_discriminative: np.ndarray,
    appears: np.ndarray,
    clusters: np.ndarray,
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    """OER ratio (appearance rate of discriminative / non-discriminative
    units) with a trajectory-bootstrap interval."""
    is_discriminative = np.asarray(is_discriminative, dtype=bool)
    appears = np.asarray(appears, dtype=bool)
    # Per unit: [discriminative, discriminative & appears, non-disc., non-disc. & appears]
    indicators = np.column_stack(
        [
            is_discriminative,
            is_discriminative & appears,
            ~is_discriminative,
            ~is_discriminative & appears,
        ]
    ).astype(float)
    totals = indicators.sum(axis=0)
    result: dict[str, Any] = {
        "trajectory_count": 0,
        "discriminative_count": int(totals[0]),
        "non_discriminative_count": int(totals[2]),
        "discriminative_appearance_count": int(totals[1]),
        "non_discriminative_appearance_count": int(totals[3]),
        "discriminative_rate": None,
        "non_discriminative_rate": None,
        "oer_ratio": None,
        "oer_ci_low": None,
        "oer_ci_high": None,
        "valid_resample_count": 0,
        "note": None,
    }
    if len(is_discriminative) == 0:
        result["note"] = "no entity observations (no replay data, or no step followed by a query)"
        return result
    codes, cluster_count = cluster_codes(clusters)
    result["trajectory_count"] = cluster_count
    reasons = []
    ratio = _oer_ratio(totals[None, :])[0]
    if totals[0] > 0:
        result["discriminative_rate"] = float(totals[1] / totals[0])
    else:
        reasons.append("no discriminative entity: rate and ratio undefined")
    if totals[2] > 0:
        result["non_discriminative_rate"] = float(totals[3] / totals[2])
        if totals[3] == 0:
            reasons.append("no non-discriminative entity appears in a next query: ratio undefined")
    else:
        reasons.append("no non-discriminative entity: rate and ratio undefined")
    result["oer_ratio"] = finite_or_none(ratio)
    if result["oer_ratio"] is not None:
        per_trajectory = np.zeros((cluster_count, 4))
        np.add.at(per_trajectory, codes, indicators)
        interval = _oer_cluster_bootstrap(per_trajectory, resamples, seed)
        result.update(
            oer_ci_low=interval.low,
            oer_ci_high=interval.high,
            valid_resample_count=interval.valid_resamples,
        )
        if interval.note:
            reasons.append(interval.note)
    result["note"] = "; ".join(reasons) or None
    return result


def _oer_ratio(sums: np.ndarray) -> np.ndarray:
    """Ratio of appearance rates from (k, 4) sums; nan where undefined."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (sums[:, 1] / sums[:, 0]) / (sums[:, 3] / sums[:, 2])
    return np.where(np.isfinite(ratio), ratio, np.nan)


def _oer_cluster_bootstrap(
    per_trajectory: np.ndarray, resamples: int, seed: int
) -> BootstrapInterval:
    cluster_count = per_trajectory.shape[0]
    if cluster_count < 2:
        return BootstrapInterval(None, None, 0, "fewer than 2 trajectories: no bootstrap interval")
    if resamples < 1:
        return BootstrapInterval(None, None, 0, "no bootstrap resamples requested")
    rng = np.random.default_rng(seed)
    ratios = [
        _oer_ratio(cluster_weights(cluster_count, size, rng) @ per_trajectory)
        for size in resample_chunks(resamples, cluster_count)
    ]
    return percentile_interval(np.concatenate(ratios), resamples)


# ---------------------------------------------------------------- tables


def bridge_statistics(documents: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    """One row per SRU variant from fct_document_utility rows."""
    rows = []
    for variant, columns in SRU_VARIANTS.items():
        population = documents[documents["ctu"].notna() & documents[columns["sru"]].notna()]
        row: dict[str, Any] = {
            "sru_variant": variant,
            "document_count": len(population),
            "trajectory_count": int(population["trajectory_id"].nunique()),
            "failed_replay_count": int(population["is_failed_replay"].astype(bool).sum()),
            "bridge_share": (
                float(population[columns["is_bridge"]].astype(bool).mean())
                if len(population)
                else None
            ),
            "resample_count": resamples,
            "seed": seed,
        }
        if len(population) == 0:
            row.update(
                spearman_statistics(np.array([]), np.array([]), np.array([]), resamples, seed)
            )
            row["note"] = (
                "no documents with a proxy score: proxy variant not computed"
                if variant == "proxy" and len(documents)
                else "no replay documents: statistics not computed"
            )
        else:
            row.update(
                spearman_statistics(
                    population[columns["sru"]].to_numpy(dtype=float),
                    population["ctu"].to_numpy(dtype=float),
                    population["trajectory_id"].to_numpy(),
                    resamples,
                    seed,
                )
            )
        rows.append(row)
    return pd.DataFrame(rows, columns=[name for name, _, _ in BRIDGE_STATISTICS_COLUMNS])


def entity_observability(observations: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    """One row from fct_entity_observations rows."""
    row = oer_statistics(
        observations["is_discriminative"].to_numpy(dtype=bool),
        observations["appears_in_next_query"].to_numpy(dtype=bool),
        observations["trajectory_id"].to_numpy(),
        resamples,
        seed,
    )
    row.update(resample_count=resamples, seed=seed)
    return pd.DataFrame([row], columns=[name for name, _, _ in ENTITY_OBSERVABILITY_COLUMNS])


# ---------------------------------------------------------------- warehouse


def _read_thresholds(con: Warehouse) -> tuple[float, float]:
    if mart_exists(con, "agg_bridge_quadrants"):
        found = con.query_one(
            f"select max(bridge_tau_low), max(bridge_tau_high) "
            f"from {MARTS_SCHEMA}.agg_bridge_quadrants"
        )
        if found and found[0] is not None:
            return float(found[0]), float(found[1])
    return 0.5, 0.5


def run_bridge_statistics(
    warehouse: Path,
    resamples: int = 1000,
    seed: int = 0,
    plot_dir: Path | None = None,
    plot: bool = True,
) -> dict[str, Any]:
    """Compute the bridge statistics from a built warehouse and write them back.

    Reads marts.fct_document_utility, marts.fct_entity_observations and
    marts.agg_bridge_quadrants; writes marts.bridge_statistics and
    marts.entity_observability; draws `<plot_dir>/bridge_ctu_vs_sru.png`
    (plot_dir defaults to `<project>/reports`). Prints one progress line and
    returns a summary: {"status", "bridge_statistics", "entity_observability",
    "plot", "message"}. Status `skipped` when the marts are not built (nothing
    written), `no_replay_data` when they are empty (tables written with
    nulls, no plot), else `ok`.
    """
    warehouse = Path(warehouse)
    on_spark = engine.target_name() == "spark"
    if not on_spark and not warehouse.exists():
        raise FileNotFoundError(f"lara bridge: warehouse {warehouse} does not exist")
    if on_spark:
        warehouse = Path("spark")  # named in messages; the session is the warehouse
    with engine.connect(warehouse) as con:
        if not mart_exists(con, "fct_document_utility"):
            message = (
                f"lara bridge: skipped, {MARTS_SCHEMA}.fct_document_utility is not in {warehouse} "
                "(run dbt build first)"
            )
            print(message)
            return {
                "status": "skipped",
                "bridge_statistics": [],
                "entity_observability": None,
                "plot": None,
                "message": message,
            }
        documents = con.query_df(f"select * from {MARTS_SCHEMA}.fct_document_utility")
        if mart_exists(con, "fct_entity_observations"):
            observations = con.query_df(
                f"select trajectory_id, is_discriminative, appears_in_next_query "
                f"from {MARTS_SCHEMA}.fct_entity_observations"
            )
        else:
            observations = pd.DataFrame(
                {"trajectory_id": [], "is_discriminative": [], "appears_in_next_query": []}
            )
        tau_low, tau_high = _read_thresholds(con)

        statistics = bridge_statistics(documents, resamples, seed)
        observability = entity_observability(observations, resamples, seed)
        write_mart(
            con,
            "bridge_statistics",
            statistics,
            BRIDGE_STATISTICS_COLUMNS,
            "Bridge evidence: Spearman rho between CTU and SRU per SRU variant, with a "
            "trajectory-bootstrap interval (lara.bridge.run_bridge_statistics).",
        )
        write_mart(
            con,
            "entity_observability",
            observability,
            ENTITY_OBSERVABILITY_COLUMNS,
            "Observable entity relevance: next-query appearance rates of discriminative and "
            "non-discriminative entities and their ratio (lara.bridge.run_bridge_statistics).",
        )

    status = "ok" if len(documents) else "no_replay_data"
    plot_path = None
    if plot and len(documents):
        target_dir = Path(plot_dir) if plot_dir is not None else project_dir() / "reports"
        plot_path = plot_bridge(
            documents, statistics, target_dir / PLOT_FILENAME, tau_low, tau_high, observability
        )
    message = _progress_line(statistics, observability, status, plot_path)
    print(message)
    return {
        "status": status,
        "bridge_statistics": records(statistics),
        "entity_observability": records(observability)[0],
        "plot": str(plot_path) if plot_path else None,
        "message": message,
    }


# ---------------------------------------------------------------- plot

_QUADRANT_COLOURS = {"relevant": "#1f5fa8", "not relevant": "#9a9a9a"}
_BRIDGE_FILL = "#f28e2b"


def plot_bridge(
    documents: pd.DataFrame,
    statistics: pd.DataFrame,
    path: Path,
    tau_low: float = 0.5,
    tau_high: float = 0.5,
    observability: pd.DataFrame | None = None,
) -> Path:
    """CTU percentile against SRU percentile, one panel per SRU variant, the
    bridge cell shaded, quadrant shares in the corners and the statistics
    under each panel. Returns the PNG path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure, axes = plt.subplots(1, len(SRU_VARIANTS), figsize=(14, 8.4), sharey=True)
    by_variant = statistics.set_index("sru_variant")
    for ax, (variant, columns) in zip(axes, SRU_VARIANTS.items(), strict=True):
        population = documents[documents[columns["sru_percentile"]].notna()]
        x = population[columns["sru_percentile"]].to_numpy(dtype=float)
        y = population[columns["ctu_percentile"]].to_numpy(dtype=float)
        relevant = population["is_relevant"].to_numpy(dtype=bool)
        n = len(population)
        ax.add_patch(
            Rectangle(
                (0, tau_high), tau_low, 1 - tau_high, facecolor=_BRIDGE_FILL, alpha=0.22, zorder=0
            )
        )
        ax.axvline(tau_low, color="#444444", linestyle="--", linewidth=1, zorder=1)
        ax.axhline(tau_high, color="#444444", linestyle="--", linewidth=1, zorder=1)
        if n:
            size = float(np.clip(20000 / n, 4, 30))
            alpha = float(np.clip(1500 / n, 0.25, 0.85))
            for label, mask in (("not relevant", ~relevant), ("relevant", relevant)):
                ax.scatter(
                    x[mask],
                    y[mask],
                    s=size,
                    alpha=alpha,
                    color=_QUADRANT_COLOURS[label],
                    linewidths=0,
                    rasterized=True,
                    label=f"{label} ({mask.sum():,})",
                    zorder=2,
                )
            _annotate_quadrants(ax, x, y, tau_low, tau_high)
            legend = ax.legend(loc="lower right", fontsize=9, markerscale=max(1, 6 / size**0.5))
            for handle in legend.legend_handles:
                handle.set_alpha(1)
        else:
            ax.text(
                0.5,
                0.5,
                f"no documents with a {variant} score",
                ha="center",
                va="center",
                fontsize=13,
                color="#666666",
            )
        ax.text(
            tau_low / 2,
            0.985,
            "bridge cell\nlow SRU, high CTU",
            ha="center",
            va="top",
            fontsize=10,
            color="#b35806",
            fontweight="bold",
            zorder=3,
            bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "alpha": 0.6, "linewidth": 0},
        )
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_xlabel(f"{columns['label']}: percentile", fontsize=11)
        ax.set_title(f"CTU vs {variant} SRU", fontsize=13, fontweight="bold")
        ax.text(
            0.0,
            -0.13,
            _caption(by_variant.loc[variant], variant, tau_low, tau_high),
            transform=ax.transAxes,
            ha="left",
            va="top",
            fontsize=9.5,
        )
    axes[0].set_ylabel("CTU percentile (counterfactual trajectory utility)", fontsize=11)
    figure.suptitle(
        "Does static utility predict causal utility? Each dot is a document read in a "
        "replayed trajectory (mid-rank percentiles)",
        fontsize=12.5,
    )
    if observability is not None and len(observability):
        figure.text(
            0.5,
            0.015,
            _oer_caption(observability.iloc[0]),
            ha="center",
            va="bottom",
            fontsize=10,
            style="italic",
        )
    figure.subplots_adjust(left=0.07, right=0.98, top=0.9, bottom=0.26, wspace=0.1)
    figure.savefig(path, dpi=130)
    plt.close(figure)
    return path


def _annotate_quadrants(
    ax: Any, x: np.ndarray, y: np.ndarray, tau_low: float, tau_high: float
) -> None:
    low_sru = x < tau_low
    high_ctu = y > tau_high
    n = len(x)
    cells = {
        (True, True): (tau_low / 2, (1 + tau_high) / 2),
        (False, True): ((1 + tau_low) / 2, (1 + tau_high) / 2),
        (True, False): (tau_low / 2, tau_high / 2),
        (False, False): ((1 + tau_low) / 2, tau_high / 2),
    }
    for (is_low, is_high), (cx, cy) in cells.items():
        count = int(((low_sru == is_low) & (high_ctu == is_high)).sum())
        bridge = is_low and is_high
        ax.text(
            cx,
            cy,
            f"{count / n:.1%}\n({count:,})",
            ha="center",
            va="center",
            fontsize=17 if bridge else 14,
            fontweight="bold" if bridge else "normal",
            color="#7f3b08" if bridge else "#222222",
            zorder=3,
            bbox={"boxstyle": "round,pad=0.3", "facecolor": "white", "alpha": 0.75, "linewidth": 0},
        )


def _oer_caption(row: pd.Series) -> str:
    if row["oer_ratio"] is None or pd.isna(row["oer_ratio"]):
        return f"Observable entity relevance: ratio undefined ({row['note']})"
    return (
        "Mechanism (OER): entities found only in relevant documents appear in the agent's next "
        f"query {row['oer_ratio']:.2f}x as often as other entities "
        f"(95% CI {format_number(row['oer_ci_low'], '.2f')} to "
        f"{format_number(row['oer_ci_high'], '.2f')}; "
        f"{format_number(row['discriminative_rate'], '.1%')} vs "
        f"{format_number(row['non_discriminative_rate'], '.1%')})"
    )


def _caption(row: pd.Series, variant: str, tau_low: float, tau_high: float) -> str:
    rho = row["spearman_rho"]
    if rho is None or pd.isna(rho):
        rho_text = f"Spearman rho undefined ({row['note']})"
    else:
        ci = (
            f"95% CI {format_number(row['rho_ci_low'])} to {format_number(row['rho_ci_high'])}, "
            f"trajectory bootstrap, {row['valid_resample_count']:,} resamples"
            if row["rho_ci_low"] is not None and not pd.isna(row["rho_ci_low"])
            else "no bootstrap interval"
        )
        rho_text = (
            f"Spearman rho(CTU, {variant} SRU) = {rho:+.3f} ({ci}), "
            f"p = {format_number(row['spearman_p_value'], '.3g')}"
        )
    lines = [
        rho_text,
        f"bridge share {format_number(row['bridge_share'], '.1%')} of "
        f"{row['document_count']:,} documents in {row['trajectory_count']:,} trajectories; "
        f"{row['failed_replay_count']:,} failed replays (worst outcome imputed)",
        f"shaded: SRU percentile < {tau_low:g} and CTU percentile > {tau_high:g}",
    ]
    return "\n".join(textwrap.fill(line, width=78) for line in lines)


def format_number(value: Any, spec: str = ".3f") -> str:
    """`value` formatted for a progress line; n/a for a null."""
    if value is None or pd.isna(value):
        return "n/a"
    text = format(value, spec)
    # -0.0001 -> "0.000", not "-0.000"
    return text[1:] if text.startswith("-") and not text.strip("-0.%") else text


def _progress_line(
    statistics: pd.DataFrame, observability: pd.DataFrame, status: str, plot_path: Path | None
) -> str:
    if status == "no_replay_data":
        return (
            "lara bridge: no replay documents (replay tables absent or empty); wrote empty "
            f"{MARTS_SCHEMA}.bridge_statistics and {MARTS_SCHEMA}.entity_observability, no plot"
        )
    parts = []
    for row in statistics.itertuples(index=False):
        parts.append(
            f"{row.sru_variant} rho={format_number(row.spearman_rho)} "
            f"[{format_number(row.rho_ci_low)}, {format_number(row.rho_ci_high)}] "
            f"bridge={format_number(row.bridge_share, '.1%')} n={row.document_count:,}"
        )
    oer = observability.iloc[0]
    parts.append(
        f"OER={format_number(oer['oer_ratio'], '.2f')} "
        f"[{format_number(oer['oer_ci_low'], '.2f')}, {format_number(oer['oer_ci_high'], '.2f')}]"
    )
    where = f"; plot {plot_path}" if plot_path else ""
    return "lara bridge: " + "; ".join(parts) + where
