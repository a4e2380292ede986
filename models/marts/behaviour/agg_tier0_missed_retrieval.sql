{#- The missed-retrieval estimate (metrics.md v2, "Added in v2") per day x
    reporting surface and over the whole period: the labelled rates, as
    drawn and weighted by inverse inclusion probability where a prompt-label
    design is logged (`lara label-sample --unit prompts`), beside the rough
    unlabelled estimate the LARA paper contrasts them with (the reference
    surface's trigger rate minus this surface's: 10.7% chat vs 0.31%
    assistant-wide in the paper). Definitions and decisions:
    _behaviour__models.yml.

    Incremental by day (strategy lara_replace_days), as agg_tier0_routing:
    a run recomputes the days of lara_days_this_run (a newly loaded label
    or design row recomputes its prompt's session, so its day) and the
    period totals from the stored day sums. -#}
{{ lara_daily_config('activity_date') }}

{#- a configured value: quoted by the one literal helper -#}
{%- set reference_surface = lara_sql_string(var('missed_retrieval_reference_surface', 'chat')) %}

with

{{ lara_days_this_run_cte() }}

prompts as (

    select * from {{ ref('fct_prompts') }}
    where {{ lara_in_days_this_run('prompt_date') }}

),

{# Weighted units: labelled prompts with a design row; w = 1 / inclusion
    probability, 0 elsewhere (so every weighted sum below is over them). #}
prompt_units as (

    select
        prompt_date as activity_date,
        surface,
        is_retrieval_turn,
        is_tier0_labelled,
        has_retrieval_intent,
        is_missed_retrieval,
        is_misrouted,
        coalesce(is_tier0_labelled and tier0_inclusion_probability is not null, false) as is_weighted,
        case
            when is_tier0_labelled and tier0_inclusion_probability is not null
                then 1.0 / tier0_inclusion_probability
            else 0.0
        end as design_weight
    from prompts

),

{{ lara_rollup(
    'counted',
    rows='prompt_units',
    day='activity_date',
    surface_groups=true,
    measures=[
        ['prompt_count', 'count(*)', {'stored_as': 'trigger_rate_denominator'}],
        ['retrieval_turn_count', lara_count_if('is_retrieval_turn'), {'stored_as': 'trigger_rate_numerator'}],
        ['labelled_prompt_count', lara_count_if('is_tier0_labelled')],
        ['labelled_intent_count', lara_count_if('is_tier0_labelled and has_retrieval_intent'),
            {'stored_as': 'missed_retrieval_rate_denominator'}],
        ['missed_retrieval_count', lara_count_if('is_missed_retrieval'),
            {'stored_as': 'missed_retrieval_rate_numerator'}],
        ['weighted_prompt_count', lara_count_if('is_weighted')],
        ['labelled_without_design_count', lara_count_if('is_tier0_labelled and not is_weighted')],
        ['design_weight_sum', 'sum(design_weight)', {'type': 'double'}],
        ['design_weight_sum_of_squares', 'sum(design_weight * design_weight)', {'type': 'double'}],
        ['weighted_intent_sum', 'sum(case when has_retrieval_intent then design_weight else 0.0 end)',
            {'type': 'double'}],
        ['weighted_intent_sum_of_squares',
            'sum(case when has_retrieval_intent then design_weight * design_weight else 0.0 end)',
            {'type': 'double'}],
        ['weighted_missed_retrieval_sum', 'sum(case when is_missed_retrieval then design_weight else 0.0 end)',
            {'type': 'double'}],
    ],
) }}

{# The rough estimate's reference: the same day's (or period's) trigger rate
    on the reference surface. #}
reference as (

    select
        activity_date,
        is_period_total,
        retrieval_turn_count as reference_retrieval_turn_count,
        prompt_count as reference_prompt_count
    from counted
    where surface = {{ reference_surface }}

),

rated as (

    select
        counted.activity_date,
        counted.surface,
        counted.is_period_total,
        {{ lara_reporting_grouping_level('counted.is_period_total', 'counted.surface') }} as grouping_level,
        {{ lara_rate_with_counts('trigger_rate', 'counted.retrieval_turn_count', 'counted.prompt_count') }},
        {{ reference_surface }} as reference_surface,
        {{ lara_rate('reference.reference_retrieval_turn_count', 'reference.reference_prompt_count') }}
            as reference_trigger_rate,
        case
            when counted.surface <> {{ reference_surface }}
                then
                    {{ lara_rate('reference.reference_retrieval_turn_count', 'reference.reference_prompt_count') }}
                    - {{ lara_rate('counted.retrieval_turn_count', 'counted.prompt_count') }}
        end as rough_missed_retrieval_share_estimate,
        case
            when counted.surface = {{ reference_surface }} then 'reference_surface'
            when coalesce(reference.reference_prompt_count, 0) = 0 then 'no_reference_prompts'
            when counted.prompt_count = 0 then 'no_prompts'
        end as rough_estimate_null_reason,
        counted.labelled_prompt_count,
        {{ lara_rate_with_counts(
            'missed_retrieval_rate', 'counted.missed_retrieval_count', 'counted.labelled_intent_count'
        ) }},
        {{ lara_rate_with_counts(
            'missed_retrieval_prompt_share', 'counted.missed_retrieval_count', 'counted.labelled_prompt_count'
        ) }},
        {{ lara_rate_with_counts(
            'retrieval_intent_rate', 'counted.labelled_intent_count', 'counted.labelled_prompt_count'
        ) }},
        counted.weighted_prompt_count,
        counted.labelled_without_design_count,
        counted.design_weight_sum,
        counted.design_weight_sum_of_squares,
        counted.weighted_intent_sum,
        counted.weighted_intent_sum_of_squares,
        counted.weighted_missed_retrieval_sum,
        {{ lara_weighted_rate_columns(
            'weighted_missed_retrieval_rate',
            'counted.weighted_missed_retrieval_sum',
            'counted.weighted_intent_sum',
            'counted.weighted_intent_sum_of_squares'
        ) }},
        {{ lara_weighted_rate_columns(
            'weighted_missed_retrieval_prompt_share',
            'counted.weighted_missed_retrieval_sum',
            'counted.design_weight_sum',
            'counted.design_weight_sum_of_squares'
        ) }},
        {{ lara_weighted_rate_columns(
            'weighted_retrieval_intent_rate',
            'counted.weighted_intent_sum',
            'counted.design_weight_sum',
            'counted.design_weight_sum_of_squares'
        ) }},
        case
            when counted.labelled_prompt_count = 0 then 'no_labelled_prompts'
            when counted.weighted_prompt_count = 0 then 'no_design_rows'
        end as weighted_null_reason,
        {{ lara_run_started_at() }} as _lara_loaded_at
    from counted
    left join reference
        on
            counted.is_period_total = reference.is_period_total
            and counted.activity_date is not distinct from reference.activity_date

)

select * from rated
