{#- Product health (metrics.md Tier 3): user outcome events (export, share,
    download) by attribution status, per day x surface x outcome type of the
    event (there is no retrieval to report them under), with every roll-up
    ('all'). Synthetic outcomes are excluded and counted: those whose prompt
    is synthetic and, without a known prompt, those whose session's prompts
    are all synthetic or whose lineage (source id, placement chain) leads to
    a synthetic retrieval (metrics.md v2 scope rules).

    Incremental by day (strategy lara_replace_days): a run recomputes the
    days of lara_days_this_run and the period totals (macros/metrics/rollup.sql
    lara_rollup). -#}
{%- set dimensions = [['surface', 'surface'], ['action_type', 'type']] -%}
{{ lara_daily_config('action_date') }}


with

{{ lara_days_this_run_cte() }}

actions as (

    select
        action_id,
        session_guid,
        action_type,
        action_date,
        reporting_surface,
        is_synthetic
    from {{ ref('int_actions_scoped') }}
    where actor = 'user' and is_outcome_type and {{ lara_in_days_this_run('action_date') }}

),

{# The attributions of the actions of those days only (an attribution row
   carries its action's date; on a run with nothing new, none). #}
attributions as (

    select
        action_id,
        max(attribution_method) as attribution_method,
        max(case when has_unknown_source_id then 1 else 0 end) = 1 as has_unknown_source_id
    from {{ ref('int_action_attributions') }}
    where {{ lara_in_days_this_run('action_date') }}
    group by action_id

),

lineage_synthetic_actions as (

    {{ lara_lineage_synthetic_actions(lara_in_days_this_run('action_date')) }}

),

classified as (

    select
        actions.action_date,
        actions.reporting_surface as surface,
        actions.action_type,
        actions.is_synthetic or lineage_synthetic_actions.action_id is not null as is_synthetic,
        case
            when {{ lara_is_lineage_method('attributions.attribution_method') }} then 'retrieval_driven'
            when attributions.attribution_method = 'temporal' then 'temporal_only'
            else 'unattributed'
        end as attribution_status
    from actions
    left join attributions
        on actions.action_id = attributions.action_id
    left join lineage_synthetic_actions
        on actions.action_id = lineage_synthetic_actions.action_id

),

{{ lara_rollup(
    'aggregated',
    rows='classified',
    day='action_date',
    dimensions=dimensions,
    measures=[
        ['synthetic_outcome_count', lara_count_if('is_synthetic')],
        ['outcome_count', lara_count_if('not is_synthetic')],
        ['retrieval_driven_outcome_count', lara_count_if("not is_synthetic and attribution_status = 'retrieval_driven'")],
        ['temporal_only_outcome_count', lara_count_if("not is_synthetic and attribution_status = 'temporal_only'")],
        ['unattributed_outcome_count', lara_count_if("not is_synthetic and attribution_status = 'unattributed'")],
    ],
) }}

final as (

    select
        grouping_level,
        action_date,
        surface,
        action_type,
        synthetic_outcome_count,
        outcome_count,
        retrieval_driven_outcome_count,
        {{ lara_rate_columns('retrieval_driven_outcome_rate', 'retrieval_driven_outcome_count', 'outcome_count') }},
        temporal_only_outcome_count,
        {{ lara_rate_columns('temporal_only_outcome_rate', 'temporal_only_outcome_count', 'outcome_count') }},
        unattributed_outcome_count,
        {{ lara_rate_columns('unattributed_outcome_rate', 'unattributed_outcome_count', 'outcome_count') }},
        {{ lara_run_started_at() }} as _lara_loaded_at
    from aggregated

)

select * from final
