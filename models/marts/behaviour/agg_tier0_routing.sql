{#- Tier 0 (planner routing) per day x reporting surface and over the whole
    period: the trigger rate on every prompt, and the misroute,
    missed-retrieval, multi-intent, intent-coverage (v2) and
    retrieval-intent rates on the labelled sample.

    Incremental by day (strategy lara_replace_days): a run recomputes the
    days of lara_days_this_run and the period totals (macros/metrics/rollup.sql
    lara_rollup). -#}
{{ lara_daily_config('activity_date') }}

with

{{ lara_days_this_run_cte() }}

prompts as (

    select * from {{ ref('fct_prompts') }}
    where {{ lara_in_days_this_run('prompt_date') }}

),

prompt_units as (

    select
        prompt_date as activity_date,
        surface,
        is_retrieval_turn,
        is_tier0_labelled,
        has_retrieval_intent,
        is_misrouted,
        is_missed_retrieval,
        is_multi_intent,
        is_intent_covered
    from prompts

),

{{ lara_rollup(
    'counted',
    rows='prompt_units',
    day='activity_date',
    surface_groups=true,
    measures=[
        ['prompt_count', 'count(*)'],
        ['retrieval_turn_count', 'count(case when is_retrieval_turn then 1 end)',
            {'stored_as': 'trigger_rate_numerator'}],
        ['labelled_prompt_count', 'count(case when is_tier0_labelled then 1 end)'],
        ['labelled_retrieval_turn_count', 'count(case when is_tier0_labelled and is_retrieval_turn then 1 end)',
            {'stored_as': 'misroute_rate_denominator'}],
        ['misrouted_prompt_count', 'count(case when is_misrouted then 1 end)',
            {'stored_as': 'misroute_rate_numerator'}],
        ['labelled_intent_count', 'count(case when has_retrieval_intent then 1 end)',
            {'stored_as': 'missed_retrieval_rate_denominator'}],
        ['missed_retrieval_count', 'count(case when is_missed_retrieval then 1 end)',
            {'stored_as': 'missed_retrieval_rate_numerator'}],
        ['multi_intent_count', 'count(case when is_multi_intent then 1 end)',
            {'stored_as': 'multi_intent_rate_numerator'}],
        ['intent_covered_count', 'count(case when is_intent_covered then 1 end)',
            {'stored_as': 'intent_coverage_rate_numerator'}],
    ],
) }}

rated as (

    select
        activity_date,
        surface,
        is_period_total,
        {{ lara_reporting_grouping_level('is_period_total', 'surface') }} as grouping_level,
        prompt_count,
        labelled_prompt_count,
        {{ lara_rate_with_counts('trigger_rate', 'retrieval_turn_count', 'prompt_count') }},
        {{ lara_rate_with_counts('misroute_rate', 'misrouted_prompt_count', 'labelled_retrieval_turn_count') }},
        {{ lara_rate_with_counts('missed_retrieval_rate', 'missed_retrieval_count', 'labelled_intent_count') }},
        {{ lara_rate_with_counts('multi_intent_rate', 'multi_intent_count', 'labelled_prompt_count') }},
        {{ lara_rate_with_counts('intent_coverage_rate', 'intent_covered_count', 'multi_intent_count') }},
        {{ lara_rate_with_counts('retrieval_intent_rate', 'labelled_intent_count', 'labelled_prompt_count') }},
        {{ lara_rate_with_counts('missed_retrieval_prompt_share', 'missed_retrieval_count', 'labelled_prompt_count') }},
        {{ lara_run_started_at() }} as _lara_loaded_at
    from counted

)

select * from rated
