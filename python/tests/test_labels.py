"""Labelling workflow: stratified sample, judgement import, weighted (Horvitz-Thompson /
Hajek) estimates checked against a simulated population with a known mean."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from lara.labels import (
    add_label_import_arguments,
    allocate,
    label_import,
    label_import_main,
    label_sample,
    weighted_mean,
)

SAMPLED_AT = dt.datetime(2026, 8, 20, 9, 30, tzinfo=dt.UTC)
IMPORTED_AT = dt.datetime(2026, 8, 22, 12, 0, tzinfo=dt.UTC)


# --- allocation -------------------------------------------------------------------------


def test_proportional_allocation_sums_to_total_and_respects_sizes():
    population = pd.Series({"a": 1000, "b": 300, "c": 5, "d": 1})
    sizes = allocate(population, 100)
    assert sizes.sum() == 100
    assert (sizes <= population).all()
    assert (sizes >= 1).all()  # min_per_stratum: every stratum has a chance
    assert sizes["a"] > sizes["b"] > sizes["c"]


def test_equal_allocation_and_caps():
    population = pd.Series({"a": 1000, "b": 300, "c": 5})
    sizes = allocate(population, 60, "equal")
    assert sizes.to_dict() == {"a": 28, "b": 27, "c": 5}  # c capped, the rest spread
    assert allocate(population, 10_000).to_dict() == population.to_dict()  # everything
    assert allocate(population, 2, min_per_stratum=1).sum() == 3  # the minimums win


# --- sampling from a warehouse ----------------------------------------------------------


def _warehouse(path: Path, n: int = 600, seed: int = 3) -> pd.DataFrame:
    """A warehouse with the staging tables label-sample reads (fallback path)."""
    rng = np.random.default_rng(seed)
    ids = [f"r{i:04d}" for i in range(n)]
    lengths = rng.integers(0, 14, n)
    lengths[:20] = 0  # empty results
    retrievals = pd.DataFrame(
        {
            "retrieval_id": ids,
            "prompt_id": [f"p{i:04d}" for i in range(n)],
            "retrieval_role": rng.choice(["find", "browse", None], n, p=[0.6, 0.3, 0.1]),
            "query_text": [f"query {i}" for i in range(n)],
            "returned_asset_ids": [
                [f"a{(i * 7 + j) % 50}" for j in range(length)] + ([f"a{i % 50}"] if length else [])
                for i, length in enumerate(lengths)
            ],
            "retrieved_at": pd.Timestamp("2026-08-03T00:00:00")
            + pd.to_timedelta(rng.integers(0, 14 * 86400, n), unit="s"),
        }
    )
    prompts = pd.DataFrame(
        {
            "prompt_id": retrievals["prompt_id"],
            "surface": rng.choice(["chat", "template_search"], n),
            "is_synthetic": rng.random(n) < 0.05,
        }
    )
    with duckdb.connect(str(path)) as con:
        con.execute("create schema staging")
        con.register("r", retrievals)
        con.register("p", prompts)
        con.execute("create table staging.stg_lara__retrievals as select * from r")
        con.execute("create table staging.stg_lara__prompts as select * from p")
    return retrievals.merge(prompts, on="prompt_id")


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    root = tmp_path_factory.mktemp("labels")
    population = _warehouse(root / "w.duckdb")
    out = root / "sample"
    summary = label_sample(root / "w.duckdb", out, total=120, k=5, seed=11, sampled_at=SAMPLED_AT)
    return root, population, out, summary


def test_sample_frame_strata_and_probabilities(sampled):
    _, population, out, summary = sampled
    in_frame = population[
        ~population["is_synthetic"] & population["returned_asset_ids"].map(len).gt(0)
    ]
    assert summary["retrievals_in_frame"] == len(in_frame)
    assert summary["retrievals_sampled"] == 120
    design = pd.read_csv(out / "sample_design.csv")
    assert len(design) == 120 and design["retrieval_id"].is_unique
    assert set(design["retrieval_id"]) <= set(in_frame["retrieval_id"])
    role = in_frame["retrieval_role"].fillna("unknown")
    week = in_frame["retrieved_at"].dt.strftime("%G-W%V")
    strata = role + "|" + in_frame["surface"] + "|" + week
    sizes = strata.value_counts()
    assert summary["strata"] == len(sizes)
    for row in design.itertuples():
        assert row.stratum_population_size == sizes[row.stratum]
        assert row.inclusion_probability == pytest.approx(
            row.stratum_sample_size / row.stratum_population_size
        )
    assert (
        design.groupby("stratum").size().to_dict()
        == design.groupby("stratum")["stratum_sample_size"].first().to_dict()
    )


def test_judging_file_has_top_k_distinct_assets_in_rank_order(sampled):
    _, population, out, _ = sampled
    judging = pd.read_csv(out / "judging.csv", dtype={"grade": "object"})
    lines = pd.read_json(out / "judging.jsonl", lines=True, dtype=False)
    assert len(judging) == len(lines)
    assert list(judging.columns) == list(lines.columns)
    lists = population.set_index("retrieval_id")["returned_asset_ids"]
    for retrieval_id, rows in judging.groupby("retrieval_id"):
        expected = list(dict.fromkeys(lists[retrieval_id]))[:5]
        assert list(rows.sort_values("asset_rank")["asset_id"]) == expected
    assert judging["grade"].isna().all()
    assert set(judging["sampled_at"]) == {"2026-08-20T09:30:00.000000Z"}


def test_sample_is_reproducible_per_seed(sampled):
    root, _, out, _ = sampled
    again = root / "again"
    label_sample(root / "w.duckdb", again, total=120, k=5, seed=11, sampled_at=SAMPLED_AT)
    assert (again / "judging.csv").read_text() == (out / "judging.csv").read_text()
    other = root / "other"
    label_sample(root / "w.duckdb", other, total=120, k=5, seed=12, sampled_at=SAMPLED_AT)
    assert (other / "judging.csv").read_text() != (out / "judging.csv").read_text()


def test_per_stratum_sizes_by_pattern(sampled, tmp_path):
    root, _, _, _ = sampled
    summary = label_sample(
        root / "w.duckdb",
        tmp_path,
        sizes={"find|chat": 4, "browse|*": 2},
        default_size=0,
        strata=("retrieval_role", "surface"),
        sampled_at=SAMPLED_AT,
    )
    design = pd.read_csv(tmp_path / "sample_design.csv")
    assert design.groupby("stratum").size().to_dict() == {
        "browse|chat": 2,
        "browse|template_search": 2,
        "find|chat": 4,
    }
    assert summary["allocation"] == "per_stratum"


# --- importing judgements ---------------------------------------------------------------


def _judged(out: Path) -> pd.DataFrame:
    judging = pd.read_csv(out / "judging.csv", dtype=str, keep_default_na=False)
    judging["grade"] = (judging["asset_rank"].astype(int) % 4).astype(str)
    judging["judge"] = np.where(judging.index % 3 == 0, "human", "llm")
    judging["judged_at"] = np.where(
        judging.index % 2 == 0, "2026-08-21T10:00:00Z", "2026-08-22T08:00:00+02:00"
    )
    return judging


def test_label_import_validates_and_partitions(sampled, tmp_path):
    _, _, out, _ = sampled
    judging = _judged(out)
    bad = judging.iloc[:8].copy()
    bad.loc[bad.index[0], "grade"] = "5"
    bad.loc[bad.index[1], "grade"] = "2.5"
    bad.loc[bad.index[2], "judge"] = "robot"
    bad.loc[bad.index[3], "asset_id"] = " "
    bad.loc[bad.index[4], "retrieval_id"] = "has space"
    bad.loc[bad.index[5], "judged_at"] = "yesterday"
    bad.loc[bad.index[6], "inclusion_probability"] = "0"
    bad.loc[bad.index[7], "grade"] = ""  # unjudged: skipped, not rejected
    conflict = judging.iloc[[10]].copy()
    conflict["grade"] = str((int(conflict["grade"].iloc[0]) + 1) % 4)
    file = tmp_path / "returned.csv"
    pd.concat([judging.iloc[8:], bad, conflict, judging.iloc[[9]]]).to_csv(file, index=False)
    raw = tmp_path / "raw"
    report = label_import(file, raw, imported_at=IMPORTED_AT)
    assert report["rejected_by_reason"] == {
        "conflicting_duplicate": 2,
        "empty_asset_id": 1,
        "invalid_grade": 2,
        "invalid_inclusion_probability": 1,
        "invalid_judge": 1,
        "invalid_judged_at": 1,
        "invalid_retrieval_id": 1,
    }
    assert report["unjudged_skipped"] == 1
    assert report["exact_duplicates_dropped"] == 1
    assert report["labels_written"] == len(judging) - 8 - 1
    rejects = [json.loads(line) for line in Path(report["rejects_file"]).read_text().splitlines()]
    assert {r["reject_reason"] for r in rejects} == set(report["rejected_by_reason"])
    assert all(r["line"] >= 2 for r in rejects)
    files = sorted(p.relative_to(raw).as_posix() for p in raw.rglob("*.jsonl"))
    stamp = "20260822T120000000000Z"
    assert files == [
        f"label_sample_design/dt=2026-08-20/design-{stamp}.jsonl",
        f"relevance_labels/dt=2026-08-21/labels-{stamp}.jsonl",
        f"relevance_labels/dt=2026-08-22/labels-{stamp}.jsonl",
    ]
    line = json.loads((raw / files[1]).read_text().splitlines()[0])
    assert set(line) == {"retrieval_id", "asset_id", "grade", "judge", "judged_at"}
    assert isinstance(line["grade"], int) and line["judged_at"].endswith("Z")
    design = [json.loads(x) for x in (raw / files[0]).read_text().splitlines()]
    assert {d["retrieval_id"] for d in design} <= set(judging["retrieval_id"])
    assert all(0 < d["inclusion_probability"] <= 1 for d in design)


def test_label_import_exit_codes_and_jsonl_input(sampled, tmp_path):
    _, _, out, _ = sampled
    judging = _judged(out).head(6)
    lines = [json.dumps(r) for r in judging.to_dict("records")]
    lines.append("{not json")
    file = tmp_path / "returned.jsonl"
    file.write_text("\n".join(lines) + "\n")
    parser = argparse.ArgumentParser()
    add_label_import_arguments(parser)
    args = parser.parse_args([str(file), "--out", str(tmp_path / "raw"), "--sample", str(out)])
    assert label_import_main(args) == 1
    rejects = (tmp_path / "returned.jsonl.rejects.jsonl").read_text().splitlines()
    assert json.loads(rejects[0])["reject_reason"] == "json_parse_error"
    assert json.loads(rejects[0])["line"] == 7
    args = parser.parse_args(
        [str(file), "--out", str(tmp_path / "raw2"), "--allow-rejects", "--no-design"]
    )
    assert label_import_main(args) == 0
    assert not (tmp_path / "raw2" / "label_sample_design").exists()


def test_unknown_retrieval_ids_are_rejected(sampled, tmp_path):
    _, _, out, _ = sampled
    judging = _judged(out).drop_duplicates("retrieval_id").head(3)
    file = tmp_path / "returned.csv"
    judging.to_csv(file, index=False)
    report = label_import(
        file, tmp_path / "raw", known_retrieval_ids={judging["retrieval_id"].iloc[0]}
    )
    assert report["rejected_by_reason"] == {"unknown_retrieval_id": 2}
    assert report["labels_written"] == 1


def test_unjudged_file_writes_nothing(sampled, tmp_path):
    _, _, out, _ = sampled
    report = label_import(out / "judging.csv", tmp_path / "raw")
    assert report["labels_written"] == 0 and report["rejected"] == 0
    assert report["unjudged_skipped"] == report["rows_read"] > 0
    assert not (tmp_path / "raw").exists()


# --- weighted estimates -----------------------------------------------------------------


def test_weighted_mean_basics():
    equal = weighted_mean([0.2, 0.4, 0.9], [0.1, 0.1, 0.1])
    assert equal.estimate == pytest.approx(0.5)
    assert equal.effective_n == pytest.approx(3)
    unequal = weighted_mean([1.0, 0.0], [0.5, 0.1])  # weights 2 and 10
    assert unequal.estimate == pytest.approx(2 / 12)
    ht = weighted_mean([1.0, 0.0], [0.5, 0.1], population_size=12)
    assert ht.estimate == pytest.approx(2 / 12) and ht.estimator == "horvitz_thompson"
    assert unequal.ci_low < unequal.estimate < unequal.ci_high
    census = weighted_mean([0.1, 0.7], [1.0, 1.0], strata=["a", "a"])
    assert census.variance == 0  # everything sampled: no sampling error
    with pytest.raises(ValueError):
        weighted_mean([0.1], [0.0])
    with pytest.raises(ValueError):
        weighted_mean([], [])


def test_weighted_estimate_is_unbiased_where_the_unweighted_mean_is_not():
    """A population of per-retrieval NDCG in three strata with known means, sampled
    with very unequal probabilities (the small, bad stratum oversampled), as a
    labelling budget skewed towards rare strata would. Over many draws the weighted
    estimate centres on the population mean and its interval covers it ~95% of the
    time; the unweighted sample mean is far off."""
    rng = np.random.default_rng(2026)
    stratum_sizes = np.array([6000, 3000, 1000])
    stratum_means = np.array([0.8, 0.5, 0.15])
    population = [
        rng.beta(mean * 8, (1 - mean) * 8, size)
        for mean, size in zip(stratum_means, stratum_sizes, strict=True)
    ]
    true_mean = np.concatenate(population).mean()
    sample_sizes = np.array([30, 40, 90])  # pi = 0.005, 0.0133, 0.09
    draws = 1500
    weighted, unweighted, covered = np.empty(draws), np.empty(draws), 0
    labels = np.repeat(np.arange(3), sample_sizes)
    pi = np.repeat(sample_sizes / stratum_sizes, sample_sizes)
    for d in range(draws):
        values = np.concatenate(
            [
                rng.choice(stratum, size, replace=False)
                for stratum, size in zip(population, sample_sizes, strict=True)
            ]
        )
        result = weighted_mean(values, pi, strata=labels)
        weighted[d] = result.estimate
        unweighted[d] = values.mean()
        covered += result.ci_low <= true_mean <= result.ci_high
    monte_carlo_error = weighted.std() / np.sqrt(draws)
    assert abs(weighted.mean() - true_mean) < 4 * monte_carlo_error
    assert abs(unweighted.mean() - true_mean) > 0.15  # biased towards the bad stratum
    assert 0.92 <= covered / draws <= 0.975
    ht = weighted_mean(values, pi, strata=labels, population_size=stratum_sizes.sum())
    assert ht.estimate == pytest.approx(result.estimate)  # sum of weights = N exactly here
