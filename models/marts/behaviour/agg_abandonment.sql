{#- Abandonment of assistant sessions, naive (no outcome event in the same
    session_guid) and lineage-corrected (also no outcome in another session
    attributed to one of the session's retrievals), with their difference,
    per day of the session's start x the session's surface, and over the
    whole period.

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

session_units as (

    select
        session_date as activity_date,
        session_surface as surface,
        is_abandoned_naive,
        is_abandoned_lineage_corrected,
        is_abandonment_overstated,
        in_session_outcome_count,
        outside_session_outcome_count
    from sessions

),

{{ lara_rollup(
    'counted',
    rows='session_units',
    day='activity_date',
    surface_groups=true,
    measures=[
        ['assistant_session_count', 'count(*)'],
        ['abandoned_naive_count', 'count(case when is_abandoned_naive then 1 end)',
            {'stored_as': 'abandonment_rate_naive_numerator'}],
        ['abandoned_lineage_corrected_count', 'count(case when is_abandoned_lineage_corrected then 1 end)',
            {'stored_as': 'abandonment_rate_lineage_corrected_numerator'}],
        ['overstated_session_count', 'count(case when is_abandonment_overstated then 1 end)',
            {'stored_as': 'abandonment_overstatement_numerator'}],
        ['in_session_outcome_count', 'cast(sum(in_session_outcome_count) as bigint)'],
        ['outside_session_outcome_count', 'cast(sum(outside_session_outcome_count) as bigint)'],
    ],
) }}

rated as (

    select
        activity_date,
        surface,
        is_period_total,
        {{ lara_reporting_grouping_level('is_period_total', 'surface') }} as grouping_level,
        assistant_session_count,
        in_session_outcome_count,
        outside_session_outcome_count,
        {{ lara_rate_with_counts('abandonment_rate_naive', 'abandoned_naive_count', 'assistant_session_count') }},
        {{ lara_rate_with_counts(
            'abandonment_rate_lineage_corrected', 'abandoned_lineage_corrected_count', 'assistant_session_count'
        ) }},
        {{ lara_rate_with_counts('abandonment_overstatement', 'overstated_session_count', 'assistant_session_count') }},
        {{ lara_run_started_at() }} as _lara_loaded_at
    from counted

)

select * from rated
