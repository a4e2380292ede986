{#- Prompts per session per reporting surface and day of the session's
    start, and over the whole period: for reporting surface S (chat alone;
    assistant = chat + editor_assistant; ...), the prompts on S of the
    sessions with >= 1 prompt on S, over those sessions. -#}
with

prompts as (

    select * from {{ ref('fct_prompts') }}

),

sessions as (

    select * from {{ ref('fct_sessions') }}

),

reporting_surfaces as (

    select * from {{ ref('reporting_surfaces') }}

),

reporting_periods as (

    select false as is_period_total
    union all
    select true as is_period_total

),

session_surface_prompts as (

    select
        prompts.session_guid,
        reporting_surfaces.reporting_surface,
        count(*) as prompt_count
    from prompts
    inner join reporting_surfaces
        on prompts.surface = reporting_surfaces.surface
    group by prompts.session_guid, reporting_surfaces.reporting_surface

),

sessions_by_reporting_grain as (

    select
        case when reporting_periods.is_period_total then null else sessions.session_date end as activity_date,
        reporting_periods.is_period_total,
        session_surface_prompts.reporting_surface,
        session_surface_prompts.prompt_count
    from session_surface_prompts
    inner join sessions
        on session_surface_prompts.session_guid = sessions.session_guid
    cross join reporting_periods

),

counted as (

    select
        activity_date,
        is_period_total,
        reporting_surface as surface,
        count(*) as session_count,
        cast(sum(prompt_count) as bigint) as prompt_count,
        cast(sum(prompt_count * prompt_count) as double) as prompt_count_sum_of_squares,
        {{ lara_percentile_cont('prompt_count', 0.5) }} as p50_prompts_per_session,
        {{ lara_percentile_cont('prompt_count', 0.95) }} as p95_prompts_per_session,
        count(case when prompt_count = 1 then 1 end) as single_prompt_session_count
    from sessions_by_reporting_grain
    group by activity_date, is_period_total, reporting_surface

),

rated as (

    select
        activity_date,
        surface,
        is_period_total,
        {{ lara_reporting_grouping_level('is_period_total', 'surface') }} as grouping_level,
        session_count,
        prompt_count,
        {{ lara_mean_with_counts(
            'prompts_per_session', 'prompt_count', 'prompt_count_sum_of_squares', 'session_count'
        ) }},
        p50_prompts_per_session,
        p95_prompts_per_session,
        {{ lara_rate_with_counts('single_prompt_session_rate', 'single_prompt_session_count', 'session_count') }}
    from counted

)

select * from rated
