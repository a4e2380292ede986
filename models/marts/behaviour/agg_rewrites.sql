{#- The naive rewrite rate beside its split into search reformulations and
    downstream corrections, per day x reporting surface and over the whole
    period.

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
        is_rewritten,
        rewrite_class,
        rewrite_detection_method
    from prompts

),

{{ lara_rollup(
    'counted',
    rows='prompt_units',
    day='activity_date',
    surface_groups=true,
    measures=[
        ['prompt_count', 'count(*)'],
        ['retrieval_turn_count', 'count(case when is_retrieval_turn then 1 end)'],
        ['rewritten_prompt_count', 'count(case when is_rewritten then 1 end)'],
        ['rewritten_by_prompt_kind_count',
            "count(case when is_rewritten and rewrite_detection_method = 'prompt_kind' then 1 end)"],
        ['rewritten_by_similarity_count',
            "count(case when is_rewritten and rewrite_detection_method = 'similarity' then 1 end)"],
        ['rewritten_retrieval_turn_count', 'count(case when is_retrieval_turn and is_rewritten then 1 end)',
            {'stored_as': 'retrieval_turn_rewrite_rate_numerator'}],
        ['search_reformulation_count', "count(case when rewrite_class = 'search_reformulation' then 1 end)"],
        ['downstream_correction_count', "count(case when rewrite_class = 'downstream_correction' then 1 end)"],
        ['retrieval_turn_downstream_correction_count',
            "count(case when rewrite_class = 'downstream_correction' and is_retrieval_turn then 1 end)"],
    ],
) }}

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
        ) }},
        {{ lara_run_started_at() }} as _lara_loaded_at
    from counted

)

select * from rated
