"""What the dashboard shows, read from the marts of a built warehouse.

Only public marts (schema `marts`) and the reconciliation table of schema
`data_quality` are read, never staging: the dashboard carries no free text
and no user ids. A mart that is missing leaves its section empty with a note
instead of failing the whole page.
"""

from __future__ import annotations

import decimal
import json
import math
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
    # What the page's script filters and draws: mart rows as column lists
    # (see _filterable); rates and intervals are recomputed in the page.
    tables: dict[str, dict[str, list]] = field(default_factory=dict)
    # Which inputs were logged at all (metrics without their inputs say so).
    logged: dict[str, bool] = field(default_factory=dict)
    reconciliation: list[dict] = field(default_factory=list)
    bridge_points: dict[str, list[dict]] = field(default_factory=dict)
    bridge_document_counts: dict[str, int] = field(default_factory=dict)
    bridge_quadrants: list[dict] = field(default_factory=list)
    bridge_statistics: list[dict] = field(default_factory=list)
    entity_observability: dict | None = None
    gate: dict | None = None
    gate_path: Path | None = None
    # The gate's lineage coverage for every day of the raw logs (the gate
    # itself reports the partitions it validated), and where it came from.
    gate_days: list[dict] = field(default_factory=list)
    gate_days_note: str | None = None
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
        _filterable(con, data)
        _logged(con, data)
        if _exists(con, "data_quality", "dq_reconciliation"):
            data.reconciliation = _rows(
                con,
                "select * from data_quality.dq_reconciliation order by raw_rows desc, table_name",
            )
        _bridge(con, data)
    if gate_results is not None and Path(gate_results).exists():
        data.gate = json.loads(Path(gate_results).read_text())
        data.gate_path = Path(gate_results)
        _gate_days(data)
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


def _columns(con: duckdb.DuckDBPyConnection, sql: str) -> dict[str, list]:
    """A query's result as {column: [values]} (compact JSON; dates as ISO strings)."""
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    rows = cursor.fetchall()
    out: dict[str, list] = {name: [] for name in names}
    for row in rows:
        for name, value in zip(names, row, strict=True):
            if hasattr(value, "isoformat"):
                value = value.isoformat()
            elif isinstance(value, decimal.Decimal):
                value = int(value) if value == value.to_integral_value() else float(value)
            elif isinstance(value, float) and not math.isfinite(value):
                value = None
            out[name].append(value)
    return out


# Every query below reads one public mart and keeps the rows at every
# grouping level it needs: the mart's own roll-ups ('all') answer a filter,
# so distinct counts (goal-labelled prompts, attributed actions) stay exact.
# Day rows feed the trends, rows without a day the period numbers.
_RETRIEVAL_CUBE = f"""
    select
        cast(t1.retrieval_date as varchar) as day,
        t1.surface,
        t1.retrieval_role as role,
        t1.k,
        t1.in_scope_retrieval_count,
        t1.empty_retrieval_count,
        t1.labelled_retrieval_count,
        t1.relevant_at_1_retrieval_count,
        t1.ndcg_at_k_sum,
        t1.ndcg_at_k_sum_of_squares,
        t2.genuine_positive_retrieval_count,
        t2.agent_consumption_retrieval_count,
        t2.confirmed_agent_consumption_retrieval_count,
        t2.observable_failure_retrieval_count,
        t2.unobserved_retrieval_count,
        t3.completed_retrieval_count,
        t3.goal_labelled_prompt_count,
        t3.goal_achieved_prompt_count,
        diagnosis.healthy_retrieval_count,
        diagnosis.masked_retrieval_failure_retrieval_count,
        diagnosis.retrieval_failure_visible_retrieval_count,
        diagnosis.downstream_or_routing_issue_retrieval_count,
        diagnosis.unobserved_retrieval_count as diagnosis_unobserved_retrieval_count,
        diagnosis.tier1_good_ndcg
    from {MARTS}.agg_tier1_quality as t1
    inner join {MARTS}.agg_tier2_usage as t2
        on t1.grouping_level = t2.grouping_level
        and t1.retrieval_date is not distinct from t2.retrieval_date
        and t1.surface = t2.surface and t1.retrieval_role = t2.retrieval_role
    inner join {MARTS}.agg_tier3_completion as t3
        on t1.grouping_level = t3.grouping_level
        and t1.retrieval_date is not distinct from t3.retrieval_date
        and t1.surface = t3.surface and t1.retrieval_role = t3.retrieval_role
    inner join {MARTS}.agg_tier_diagnosis as diagnosis
        on t1.grouping_level = diagnosis.grouping_level
        and t1.retrieval_date is not distinct from diagnosis.retrieval_date
        and t1.surface = diagnosis.surface and t1.retrieval_role = diagnosis.retrieval_role
    order by t1.retrieval_date nulls first, t1.surface, t1.retrieval_role
"""


def _rate_parts(*names: str) -> str:
    return ", ".join(f"{n}_numerator, {n}_denominator" for n in names)


_SURFACE_MARTS = {
    "routing": (
        "agg_tier0_routing",
        "prompt_count, labelled_prompt_count, "
        + _rate_parts(
            "trigger_rate",
            "misroute_rate",
            "missed_retrieval_rate",
            "multi_intent_rate",
            "intent_coverage_rate",
        ),
    ),
    "missed": (
        "agg_tier0_missed_retrieval",
        "rough_missed_retrieval_share_estimate, "
        + _rate_parts("missed_retrieval_prompt_share")
        + ", weighted_missed_retrieval_prompt_share, weighted_missed_retrieval_prompt_share_ci_low"
        + ", weighted_missed_retrieval_prompt_share_ci_high, weighted_prompt_count",
    ),
    "ctr": ("agg_ctr", _rate_parts("naive_session_ctr", "retrieval_ctr")),
    "rewrites": (
        "agg_rewrites",
        _rate_parts(
            "naive_rewrite_rate", "search_reformulation_rate", "downstream_correction_rate"
        ),
    ),
    "abandonment": (
        "agg_abandonment",
        _rate_parts(
            "abandonment_rate_naive",
            "abandonment_rate_lineage_corrected",
            "abandonment_overstatement",
        ),
    ),
}


def _filterable(con: duckdb.DuckDBPyConnection, data: DashboardData) -> None:
    tables = data.tables
    if _need(con, data, "agg_tier1_quality", "agg_tier2_usage", "agg_tier3_completion"):
        if _need(con, data, "agg_tier_diagnosis"):
            tables["retrieval"] = _columns(con, _RETRIEVAL_CUBE)
    for name, (mart, columns) in _SURFACE_MARTS.items():
        if _need(con, data, mart):
            tables[name] = _columns(
                con,
                f"select cast(activity_date as varchar) as day, surface, {columns} "
                f"from {MARTS}.{mart} order by activity_date nulls first, surface",
            )
    if _need(con, data, "agg_effective_action_rate"):
        tables["effective"] = _columns(
            con,
            f"""
            select definition_name, breadth_order, action_types, surface,
                {_rate_parts("effective_action_rate")}
            from {MARTS}.agg_effective_action_rate
            where is_period_total
            order by breadth_order, definition_name, surface
            """,
        )
    if _need(con, data, "agg_stage_costs"):
        tables["costs"] = _columns(
            con,
            f"""
            select stage, surface, prompt_count, instrumented_prompt_count, span_count,
                successful_task_count,
                mean_latency_ms_numerator, mean_latency_ms_denominator,
                mean_latency_ms_sum_of_squares, p50_latency_ms, p95_latency_ms,
                mean_tokens_numerator, mean_tokens_denominator, mean_tokens_sum_of_squares,
                p50_tokens, p95_tokens,
                {_rate_parts("latency_ms_per_successful_task", "tokens_per_successful_task")}
            from {MARTS}.agg_stage_costs
            where is_period_total
            order by stage = 'all_stages', stage, surface
            """,
        )
    if _need(con, data, "agg_reretrieval"):
        tables["reretrieval"] = _columns(
            con,
            f"""
            select surface, retrieval_role as role, reretrieval_window_days,
                {_rate_parts("reretrieval_rate")}
            from {MARTS}.agg_reretrieval
            where is_period_total
            order by surface, retrieval_role
            """,
        )
    if _need(con, data, "agg_tier1_weighted"):
        tables["weighted"] = _columns(
            con,
            f"""
            select surface, retrieval_role as role, k, weighted_null_reason,
                in_scope_retrieval_count, labelled_retrieval_count, design_retrieval_count,
                weighted_retrieval_count, effective_sample_size,
                relevant_at_1_retrieval_count,
                precision_at_1_weighted_mean, precision_at_1_weighted_ci_low,
                precision_at_1_weighted_ci_high,
                ndcg_at_k_sum, ndcg_at_k_sum_of_squares,
                ndcg_at_k_weighted_mean, ndcg_at_k_weighted_ci_low, ndcg_at_k_weighted_ci_high
            from {MARTS}.agg_tier1_weighted
            order by surface, retrieval_role
            """,
        )
    if _need(con, data, "fct_retrievals"):
        tables["diagnosis_cells"] = _columns(
            con,
            f"""
            select
                coalesce(surface, 'all') as surface,
                coalesce(retrieval_role, 'all') as role,
                is_tier1_good,
                usage,
                count(*) as retrieval_count
            from (
                select surface, retrieval_role, is_tier1_good,
                    case
                        when has_observable_failure then 'failure'
                        when has_genuine_positive or has_agent_consumption then 'used'
                        else 'neither'
                    end as usage
                from {MARTS}.fct_retrievals
                where is_in_tier_scope and tier_diagnosis is not null
            )
            group by grouping sets (
                (surface, retrieval_role, is_tier1_good, usage),
                (surface, is_tier1_good, usage),
                (retrieval_role, is_tier1_good, usage),
                (is_tier1_good, usage)
            )
            order by all
            """,
        )
    if _need(con, data, "agg_unattributed_outcomes"):
        tables["outcomes"] = _columns(
            con,
            f"""
            select cast(action_date as varchar) as day, surface, outcome_count,
                synthetic_outcome_count, retrieval_driven_outcome_count,
                temporal_only_outcome_count, unattributed_outcome_count
            from {MARTS}.agg_unattributed_outcomes
            where action_type = 'all'
            order by action_date nulls first, surface
            """,
        )
    if _need(con, data, "fct_action_attributions"):
        # Distinct user actions per attribution method, per credited surface x
        # role with roll-ups, over the period and per day of the action.
        tables["methods"] = _columns(
            con,
            f"""
            select
                cast(action_date as varchar) as day,
                coalesce(surface, 'all') as surface,
                coalesce(retrieval_role, 'all') as role,
                attribution_method,
                count(distinct action_id) as action_count
            from {MARTS}.fct_action_attributions
            where actor = 'user'
            group by grouping sets (
                (surface, retrieval_role, attribution_method),
                (surface, attribution_method),
                (retrieval_role, attribution_method),
                (attribution_method),
                (action_date, surface, attribution_method),
                (action_date, attribution_method)
            )
            order by all
            """,
        )


def _gate_days(data: DashboardData) -> None:
    """Lineage coverage of every day, computed as the gate computes it (its own
    reader over the raw actions and retrievals the gate read), so the panel is
    not limited to the partitions the gate validated (by default the newest,
    often still partial). Falls back to the gate's own rows, with a note."""
    gate = data.gate or {}
    checked = set(gate.get("selection", {}).get("partitions", []))
    fallback = [dict(row, checked=True) for row in gate.get("lineage_coverage", [])]
    raw = Path(gate["raw_path"]) if gate.get("raw_path") else None
    if raw is None or not raw.is_dir():
        data.gate_days = fallback
        data.gate_days_note = "the raw logs the gate read are not here: its partitions only"
        return
    from lara.contract import load_contract
    from lara.gate import reader
    from lara.gate.config import load_config

    contract = load_contract()
    tables = {name: contract[name] for name in ("actions", "retrievals") if name in contract}
    try:
        config = load_config(Path(gate["config_path"]) if gate.get("config_path") else None)
        with reader.RawStore(reader.discover(raw, tables), tables, config) as store:
            store.load()
            rows = store.coverage()
    except (OSError, ValueError, duckdb.Error) as error:
        data.gate_days = fallback
        data.gate_days_note = f"every day could not be read ({error}): the gate's partitions only"
        return
    data.gate_days = [
        {
            key: (value.isoformat() if hasattr(value, "isoformat") else value)
            for key, value in {**row, "checked": row["partition"] in checked}.items()
        }
        for row in rows
    ]


# Inputs whose absence makes a metric meaningless rather than 0% or 100%.
_LOGGED_TABLES = {
    "actions": "actions",
    "relevance_labels": "relevance_labels",
    "prompt_labels": "prompt_labels",
    "goal_labels": "goal_labels",
    "stage_spans": "stage_spans",
    "replay": "replay_documents",
    "label_sample_design": "label_sample_design",
    "prompt_label_sample_design": "prompt_label_sample_design",
}


def _logged(con: duckdb.DuckDBPyConnection, data: DashboardData) -> None:
    """Which inputs were logged at all: a contract table with clean rows, and
    outcome events (user export / share / download, synthetic included)."""
    clean: dict[str, int] = {}
    if _exists(con, "data_quality", "dq_reconciliation"):
        clean = dict(
            con.execute(
                "select table_name, clean_rows from data_quality.dq_reconciliation"
            ).fetchall()
        )
    for flag, table in _LOGGED_TABLES.items():
        # An older warehouse without the reconciliation table: assume logged.
        data.logged[flag] = bool(clean.get(table, 0)) if clean else True
    outcomes = None
    if _exists(con, MARTS, "agg_unattributed_outcomes"):
        outcomes = con.execute(
            f"select coalesce(sum(outcome_count), 0) + coalesce(sum(synthetic_outcome_count), 0) "
            f"from {MARTS}.agg_unattributed_outcomes where grouping_level = 'overall'"
        ).fetchone()[0]
    data.logged["outcomes"] = bool(outcomes) and data.logged["actions"]


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
