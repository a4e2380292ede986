{#- Abandonment of assistant sessions, naive (no outcome event in the same
    session_guid) and lineage-corrected (also no outcome in another session
    attributed to one of the session's retrievals), with their difference,
    per day of the session's start x the session's surface, and over the
    whole period. -#}
with

sessions as (

    select * from {{ ref('fct_sessions') }}
    where is_assistant_session

),

reporting_surfaces as (

    select * from {{ ref('reporting_surfaces') }}

),

reporting_periods as (

    select false as is_period_total
    union all
    select true as is_period_total

),

sessions_by_reporting_grain as (

    select
        case when reporting_periods.is_period_total then null else sessions.session_date end as activity_date,
        reporting_periods.is_period_total,
        reporting_surfaces.reporting_surface,
        sessions.is_abandoned_naive,
        sessions.is_abandoned_lineage_corrected,
        sessions.is_abandonment_overstated,
        sessions.in_session_outcome_count,
        sessions.outside_session_outcome_count
    from sessions
    inner join reporting_surfaces
        on sessions.session_surface = reporting_surfaces.surface
    cross join reporting_periods

),

counted as (

    select
        activity_date,
        is_period_total,
        reporting_surface as surface,
        count(*) as assistant_session_count,
        count(case when is_abandoned_naive then 1 end) as abandoned_naive_count,
        count(case when is_abandoned_lineage_corrected then 1 end) as abandoned_lineage_corrected_count,
        count(case when is_abandonment_overstated then 1 end) as overstated_session_count,
        cast(sum(in_session_outcome_count) as bigint) as in_session_outcome_count,
        cast(sum(outside_session_outcome_count) as bigint) as outside_session_outcome_count
    from sessions_by_reporting_grain
    group by activity_date, is_period_total, reporting_surface

),

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
        {{ lara_rate_with_counts('abandonment_overstatement', 'overstated_session_count', 'assistant_session_count') }}
    from counted

)

select * from rated
