"""agg_tier0_missed_retrieval through the real pipeline, against a known population.

The shared generated sample, with the generator's prompt labels removed, is
built once (`+agg_tier0_missed_retrieval`). Every assistant prompt of its
fct_prompts then gets a known truth (retrieval intent with a probability that
depends on whether the prompt triggered a retrieval and on its surface), a
stratified design drawn by `lara label-sample --unit prompts` over-draws the
prompts that triggered a retrieval, the drawn prompts are judged with their
truth and imported with `lara label-import --unit prompts`, and an
incremental build picks the labels and the design up (they touch their
prompts' sessions, hence their days).

Checked: fct_prompts carries each drawn prompt's inclusion probability; every
day x surface and period cell of the mart equals the Hajek ratios and Kish
effective sizes recomputed in pandas (and lara.labels.weighted_mean), with a
Wilson interval recomputed here; the unweighted labelled share equals the
sample's and, the design over-drawing prompts that retrieved, understates the
population's, which the weighted interval holds."""

from __future__ import annotations

import datetime as dt
import math
import shutil

import numpy as np
import pandas as pd
import pytest

from conftest import BuiltSample
from lara.dbt import run_dbt
from lara.labels import weighted_mean
from lara.prompt_labels import label_import_prompts, label_sample_prompts

SAMPLED_AT = dt.datetime(2026, 9, 1, 9, 0, tzinfo=dt.UTC)
IMPORTED_AT = dt.datetime(2026, 9, 3, 12, 0, tzinfo=dt.UTC)
Z = 1.96
#: P(retrieval intent): a prompt that triggered a retrieval mostly wanted one;
#: a prompt without one sometimes did (a missed retrieval), more often on chat.
INTENT_PROBABILITY = {
    ("chat", "retrieval"): 0.9,
    ("editor_assistant", "retrieval"): 0.85,
    ("chat", "no_retrieval"): 0.2,
    ("editor_assistant", "no_retrieval"): 0.08,
}
SURFACES = {
    "chat": ["chat"],
    "editor_assistant": ["editor_assistant"],
    "assistant": ["chat", "editor_assistant"],
    "all": ["chat", "editor_assistant"],  # template_search prompts are never drawn
}


def _build(root, raw, warehouse):
    env = {"DBT_TARGET_PATH": str(root / "target"), "DBT_LOG_PATH": str(root / "logs")}
    select = ["--select", "+agg_tier0_missed_retrieval"]
    for args in (
        ["build", *select, "--exclude", "resource_type:test", "resource_type:unit_test"],
        # cautious: not the tests that also read models outside the selection
        ["test", "--select", "agg_tier0_missed_retrieval", "fct_prompts",
         "stg_lara__prompt_label_sample_design", "--indirect-selection", "cautious",
         "--exclude", "resource_type:unit_test"],
    ):  # fmt: skip
        result = run_dbt(args, raw, warehouse, extra_env=env, capture=True)
        assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return result.stdout


@pytest.fixture(scope="module")
def tier0(clean_sample: BuiltSample, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("tier0_weighted")
    raw = root / "raw"
    shutil.copytree(clean_sample.raw_path, raw)
    shutil.rmtree(raw / "prompt_labels")  # the generator's labels: not from this design
    warehouse = root / "lara.duckdb"
    _build(root, raw, warehouse)

    frame = BuiltSample(raw, warehouse, clean_sample.manifest, "").df(
        "select prompt_id, surface, prompt_date, is_retrieval_turn from marts.fct_prompts "
        "where surface in ('chat', 'editor_assistant') order by prompt_id"
    )
    frame["triggered"] = np.where(frame["is_retrieval_turn"], "retrieval", "no_retrieval")
    rng = np.random.default_rng(2026)
    keys = zip(frame["surface"], frame["triggered"], strict=True)
    probability = [INTENT_PROBABILITY[key] for key in keys]
    frame["has_intent"] = rng.random(len(frame)) < np.array(probability)
    frame["is_missed"] = frame["has_intent"] & ~frame["is_retrieval_turn"]

    summary = label_sample_prompts(
        warehouse,
        root / "sample",
        sizes={"*|retrieval|*": 60},
        default_size=20,
        seed=9,
        sampled_at=SAMPLED_AT,
    )
    judging = pd.read_csv(root / "sample" / "judging.csv", dtype=str, keep_default_na=False)
    truth = frame.set_index("prompt_id")["has_intent"]
    intent = truth.loc[judging["prompt_id"]].to_numpy()
    judging["has_retrieval_intent"] = np.where(intent, "true", "false")
    judging["retrieval_intent_count"] = np.where(intent, "1", "0")
    judging["judge"] = "human"
    returned = root / "returned.csv"
    judging.to_csv(returned, index=False)
    report = label_import_prompts(returned, raw, imported_at=IMPORTED_AT)
    assert report["rejected"] == 0, report
    assert report["design_rows_written"] == len(judging) == summary["prompts_sampled"]

    log = _build(root, raw, warehouse)  # incremental: the labels' sessions only
    built = BuiltSample(raw, warehouse, clean_sample.manifest, log)
    design = pd.read_csv(root / "sample" / "sample_design.csv")
    units = design.merge(frame, on="prompt_id", how="left")
    assert units["surface"].notna().all()
    return {
        "built": built,
        "frame": frame,
        "units": units,
        "mart": built.df(
            "select *, strftime(activity_date, '%Y-%m-%d') as day "
            "from marts.agg_tier0_missed_retrieval"
        ),
    }


def _wilson(share: float, n: float) -> tuple[float, float]:
    centre = (share + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(share * (1 - share) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    low = 0.0 if share == 0 else max(0.0, centre - half)
    high = 1.0 if share == 1 else min(1.0, centre + half)
    return low, high


def _cells(units: pd.DataFrame, mart: pd.DataFrame):
    """(mart row, the weighted units of its cell) for every surface x day and period row."""
    for surface, members in SURFACES.items():
        in_surface = units[units["surface"].isin(members)]
        rows = mart[mart["surface"] == surface]
        for _, row in rows.iterrows():
            cell = (
                in_surface
                if row["is_period_total"]
                else in_surface[in_surface["prompt_date"].astype(str).str[:10] == row["day"]]
            )
            yield row, cell


def test_fct_prompts_carries_the_design(tier0):
    facts = tier0["built"].df(
        "select prompt_id, tier0_inclusion_probability, tier0_design_stratum, is_tier0_labelled "
        "from marts.fct_prompts where tier0_inclusion_probability is not null"
    )
    units = tier0["units"].set_index("prompt_id")
    assert set(facts["prompt_id"]) == set(units.index)
    assert facts["is_tier0_labelled"].all()
    facts = facts.set_index("prompt_id").loc[units.index]
    np.testing.assert_allclose(facts["tier0_inclusion_probability"], units["inclusion_probability"])
    assert (facts["tier0_design_stratum"] == units["stratum"]).all()


def test_weighted_rates_equal_the_hajek_ratios_in_every_cell(tier0):
    checked = 0
    for row, cell in _cells(tier0["units"], tier0["mart"]):
        assert row["weighted_prompt_count"] == len(cell)
        if cell.empty:
            assert row["weighted_null_reason"] in ("no_labelled_prompts", "no_design_rows")
            continue
        weight = 1.0 / cell["inclusion_probability"]
        assert row["design_weight_sum"] == pytest.approx(weight.sum(), rel=1e-12)
        for metric, values, among in (
            ("weighted_missed_retrieval_prompt_share", cell["is_missed"], weight > 0),
            ("weighted_retrieval_intent_rate", cell["has_intent"], weight > 0),
            ("weighted_missed_retrieval_rate", cell["is_missed"], cell["has_intent"]),
        ):
            w = weight[among]
            if w.sum() == 0:
                assert pd.isna(row[metric]), metric
                continue
            share = float((w * values[among]).sum() / w.sum())
            effective_n = float(w.sum() ** 2 / (w**2).sum())
            assert row[metric] == pytest.approx(share, abs=1e-12), metric
            assert row[f"{metric}_effective_n"] == pytest.approx(effective_n, rel=1e-12), metric
            low, high = _wilson(share, effective_n)
            assert row[f"{metric}_ci_low"] == pytest.approx(low, abs=1e-12), metric
            assert row[f"{metric}_ci_high"] == pytest.approx(high, abs=1e-12), metric
        # The share of prompts is the Hajek mean of lara.labels as well.
        hajek = weighted_mean(cell["is_missed"].astype(float), cell["inclusion_probability"])
        assert row["weighted_missed_retrieval_prompt_share"] == pytest.approx(
            hajek.estimate, abs=1e-12
        )
        assert row["missed_retrieval_prompt_share"] == pytest.approx(cell["is_missed"].mean())
        checked += 1
    assert checked >= 8


def test_the_weighted_interval_holds_the_population_share(tier0):
    frame, units = tier0["frame"], tier0["units"]
    row = tier0["mart"].query("is_period_total and surface == 'assistant'").iloc[0]
    population = frame["is_missed"].mean()
    weighted = row["weighted_missed_retrieval_prompt_share"]
    unweighted = row["missed_retrieval_prompt_share"]
    assert unweighted == pytest.approx(units["is_missed"].mean())
    # One draw (fixed seeds, frame in id order): the population share lies in
    # the weighted interval. Over many draws the estimator centres on it and
    # covers it about 95% of the time (test_prompt_labels.py).
    assert row["weighted_missed_retrieval_prompt_share_ci_low"] <= population, (
        weighted,
        population,
    )
    assert population <= row["weighted_missed_retrieval_prompt_share_ci_high"], (
        weighted,
        population,
    )
    # The design over-draws prompts that triggered a retrieval (never missed),
    # so the share as drawn understates the population's.
    assert unweighted < population
    # The rough estimate is computed from trigger rates alone, labels or not.
    chat = frame[frame["surface"] == "chat"]["is_retrieval_turn"].mean()
    assistant = frame["is_retrieval_turn"].mean()
    assert row["rough_missed_retrieval_share_estimate"] == pytest.approx(chat - assistant)
