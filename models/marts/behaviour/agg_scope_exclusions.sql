{#- What the scope rules take out, per record type x day x reporting
    surface and over the whole period: synthetic traffic (out of every
    metric) and misrouted prompts / retrievals (out of Tiers 1-3). -#}
with

prompts as (

    select * from {{ ref('int_prompts_scoped') }}

),

retrievals as (

    select * from {{ ref('int_retrievals_scoped') }}

),

actions as (

    select * from {{ ref('int_actions_scoped') }}

),

sessions as (

    select * from {{ ref('int_sessions_summarised') }}

),

spans as (

    select * from {{ ref('stg_lara__stage_spans') }}

),

reporting_surfaces as (

    select * from {{ ref('reporting_surfaces') }}

),

reporting_periods as (

    select false as is_period_total
    union all
    select true as is_period_total

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

units_by_reporting_grain as (

    select
        units.record_type,
        case when reporting_periods.is_period_total then null else units.activity_date end as activity_date,
        reporting_periods.is_period_total,
        reporting_surfaces.reporting_surface,
        units.is_synthetic,
        units.is_misrouted,
        units.has_unknown_prompt
    from units
    inner join reporting_surfaces
        on units.surface = reporting_surfaces.surface
    cross join reporting_periods

),

counted as (

    select
        record_type,
        activity_date,
        is_period_total,
        reporting_surface as surface,
        count(*) as record_count,
        count(case when is_synthetic then 1 end) as synthetic_count,
        count(case when not is_synthetic and is_misrouted then 1 end) as misrouted_count,
        count(case when not is_synthetic and has_unknown_prompt then 1 end) as unknown_prompt_count,
        count(
            case when not is_synthetic and not (record_type = 'stage_span' and has_unknown_prompt) then 1 end
        ) as behaviour_scope_count,
        count(case when not is_synthetic and not is_misrouted then 1 end) as tier_scope_count
    from units_by_reporting_grain
    group by record_type, activity_date, is_period_total, reporting_surface

),

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
        case when record_type = 'retrieval' then tier_scope_count end as tier_scope_count
    from counted

)

select * from final
