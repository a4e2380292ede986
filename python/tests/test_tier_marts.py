"""Tier 1-3 marts against planted truth, the paper's worked example, and
their own arithmetic.

- Planted truth: on the generated `clean_sample`, the marts reproduce what
  the generator planted in ``manifest["planted"]["exact"]`` exactly (counts
  equal, rates within 1e-12): scope counts, empty-result rate, retrievals per
  role, agent consumption per role, goal rate, cross-session retrieval-driven
  outcomes, synthetic exclusions. The legacy share (a latent value) is
  recovered within 0.002.
- The worked example of the LARA paper, end to end from raw files.
- Arithmetic every BI consumer relies on: rates = numerator / denominator,
  Wilson intervals recomputed in Python, roll-up rows = sums of the leaves,
  Tier 2 flag logic, no free text or user ids in public marts.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import pytest

from lara.dbt import run_dbt

RATE_TOLERANCE = 1e-12
LEGACY_SHARE_TOLERANCE = 0.002
Z = 1.96

PUBLIC_MARTS = [
    "fct_action_attributions",
    "fct_retrievals",
    "agg_tier1_quality",
    "agg_tier2_usage",
    "agg_tier3_completion",
    "agg_tier_diagnosis",
    "agg_attribution_agreement",
    "agg_consumed_rank_distribution",
    "agg_unattributed_outcomes",
    "agg_ctr_denominator_effect",
]

# (mart, rate, numerator column, denominator column) of the Wilson rates checked
RATES = [
    ("agg_tier1_quality", "empty_result_rate", "empty_retrieval_count", "in_scope_retrieval_count"),
    (
        "agg_tier1_quality",
        "precision_at_1_mean",
        "relevant_at_1_retrieval_count",
        "labelled_retrieval_count",
    ),
    (
        "agg_tier1_quality",
        "click_through_rate",
        "clicked_retrieval_count",
        "displayed_retrieval_count",
    ),
    (
        "agg_tier2_usage",
        "genuine_positive_rate",
        "genuine_positive_retrieval_count",
        "in_scope_retrieval_count",
    ),
    (
        "agg_tier2_usage",
        "agent_consumption_rate",
        "agent_consumption_retrieval_count",
        "in_scope_retrieval_count",
    ),
    (
        "agg_tier2_usage",
        "observable_failure_rate",
        "observable_failure_retrieval_count",
        "in_scope_retrieval_count",
    ),
    (
        "agg_tier2_usage",
        "unobserved_rate",
        "unobserved_retrieval_count",
        "in_scope_retrieval_count",
    ),
    (
        "agg_tier3_completion",
        "completion_rate",
        "completed_retrieval_count",
        "in_scope_retrieval_count",
    ),
    (
        "agg_tier3_completion",
        "goal_rate",
        "goal_achieved_prompt_count",
        "goal_labelled_prompt_count",
    ),
    ("agg_tier_diagnosis", "healthy_rate", "healthy_retrieval_count", "labelled_retrieval_count"),
    (
        "agg_attribution_agreement",
        "agreement_rate",
        "agreeing_action_count",
        "lineage_action_count",
    ),
    (
        "agg_unattributed_outcomes",
        "unattributed_outcome_rate",
        "unattributed_outcome_count",
        "outcome_count",
    ),
    (
        "agg_ctr_denominator_effect",
        "naive_conversation_ctr",
        "clicked_session_count",
        "assistant_session_count",
    ),
]

# (mart, leaf grouping level, additive count columns)
ROLLUPS = [
    (
        "agg_tier1_quality",
        "day x surface x role",
        [
            "logged_retrieval_count",
            "synthetic_retrieval_count",
            "misrouted_retrieval_count",
            "in_scope_retrieval_count",
            "empty_retrieval_count",
            "labelled_retrieval_count",
            "displayed_retrieval_count",
            "clicked_retrieval_count",
            "displayed_click_count",
        ],
    ),
    (
        "agg_tier2_usage",
        "day x surface x role",
        [
            "in_scope_retrieval_count",
            "genuine_positive_retrieval_count",
            "agent_consumption_retrieval_count",
            "observable_failure_retrieval_count",
            "unobserved_retrieval_count",
            "downstream_correction_retrieval_count",
        ],
    ),
    (
        "agg_tier3_completion",
        "day x surface x role",
        [
            "in_scope_retrieval_count",
            "completed_retrieval_count",
            "retrieval_driven_outcome_count",
            "cross_session_outcome_count",
        ],
    ),
    (
        "agg_tier_diagnosis",
        "day x surface x role",
        [
            "labelled_retrieval_count",
            "healthy_retrieval_count",
            "unobserved_retrieval_count",
            "masked_retrieval_failure_retrieval_count",
        ],
    ),
    (
        "agg_attribution_agreement",
        "day x surface x role x method",
        ["lineage_action_count", "agreeing_action_count", "synthetic_action_count"],
    ),
    (
        "agg_unattributed_outcomes",
        "day x surface x type",
        [
            "outcome_count",
            "unattributed_outcome_count",
            "retrieval_driven_outcome_count",
            "synthetic_outcome_count",
        ],
    ),
    (
        "agg_ctr_denominator_effect",
        "day x surface",
        ["assistant_session_count", "clicked_session_count", "displayed_retrieval_count"],
    ),
]


def wilson(successes: int, trials: int) -> tuple[float | None, float | None]:
    if trials == 0:
        return None, None
    p = successes / trials
    centre = p + Z * Z / (2 * trials)
    half = Z * math.sqrt(p * (1 - p) / trials + Z * Z / (4 * trials * trials))
    scale = 1 + Z * Z / trials
    return max(0.0, (centre - half) / scale), min(1.0, (centre + half) / scale)


def one(sample, sql: str) -> tuple:
    rows = sample.query(sql)
    assert len(rows) == 1, (sql, rows)
    return rows[0]


def assert_rate(actual: tuple, planted: dict, label: str) -> None:
    numerator, denominator, rate = actual
    assert (numerator, denominator) == (planted["numerator"], planted["denominator"]), label
    if planted["rate"] is None:
        assert rate is None, label
    else:
        assert math.isclose(rate, planted["rate"], abs_tol=RATE_TOLERANCE), label


# ----------------------------------------------------------------- planted


@pytest.fixture(scope="module")
def planted(clean_sample) -> dict:
    return clean_sample.manifest["planted"]["exact"]


def test_scope_counts_match_planted(clean_sample, planted):
    logged, synthetic, misrouted, in_scope = one(
        clean_sample,
        """
        select logged_retrieval_count, synthetic_retrieval_count, misrouted_retrieval_count,
            in_scope_retrieval_count
        from marts.agg_tier1_quality where grouping_level = 'overall'
        """,
    )
    assert synthetic == planted["synthetic"]["retrievals"]
    assert logged - synthetic == planted["retrievals"]["non_synthetic"]
    assert misrouted == planted["retrievals"]["misrouted_labelled"]
    assert in_scope == planted["retrievals"]["in_scope"]
    (fct_rows,) = one(clean_sample, "select count(*) from marts.fct_retrievals")
    assert fct_rows == planted["retrievals"]["non_synthetic"]


def test_empty_result_rate_matches_planted(clean_sample, planted):
    actual = one(
        clean_sample,
        """
        select empty_retrieval_count, in_scope_retrieval_count, empty_result_rate
        from marts.agg_tier1_quality where grouping_level = 'overall'
        """,
    )
    assert_rate(actual, planted["empty_result_rate"], "overall")
    for surface, expected in planted["empty_result_rate_per_surface"].items():
        actual = one(
            clean_sample,
            f"""
            select empty_retrieval_count, in_scope_retrieval_count, empty_result_rate
            from marts.agg_tier1_quality
            where grouping_level = 'surface' and surface = '{surface}'
            """,
        )
        assert_rate(actual, expected, surface)


def test_retrievals_per_role_match_planted(clean_sample, planted):
    rows = dict(
        clean_sample.query(
            """
            select retrieval_role, in_scope_retrieval_count
            from marts.agg_tier2_usage where grouping_level = 'role'
            """
        )
    )
    expected = {role: n for role, n in planted["retrievals_per_role"].items() if n}
    assert rows == expected


def test_agent_consumption_per_role_matches_planted(clean_sample, planted):
    for role, expected in planted["agent_consumption_per_role"].items():
        level, value = ("overall", "all") if role == "overall" else ("role", role)
        if expected["denominator"] == 0:
            continue
        actual = one(
            clean_sample,
            f"""
            select agent_consumption_retrieval_count, in_scope_retrieval_count,
                agent_consumption_rate
            from marts.agg_tier2_usage
            where grouping_level = '{level}' and retrieval_role = '{value}'
            """,
        )
        assert_rate(actual, expected, role)


def test_goal_rate_matches_planted(clean_sample, planted):
    actual = one(
        clean_sample,
        """
        select goal_achieved_prompt_count, goal_labelled_prompt_count, goal_rate
        from marts.agg_tier3_completion where grouping_level = 'overall'
        """,
    )
    assert_rate(actual, planted["goal_rate"], "goal rate")


def test_cross_session_outcomes_match_planted(clean_sample, planted):
    expected = planted["cross_session_outcomes"]
    assert expected["events"] > 0
    (attributions,) = one(
        clean_sample,
        "select cross_session_outcome_count from marts.agg_tier3_completion "
        "where grouping_level = 'overall'",
    )
    assert attributions == expected["attributions"]
    (events,) = one(
        clean_sample,
        """
        select count(distinct attributions.action_id)
        from marts.fct_action_attributions as attributions
        inner join marts.fct_retrievals as retrievals
            on attributions.retrieval_id = retrievals.retrieval_id
        where attributions.is_retrieval_driven_outcome
            and attributions.is_cross_session
            and retrievals.is_in_tier_scope
        """,
    )
    assert events == expected["events"]


def test_legacy_share_is_recovered(clean_sample):
    expected = clean_sample.manifest["planted"]["expected"]["legacy_share_retrievals"]
    (share,) = one(
        clean_sample,
        "select avg(case when retrieval_role = 'unknown' then 1.0 else 0.0 end) "
        "from marts.fct_retrievals",
    )
    assert abs(share - expected) <= LEGACY_SHARE_TOLERANCE


# -------------------------------------------------------------- arithmetic


@pytest.mark.parametrize(("mart", "rate", "numerator", "denominator"), RATES)
def test_rates_and_wilson_intervals(clean_sample, mart, rate, numerator, denominator):
    rows = clean_sample.query(
        f"select {numerator}, {denominator}, {rate}, {rate}_ci_low, {rate}_ci_high "
        f"from marts.{mart}"
    )
    assert rows
    for num, den, value, low, high in rows:
        if den == 0:
            assert value is None and low is None and high is None
            continue
        assert math.isclose(value, num / den, abs_tol=RATE_TOLERANCE)
        expected_low, expected_high = wilson(num, den)
        assert math.isclose(low, expected_low, abs_tol=1e-12)
        assert math.isclose(high, expected_high, abs_tol=1e-12)
        assert low <= value <= high


@pytest.mark.parametrize(("mart", "leaf", "columns"), ROLLUPS)
def test_rollups_add_up(clean_sample, mart, leaf, columns):
    sums = ", ".join(f"sum({c})" for c in columns)
    plain = ", ".join(columns)
    leaves = one(clean_sample, f"select {sums} from marts.{mart} where grouping_level = '{leaf}'")
    overall = one(
        clean_sample, f"select {plain} from marts.{mart} where grouping_level = 'overall'"
    )
    assert tuple(int(v) for v in leaves) == tuple(int(v) for v in overall)


def test_one_minus_observable_failure(clean_sample):
    rows = clean_sample.query(
        """
        select observable_failure_rate, observable_failure_rate_ci_low,
            observable_failure_rate_ci_high, one_minus_observable_failure_rate,
            one_minus_observable_failure_rate_ci_low, one_minus_observable_failure_rate_ci_high
        from marts.agg_tier2_usage where in_scope_retrieval_count > 0
        """
    )
    for orf, low, high, complement, c_low, c_high in rows:
        assert math.isclose(complement, 1 - orf, abs_tol=RATE_TOLERANCE)
        assert math.isclose(c_low, 1 - high, abs_tol=RATE_TOLERANCE)
        assert math.isclose(c_high, 1 - low, abs_tol=RATE_TOLERANCE)


def test_tier2_flag_logic(clean_sample):
    (violations,) = one(
        clean_sample,
        """
        select count(*) from marts.fct_retrievals
        where is_unobserved <> not (has_genuine_positive or has_agent_consumption
                                    or has_observable_failure)
            or has_observable_failure <> (has_reject_failure or has_research_failure
                                          or has_substitution_failure)
            or (has_substitution_failure and retrieval_role not in ('find', 'operate'))
            or (tier_diagnosis is null) <> (ndcg_at_k is null)
            or has_retrieval_driven_outcome <> (retrieval_driven_outcome_count > 0)
            or cross_session_outcome_count > retrieval_driven_outcome_count
        """,
    )
    assert violations == 0


def test_every_signal_and_method_occurs(clean_sample):
    """The sample exercises each flag and method, so the checks above mean something."""
    row = one(
        clean_sample,
        """
        select
            sum(has_genuine_positive::int), sum(has_agent_consumption::int),
            sum(has_reject_failure::int), sum(has_research_failure::int),
            sum(has_substitution_failure::int), sum(is_unobserved::int),
            sum(has_downstream_correction::int), sum(cross_session_outcome_count)
        from marts.fct_retrievals where is_in_tier_scope
        """,
    )
    assert all(value > 0 for value in row), row
    methods = {
        m
        for (m,) in clean_sample.query(
            "select distinct attribution_method from marts.fct_action_attributions"
        )
    }
    assert methods == {"direct", "placement", "document", "temporal"}


def test_public_marts_hold_no_free_text_or_user_ids(clean_sample):
    names = ", ".join(f"'{m}'" for m in PUBLIC_MARTS)
    columns = clean_sample.query(
        f"""
        select table_name, column_name from information_schema.columns
        where table_schema = 'marts' and table_name in ({names})
        """
    )
    assert {t for t, _ in columns} == set(PUBLIC_MARTS)
    forbidden = {
        "query_text",
        "prompt_text",
        "user_id",
        "returned_asset_ids",
        "displayed_asset_ids",
    }
    assert not [(t, c) for t, c in columns if c in forbidden]


def test_public_marts_exclude_synthetic_traffic(clean_sample):
    (synthetic,) = one(
        clean_sample,
        """
        select count(*) from marts.fct_action_attributions
        where action_id in (select action_id from intermediate.int_actions_scoped
                            where is_synthetic)
            or retrieval_id in (select retrieval_id from intermediate.int_retrievals_scoped
                                where is_synthetic)
        """,
    )
    assert synthetic == 0


# ---------------------------------------------------------- worked example


def _write(root: Path, table: str, rows: list[dict]) -> None:
    for row in rows:
        folder = root / table / f"dt={row['ts'][:10]}"
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "part-0.jsonl").open("a") as handle:
            handle.write(json.dumps(row) + "\n")


@pytest.fixture(scope="module")
def worked_example(tmp_path_factory) -> Path:
    """The paper's example: a birthday template found in chat (r1, 20
    candidates), the agent places the 4th and retitles it, and two days
    later the user exports the document from the editor, in another session."""
    root = tmp_path_factory.mktemp("worked_example")
    raw = root / "raw"
    _write(
        raw,
        "prompts",
        [
            {
                "prompt_id": "p1",
                "session_guid": "chat_session",
                "user_id": "u1",
                "surface": "chat",
                "ts": "2026-08-01T10:00:00Z",
                "prompt_text": "find a birthday invitation template, title Xiaoming turns 6",
                "prompt_kind": "new_request",
            }
        ],
    )
    _write(
        raw,
        "retrievals",
        [
            {
                "retrieval_id": "r1",
                "prompt_id": "p1",
                "session_guid": "chat_session",
                "ts": "2026-08-01T10:00:01Z",
                "query_text": "birthday invitation template",
                "retrieval_role": "find",
                "returned_asset_ids": [f"t{i}" for i in range(1, 21)],
            }
        ],
    )
    _write(
        raw,
        "actions",
        [
            {
                "action_id": "agent_place",
                "session_guid": "chat_session",
                "prompt_id": "p1",
                "ts": "2026-08-01T10:00:05Z",
                "actor": "agent",
                "action_type": "place",
                "consumed_asset_id": "t4",
                "source_retrieval_id": "r1",
                "document_id": "d1",
            },
            {
                "action_id": "agent_retitle",
                "session_guid": "chat_session",
                "prompt_id": "p1",
                "ts": "2026-08-01T10:00:09Z",
                "actor": "agent",
                "action_type": "edit",
                "consumed_asset_id": "t4",
                "document_id": "d1",
            },
            {
                "action_id": "editor_export",
                "session_guid": "editor_session",
                "ts": "2026-08-03T09:00:00Z",
                "actor": "user",
                "action_type": "export",
                "document_id": "d1",
            },
        ],
    )
    warehouse = root / "lara.duckdb"
    result = run_dbt(
        ["build", "--select", "+path:models/marts/retrieval", "--indirect-selection", "cautious"],
        raw,
        warehouse,
        extra_env={"DBT_TARGET_PATH": str(root / "target"), "DBT_LOG_PATH": str(root / "logs")},
        capture=True,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
    return warehouse


def test_worked_example_end_to_end(worked_example: Path):
    with duckdb.connect(str(worked_example), read_only=True) as con:
        attributions = con.execute(
            """
            select action_id, retrieval_id, attribution_method, consumed_rank, is_cross_session,
                is_retrieval_driven_outcome
            from marts.fct_action_attributions order by acted_at
            """
        ).fetchall()
        retrieval = con.execute(
            """
            select has_agent_consumption, has_genuine_positive, has_observable_failure,
                is_unobserved, retrieval_driven_outcome_count, cross_session_outcome_count
            from marts.fct_retrievals where retrieval_id = 'r1'
            """
        ).fetchone()
        completion = con.execute(
            """
            select completion_rate, cross_session_outcome_count
            from marts.agg_tier3_completion where grouping_level = 'overall'
            """
        ).fetchone()
        unattributed = con.execute(
            """
            select outcome_count, retrieval_driven_outcome_count, unattributed_outcome_count
            from marts.agg_unattributed_outcomes where grouping_level = 'overall'
            """
        ).fetchone()
    assert attributions == [
        ("agent_place", "r1", "direct", 4, False, False),
        ("agent_retitle", "r1", "placement", 4, False, False),
        ("editor_export", "r1", "document", None, True, True),
    ]
    assert retrieval == (True, True, False, False, 1, 1)
    assert completion == (1.0, 1)
    assert unattributed == (1, 1, 0)
