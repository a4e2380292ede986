{#- CTR two ways, per day x reporting surface and over the whole period:
    naive conversation-level CTR (assistant sessions with a user click /
    assistant sessions, dated by the session's start) beside the
    retrieval-level CTR of Tier 1 (displayed retrievals with >= 1 attributed
    user click / displayed retrievals, dated by the retrieval; from
    fct_retrievals) and the clicks per displayed grid. -#}
with

sessions as (

    select * from {{ ref('fct_sessions') }}
    where is_assistant_session

),

retrievals as (

    select * from {{ ref('fct_retrievals') }}
    where is_in_tier_scope

),

reporting_surfaces as (

    select * from {{ ref('reporting_surfaces') }}

),

reporting_periods as (

    select false as is_period_total
    union all
    select true as is_period_total

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

units_by_reporting_grain as (

    select
        case when reporting_periods.is_period_total then null else units.activity_date end as activity_date,
        reporting_periods.is_period_total,
        reporting_surfaces.reporting_surface,
        units.unit_type,
        units.has_click,
        units.has_retrieval,
        units.is_displayed,
        units.click_count
    from units
    inner join reporting_surfaces
        on units.surface = reporting_surfaces.surface
    cross join reporting_periods

),

counted as (

    select
        activity_date,
        is_period_total,
        reporting_surface as surface,
        count(case when unit_type = 'session' then 1 end) as assistant_session_count,
        count(case when unit_type = 'session' and has_click then 1 end) as clicked_session_count,
        count(case when unit_type = 'session' and has_retrieval then 1 end) as retrieval_session_count,
        count(case when unit_type = 'retrieval' then 1 end) as in_scope_retrieval_count,
        count(case when unit_type = 'retrieval' and is_displayed then 1 end) as displayed_retrieval_count,
        count(
            case when unit_type = 'retrieval' and is_displayed and has_click then 1 end
        ) as clicked_retrieval_count,
        cast(
            coalesce(sum(case when unit_type = 'retrieval' and is_displayed then click_count end), 0) as bigint
        ) as displayed_grid_click_count,
        cast(
            coalesce(sum(case when unit_type = 'retrieval' and is_displayed then click_count * click_count end), 0)
            as double
        ) as displayed_grid_click_sum_of_squares
    from units_by_reporting_grain
    group by activity_date, is_period_total, reporting_surface

),

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
        {{ lara_rate_with_counts('displayed_share', 'displayed_retrieval_count', 'in_scope_retrieval_count') }}
    from counted

)

select * from rated
