{#- The naive rewrite rate beside its split into search reformulations and
    downstream corrections, per day x reporting surface and over the whole
    period. -#}
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
        prompts.is_rewritten,
        prompts.rewrite_class,
        prompts.rewrite_detection_method
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
        count(case when is_rewritten then 1 end) as rewritten_prompt_count,
        count(
            case when is_rewritten and rewrite_detection_method = 'prompt_kind' then 1 end
        ) as rewritten_by_prompt_kind_count,
        count(
            case when is_rewritten and rewrite_detection_method = 'similarity' then 1 end
        ) as rewritten_by_similarity_count,
        count(case when is_retrieval_turn and is_rewritten then 1 end) as rewritten_retrieval_turn_count,
        count(case when rewrite_class = 'search_reformulation' then 1 end) as search_reformulation_count,
        count(case when rewrite_class = 'downstream_correction' then 1 end) as downstream_correction_count,
        count(
            case when rewrite_class = 'downstream_correction' and is_retrieval_turn then 1 end
        ) as retrieval_turn_downstream_correction_count
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
        retrieval_turn_count,
        rewritten_prompt_count,
        rewritten_by_prompt_kind_count,
        rewritten_by_similarity_count,
        search_reformulation_count,
        downstream_correction_count,
        retrieval_turn_downstream_correction_count,
        {{ lara_rate_with_counts('naive_rewrite_rate', 'rewritten_prompt_count', 'prompt_count') }},
        {{ lara_rate_with_counts('search_reformulation_rate', 'search_reformulation_count', 'retrieval_turn_count') }},
        {{ lara_rate_with_counts('downstream_correction_rate', 'downstream_correction_count', 'prompt_count') }},
        {{ lara_rate_with_counts(
            'retrieval_turn_rewrite_rate', 'rewritten_retrieval_turn_count', 'retrieval_turn_count'
        ) }}
    from counted

)

select * from rated
