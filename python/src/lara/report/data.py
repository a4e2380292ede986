"""What the dashboard shows, read from the marts of a built warehouse.

Only public marts (schema `marts`) and the reconciliation table of schema
`data_quality` are read, never staging: the dashboard carries no free text
and no user ids. A mart that is missing leaves its section empty with a note
instead of failing the whole page.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

MARTS = "marts"
# How many bridge documents the scatter draws at most (a deterministic sample).
MAX_SCATTER_POINTS = 3000


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[dict]:
    cursor = con.execute(sql, params or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _exists(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> bool:
    found = con.execute(
        "select count(*) from duckdb_tables() where schema_name = ? and table_name = ?",
        [schema, table],
    ).fetchone()
    return bool(found and found[0])


@dataclass
class DashboardData:
    warehouse: Path
    missing: list[str] = field(default_factory=list)
    period: dict[str, Any] = field(default_factory=dict)
    tier0: list[dict] = field(default_factory=list)
    tiers_by_role: list[dict] = field(default_factory=list)
    diagnosis_matrix: list[dict] = field(default_factory=list)
    diagnosis_by_role: list[dict] = field(default_factory=list)
    diagnosis_overall: dict | None = None
    ctr: list[dict] = field(default_factory=list)
    rewrites: list[dict] = field(default_factory=list)
    abandonment: list[dict] = field(default_factory=list)
    effective_actions: list[dict] = field(default_factory=list)
    outcome_attribution: dict | None = None
    attribution_methods: list[dict] = field(default_factory=list)
    reconciliation: list[dict] = field(default_factory=list)
    bridge_points: dict[str, list[dict]] = field(default_factory=dict)
    bridge_document_counts: dict[str, int] = field(default_factory=dict)
    bridge_quadrants: list[dict] = field(default_factory=list)
    bridge_statistics: list[dict] = field(default_factory=list)
    entity_observability: dict | None = None
    gate: dict | None = None
    gate_path: Path | None = None
    bridge_plot: Path | None = None


def _need(con: duckdb.DuckDBPyConnection, data: DashboardData, *tables: str) -> bool:
    missing = [t for t in tables if not _exists(con, MARTS, t)]
    data.missing += [t for t in missing if t not in data.missing]
    return not missing


def load_dashboard_data(
    warehouse: Path, gate_results: Path | None = None, bridge_plot: Path | None = None
) -> DashboardData:
    """Read every number the dashboard shows (read-only connection)."""
    data = DashboardData(warehouse=Path(warehouse))
    with duckdb.connect(str(warehouse), read_only=True) as con:
        _period(con, data)
        _tier0(con, data)
        _tiers(con, data)
        _diagnosis(con, data)
        _naive_vs_corrected(con, data)
        _effective_actions(con, data)
        _lineage(con, data)
        _bridge(con, data)
    if gate_results is not None and Path(gate_results).exists():
        data.gate = json.loads(Path(gate_results).read_text())
        data.gate_path = Path(gate_results)
    if bridge_plot is not None and Path(bridge_plot).exists():
        data.bridge_plot = Path(bridge_plot)
    return data


def _period(con: duckdb.DuckDBPyConnection, data: DashboardData) -> None:
    if _need(con, data, "fct_prompts", "fct_retrievals", "fct_sessions"):
        data.period = _rows(
            con,
            f"""
            select
                (select min(prompt_date) from {MARTS}.fct_prompts) as first_day,
                (select max(prompt_date) from {MARTS}.fct_prompts) as last_day,
                (select count(*) from {MARTS}.fct_prompts) as prompt_count,
                (select count(*) from {MARTS}.fct_retrievals) as retrieval_count,
                (select count(*) from {MARTS}.fct_sessions) as session_count
            """,
        )[0]


def _tier0(con: duckdb.DuckDBPyConnection, data: DashboardData) -> None:
    if not _need(con, data, "agg_tier0_routing"):
        return
    data.tier0 = _rows(
        con,
        f"""
        select *
        from {MARTS}.agg_tier0_routing
        where is_period_total
        order by case surface
            when 'chat' then 1 when 'editor_assistant' then 2 when 'assistant' then 3
            when 'template_search' then 4 when 'all' then 6 else 5 end
        """,
    )


def _tiers(con: duckdb.DuckDBPyConnection, data: DashboardData) -> None:
    if not _need(con, data, "agg_tier1_quality", "agg_tier2_usage", "agg_tier3_completion"):
        return
    data.tiers_by_role = _rows(
        con,
        f"""
        with
        t1 as (
            select * from {MARTS}.agg_tier1_quality where grouping_level in ('role', 'overall')
        ),
        t2 as (
            select * from {MARTS}.agg_tier2_usage where grouping_level in ('role', 'overall')
        ),
        t3 as (
            select * from {MARTS}.agg_tier3_completion
            where grouping_level in ('role', 'overall')
        )
        select
            t1.grouping_level,
            t1.retrieval_role,
            t1.k,
            t1.in_scope_retrieval_count,
            t1.misrouted_retrieval_count,
            t1.synthetic_retrieval_count,
            t1.empty_retrieval_count,
            t1.empty_result_rate,
            t1.labelled_retrieval_count,
            t1.relevant_at_1_retrieval_count,
            t1.precision_at_1_mean,
            t1.precision_at_1_mean_ci_low,
            t1.precision_at_1_mean_ci_high,
            t1.ndcg_at_k_sum,
            t1.ndcg_at_k_mean,
            t1.ndcg_at_k_mean_ci_low,
            t1.ndcg_at_k_mean_ci_high,
            t1.tier1_good_retrieval_count,
            t1.tier1_good_rate,
            t1.displayed_retrieval_count,
            t1.clicked_retrieval_count,
            t1.click_through_rate,
            t2.genuine_positive_retrieval_count,
            t2.genuine_positive_rate,
            t2.genuine_positive_rate_ci_low,
            t2.genuine_positive_rate_ci_high,
            t2.agent_consumption_retrieval_count,
            t2.agent_consumption_rate,
            t2.agent_consumption_rate_ci_low,
            t2.agent_consumption_rate_ci_high,
            t2.observable_failure_retrieval_count,
            t2.observable_failure_rate,
            t2.observable_failure_rate_ci_low,
            t2.observable_failure_rate_ci_high,
            t2.one_minus_observable_failure_rate,
            t2.unobserved_retrieval_count,
            t2.unobserved_rate,
            t2.unobserved_rate_ci_low,
            t2.unobserved_rate_ci_high,
            t3.completed_retrieval_count,
            t3.completion_rate,
            t3.completion_rate_ci_low,
            t3.completion_rate_ci_high,
            t3.goal_labelled_prompt_count,
            t3.goal_achieved_prompt_count,
            t3.goal_rate
        from t1
        inner join t2 on t1.grouping_level = t2.grouping_level
            and t1.retrieval_role = t2.retrieval_role
        inner join t3 on t1.grouping_level = t3.grouping_level
            and t1.retrieval_role = t3.retrieval_role
        order by t1.grouping_level = 'overall', t1.in_scope_retrieval_count desc,
            t1.retrieval_role
        """,
    )


def _diagnosis(con: duckdb.DuckDBPyConnection, data: DashboardData) -> None:
    if _need(con, data, "fct_retrievals"):
        data.diagnosis_matrix = _rows(
            con,
            f"""
            select
                is_tier1_good,
                case
                    when has_observable_failure then 'failure'
                    when has_genuine_positive or has_agent_consumption then 'used'
                    else 'neither'
                end as usage,
                tier_diagnosis,
                count(*) as retrieval_count
            from {MARTS}.fct_retrievals
            where is_in_tier_scope and tier_diagnosis is not null
            group by all
            """,
        )
    if _need(con, data, "agg_tier_diagnosis"):
        rows = _rows(
            con,
            f"""
            select * from {MARTS}.agg_tier_diagnosis
            where grouping_level in ('role', 'overall')
            order by grouping_level = 'overall', labelled_retrieval_count desc, retrieval_role
            """,
        )
        data.diagnosis_by_role = [r for r in rows if r["grouping_level"] == "role"]
        overall = [r for r in rows if r["grouping_level"] == "overall"]
        data.diagnosis_overall = overall[0] if overall else None


def _naive_vs_corrected(con: duckdb.DuckDBPyConnection, data: DashboardData) -> None:
    order = (
        "order by case surface when 'assistant' then 1 when 'chat' then 2 "
        "when 'editor_assistant' then 3 when 'template_search' then 4 else 5 end"
    )
    if _need(con, data, "agg_ctr"):
        data.ctr = _rows(
            con,
            f"select * from {MARTS}.agg_ctr where is_period_total "
            f"and surface in ('assistant', 'chat', 'editor_assistant') {order}",
        )
    if _need(con, data, "agg_rewrites"):
        data.rewrites = _rows(
            con,
            f"select * from {MARTS}.agg_rewrites where is_period_total "
            f"and surface in ('assistant', 'chat', 'editor_assistant', 'template_search', 'all') "
            f"{order}",
        )
    if _need(con, data, "agg_abandonment"):
        data.abandonment = _rows(
            con,
            f"select * from {MARTS}.agg_abandonment where is_period_total "
            f"and surface in ('assistant', 'chat', 'editor_assistant') {order}",
        )


def _effective_actions(con: duckdb.DuckDBPyConnection, data: DashboardData) -> None:
    if _need(con, data, "agg_effective_action_rate"):
        data.effective_actions = _rows(
            con,
            f"select * from {MARTS}.agg_effective_action_rate where grouping_level = 'overall' "
            "order by breadth_order, definition_name",
        )


def _lineage(con: duckdb.DuckDBPyConnection, data: DashboardData) -> None:
    if _need(con, data, "agg_unattributed_outcomes"):
        rows = _rows(
            con,
            f"select * from {MARTS}.agg_unattributed_outcomes where grouping_level = 'overall'",
        )
        data.outcome_attribution = rows[0] if rows else None
    if _need(con, data, "fct_action_attributions"):
        data.attribution_methods = _rows(
            con,
            f"""
            select attribution_method, count(distinct action_id) as action_count
            from {MARTS}.fct_action_attributions
            where actor = 'user'
            group by attribution_method
            order by case attribution_method when 'direct' then 1 when 'placement' then 2
                when 'document' then 3 else 4 end
            """,
        )
    if _exists(con, "data_quality", "dq_reconciliation"):
        data.reconciliation = _rows(
            con, "select * from data_quality.dq_reconciliation order by raw_rows desc, table_name"
        )


def _bridge(con: duckdb.DuckDBPyConnection, data: DashboardData) -> None:
    if _need(con, data, "fct_document_utility"):
        for variant, sru, ctu, bridge in (
            ("reader", "sru_percentile", "ctu_percentile", "is_bridge"),
            ("proxy", "proxy_sru_percentile", "proxy_ctu_percentile", "is_proxy_bridge"),
        ):
            count = con.execute(
                f"select count(*) from {MARTS}.fct_document_utility where {sru} is not null"
            ).fetchone()[0]
            data.bridge_document_counts[variant] = int(count)
            # Deterministic sample: the documents with the smallest hash of their key.
            data.bridge_points[variant] = _rows(
                con,
                f"""
                select {sru} as x, {ctu} as y, {bridge} as is_bridge, is_relevant,
                    is_failed_replay
                from {MARTS}.fct_document_utility
                where {sru} is not null
                order by hash(trajectory_id, step_index, doc_id)
                limit {MAX_SCATTER_POINTS}
                """,
            )
    if _exists(con, MARTS, "agg_bridge_quadrants"):
        data.bridge_quadrants = _rows(con, f"select * from {MARTS}.agg_bridge_quadrants")
    if _exists(con, MARTS, "bridge_statistics"):
        data.bridge_statistics = _rows(
            con, f"select * from {MARTS}.bridge_statistics order by sru_variant desc"
        )
    if _exists(con, MARTS, "entity_observability"):
        rows = _rows(con, f"select * from {MARTS}.entity_observability")
        data.entity_observability = rows[0] if rows else None
