{#- Effective action rate for every definition of the seed
    effective_action_definitions, per day x reporting surface and over the
    whole period: assistant prompts followed, before the session's next
    prompt, by a user action of one of the definition's types / assistant
    prompts. Each row publishes the definition's action types.

    Incremental by day (strategy lara_replace_days): a run recomputes the
    days of lara_days_this_run and the period totals (macros/metrics/rollup.sql
    lara_rollup). -#}
{{ lara_daily_config('activity_date') }}

with

{{ lara_days_this_run_cte() }}

evaluated as (

    select * from {{ ref('int_prompt_effective_actions_evaluated') }}
    where {{ lara_in_days_this_run('prompt_date') }}

),

definitions as (

    select * from {{ ref('effective_action_definitions') }}

),

definition_types as (

    select
        definition_name,
        {{ lara_string_agg_sorted('action_type') }} as action_types,
        count(distinct action_type) as action_type_count
    from definitions
    group by definition_name

),

evaluated_units as (

    select
        definition_name,
        breadth_order,
        prompt_date as activity_date,
        surface,
        has_effective_action
    from evaluated

),

{{ lara_rollup(
    'counted',
    rows='evaluated_units',
    day='activity_date',
    fixed=['definition_name', 'breadth_order'],
    surface_groups=true,
    measures=[
        ['assistant_prompt_count', 'count(*)', {'stored_as': 'effective_action_rate_denominator'}],
        ['effective_prompt_count', 'count(case when has_effective_action then 1 end)',
            {'stored_as': 'effective_action_rate_numerator'}],
    ],
) }}

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
        ) }},
        {{ lara_run_started_at() }} as _lara_loaded_at
    from counted
    inner join definition_types
        on counted.definition_name = definition_types.definition_name

)

select * from rated
