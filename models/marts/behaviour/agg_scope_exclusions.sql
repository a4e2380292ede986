{#- What the scope rules take out, per record type x day x reporting
    surface and over the whole period: synthetic traffic (out of every
    metric) and misrouted prompts / retrievals (out of Tiers 1-3).

    Incremental by day (strategy lara_replace_days): a run recomputes the
    days of lara_days_this_run and the period totals (macros/metrics/rollup.sql
    lara_rollup). -#}
{{ lara_daily_config('activity_date') }}

with

{{ lara_days_this_run_cte() }}

prompts as (

    select * from {{ ref('int_prompts_scoped') }}

),

retrievals as (

    select * from {{ ref('int_retrievals_scoped') }}
    where {{ lara_in_days_this_run('retrieval_date') }}

),

logged_actions as (

    select * from {{ ref('int_actions_scoped') }}
    where {{ lara_in_days_this_run('action_date') }}

),

lineage_synthetic_actions as (

    {{ lara_lineage_synthetic_actions(lara_in_days_this_run('action_date')) }}

),

actions as (

    select
        logged_actions.action_date,
        logged_actions.prompt_surface,
        logged_actions.is_synthetic or lineage_synthetic_actions.action_id is not null as is_synthetic
    from logged_actions
    left join lineage_synthetic_actions
        on logged_actions.action_id = lineage_synthetic_actions.action_id

),

sessions as (

    select * from {{ ref('int_sessions_summarised') }}
    where {{ lara_in_days_this_run('session_date') }}

),

spans as (

    select * from {{ ref('stg_lara__stage_spans') }}

),

prompt_units as (

    select
        'prompt' as record_type,
        prompt_date as activity_date,
        surface,
        is_synthetic,
        is_misrouted,
        false as has_unknown_prompt
    from prompts
    where {{ lara_in_days_this_run('prompt_date') }}

),

retrieval_units as (

    select
        'retrieval' as record_type,
        retrieval_date as activity_date,
        surface,
        is_synthetic,
        is_misrouted,
        not has_known_prompt as has_unknown_prompt
    from retrievals

),

action_units as (

    select
        'action' as record_type,
        action_date as activity_date,
        coalesce(prompt_surface, 'unknown') as surface,
        is_synthetic,
        false as is_misrouted,
        false as has_unknown_prompt
    from actions

),

session_units as (

    select
        'session' as record_type,
        session_date as activity_date,
        coalesce(session_surface, 'unknown') as surface,
        is_synthetic,
        false as is_misrouted,
        false as has_unknown_prompt
    from sessions

),

span_units as (

    select
        'stage_span' as record_type,
        coalesce(prompts.prompt_date, spans.partition_date) as activity_date,
        coalesce(prompts.surface, 'unknown') as surface,
        coalesce(prompts.is_synthetic, false) as is_synthetic,
        false as is_misrouted,
        prompts.prompt_id is null as has_unknown_prompt
    from spans
    left join prompts
        on spans.prompt_id = prompts.prompt_id
    where {{ lara_in_days_this_run('coalesce(prompts.prompt_date, spans.partition_date)') }}

),

units as (

    select * from prompt_units
    union all
    select * from retrieval_units
    union all
    select * from action_units
    union all
    select * from session_units
    union all
    select * from span_units

),

{{ lara_rollup(
    'counted',
    rows='units',
    day='activity_date',
    fixed=['record_type'],
    surface_groups=true,
    measures=[
        ['record_count', 'count(*)'],
        ['synthetic_count', 'count(case when is_synthetic then 1 end)'],
        ['misrouted_count', 'count(case when not is_synthetic and is_misrouted then 1 end)'],
        ['unknown_prompt_count', 'count(case when not is_synthetic and has_unknown_prompt then 1 end)'],
        ['behaviour_scope_count',
            "count(case when not is_synthetic and not (record_type = 'stage_span' and has_unknown_prompt) then 1 end)"],
        ['tier_scope_count', 'count(case when not is_synthetic and not is_misrouted then 1 end)'],
    ],
) }}

final as (

    select
        record_type,
        activity_date,
        surface,
        is_period_total,
        {{ lara_reporting_grouping_level('is_period_total', 'surface') }} as grouping_level,
        record_count,
        synthetic_count,
        case when record_type in ('prompt', 'retrieval') then misrouted_count end as misrouted_count,
        case when record_type in ('retrieval', 'stage_span') then unknown_prompt_count end as unknown_prompt_count,
        behaviour_scope_count,
        case when record_type = 'retrieval' then tier_scope_count end as tier_scope_count,
        {{ lara_run_started_at() }} as _lara_loaded_at
    from counted

)

select * from final
