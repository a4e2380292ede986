{#- Effective action rate for every definition of the seed
    effective_action_definitions, per day x reporting surface and over the
    whole period: assistant prompts followed, before the session's next
    prompt, by a user action of one of the definition's types / assistant
    prompts. Each row publishes the definition's action types. -#}
with

evaluated as (

    select * from {{ ref('int_prompt_effective_actions_evaluated') }}

),

definitions as (

    select * from {{ ref('effective_action_definitions') }}

),

reporting_surfaces as (

    select * from {{ ref('reporting_surfaces') }}

),

reporting_periods as (

    select false as is_period_total
    union all
    select true as is_period_total

),

definition_types as (

    select
        definition_name,
        {{ lara_string_agg_sorted('action_type') }} as action_types,
        count(distinct action_type) as action_type_count
    from definitions
    group by definition_name

),

evaluated_by_reporting_grain as (

    select
        evaluated.definition_name,
        evaluated.breadth_order,
        case when reporting_periods.is_period_total then null else evaluated.prompt_date end as activity_date,
        reporting_periods.is_period_total,
        reporting_surfaces.reporting_surface,
        evaluated.has_effective_action
    from evaluated
    inner join reporting_surfaces
        on evaluated.surface = reporting_surfaces.surface
    cross join reporting_periods

),

counted as (

    select
        definition_name,
        breadth_order,
        activity_date,
        is_period_total,
        reporting_surface as surface,
        count(*) as assistant_prompt_count,
        count(case when has_effective_action then 1 end) as effective_prompt_count
    from evaluated_by_reporting_grain
    group by definition_name, breadth_order, activity_date, is_period_total, reporting_surface

),

rated as (

    select
        counted.definition_name,
        counted.breadth_order,
        definition_types.action_types,
        definition_types.action_type_count,
        counted.activity_date,
        counted.surface,
        counted.is_period_total,
        {{ lara_reporting_grouping_level('counted.is_period_total', 'counted.surface') }} as grouping_level,
        {{ lara_rate_with_counts(
            'effective_action_rate', 'counted.effective_prompt_count', 'counted.assistant_prompt_count'
        ) }}
    from counted
    inner join definition_types
        on counted.definition_name = definition_types.definition_name

)

select * from rated
