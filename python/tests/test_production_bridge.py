"""Production bridge evidence: fct_retrieval_bridge / agg_production_bridge on the
shared generated sample, recomputed independently in pandas, and
lara.production_bridge (rank statistics of NDCG@K against use and outcome with a
session bootstrap) against scipy, including the degenerate cases."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from conftest import BuiltSample
from lara import production_bridge
from lara.production_bridge import (
    binary_rank_statistics,
    ndcg_outcome_statistics,
    run_production_bridge_statistics,
)

RESAMPLES = 300


@pytest.fixture(scope="module")
def statistics_run(clean_sample: BuiltSample, tmp_path_factory) -> dict:
    """run_production_bridge_statistics on a copy of the shared (read-only) warehouse."""
    root = tmp_path_factory.mktemp("production_bridge")
    warehouse = clean_sample.copy_warehouse(root)
    summary = run_production_bridge_statistics(warehouse, resamples=RESAMPLES, seed=3)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        retrievals = con.execute("select * from marts.fct_retrieval_bridge").df()
        table = con.execute("select * from marts.production_bridge_statistics").df()
    return {"summary": summary, "warehouse": warehouse, "retrievals": retrievals, "table": table}


# ---------------------------------------------------------------- dbt marts


def test_bridge_flags_match_an_independent_recomputation(clean_sample):
    facts = clean_sample.df(
        "select retrieval_id, session_guid, retrieved_at, is_labelled, ndcg_at_k, "
        "has_genuine_positive, has_agent_consumption, retrieval_driven_outcome_count "
        "from marts.fct_retrievals where is_in_tier_scope"
    )
    facts["is_used"] = facts["has_genuine_positive"] | facts["has_agent_consumption"]
    facts["has_outcome"] = facts["retrieval_driven_outcome_count"] >= 1
    successes = facts.loc[facts["is_used"] | facts["has_outcome"], ["session_guid", "retrieved_at"]]
    pairs = facts[facts["is_labelled"]].merge(successes, on="session_guid", suffixes=("", "_later"))
    followed = set(pairs.loc[pairs["retrieved_at_later"] > pairs["retrieved_at"], "retrieval_id"])
    expected = facts[facts["is_labelled"]].set_index("retrieval_id")
    expected["is_followed_by_successful_retrieval"] = expected.index.isin(followed)
    expected["is_low_quality"] = expected["ndcg_at_k"] < 0.5
    expected["is_bridge_retrieval"] = expected["is_low_quality"] & (
        expected["is_used"] | expected["is_followed_by_successful_retrieval"]
    )
    # ranked on NDCG@K to 9 decimals (var bridge_tie_decimals): float noise splits no tie
    mid_rank = expected["ndcg_at_k"].round(9).rank(method="average") - 0.5
    expected["ndcg_percentile"] = mid_rank / len(expected)

    actual = clean_sample.df("select * from marts.fct_retrieval_bridge").set_index("retrieval_id")
    assert len(actual) == len(expected) > 1000
    actual = actual.loc[expected.index]
    for column in (
        "is_used",
        "has_outcome",
        "is_followed_by_successful_retrieval",
        "is_low_quality",
        "is_bridge_retrieval",
    ):
        assert (actual[column] == expected[column]).all(), column
    np.testing.assert_allclose(actual["ndcg_percentile"], expected["ndcg_percentile"], atol=1e-12)
    # every path into the bridge occurs in the sample
    assert set(actual["bridge_path"].dropna()) == {
        "used",
        "followed_by_success",
        "used_and_followed_by_success",
    }


def test_aggregate_totals_add_up(clean_sample):
    overall = clean_sample.df(
        "select * from marts.agg_production_bridge where grouping_level = 'overall'"
    ).iloc[0]
    facts = clean_sample.df("select * from marts.fct_retrieval_bridge")
    assert overall["labelled_retrieval_count"] == len(facts)
    assert overall["bridge_retrieval_count"] == facts["is_bridge_retrieval"].sum()
    assert overall["low_quality_retrieval_count"] == facts["is_low_quality"].sum()
    assert overall["bridge_retrieval_share"] == pytest.approx(facts["is_bridge_retrieval"].mean())
    assert (
        overall["bridge_retrieval_share_ci_low"]
        < overall["bridge_retrieval_share"]
        < overall["bridge_retrieval_share_ci_high"]
    )
    tier1 = clean_sample.df(
        "select in_scope_retrieval_count, labelled_retrieval_count "
        "from marts.agg_tier1_quality where grouping_level = 'overall'"
    ).iloc[0]
    assert overall["in_scope_retrieval_count"] == tier1["in_scope_retrieval_count"]
    assert overall["labelled_retrieval_count"] == tier1["labelled_retrieval_count"]
    by_day = clean_sample.df(
        "select sum(bridge_retrieval_count) as bridges from marts.agg_production_bridge "
        "where grouping_level = 'day x surface x role'"
    ).iloc[0]
    assert by_day["bridges"] == overall["bridge_retrieval_count"]


# ---------------------------------------------------------------- statistics


def test_one_row_per_outcome_kind_and_role(statistics_run):
    table, retrievals = statistics_run["table"], statistics_run["retrievals"]
    roles = {"all", *retrievals["retrieval_role"].unique()}
    assert set(zip(table["outcome_kind"], table["retrieval_role"], strict=True)) == {
        (kind, role) for kind in ("use", "outcome") for role in roles
    }
    assert list(table.columns) == production_bridge.COLUMN_NAMES
    assert statistics_run["summary"]["status"] == "ok"
    assert len(statistics_run["summary"]["rows"]) == len(table)


def test_point_estimates_match_scipy(statistics_run):
    table, retrievals = statistics_run["table"], statistics_run["retrievals"]
    x = retrievals["ndcg_at_k"].to_numpy(dtype=float)
    for kind, column in (("use", "is_used"), ("outcome", "has_outcome")):
        row = table[(table["outcome_kind"] == kind) & (table["retrieval_role"] == "all")].iloc[0]
        y = retrievals[column].to_numpy(dtype=bool)
        assert row["retrieval_count"] == len(retrievals)
        assert row["session_count"] == retrievals["session_guid"].nunique()
        assert row["positive_count"] == y.sum()
        spearman = stats.spearmanr(x, y)
        kendall = stats.kendalltau(x, y)
        u_statistic = stats.mannwhitneyu(x[y], x[~y]).statistic
        assert row["spearman_rho"] == pytest.approx(spearman.statistic, abs=1e-12)
        assert row["spearman_p_value"] == pytest.approx(spearman.pvalue, rel=1e-9)
        assert row["kendall_tau_b"] == pytest.approx(kendall.statistic, abs=1e-12)
        assert row["kendall_p_value"] == pytest.approx(kendall.pvalue, rel=1e-9)
        assert row["ndcg_auc"] == pytest.approx(u_statistic / (y.sum() * (~y).sum()), abs=1e-12)
        assert row["positive_ndcg_mean"] == pytest.approx(x[y].mean())
        for prefix, name in (
            ("spearman", "spearman_rho"),
            ("kendall", "kendall_tau_b"),
            ("ndcg_auc", "ndcg_auc"),
        ):
            assert row[f"{prefix}_ci_low"] < row[name] < row[f"{prefix}_ci_high"]
        assert row["valid_resample_count"] == RESAMPLES and pd.isna(row["note"])
    # the generator plants it: good retrievals are used more often
    use = table[(table["outcome_kind"] == "use") & (table["retrieval_role"] == "all")].iloc[0]
    assert use["spearman_ci_low"] > 0 and use["ndcg_auc_ci_low"] > 0.5


def test_degenerate_roles_have_null_statistics_and_a_note(statistics_run):
    table = statistics_run["table"]
    degenerate = table[table["spearman_rho"].isna()]
    assert len(degenerate) > 0  # tiny or one-sided roles in the sample
    assert degenerate["note"].notna().all()
    assert degenerate[["spearman_ci_low", "kendall_tau_b", "ndcg_auc"]].isna().all().all()
    assert (degenerate["retrieval_count"] >= 0).all()


def test_bootstrap_is_seeded(statistics_run, tmp_path):
    warehouse = statistics_run["warehouse"]
    again = run_production_bridge_statistics(warehouse, resamples=RESAMPLES, seed=3)["rows"]
    first = statistics_run["summary"]["rows"]
    assert [r["spearman_ci_low"] for r in again] == [r["spearman_ci_low"] for r in first]
    other = run_production_bridge_statistics(warehouse, resamples=RESAMPLES, seed=4)["rows"]
    assert other[0]["spearman_ci_low"] != first[0]["spearman_ci_low"]
    assert other[0]["spearman_rho"] == first[0]["spearman_rho"]


def test_weighted_statistics_equal_scipy_on_the_expanded_sample():
    rng = np.random.default_rng(1)
    x = rng.choice([0.0, 0.2, 0.5, 0.7, 1.0], 60)  # ties, as NDCG@K has
    y = rng.random(60) < 0.4
    weights = rng.integers(0, 3, (5, 60))
    got = binary_rank_statistics(x, y, weights)
    for row in range(5):
        xe, ye = np.repeat(x, weights[row]), np.repeat(y, weights[row])
        assert got["spearman_rho"][row] == pytest.approx(stats.spearmanr(xe, ye).statistic)
        assert got["kendall_tau_b"][row] == pytest.approx(stats.kendalltau(xe, ye).statistic)
        u_statistic = stats.mannwhitneyu(xe[ye], xe[~ye]).statistic
        assert got["ndcg_auc"][row] == pytest.approx(u_statistic / (ye.sum() * (~ye).sum()))
    one_sided = binary_rank_statistics(x, np.ones(60, bool), weights)
    assert np.isnan(one_sided["spearman_rho"]).all() and np.isnan(one_sided["ndcg_auc"]).all()


@pytest.mark.parametrize(
    ("ndcg", "outcome", "sessions", "note"),
    [
        ([], [], [], "no labelled in-scope retrievals"),
        ([0.1, 0.9], [True, False], ["s1", "s2"], "fewer than 3 retrievals"),
        ([0.1, 0.5, 0.9], [True, True, True], ["s1", "s2", "s3"], "every retrieval"),
        ([0.1, 0.5, 0.9], [False, False, False], ["s1", "s2", "s3"], "no retrieval"),
        ([0.4, 0.4, 0.4], [True, False, True], ["s1", "s2", "s3"], "NDCG@K is constant"),
        ([0.1, 0.5, 0.9, 0.3], [True, False, True, False], ["s1"] * 4, "fewer than 2 sessions"),
    ],
)
def test_degenerate_inputs_never_raise(ndcg, outcome, sessions, note):
    result = ndcg_outcome_statistics(
        np.array(ndcg, dtype=float), np.array(outcome, dtype=bool), np.array(sessions), 50, 0
    )
    assert note in result["note"]
    assert result["spearman_ci_low"] is None and result["kendall_ci_high"] is None
    assert result["retrieval_count"] == len(ndcg)
    if note == "fewer than 2 sessions":  # the point estimates exist, the interval does not
        assert result["spearman_rho"] is not None
    else:
        assert result["spearman_rho"] is None and result["ndcg_auc"] is None


def test_empty_and_missing_marts(tmp_path):
    warehouse = tmp_path / "empty.duckdb"
    with duckdb.connect(str(warehouse)) as con:
        con.execute("create schema marts")
    assert run_production_bridge_statistics(warehouse)["status"] == "skipped"
    with duckdb.connect(str(warehouse)) as con:
        con.execute(
            "create table marts.fct_retrieval_bridge (retrieval_id varchar, session_guid varchar, "
            "retrieval_role varchar, ndcg_at_k double, is_used boolean, has_outcome boolean)"
        )
    summary = run_production_bridge_statistics(warehouse, resamples=10)
    assert summary["status"] == "no_labelled_retrievals"
    assert [(r["outcome_kind"], r["retrieval_role"]) for r in summary["rows"]] == [
        ("use", "all"),
        ("outcome", "all"),
    ]
    assert all(r["spearman_rho"] is None and r["note"] for r in summary["rows"])
    with duckdb.connect(str(warehouse), read_only=True) as con:
        written = con.execute("select count(*) from marts.production_bridge_statistics")
        assert written.fetchone() == (2,)
    with pytest.raises(FileNotFoundError):
        run_production_bridge_statistics(tmp_path / "absent.duckdb")
