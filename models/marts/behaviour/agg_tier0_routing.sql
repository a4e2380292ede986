{#- Tier 0 (planner routing) per day x reporting surface and over the whole
    period: the trigger rate on every prompt, and the misroute,
    missed-retrieval, multi-intent and retrieval-intent rates on the
    labelled sample. -#}
with

prompts as (

    select * from {{ ref('fct_prompts') }}

),

reporting_surfaces as (

    select * from {{ ref('reporting_surfaces') }}

),

reporting_periods as (

    select false as is_period_total
    union all
    select true as is_period_total

),

prompts_by_reporting_grain as (

    select
        case when reporting_periods.is_period_total then null else prompts.prompt_date end as activity_date,
        reporting_periods.is_period_total,
        reporting_surfaces.reporting_surface,
        prompts.is_retrieval_turn,
        prompts.is_tier0_labelled,
        prompts.has_retrieval_intent,
        prompts.is_misrouted,
        prompts.is_missed_retrieval,
        prompts.is_multi_intent
    from prompts
    inner join reporting_surfaces
        on prompts.surface = reporting_surfaces.surface
    cross join reporting_periods

),

counted as (

    select
        activity_date,
        is_period_total,
        reporting_surface as surface,
        count(*) as prompt_count,
        count(case when is_retrieval_turn then 1 end) as retrieval_turn_count,
        count(case when is_tier0_labelled then 1 end) as labelled_prompt_count,
        count(case when is_tier0_labelled and is_retrieval_turn then 1 end) as labelled_retrieval_turn_count,
        count(case when is_misrouted then 1 end) as misrouted_prompt_count,
        count(case when has_retrieval_intent then 1 end) as labelled_intent_count,
        count(case when is_missed_retrieval then 1 end) as missed_retrieval_count,
        count(case when is_multi_intent then 1 end) as multi_intent_count
    from prompts_by_reporting_grain
    group by activity_date, is_period_total, reporting_surface

),

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
        {{ lara_rate_with_counts('retrieval_intent_rate', 'labelled_intent_count', 'labelled_prompt_count') }},
        {{ lara_rate_with_counts('missed_retrieval_prompt_share', 'missed_retrieval_count', 'labelled_prompt_count') }}
    from counted

)

select * from rated
