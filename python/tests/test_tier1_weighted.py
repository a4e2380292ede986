"""agg_tier1_weighted against lara.labels.weighted_mean on a known population,
through the real pipeline: the shared generated sample with its relevance labels
removed, a stratified design drawn by `label_sample` (equal allocation, so small
strata are heavily oversampled), grades drawn from a known per-stratum model for
the drawn retrievals and imported with `label_import`, dbt build, compare.

The per-retrieval Tier 1 values are recomputed in pandas from the imported
grades (not read back from the warehouse), so the test covers the whole path:
import, label resolution, Tier 1 metrics, design join and the estimator."""

from __future__ import annotations

import datetime as dt
import json
import shutil

import numpy as np
import pandas as pd
import pytest

from conftest import BuiltSample
from lara.dbt import run_dbt
from lara.labels import label_import, label_sample, weighted_mean

K = 10  # var lara_k
Z = 1.96  # the marts' normal quantile
SAMPLED_AT = dt.datetime(2026, 8, 10, 9, 0, tzinfo=dt.UTC)
IMPORTED_AT = dt.datetime(2026, 8, 12, 12, 0, tzinfo=dt.UTC)
#: Grade model: P(rank 1 relevant) per role (x 0.9 off template_search), decaying
#: by 0.9 per rank; a relevant asset is graded 1, 2, 3 with probability .5, .35, .15.
ROLE_RELEVANCE = {
    "find": 0.8,
    "browse": 0.55,
    "generation_reference": 0.6,
    "operate": 0.5,
    "unknown": 0.4,
    "context_dependent": 0.3,
    "task_step": 0.25,
}
LEVELS = {
    "overall": [],
    "role": ["retrieval_role"],
    "surface": ["surface"],
    "surface x role": ["surface", "retrieval_role"],
}
METRICS = ("precision_at_1", "precision_at_k", "ndcg_at_k")


def rank1_relevance(role: pd.Series, surface: pd.Series) -> np.ndarray:
    return role.map(ROLE_RELEVANCE).fillna(0.5).to_numpy() * np.where(
        surface == "template_search", 1.0, 0.9
    )


def tier1_values(judged: pd.DataFrame) -> pd.DataFrame:
    """precision@1, precision@K and NDCG@K per retrieval from its judged top-K."""
    judged = judged.assign(rank=judged["asset_rank"].astype(int), grade=judged["grade"].astype(int))
    judged["gain"] = judged["grade"] / np.log2(judged["rank"] + 1.0)
    ideal = judged.sort_values(["retrieval_id", "grade"], ascending=[True, False])
    ideal_rank = ideal.groupby("retrieval_id").cumcount() + 1
    ideal_dcg = (ideal["grade"] / np.log2(ideal_rank + 1.0)).groupby(ideal["retrieval_id"]).sum()
    grouped = judged.groupby("retrieval_id")
    at_1 = judged.loc[judged["rank"] == 1].set_index("retrieval_id")["grade"]
    values = pd.DataFrame(
        {
            "precision_at_1": (at_1.reindex(ideal_dcg.index) >= 1).astype(float),
            "precision_at_k": (judged["grade"] >= 1).groupby(judged["retrieval_id"]).sum() / K,
            "dcg": grouped["gain"].sum(),
        }
    )
    values["ndcg_at_k"] = np.where(ideal_dcg > 0, values["dcg"] / ideal_dcg, 0.0)
    return values.drop(columns="dcg")


@pytest.fixture(scope="module")
def population(clean_sample: BuiltSample, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("tier1_weighted")
    raw = root / "raw"
    shutil.copytree(clean_sample.raw_path, raw)
    shutil.rmtree(raw / "relevance_labels")  # the generator's labels: not from this design
    summary = label_sample(
        clean_sample.warehouse,
        root / "sample",
        total=300,
        allocation="equal",
        k=K,
        seed=5,
        sampled_at=SAMPLED_AT,
    )
    judging = pd.read_csv(root / "sample" / "judging.csv", dtype=str, keep_default_na=False)
    rng = np.random.default_rng(2026)
    rank = judging["asset_rank"].astype(int).to_numpy()
    p_relevant = rank1_relevance(judging["retrieval_role"], judging["surface"]) * 0.9 ** (rank - 1)
    relevant = rng.random(len(judging)) < p_relevant
    grade_if_relevant = 1 + (rng.random(len(judging))[:, None] > [[0.5, 0.85]]).sum(axis=1)
    judging["grade"] = np.where(relevant, grade_if_relevant, 0).astype(str)
    judging["judge"] = "human"
    returned = root / "returned.csv"
    judging.to_csv(returned, index=False)
    report = label_import(returned, raw, imported_at=IMPORTED_AT)
    assert report["rejected"] == 0 and report["design_rows_written"] == 300
    design = pd.read_csv(root / "sample" / "sample_design.csv")
    # An older draw of some of the same retrievals: superseded by the latest design row.
    superseded = design.head(40)[["retrieval_id"]].assign(
        stratum="superseded", inclusion_probability=1.0, sampled_at="2026-08-05T08:00:00Z"
    )
    folder = raw / "label_sample_design" / "dt=2026-08-05"
    folder.mkdir(parents=True)
    (folder / "design-superseded.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in superseded.to_dict("records"))
    )

    warehouse = root / "lara.duckdb"
    env = {"DBT_TARGET_PATH": str(root / "target"), "DBT_LOG_PATH": str(root / "logs")}
    for args in (
        [
            "build",
            "--select",
            "+agg_tier1_weighted",
            "--exclude",
            "resource_type:test",
            "resource_type:unit_test",
        ],
        ["test", "--select", "agg_tier1_weighted", "--exclude", "resource_type:unit_test"],
    ):
        result = run_dbt(args, raw, warehouse, extra_env=env, capture=True)
        assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    built = BuiltSample(raw, warehouse, clean_sample.manifest, result.stdout)
    units = design.merge(
        judging[["retrieval_id", "retrieval_role", "surface"]].drop_duplicates(), on="retrieval_id"
    ).merge(tier1_values(judging), left_on="retrieval_id", right_index=True)
    return {
        "built": built,
        "units": units,
        "summary": summary,
        "aggregate": built.df("select * from marts.agg_tier1_weighted"),
    }


def _cells(units: pd.DataFrame, level: str):
    keys = LEVELS[level]
    if not keys:
        yield {"surface": "all", "retrieval_role": "all"}, units
        return
    for key, cell in units.groupby(keys):
        names = dict(zip(keys, key, strict=True))
        yield {"surface": "all", "retrieval_role": "all"} | names, cell


def test_pipeline_reproduces_the_imported_tier1_values(population):
    units = population["units"].set_index("retrieval_id")
    facts = (
        population["built"]
        .df(
            "select retrieval_id, precision_at_1, precision_at_k, ndcg_at_k "
            "from marts.fct_retrievals where is_labelled"
        )
        .set_index("retrieval_id")
    )
    assert set(facts.index) == set(units.index)
    for metric in METRICS:
        np.testing.assert_allclose(facts.loc[units.index, metric], units[metric], atol=1e-12)


def test_sql_estimates_equal_weighted_mean_in_every_cell(population):
    aggregate = population["aggregate"].set_index(["grouping_level", "surface", "retrieval_role"])
    checked = 0
    for level in LEVELS:
        for names, cell in _cells(population["units"], level):
            row = aggregate.loc[(level, names["surface"], names["retrieval_role"])]
            assert row["weighted_retrieval_count"] == len(cell)
            assert pd.isna(row["weighted_null_reason"])
            weights = 1.0 / cell["inclusion_probability"]
            assert row["estimated_population_size"] == pytest.approx(weights.sum())
            for metric in METRICS:
                expected = weighted_mean(
                    cell[metric], cell["inclusion_probability"], strata=cell["stratum"]
                )
                assert row[f"{metric}_weighted_mean"] == pytest.approx(expected.estimate, abs=1e-12)
                assert row[f"{metric}_weighted_std_error"] == pytest.approx(
                    expected.std_error, abs=1e-12
                )
                assert row[f"{metric}_weighted_ci_low"] == pytest.approx(
                    expected.estimate - Z * expected.std_error, abs=1e-12
                )
                assert row[f"{metric}_weighted_ci_high"] == pytest.approx(
                    expected.estimate + Z * expected.std_error, abs=1e-12
                )
                assert row["effective_sample_size"] == pytest.approx(expected.effective_n)
                unweighted = cell[metric].mean()
                assert row[f"{metric}_mean"] == pytest.approx(unweighted, abs=1e-12)
            checked += 1
    unchecked = population["aggregate"].query("weighted_retrieval_count == 0")
    assert checked + len(unchecked) == len(aggregate) and checked > 10
    assert (unchecked["weighted_null_reason"] == "no_labelled_design_retrievals").all()


def test_latest_design_row_wins(population):
    overall = population["aggregate"].query("grouping_level == 'overall'").iloc[0]
    assert overall["design_retrieval_count"] == overall["weighted_retrieval_count"] == 300
    assert overall["labelled_without_design_count"] == 0
    assert overall["design_unlabelled_count"] == 0
    assert overall["design_stratum_count"] == population["summary"]["strata"]
    assert pd.Timestamp(overall["latest_sampled_at"]) == pd.Timestamp("2026-08-10 09:00:00")


def test_weighting_recovers_the_known_population_where_the_plain_mean_does_not(population):
    """Expected precision@1 of the frame under the grade model: sum_h N_h p_h / N.
    The weighted estimate lands within 3 standard errors of it; the plain mean
    over the equal-allocation sample, dominated by small weak strata, does not."""
    strata = population["summary"]["strata_sizes"]
    frame = pd.DataFrame(
        [
            {
                "retrieval_role": stratum.split("|")[0],
                "surface": stratum.split("|")[1],
                "size": sizes["population_size"],
            }
            for stratum, sizes in strata.items()
        ]
    )
    truth = np.average(
        rank1_relevance(frame["retrieval_role"], frame["surface"]), weights=frame["size"]
    )
    overall = population["aggregate"].query("grouping_level == 'overall'").iloc[0]
    assert overall["estimated_population_size"] == pytest.approx(frame["size"].sum())
    error = overall["precision_at_1_weighted_std_error"]
    assert abs(overall["precision_at_1_weighted_mean"] - truth) < 3 * error
    assert abs(overall["precision_at_1_mean"] - truth) > 4 * error
    assert overall["effective_sample_size"] < 0.6 * overall["weighted_retrieval_count"]


def test_without_a_design_the_weighted_columns_are_null(clean_sample):
    weighted = clean_sample.df("select * from marts.agg_tier1_weighted")
    assert (weighted["weighted_null_reason"] == "no_sample_design").all()
    weighted_columns = [c for c in weighted.columns if "_weighted_" in c]
    assert weighted[weighted_columns].isna().all().all()
    quality = clean_sample.df(
        "select * from marts.agg_tier1_quality where retrieval_date is null"
    ).set_index(["grouping_level", "surface", "retrieval_role"])
    for row in weighted.itertuples(index=False):
        expected = quality.loc[(row.grouping_level, row.surface, row.retrieval_role)]
        assert row.labelled_retrieval_count == expected["labelled_retrieval_count"]
        for metric in ("precision_at_1_mean", "precision_at_k_mean", "ndcg_at_k_mean"):
            assert row._asdict()[metric] == pytest.approx(expected[metric], nan_ok=True)
