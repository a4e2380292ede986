"""Bridge evidence statistics (lara.bridge) against scipy on small fixtures.

No dbt here: the marts are written straight into a scratch DuckDB file with
the columns dbt builds. The dbt models themselves are proved by the unit tests
in models/marts/bridge/_bridge__models.yml and, on generated data, by
test_bridge_sample.py.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lara import bridge

# ---------------------------------------------------------------- fixtures


def midrank_percentile(values: pd.Series) -> pd.Series:
    """(strictly below + half the equal ones, itself included) / n."""
    return (values.rank(method="average") - 0.5) / len(values)


def documents_frame(
    trajectory_id: list[str],
    sru: list[float],
    ctu: list[float],
    proxy_sru: list[float | None] | None = None,
    failed: list[bool] | None = None,
    relevant: list[bool] | None = None,
    tau_low: float = 0.5,
    tau_high: float = 0.5,
) -> pd.DataFrame:
    """fct_document_utility-shaped rows, percentiles computed in pandas."""
    n = len(sru)
    frame = pd.DataFrame(
        {
            "trajectory_id": trajectory_id,
            "step_index": range(n),
            "doc_id": [f"d{i}" for i in range(n)],
            "sru": np.asarray(sru, dtype=float),
            "proxy_sru": np.asarray(
                proxy_sru if proxy_sru is not None else [None] * n, dtype=float
            ),
            "ctu": np.asarray(ctu, dtype=float),
            "is_failed_replay": failed if failed is not None else [False] * n,
            "is_relevant": relevant if relevant is not None else [i % 2 == 0 for i in range(n)],
        }
    )
    frame["sru_percentile"] = midrank_percentile(frame["sru"])
    frame["ctu_percentile"] = midrank_percentile(frame["ctu"])
    has_proxy = frame["proxy_sru"].notna()
    frame["proxy_sru_percentile"] = midrank_percentile(frame.loc[has_proxy, "proxy_sru"])
    frame["proxy_ctu_percentile"] = midrank_percentile(frame.loc[has_proxy, "ctu"])
    frame["is_bridge"] = (frame["sru_percentile"] < tau_low) & (frame["ctu_percentile"] > tau_high)
    frame["is_proxy_bridge"] = (
        (frame["proxy_sru_percentile"] < tau_low) & (frame["proxy_ctu_percentile"] > tau_high)
    ).where(has_proxy)
    return frame


def observations_frame(
    trajectory_id: list[str], is_discriminative: list[bool], appears: list[bool]
) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "trajectory_id": trajectory_id,
            "step_index": range(len(trajectory_id)),
            "entity": [f"e{i}" for i in range(len(trajectory_id))],
            "is_discriminative": is_discriminative,
            "appears_in_next_query": appears,
        }
    )


def make_warehouse(
    path: Path,
    documents: pd.DataFrame | None,
    observations: pd.DataFrame | None = None,
    tau_low: float = 0.5,
    tau_high: float = 0.5,
) -> Path:
    with duckdb.connect(str(path)) as con:
        con.execute("create schema marts")
        if documents is not None:
            con.register("documents", documents)
            con.execute("create table marts.fct_document_utility as select * from documents")
            con.execute(
                "create table marts.agg_bridge_quadrants as select 'reader' as sru_variant, "
                f"cast({tau_low} as double) as bridge_tau_low, "
                f"cast({tau_high} as double) as bridge_tau_high"
            )
        if observations is not None:
            con.register("observations", observations)
            con.execute("create table marts.fct_entity_observations as select * from observations")
    return path


def random_documents(seed: int, trajectories: int = 40) -> pd.DataFrame:
    """Documents with a planted positive correlation, ties on both axes, some
    failed replays and some missing proxy scores."""
    rng = np.random.default_rng(seed)
    per_trajectory = rng.integers(1, 7, trajectories)
    trajectory_id = np.repeat([f"t{i:03d}" for i in range(trajectories)], per_trajectory)
    n = len(trajectory_id)
    latent = rng.normal(size=n)
    sru = np.round(latent + rng.normal(size=n), 1)  # rounding creates ties
    ctu = np.round(latent + rng.normal(size=n), 1)
    proxy = np.where(rng.random(n) < 0.25, np.nan, np.round(sru + rng.normal(size=n), 1))
    failed = rng.random(n) < 0.1
    return documents_frame(list(trajectory_id), list(sru), list(ctu), list(proxy), list(failed))


def naive_cluster_bootstrap(
    frame: pd.DataFrame, statistic, resamples: int, seed: int
) -> np.ndarray:
    """The textbook cluster bootstrap: draw trajectories with replacement,
    concatenate their rows, compute the statistic (reference only: loops)."""
    rng = np.random.default_rng(seed)
    groups = {key: group for key, group in frame.groupby("trajectory_id", sort=True)}
    keys = sorted(groups)
    counts = rng.multinomial(len(keys), np.full(len(keys), 1 / len(keys)), resamples)
    values = []
    for row in counts:
        sample = pd.concat(
            [groups[key] for key, count in zip(keys, row, strict=True) for _ in range(count)]
        )
        values.append(statistic(sample))
    return np.array(values)


# ---------------------------------------------------------------- weighted Spearman


def test_weighted_spearman_equals_scipy_on_the_expanded_sample():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 5, 30).astype(float)  # heavy ties
    y = rng.integers(0, 4, 30).astype(float) + 0.5 * x
    weights = rng.integers(0, 4, (25, 30))
    got = bridge.weighted_spearman(x, y, weights)
    expected = [stats.spearmanr(np.repeat(x, row), np.repeat(y, row)).statistic for row in weights]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_weighted_spearman_is_nan_when_a_resample_is_constant():
    x = np.array([1.0, 1.0, 2.0, 3.0])
    y = np.array([4.0, 5.0, 6.0, 7.0])
    weights = np.array([[2, 3, 0, 0], [1, 1, 1, 1]])
    got = bridge.weighted_spearman(x, y, weights)
    assert np.isnan(got[0])
    assert got[1] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)


# ---------------------------------------------------------------- Spearman + bootstrap


def test_spearman_statistics_match_scipy_and_the_naive_cluster_bootstrap():
    documents = random_documents(seed=2)
    result = bridge.spearman_statistics(
        documents["sru"].to_numpy(),
        documents["ctu"].to_numpy(),
        documents["trajectory_id"].to_numpy(),
        resamples=200,
        seed=5,
    )
    scipy_result = stats.spearmanr(documents["ctu"], documents["sru"])
    assert result["spearman_rho"] == pytest.approx(scipy_result.statistic, abs=1e-12)
    assert result["spearman_p_value"] == pytest.approx(scipy_result.pvalue, rel=1e-9)
    reference = naive_cluster_bootstrap(
        documents,
        lambda sample: stats.spearmanr(sample["ctu"], sample["sru"]).statistic,
        resamples=200,
        seed=5,
    )
    low, high = np.percentile(reference[np.isfinite(reference)], [2.5, 97.5])
    assert result["rho_ci_low"] == pytest.approx(low, abs=1e-12)
    assert result["rho_ci_high"] == pytest.approx(high, abs=1e-12)
    assert result["rho_ci_low"] < result["spearman_rho"] < result["rho_ci_high"]
    assert result["valid_resample_count"] == 200
    assert result["note"] is None


def test_bootstrap_is_seeded_and_clusters_trajectories():
    documents = random_documents(seed=3)
    args = (
        documents["sru"].to_numpy(),
        documents["ctu"].to_numpy(),
        documents["trajectory_id"].to_numpy(),
    )
    first = bridge.spearman_statistics(*args, resamples=300, seed=11)
    again = bridge.spearman_statistics(*args, resamples=300, seed=11)
    other = bridge.spearman_statistics(*args, resamples=300, seed=12)
    assert first == again
    assert (first["rho_ci_low"], first["rho_ci_high"]) != (
        other["rho_ci_low"],
        other["rho_ci_high"],
    )
    # Duplicating every document inside its trajectory leaves the cluster
    # bootstrap's resampling units (and so the spread) as they were; a
    # document bootstrap would narrow by about 1/sqrt(2).
    doubled = pd.concat([documents, documents]).sort_values("trajectory_id", kind="stable")
    doubled_result = bridge.spearman_statistics(
        doubled["sru"].to_numpy(),
        doubled["ctu"].to_numpy(),
        doubled["trajectory_id"].to_numpy(),
        resamples=300,
        seed=11,
    )
    width = first["rho_ci_high"] - first["rho_ci_low"]
    doubled_width = doubled_result["rho_ci_high"] - doubled_result["rho_ci_low"]
    assert doubled_width == pytest.approx(width, rel=0.15)


@pytest.mark.parametrize(
    ("sru", "ctu", "reason"),
    [
        ([0.2, 0.2, 0.2, 0.2], [1.0, 2.0, 3.0, 4.0], "SRU is constant"),
        ([1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0], "CTU is constant"),
        ([1.0, 2.0], [2.0, 1.0], "fewer than 3 documents"),
        ([], [], "fewer than 3 documents"),
    ],
)
def test_degenerate_inputs_give_null_rho_with_a_reason(sru, ctu, reason):
    result = bridge.spearman_statistics(
        np.array(sru), np.array(ctu), np.array(["t1", "t2"] * (len(sru) // 2)), 50, 0
    )
    assert result["spearman_rho"] is None
    assert result["spearman_p_value"] is None
    assert result["rho_ci_low"] is None and result["rho_ci_high"] is None
    assert reason in result["note"]


def test_single_trajectory_gives_rho_but_no_interval():
    result = bridge.spearman_statistics(
        np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, 4.0]), np.array(["t"] * 4), 50, 0
    )
    assert result["spearman_rho"] == pytest.approx(0.8)
    assert result["rho_ci_low"] is None
    assert "fewer than 2 trajectories" in result["note"]


def test_resamples_with_a_constant_column_are_dropped_and_counted():
    # t1 alone has a constant SRU: every resample made only of t1 has no rho.
    documents = documents_frame(
        ["t1", "t1", "t2", "t2", "t2"], [1.0, 1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 5.0, 4.0]
    )
    result = bridge.spearman_statistics(
        documents["sru"].to_numpy(),
        documents["ctu"].to_numpy(),
        documents["trajectory_id"].to_numpy(),
        400,
        0,
    )
    assert 0 < result["valid_resample_count"] < 400
    assert "dropped" in result["note"]
    assert result["rho_ci_low"] is not None


# ---------------------------------------------------------------- per-variant table


def test_bridge_statistics_per_variant_against_scipy():
    documents = random_documents(seed=4)
    table = bridge.bridge_statistics(documents, resamples=100, seed=0).set_index("sru_variant")
    reader = table.loc["reader"]
    assert reader["document_count"] == len(documents)
    assert reader["trajectory_count"] == documents["trajectory_id"].nunique()
    assert reader["failed_replay_count"] == documents["is_failed_replay"].sum()
    assert reader["spearman_rho"] == pytest.approx(
        stats.spearmanr(documents["ctu"], documents["sru"]).statistic, abs=1e-12
    )
    assert reader["bridge_share"] == pytest.approx(documents["is_bridge"].mean())
    # proxy variant: only the documents with a proxy score
    with_proxy = documents[documents["proxy_sru"].notna()]
    proxy = table.loc["proxy"]
    assert 0 < len(with_proxy) < len(documents)
    assert proxy["document_count"] == len(with_proxy)
    assert proxy["failed_replay_count"] == with_proxy["is_failed_replay"].sum()
    assert proxy["spearman_rho"] == pytest.approx(
        stats.spearmanr(with_proxy["ctu"], with_proxy["proxy_sru"]).statistic, abs=1e-12
    )
    assert proxy["spearman_p_value"] == pytest.approx(
        stats.spearmanr(with_proxy["ctu"], with_proxy["proxy_sru"]).pvalue, rel=1e-9
    )
    assert proxy["bridge_share"] == pytest.approx(with_proxy["is_proxy_bridge"].astype(bool).mean())


def test_no_proxy_scores_leave_the_proxy_variant_empty():
    documents = documents_frame(["t1", "t1", "t2", "t2"], [1, 2, 3, 4], [4, 3, 2, 1])
    table = bridge.bridge_statistics(documents, resamples=20, seed=0).set_index("sru_variant")
    assert table.loc["reader", "spearman_rho"] == pytest.approx(-1.0)
    assert table.loc["proxy", "document_count"] == 0
    assert pd.isna(table.loc["proxy", "spearman_rho"])
    assert pd.isna(table.loc["proxy", "bridge_share"])
    assert "no documents with a proxy score" in table.loc["proxy", "note"]


# ---------------------------------------------------------------- OER


def test_oer_counts_rates_ratio_and_interval():
    rng = np.random.default_rng(8)
    n = 600
    trajectory_id = [f"t{i:02d}" for i in rng.integers(0, 30, n)]
    discriminative = rng.random(n) < 0.4
    appears = rng.random(n) < np.where(discriminative, 0.4, 0.1)
    observations = observations_frame(trajectory_id, list(discriminative), list(appears))
    result = bridge.oer_statistics(discriminative, appears, np.array(trajectory_id), 300, 3)
    rate_d = appears[discriminative].mean()
    rate_n = appears[~discriminative].mean()
    assert result["discriminative_count"] == discriminative.sum()
    assert result["non_discriminative_count"] == (~discriminative).sum()
    assert result["discriminative_appearance_count"] == (appears & discriminative).sum()
    assert result["discriminative_rate"] == pytest.approx(rate_d)
    assert result["non_discriminative_rate"] == pytest.approx(rate_n)
    assert result["oer_ratio"] == pytest.approx(rate_d / rate_n)
    reference = naive_cluster_bootstrap(
        observations,
        lambda s: (
            s["appears_in_next_query"][s["is_discriminative"]].mean()
            / s["appears_in_next_query"][~s["is_discriminative"]].mean()
        ),
        resamples=300,
        seed=3,
    )
    low, high = np.percentile(reference[np.isfinite(reference)], [2.5, 97.5])
    assert result["oer_ci_low"] == pytest.approx(low, rel=1e-12)
    assert result["oer_ci_high"] == pytest.approx(high, rel=1e-12)
    assert result["note"] is None


def test_oer_ratio_is_null_when_no_non_discriminative_entity_appears():
    result = bridge.oer_statistics(
        np.array([True, True, False, False]),
        np.array([True, False, False, False]),
        np.array(["t1", "t2", "t1", "t2"]),
        50,
        0,
    )
    assert result["discriminative_rate"] == 0.5
    assert result["non_discriminative_rate"] == 0.0
    assert result["oer_ratio"] is None
    assert result["oer_ci_low"] is None
    assert "no non-discriminative entity appears" in result["note"]


def test_oer_without_observations():
    result = bridge.oer_statistics(np.array([]), np.array([]), np.array([]), 50, 0)
    assert result["discriminative_count"] == 0
    assert result["oer_ratio"] is None
    assert "no entity observations" in result["note"]


# ---------------------------------------------------------------- end to end


def test_run_writes_the_tables_and_the_plot(tmp_path, capsys):
    documents = random_documents(seed=6)
    observations = observations_frame(
        [f"t{i % 9}" for i in range(40)],
        [i % 3 == 0 for i in range(40)],
        [i % 4 == 0 for i in range(40)],
    )
    warehouse = make_warehouse(tmp_path / "w.duckdb", documents, observations)
    summary = bridge.run_bridge_statistics(
        warehouse, resamples=50, seed=1, plot_dir=tmp_path / "reports"
    )
    assert summary["status"] == "ok"
    assert capsys.readouterr().out.startswith("lara bridge: reader rho=")
    plot = Path(summary["plot"])
    assert plot == tmp_path / "reports" / "bridge_ctu_vs_sru.png"
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with duckdb.connect(str(warehouse), read_only=True) as con:
        table = con.execute("select * from marts.bridge_statistics order by sru_variant").df()
        oer = con.execute("select * from marts.entity_observability").df()
        types = dict(
            con.execute(
                "select column_name, data_type from information_schema.columns "
                "where table_schema = 'marts' and table_name = 'bridge_statistics'"
            ).fetchall()
        )
    assert list(table["sru_variant"]) == ["proxy", "reader"]
    assert types["spearman_rho"] == "DOUBLE" and types["document_count"] == "BIGINT"
    reader = table.set_index("sru_variant").loc["reader"]
    assert reader["spearman_rho"] == pytest.approx(summary["bridge_statistics"][0]["spearman_rho"])
    assert oer.loc[0, "discriminative_count"] == 14
    assert summary["entity_observability"]["oer_ratio"] == pytest.approx(oer.loc[0, "oer_ratio"])


def test_run_with_empty_replay_marts_writes_null_statistics(tmp_path, capsys):
    empty = random_documents(seed=1).iloc[0:0]
    warehouse = make_warehouse(tmp_path / "w.duckdb", empty, observations_frame([], [], []))
    summary = bridge.run_bridge_statistics(warehouse, resamples=20, plot_dir=tmp_path)
    assert summary["status"] == "no_replay_data"
    assert summary["plot"] is None
    assert "no replay documents" in capsys.readouterr().out
    assert not list(tmp_path.glob("*.png"))
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute(
            "select sru_variant, document_count, spearman_rho, note from marts.bridge_statistics"
        ).fetchall()
        oer = con.execute("select oer_ratio, note from marts.entity_observability").fetchall()
    assert {row[0] for row in rows} == {"reader", "proxy"}
    assert all(row[1] == 0 and row[2] is None and "no replay documents" in row[3] for row in rows)
    assert oer[0][0] is None and "no entity observations" in oer[0][1]


def test_run_skips_cleanly_when_the_marts_are_not_built(tmp_path, capsys):
    warehouse = make_warehouse(tmp_path / "w.duckdb", None)
    summary = bridge.run_bridge_statistics(warehouse, resamples=20, plot_dir=tmp_path)
    assert summary["status"] == "skipped"
    assert "run dbt build first" in capsys.readouterr().out
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute(
            "select count(*) from information_schema.tables where table_schema = 'marts'"
        ).fetchone() == (0,)


def test_run_refuses_a_missing_warehouse(tmp_path):
    with pytest.raises(FileNotFoundError):
        bridge.run_bridge_statistics(tmp_path / "nowhere.duckdb")
