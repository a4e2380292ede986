{#- Prompts per session per reporting surface and day of the session's
    start, and over the whole period: for reporting surface S (chat alone;
    assistant = chat + editor_assistant; ...), the prompts on S of the
    sessions with >= 1 prompt on S, over those sessions.

    Incremental by day (strategy lara_replace_days): a run recomputes the
    days of lara_days_this_run and the period totals (macros/metrics/rollup.sql
    lara_rollup). -#}
{{ lara_daily_config('activity_date') }}

with

{{ lara_days_this_run_cte() }}

prompts as (

    select * from {{ ref('fct_prompts') }}

),

sessions as (

    select * from {{ ref('fct_sessions') }}

),

reporting_surfaces as (

    select * from {{ ref('reporting_surfaces') }}

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

session_units as (

    select
        sessions.session_date as activity_date,
        session_surface_prompts.reporting_surface as surface,
        session_surface_prompts.prompt_count
    from session_surface_prompts
    inner join sessions
        on session_surface_prompts.session_guid = sessions.session_guid

),

{{ lara_rollup(
    'counted',
    rows='session_units',
    day='activity_date',
    fixed=['surface'],
    measures=[
        ['session_count', 'count(*)'],
        ['prompt_count', 'cast(sum(prompt_count) as bigint)'],
        ['prompt_count_sum_of_squares', 'cast(sum(prompt_count * prompt_count) as double)',
            {'type': 'double', 'stored_as': 'prompts_per_session_sum_of_squares'}],
        ['single_prompt_session_count', 'count(case when prompt_count = 1 then 1 end)',
            {'stored_as': 'single_prompt_session_rate_numerator'}],
    ],
    period_measures=[
        ['p50_prompts_per_session', lara_percentile_cont('prompt_count', 0.5)],
        ['p95_prompts_per_session', lara_percentile_cont('prompt_count', 0.95)],
    ],
) }}

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
        {{ lara_rate_with_counts('single_prompt_session_rate', 'single_prompt_session_count', 'session_count') }},
        {{ lara_run_started_at() }} as _lara_loaded_at
    from counted

)

select * from rated
