{#- Lineage faults (metrics.md v2, attribution rule 1): actions whose
    source_retrieval_id names no known retrieval. The id counts as missing
    (rules 2-4 apply) and the action is counted here, per day of the action
    x the surface it is reported under (int_actions_scoped.reporting_surface)
    x actor, with every roll-up ('all'). Synthetic actions are out
    (metrics.md v2 scope rules, lineage included) and counted.

    Incremental by day (strategy lara_replace_days): a run recomputes the
    days of lara_days_this_run and the period totals (macros/metrics/rollup.sql
    lara_rollup). -#}
{%- set dimensions = [['surface', 'surface'], ['actor', 'actor']] -%}
{{ lara_daily_config('action_date') }}


with

{{ lara_days_this_run_cte() }}

direct_sources as (

    select
        action_id,
        actor,
        action_date,
        source_retrieval_id,
        has_unknown_source_id,
        is_synthetic
    from {{ ref('int_attribution_direct_sources') }}
    where {{ lara_in_days_this_run('action_date') }}

),

actions as (

    select
        action_id,
        reporting_surface
    from {{ ref('int_actions_scoped') }}
    where {{ lara_in_days_this_run('action_date') }}

),

lineage_synthetic_actions as (

    {{ lara_lineage_synthetic_actions(lara_in_days_this_run('action_date')) }}

),

resolved_actions as (

    select distinct action_id
    from {{ ref('int_action_attributions') }}
    where has_unknown_source_id and {{ lara_in_days_this_run('action_date') }}

),

classified as (

    select
        direct_sources.action_date,
        actions.reporting_surface as surface,
        direct_sources.actor,
        direct_sources.is_synthetic or lineage_synthetic_actions.action_id is not null as is_synthetic,
        direct_sources.source_retrieval_id is not null as has_source_id,
        direct_sources.has_unknown_source_id,
        resolved_actions.action_id is not null as is_resolved_by_later_rule
    from direct_sources
    inner join actions
        on direct_sources.action_id = actions.action_id
    left join lineage_synthetic_actions
        on direct_sources.action_id = lineage_synthetic_actions.action_id
    left join resolved_actions
        on direct_sources.action_id = resolved_actions.action_id

),

{{ lara_rollup(
    'aggregated',
    rows='classified',
    day='action_date',
    dimensions=dimensions,
    measures=[
        ['synthetic_action_count', lara_count_if('is_synthetic')],
        ['action_count', lara_count_if('not is_synthetic')],
        ['source_id_action_count', lara_count_if('not is_synthetic and has_source_id')],
        ['lineage_fault_count', lara_count_if('not is_synthetic and has_unknown_source_id')],
        ['lineage_fault_resolved_count',
            lara_count_if('not is_synthetic and has_unknown_source_id and is_resolved_by_later_rule')],
    ],
) }}

final as (

    select
        grouping_level,
        action_date,
        surface,
        actor,
        synthetic_action_count,
        action_count,
        source_id_action_count,
        lineage_fault_count,
        {{ lara_rate_columns('lineage_fault_rate', 'lineage_fault_count', 'source_id_action_count') }},
        lineage_fault_resolved_count,
        {{ lara_run_started_at() }} as _lara_loaded_at
    from aggregated

)

select * from final
