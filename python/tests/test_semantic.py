"""The MetricFlow semantic layer (models/semantic) answers what the marts publish.

Runs `mf query` (dbt-metricflow) as a subprocess on the `clean_sample`
warehouse and compares its numbers with the agg_* marts, per role, per
surface, per day, per definition and overall. MetricFlow computes every rate
as a ratio of summed numerator and denominator measures at the requested
grain, so agreement at several grains is the proof that the measures
re-aggregate.

`mf` reads `<project dir>/target/semantic_manifest.json`, whatever
DBT_TARGET_PATH says; the test points it at a mirror of the project (symlinks)
whose `target` is the fixture's own target folder, so concurrent builds of
the project's `target/` cannot interfere.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from lara.paths import project_dir
from lara.semantic import MF_BOOTSTRAP

# `mf` itself, minus its PyPI update check (an HTTP request on every call):
# the test must not depend on the network.
_MF_BOOTSTRAP = MF_BOOTSTRAP
_PROJECT_ENTRIES = ("dbt_project.yml", "models", "macros", "seeds", "tests", "analyses")
TOLERANCE = 1e-9


def _metricflow_installed() -> bool:
    try:
        import dbt_metricflow  # noqa: F401
    except ImportError:
        return False
    return True


pytestmark = pytest.mark.skipif(
    not _metricflow_installed(),
    reason="dbt-metricflow is not installed (pip install dbt-metricflow)",
)


@pytest.fixture(scope="module")
def mf_project(clean_sample, tmp_path_factory) -> Path:
    """A mirror of the dbt project whose target/ is the clean_sample build's."""
    target = clean_sample.warehouse.parent / "target"
    assert (target / "semantic_manifest.json").exists(), "dbt build wrote no semantic manifest"
    mirror = tmp_path_factory.mktemp("mf_project")
    source = project_dir()
    for entry in _PROJECT_ENTRIES:
        if (source / entry).exists():
            (mirror / entry).symlink_to(source / entry)
    (mirror / "target").symlink_to(target)
    return mirror


@pytest.fixture(scope="module")
def mf_query(mf_project, clean_sample, tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("mf_out")
    env = dict(os.environ)
    env.update(
        {
            "DBT_PROJECT_DIR": str(mf_project),
            "DBT_PROFILES_DIR": str(project_dir()),
            "DBT_LOG_PATH": str(out_dir / "logs"),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
            "LARA_DUCKDB_PATH": str(clean_sample.warehouse),
            "LARA_DUCKDB_TEMP_DIR": str(clean_sample.warehouse.parent / "tmp"),
            "LARA_RAW_PATH": str(clean_sample.raw_path),
        }
    )
    env.pop("DBT_TARGET_PATH", None)
    calls = iter(range(1000))

    def run(metrics: list[str], group_by: list[str] | None = None) -> pd.DataFrame:
        csv = out_dir / f"query_{next(calls)}.csv"
        command = [sys.executable, "-c", _MF_BOOTSTRAP, "query", "--metrics", ",".join(metrics)]
        if group_by:
            command += ["--group-by", ",".join(group_by)]
        command += ["--csv", str(csv)]
        result = subprocess.run(
            command, cwd=mf_project, env=env, capture_output=True, text=True, check=False
        )
        if result.returncode != 0 or not csv.exists():
            raise AssertionError(
                f"mf query failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
            )
        return pd.read_csv(csv)

    return run


def _compare(
    semantic: pd.DataFrame,
    mart: pd.DataFrame,
    keys: list[tuple[str, str]],
    metrics: dict[str, str],
) -> None:
    """Every (metric column, mart column) pair agrees on every key of the mart."""
    semantic = semantic.rename(columns={mf_key: key for mf_key, key in keys})
    key_names = [key for _, key in keys]
    if key_names:
        merged = mart.merge(semantic, on=key_names, how="left", suffixes=("_mart", "_mf"))
    else:
        assert len(mart) == 1 and len(semantic) == 1
        merged = pd.concat(
            [mart.add_suffix("_mart"), semantic.add_suffix("_mf")], axis=1
        ).reset_index(drop=True)
    assert len(merged) == len(mart) > 0
    for metric, column in metrics.items():
        got = merged[f"{metric}_mf" if f"{metric}_mf" in merged else metric]
        want = merged[f"{column}_mart" if f"{column}_mart" in merged else column]
        both_null = got.isna() & want.isna()
        close = (got - want).abs() <= TOLERANCE
        bad = merged.loc[~(both_null | close), key_names]
        assert bad.empty, f"{metric} differs from the mart's {column} at\n{bad}\n{got}\n{want}"


def _day(values: pd.Series) -> pd.Series:
    return pd.to_datetime(values).dt.strftime("%Y-%m-%d")


def _mart(clean_sample, sql: str) -> pd.DataFrame:
    return clean_sample.df(sql)


def test_semantic_manifest_has_no_duplicate_or_undocumented_metrics(mf_project):
    import json

    manifest = json.loads((mf_project / "target" / "semantic_manifest.json").read_text())
    names = [metric["name"] for metric in manifest["metrics"]]
    assert len(names) == len(set(names))
    undocumented = [m["name"] for m in manifest["metrics"] if not m.get("description")]
    assert not undocumented
    ratio = {m["name"] for m in manifest["metrics"] if m["type"] == "ratio"}
    for required in (
        "trigger_rate",
        "misroute_rate",
        "missed_retrieval_rate",
        "multi_intent_rate",
        "intent_coverage_rate",
        "empty_result_rate",
        "precision_at_1_mean",
        "ndcg_at_k_mean",
        "click_through_rate",
        "naive_conversation_ctr",
        "genuine_positive_rate",
        "agent_consumption_rate",
        "observable_failure_rate",
        "unobserved_rate",
        "completion_rate",
        "goal_rate",
        "naive_rewrite_rate",
        "search_reformulation_rate",
        "downstream_correction_rate",
        "abandonment_rate_naive",
        "abandonment_rate_lineage_corrected",
        "effective_action_rate",
        "masked_retrieval_failure_rate",
        "agreement_rate",
    ):
        assert required in ratio, required


TIER_METRICS = {
    "agg_tier1_quality": {
        "empty_result_rate": "empty_result_rate",
        "label_sample_rate": "label_sample_rate",
        "precision_at_1_mean": "precision_at_1_mean",
        "precision_at_k_mean": "precision_at_k_mean",
        "ndcg_at_k_mean": "ndcg_at_k_mean",
        "label_coverage_at_k_mean": "label_coverage_at_k_mean",
        "tier1_good_rate": "tier1_good_rate",
        "click_through_rate": "click_through_rate",
        "clicks_per_displayed_grid": "clicks_per_displayed_grid",
        "in_scope_retrievals": "in_scope_retrieval_count",
        "labelled_retrievals": "labelled_retrieval_count",
    },
    "agg_tier2_usage": {
        "genuine_positive_rate": "genuine_positive_rate",
        "agent_consumption_rate": "agent_consumption_rate",
        "agent_consumption_confirmed_rate": "agent_consumption_confirmed_rate",
        "used_rate": "used_rate",
        "observable_failure_rate": "observable_failure_rate",
        "one_minus_observable_failure_rate": "one_minus_observable_failure_rate",
        "reject_failure_rate": "reject_failure_rate",
        "research_failure_rate": "research_failure_rate",
        "substitution_failure_rate": "substitution_failure_rate",
        "unobserved_rate": "unobserved_rate",
        "retrieval_downstream_correction_rate": "downstream_correction_rate",
    },
    "agg_tier3_completion": {
        "completion_rate": "completion_rate",
        "cross_session_completion_rate": "cross_session_completion_rate",
        "cross_session_outcome_share": "cross_session_outcome_share",
        "goal_rate": "goal_rate",
    },
    "agg_tier_diagnosis": {
        "healthy_rate": "healthy_rate",
        "masked_retrieval_failure_rate": "masked_retrieval_failure_rate",
        "retrieval_failure_visible_rate": "retrieval_failure_visible_rate",
        "downstream_or_routing_issue_rate": "downstream_or_routing_issue_rate",
        "diagnosis_unobserved_rate": "unobserved_rate",
    },
}


def test_tier1_to_3_rates_per_role_match_the_marts(mf_query, clean_sample):
    metrics = [metric for mapping in TIER_METRICS.values() for metric in mapping]
    semantic = mf_query(metrics, ["retrieval__retrieval_role"])
    for mart, mapping in TIER_METRICS.items():
        frame = _mart(
            clean_sample,
            f"select retrieval_role, {', '.join(sorted(set(mapping.values())))} "
            f"from marts.{mart} where grouping_level = 'role'",
        )
        _compare(semantic, frame, [("retrieval__retrieval_role", "retrieval_role")], mapping)


def test_tier2_rates_per_day_and_surface_re_aggregate(mf_query, clean_sample):
    mapping = {"genuine_positive_rate": "genuine_positive_rate", "used_rate": "used_rate"}
    semantic = mf_query(list(mapping), ["metric_time__day", "retrieval__surface"])
    semantic["metric_time__day"] = _day(semantic["metric_time__day"])
    frame = _mart(
        clean_sample,
        "select strftime(retrieval_date, '%Y-%m-%d') as retrieval_date, surface, "
        "genuine_positive_rate, used_rate "
        "from marts.agg_tier2_usage where grouping_level = 'day x surface'",
    )
    _compare(
        semantic,
        frame,
        [("metric_time__day", "retrieval_date"), ("retrieval__surface", "surface")],
        mapping,
    )


def test_tier0_and_rewrite_rates_per_surface_match_the_marts(mf_query, clean_sample):
    tier0 = {
        "trigger_rate": "trigger_rate",
        "misroute_rate": "misroute_rate",
        "missed_retrieval_rate": "missed_retrieval_rate",
        "multi_intent_rate": "multi_intent_rate",
        "intent_coverage_rate": "intent_coverage_rate",
        "retrieval_intent_rate": "retrieval_intent_rate",
    }
    rewrites = {
        "naive_rewrite_rate": "naive_rewrite_rate",
        "search_reformulation_rate": "search_reformulation_rate",
        "downstream_correction_rate": "downstream_correction_rate",
        "retrieval_turn_rewrite_rate": "retrieval_turn_rewrite_rate",
    }
    semantic = mf_query([*tier0, *rewrites], ["prompt__surface"])
    surfaces = "('chat', 'editor_assistant', 'template_search')"
    for mart, mapping in (("agg_tier0_routing", tier0), ("agg_rewrites", rewrites)):
        frame = _mart(
            clean_sample,
            f"select surface, {', '.join(mapping.values())} from marts.{mart} "
            f"where grouping_level = 'surface' and surface in {surfaces}",
        )
        _compare(semantic, frame, [("prompt__surface", "surface")], mapping)


def test_reretrieval_rate_per_role_matches_the_mart(mf_query, clean_sample):
    semantic = mf_query(["reretrieval_rate"], ["reretrieval_unit__retrieval_role"])
    frame = _mart(
        clean_sample,
        "select retrieval_role, reretrieval_rate from marts.agg_reretrieval "
        "where grouping_level = 'role'",
    )
    assert len(frame) > 3
    _compare(
        semantic,
        frame,
        [("reretrieval_unit__retrieval_role", "retrieval_role")],
        {"reretrieval_rate": "reretrieval_rate"},
    )


def test_missed_retrieval_estimates_per_day_match_the_mart(mf_query, clean_sample):
    """The rough estimate (derived: chat trigger rate minus the trigger rate
    of every surface) and the design-weighted rates against the mart's
    day x `all` rows (without a logged design both are null)."""
    mapping = {
        "rough_missed_retrieval_share_estimate": "rough_missed_retrieval_share_estimate",
        "weighted_missed_retrieval_rate": "weighted_missed_retrieval_rate",
        "weighted_missed_retrieval_prompt_share": "weighted_missed_retrieval_prompt_share",
    }
    semantic = mf_query(list(mapping), ["metric_time__day"])
    semantic["metric_time__day"] = _day(semantic["metric_time__day"])
    frame = _mart(
        clean_sample,
        "select strftime(activity_date, '%Y-%m-%d') as activity_date, "
        f"{', '.join(mapping.values())} from marts.agg_tier0_missed_retrieval "
        "where grouping_level = 'day' and surface = 'all'",
    )
    # null only on a day without chat prompts (no reference), in both
    assert frame["rough_missed_retrieval_share_estimate"].notna().sum() >= 3, frame
    _compare(semantic, frame, [("metric_time__day", "activity_date")], mapping)


def test_ctr_both_ways_and_abandonment_per_day_match_the_marts(mf_query, clean_sample):
    sessions = {
        "naive_conversation_ctr": "naive_session_ctr",
        "abandonment_rate_naive": "abandonment_rate_naive",
        "abandonment_rate_lineage_corrected": "abandonment_rate_lineage_corrected",
        "abandonment_overstatement": "abandonment_overstatement",
        "prompts_per_assistant_session": "prompts_per_session",
        "single_prompt_session_rate": "single_prompt_session_rate",
        "retrieval_session_share": "retrieval_session_share",
    }
    semantic = mf_query([*sessions, "click_through_rate", "displayed_share"], ["metric_time__day"])
    semantic["metric_time__day"] = _day(semantic["metric_time__day"])
    ctr = _mart(
        clean_sample,
        "select strftime(ctr.activity_date, '%Y-%m-%d') as activity_date, "
        "ctr.naive_session_ctr, ctr.retrieval_ctr, ctr.retrieval_session_share, "
        "ctr.displayed_share, prompts.single_prompt_session_rate, "
        "abandonment.abandonment_rate_naive, abandonment.abandonment_rate_lineage_corrected, "
        "abandonment.abandonment_overstatement, prompts.prompts_per_session "
        "from marts.agg_ctr as ctr "
        "inner join marts.agg_abandonment as abandonment "
        "on ctr.activity_date = abandonment.activity_date and abandonment.surface = 'all' "
        "inner join marts.agg_prompts_per_session as prompts "
        "on ctr.activity_date = prompts.activity_date and prompts.surface = 'assistant' "
        "where ctr.grouping_level = 'day' and ctr.surface = 'all'",
    )
    _compare(
        semantic,
        ctr,
        [("metric_time__day", "activity_date")],
        {**sessions, "click_through_rate": "retrieval_ctr", "displayed_share": "displayed_share"},
    )


def test_effective_action_rate_per_definition_matches_the_mart(mf_query, clean_sample):
    semantic = mf_query(["effective_action_rate"], ["prompt_definition__definition_name"])
    frame = _mart(
        clean_sample,
        "select definition_name, effective_action_rate from marts.agg_effective_action_rate "
        "where grouping_level = 'overall'",
    )
    assert len(frame) >= 2
    _compare(
        semantic,
        frame,
        [("prompt_definition__definition_name", "definition_name")],
        {"effective_action_rate": "effective_action_rate"},
    )


def test_overall_rates_across_semantic_models_match_the_marts(mf_query, clean_sample):
    semantic = mf_query(
        [
            "agreement_rate",
            "prompts_per_chat_session",
            "trigger_rate",
            "genuine_positive_rate",
            "abandonment_rate_naive",
        ]
    )
    frame = _mart(
        clean_sample,
        "select agreement.agreement_rate, prompts.prompts_per_session as prompts_per_chat_session, "
        "routing.trigger_rate, usage.genuine_positive_rate, abandonment.abandonment_rate_naive "
        "from marts.agg_attribution_agreement as agreement "
        "cross join marts.agg_prompts_per_session as prompts "
        "cross join marts.agg_tier0_routing as routing "
        "cross join marts.agg_tier2_usage as usage "
        "cross join marts.agg_abandonment as abandonment "
        "where agreement.grouping_level = 'overall' "
        "and prompts.is_period_total and prompts.surface = 'chat' "
        "and routing.grouping_level = 'overall' and usage.grouping_level = 'overall' "
        "and abandonment.grouping_level = 'overall'",
    )
    _compare(
        semantic,
        frame,
        [],
        {
            "agreement_rate": "agreement_rate",
            "prompts_per_chat_session": "prompts_per_chat_session",
            "trigger_rate": "trigger_rate",
            "genuine_positive_rate": "genuine_positive_rate",
            "abandonment_rate_naive": "abandonment_rate_naive",
        },
    )


def test_outcome_events_and_credits_per_role_match_tier3(mf_query, clean_sample):
    """Distinct outcome events (fct_action_attributions) and credits (fct_retrievals) per role."""
    mapping = {
        "retrieval_driven_outcome_events": "retrieval_driven_outcome_event_count",
        "retrieval_driven_outcomes": "retrieval_driven_outcome_credit_count",
    }
    semantic = mf_query(list(mapping)[:1], ["action_attribution__retrieval_role"])
    semantic = semantic.rename(
        columns={"action_attribution__retrieval_role": "retrieval__retrieval_role"}
    )
    credits = mf_query(list(mapping)[1:], ["retrieval__retrieval_role"])
    semantic = semantic.merge(credits, on="retrieval__retrieval_role", how="outer").fillna(0)
    frame = _mart(
        clean_sample,
        "select retrieval_role, retrieval_driven_outcome_event_count, "
        "retrieval_driven_outcome_credit_count "
        "from marts.agg_tier3_completion where grouping_level = 'role'",
    )
    events = frame["retrieval_driven_outcome_event_count"]
    assert (frame["retrieval_driven_outcome_credit_count"] >= events).all()
    _compare(semantic, frame, [("retrieval__retrieval_role", "retrieval_role")], mapping)


def test_mf_is_installed_next_to_dbt():
    """`mf` ships with dbt-metricflow in the same environment as dbt."""
    here = Path(sys.executable).parent
    assert (here / "mf").exists() or shutil.which("mf"), "the mf command is missing"


def test_distinct_user_metrics_count_pseudonymous_user_keys(mf_query, clean_sample):
    semantic = mf_query(
        ["retrieving_users", "users_with_retrieval_driven_outcome", "user_completion_rate"],
        ["retrieval__retrieval_role"],
    )
    frame = _mart(
        clean_sample,
        "select retrieval_role, count(distinct user_key) as retrieving_users, "
        "count(distinct case when has_retrieval_driven_outcome then user_key end) "
        "as users_with_retrieval_driven_outcome, "
        "count(distinct case when has_retrieval_driven_outcome then user_key end) "
        "/ count(distinct user_key) as user_completion_rate "
        "from marts.fct_retrievals where is_in_tier_scope group by retrieval_role",
    )
    assert frame["users_with_retrieval_driven_outcome"].sum() > 0
    _compare(
        semantic,
        frame,
        [("retrieval__retrieval_role", "retrieval_role")],
        {m: m for m in ("retrieving_users", "users_with_retrieval_driven_outcome")}
        | {"user_completion_rate": "user_completion_rate"},
    )
    overall = mf_query(["prompting_users"])
    (users,) = clean_sample.query("select count(distinct user_key) from marts.fct_prompts")[0]
    assert int(overall["prompting_users"].iloc[0]) == users


def test_lara_mf_reparses_for_a_warehouse_of_another_name(clean_sample, tmp_path):
    """The manifest names the catalog `lara` (lara.duckdb); a copy named
    elsewhere.duckdb has catalog `elsewhere`: plain mf fails on it, `lara mf`
    re-parses the project and answers as the mart says."""
    from lara.semantic import manifest_databases

    warehouse = tmp_path / "elsewhere.duckdb"
    shutil.copy(clean_sample.warehouse, warehouse)
    project = tmp_path / "project"
    project.mkdir()
    for entry in _PROJECT_ENTRIES:
        if (project_dir() / entry).exists():
            (project / entry).symlink_to(project_dir() / entry)
    (project / "target").mkdir()
    built = clean_sample.warehouse.parent / "target"
    for name in ("semantic_manifest.json", "manifest.json"):
        shutil.copy(built / name, project / "target" / name)
    manifest = project / "target" / "semantic_manifest.json"
    assert manifest_databases(manifest) == {"lara"}
    env = dict(os.environ)
    env.update(
        {
            "DBT_PROJECT_DIR": str(project),
            "DBT_PROFILES_DIR": str(project_dir()),
            "DBT_LOG_PATH": str(tmp_path / "logs"),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
            "LARA_DUCKDB_PATH": str(warehouse),
            "LARA_RAW_PATH": str(clean_sample.raw_path),
        }
    )
    env.pop("DBT_TARGET_PATH", None)
    query = ["query", "--metrics", "trigger_rate", "--csv"]
    plain = subprocess.run(
        [sys.executable, "-c", _MF_BOOTSTRAP, *query, str(tmp_path / "plain.csv")],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert plain.returncode != 0 or not (tmp_path / "plain.csv").exists()
    lara = Path(sys.executable).parent / "lara"
    result = subprocess.run(
        [str(lara), "mf", *query, str(tmp_path / "lara.csv")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "re-parsing" in result.stderr
    assert manifest_databases(manifest) == {"elsewhere"}
    (trigger,) = clean_sample.query(
        "select trigger_rate from marts.agg_tier0_routing where grouping_level = 'overall'"
    )[0]
    got = pd.read_csv(tmp_path / "lara.csv")["trigger_rate"].iloc[0]
    assert abs(got - trigger) <= TOLERANCE
