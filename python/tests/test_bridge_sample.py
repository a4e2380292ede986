"""Bridge evidence on generated data: dbt marts + lara.bridge against the
generator's manifest (`replay.realised`, computed by the generator from the
metrics.md definitions, and `replay.parameters`, the planted targets).

Tolerances, stated:
- realised values (same data, same definitions) are reproduced exactly,
  except Spearman rho to 1e-5: the marts round SRU and CTU to 9 decimals
  before ranking (var bridge_tie_decimals), which merges ties split by
  floating-point noise (0.7 - 0.5 != 0.2); the generator ranks the raw
  doubles. The bridge shares, which only need the percentile order, match
  to one document.
- planted targets are recovered within sampling error: Spearman rho within
  0.06 of the target (about 3 bootstrap standard errors at the 150
  trajectories of `clean_sample`), the OER ratio within 20% of its target.
"""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from conftest import BuiltSample, build_sample
from lara import bridge
from lara.generate import GeneratorConfig

RHO_TARGET_TOLERANCE = 0.06
OER_TARGET_RELATIVE_TOLERANCE = 0.20


@pytest.fixture(scope="module")
def bridge_run(clean_sample: BuiltSample, tmp_path_factory) -> dict:
    """run_bridge_statistics on a copy of the shared warehouse (the fixture is read-only)."""
    root = tmp_path_factory.mktemp("bridge_run")
    warehouse = clean_sample.copy_warehouse(root)
    summary = bridge.run_bridge_statistics(warehouse, resamples=400, seed=3, plot_dir=root)
    return {"summary": summary, "warehouse": warehouse, "root": root}


def _by_variant(summary: dict) -> dict[str, dict]:
    return {row["sru_variant"]: row for row in summary["bridge_statistics"]}


def test_marts_reproduce_the_realised_statistics(clean_sample, bridge_run):
    realised = clean_sample.manifest["planted"]["replay"]["realised"]
    summary = bridge_run["summary"]
    assert summary["status"] == "ok"
    rows = _by_variant(summary)
    reader, proxy = rows["reader"], rows["proxy"]
    assert reader["document_count"] == realised["n_documents"]
    assert reader["trajectory_count"] == realised["n_trajectories"]
    assert reader["failed_replay_count"] == realised["failed_replays"] > 0
    assert proxy["document_count"] == realised["n_with_proxy"] < realised["n_documents"]
    assert reader["spearman_rho"] == pytest.approx(realised["spearman_ctu_sru"], abs=1e-5)
    assert proxy["spearman_rho"] == pytest.approx(realised["spearman_ctu_proxy"], abs=1e-5)
    assert reader["bridge_share"] == pytest.approx(
        realised["bridge_cell_share_reader"], abs=1 / reader["document_count"]
    )
    assert proxy["bridge_share"] == pytest.approx(
        realised["bridge_cell_share_proxy"], abs=1 / proxy["document_count"]
    )
    oer = summary["entity_observability"]
    planted_oer = realised["oer"]
    assert oer["discriminative_count"] == planted_oer["discriminative_units"]
    assert oer["non_discriminative_count"] == planted_oer["non_discriminative_units"]
    assert oer["discriminative_appearance_count"] == planted_oer["discriminative_appear"]
    assert oer["non_discriminative_appearance_count"] == planted_oer["non_discriminative_appear"]
    assert oer["oer_ratio"] == pytest.approx(planted_oer["ratio"], rel=1e-12)


def test_planted_targets_are_recovered(clean_sample, bridge_run):
    parameters = clean_sample.manifest["planted"]["replay"]["parameters"]
    rows = _by_variant(bridge_run["summary"])
    for variant, target in (
        ("reader", parameters["replay_rho"]),
        ("proxy", parameters["proxy_rho"]),
    ):
        row = rows[variant]
        assert row["spearman_rho"] == pytest.approx(target, abs=RHO_TARGET_TOLERANCE), variant
        assert row["rho_ci_low"] < row["spearman_rho"] < row["rho_ci_high"]
        assert row["valid_resample_count"] == 400
    oer = bridge_run["summary"]["entity_observability"]
    assert oer["oer_ratio"] == pytest.approx(
        parameters["target_oer_ratio"], rel=OER_TARGET_RELATIVE_TOLERANCE
    )
    assert oer["oer_ci_low"] < oer["oer_ratio"] < oer["oer_ci_high"]
    assert oer["oer_ci_low"] > 1  # discriminative entities are observably preferred


def test_sql_percentiles_and_flags_agree_with_pandas(clean_sample):
    documents = clean_sample.df("select * from marts.fct_document_utility")

    def midrank(values: pd.Series) -> pd.Series:
        return (values.rank(method="average") - 0.5) / len(values)

    assert documents["ctu"].notna().all()
    assert documents["ctu"].duplicated().any(), "the sample should exercise ties"
    np.testing.assert_allclose(documents["sru_percentile"], midrank(documents["sru"]), atol=1e-12)
    np.testing.assert_allclose(documents["ctu_percentile"], midrank(documents["ctu"]), atol=1e-12)
    proxied = documents[documents["proxy_sru"].notna()]
    np.testing.assert_allclose(
        proxied["proxy_sru_percentile"], midrank(proxied["proxy_sru"]), atol=1e-12
    )
    np.testing.assert_allclose(proxied["proxy_ctu_percentile"], midrank(proxied["ctu"]), atol=1e-12)
    assert documents.loc[documents["proxy_sru"].isna(), "proxy_sru_percentile"].isna().all()
    expected_bridge = (documents["sru_percentile"] < 0.5) & (documents["ctu_percentile"] > 0.5)
    assert (documents["is_bridge"] == expected_bridge).all()
    failed = documents[documents["is_failed_replay"]]
    assert (failed["counterfactual_status"] != "ok").all()


def test_quadrant_table_matches_the_documents(clean_sample, bridge_run):
    quadrants = clean_sample.df("select * from marts.agg_bridge_quadrants")
    assert len(quadrants) == 10
    cells = quadrants[quadrants["quadrant"] != "total"]
    totals = quadrants[quadrants["quadrant"] == "total"].set_index("sru_variant")
    sums = cells.groupby("sru_variant")["document_count"].sum()
    assert sums.to_dict() == totals["document_count"].to_dict()
    rows = _by_variant(bridge_run["summary"])
    bridge_cells = cells[cells["is_bridge_cell"]].set_index("sru_variant")
    for variant in ("reader", "proxy"):
        assert bridge_cells.loc[variant, "share"] == pytest.approx(rows[variant]["bridge_share"])
        assert totals.loc[variant, "document_count"] == rows[variant]["document_count"]


def test_statistics_tables_and_plot_are_written(bridge_run):
    import duckdb

    with duckdb.connect(str(bridge_run["warehouse"]), read_only=True) as con:
        statistics = con.execute("select * from marts.bridge_statistics").df()
        observability = con.execute("select * from marts.entity_observability").df()
    assert sorted(statistics["sru_variant"]) == ["proxy", "reader"]
    assert statistics["note"].isna().all()
    assert len(observability) == 1
    plot = bridge_run["root"] / bridge.PLOT_FILENAME
    assert plot.stat().st_size > 10_000


@pytest.fixture(scope="module")
def no_replay_sample(tmp_path_factory) -> BuiltSample:
    """A sample without replay tables, only the bridge lineage built."""
    root = tmp_path_factory.mktemp("no_replay_sample")
    return build_sample(
        root,
        GeneratorConfig(sessions=200, days=1, seed=3, replay=False),
        dbt_args=[
            "build",
            "--select",
            "+fct_document_utility+",
            "+fct_entity_observations+",
            "--indirect-selection",
            "cautious",
        ],
    )


def test_without_replay_tables_the_marts_are_empty_and_statistics_skip(
    no_replay_sample, tmp_path, capsys
):
    assert no_replay_sample.query("select count(*) from marts.fct_document_utility") == [(0,)]
    assert no_replay_sample.query("select count(*) from marts.fct_entity_observations") == [(0,)]
    assert no_replay_sample.query(
        "select count(*), sum(document_count) from marts.agg_bridge_quadrants"
    ) == [(10, 0)]
    warehouse = tmp_path / "lara.duckdb"
    shutil.copy(no_replay_sample.warehouse, warehouse)
    summary = bridge.run_bridge_statistics(warehouse, resamples=50, plot_dir=tmp_path)
    assert summary["status"] == "no_replay_data"
    assert summary["plot"] is None
    assert "no replay documents" in capsys.readouterr().out
    assert all(row["spearman_rho"] is None for row in summary["bridge_statistics"])
