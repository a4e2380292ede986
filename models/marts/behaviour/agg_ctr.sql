{#- CTR two ways, per day x reporting surface and over the whole period:
    naive conversation-level CTR (assistant sessions with a user click /
    assistant sessions, dated by the session's start) beside the
    retrieval-level CTR of Tier 1 (displayed retrievals with >= 1 attributed
    user click / displayed retrievals, dated by the retrieval; from
    fct_retrievals) and the clicks per displayed grid.

    Incremental by day (strategy lara_replace_days): a run recomputes the
    days of lara_days_this_run and the period totals (macros/metrics/rollup.sql
    lara_rollup). -#}
{{ lara_daily_config('activity_date') }}

with

{{ lara_days_this_run_cte() }}

sessions as (

    select * from {{ ref('fct_sessions') }}
    where is_assistant_session and {{ lara_in_days_this_run('session_date') }}

),

retrievals as (

    select * from {{ ref('fct_retrievals') }}
    where is_in_tier_scope and {{ lara_in_days_this_run('retrieval_date') }}

),

session_units as (

    select
        'session' as unit_type,
        session_date as activity_date,
        session_surface as surface,
        has_user_click as has_click,
        retrieval_count > 0 as has_retrieval,
        false as is_displayed,
        user_click_count as click_count
    from sessions

),

retrieval_units as (

    select
        'retrieval' as unit_type,
        retrieval_date as activity_date,
        surface,
        click_count > 0 as has_click,
        true as has_retrieval,
        is_displayed,
        click_count
    from retrievals

),

units as (

    select * from session_units
    union all
    select * from retrieval_units

),

{{ lara_rollup(
    'counted',
    rows='units',
    day='activity_date',
    surface_groups=true,
    measures=[
        ['assistant_session_count', "count(case when unit_type = 'session' then 1 end)",
            {'stored_as': 'naive_session_ctr_denominator'}],
        ['clicked_session_count', "count(case when unit_type = 'session' and has_click then 1 end)",
            {'stored_as': 'naive_session_ctr_numerator'}],
        ['retrieval_session_count', "count(case when unit_type = 'session' and has_retrieval then 1 end)",
            {'stored_as': 'retrieval_session_share_numerator'}],
        ['in_scope_retrieval_count', "count(case when unit_type = 'retrieval' then 1 end)"],
        ['displayed_retrieval_count', "count(case when unit_type = 'retrieval' and is_displayed then 1 end)",
            {'stored_as': 'retrieval_ctr_denominator'}],
        ['clicked_retrieval_count',
            "count(case when unit_type = 'retrieval' and is_displayed and has_click then 1 end)",
            {'stored_as': 'retrieval_ctr_numerator'}],
        ['displayed_grid_click_count',
            "cast(coalesce(sum(case when unit_type = 'retrieval' and is_displayed then click_count end), 0) as bigint)",
            {'stored_as': 'clicks_per_displayed_grid_numerator'}],
        ['displayed_grid_click_sum_of_squares',
            "cast(coalesce(sum(case when unit_type = 'retrieval' and is_displayed then click_count * click_count end), 0) as double)",
            {'type': 'double', 'stored_as': 'clicks_per_displayed_grid_sum_of_squares'}],
    ],
) }}

rated as (

    select
        activity_date,
        surface,
        is_period_total,
        {{ lara_reporting_grouping_level('is_period_total', 'surface') }} as grouping_level,
        in_scope_retrieval_count,
        {{ lara_rate_with_counts('naive_session_ctr', 'clicked_session_count', 'assistant_session_count') }},
        {{ lara_rate_with_counts('retrieval_session_share', 'retrieval_session_count', 'assistant_session_count') }},
        {{ lara_rate_with_counts('retrieval_ctr', 'clicked_retrieval_count', 'displayed_retrieval_count') }},
        {{ lara_mean_with_counts(
            'clicks_per_displayed_grid',
            'displayed_grid_click_count',
            'displayed_grid_click_sum_of_squares',
            'displayed_retrieval_count'
        ) }},
        {{ lara_rate_with_counts('displayed_share', 'displayed_retrieval_count', 'in_scope_retrieval_count') }},
        {{ lara_run_started_at() }} as _lara_loaded_at
    from counted

)

select * from rated
