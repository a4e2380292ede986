{#- The effective-action-rate spread (LARA paper: 7.6% to 40.5% on the same
    Express chat data, depending on which actions count, with neither end's
    definition nor denominator published). Every definition of the seed
    effective_action_definitions on chat and on the whole assistant, whole
    period, narrow to broad, with its action types, numerator, denominator
    and 95% Wilson interval, and the spread between the narrowest and the
    broadest rate of each surface. -#}
with

rates as (

    select * from {{ ref('agg_effective_action_rate') }}
    where is_period_total and surface in ('chat', 'assistant')

),

spread as (

    select
        surface,
        min(effective_action_rate) as lowest_rate,
        max(effective_action_rate) as highest_rate
    from rates
    group by surface

),

compared as (

    select
        rates.surface,
        rates.breadth_order,
        rates.definition_name,
        rates.action_types,
        rates.effective_action_rate_numerator,
        rates.effective_action_rate_denominator,
        rates.effective_action_rate,
        rates.effective_action_rate_ci_low,
        rates.effective_action_rate_ci_high,
        spread.lowest_rate,
        spread.highest_rate,
        spread.highest_rate - spread.lowest_rate as rate_spread
    from rates
    inner join spread
        on rates.surface = spread.surface

)

select * from compared
order by surface, breadth_order
