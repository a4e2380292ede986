{#- Latency and tokens per pipeline stage (stage_spans), per day x reporting
    surface x stage and over the whole period, over all prompts and over
    successful tasks (prompts with a retrieval-driven outcome), and the cost
    per successful task. A prompt's cost in a stage is the sum of its spans
    of that stage; `all_stages` sums every stage of the prompt.

    Incremental by day (strategy lara_replace_days): a run recomputes the
    days of lara_days_this_run and the period totals (macros/metrics/rollup.sql
    lara_rollup). The day rows cross only the prompts of those days with the
    stages; the period percentiles read only the costed prompt x stage rows
    (`costed_stage_units`): the only rows with a latency or tokens to rank. -#}
{{ lara_daily_config('activity_date') }}

with

{{ lara_days_this_run_cte() }}

spans as (

    select * from {{ ref('stg_lara__stage_spans') }}

),

{# Read for the day rows and for the period percentiles: inlined, not held
   in memory (lara_inline_cte). #}
prompts as {{ lara_inline_cte() }} (

    select
        prompt_id,
        prompt_date,
        surface,
        is_successful_task
    from {{ ref('fct_prompts') }}

),

stages as (

    select distinct stage from spans
    union all
    select 'all_stages' as stage  -- noqa: RF04

),

prompt_stage_spans as (

    select
        prompt_id,
        stage,
        count(*) as span_count,
        sum(latency_ms) as latency_ms,
        sum(tokens) as tokens
    from spans
    group by prompt_id, stage

),

prompt_all_stage_spans as (

    select
        prompt_id,
        'all_stages' as stage,  -- noqa: RF04
        count(*) as span_count,
        sum(latency_ms) as latency_ms,
        sum(tokens) as tokens
    from spans
    group by prompt_id

),

prompt_costs as (

    select * from prompt_stage_spans
    union all
    select * from prompt_all_stage_spans

),

prompt_stage_units as (

    select
        prompts.prompt_id,
        prompts.prompt_date,
        prompts.surface,
        prompts.is_successful_task,
        prompt_all_stage_spans.prompt_id is not null as is_instrumented,
        stages.stage,
        coalesce(prompt_costs.span_count, 0) as span_count,
        cast(prompt_costs.latency_ms as double) as latency_ms,
        cast(prompt_costs.tokens as double) as tokens
    from prompts
    cross join stages
    left join prompt_all_stage_spans
        on prompts.prompt_id = prompt_all_stage_spans.prompt_id
    left join prompt_costs
        on
            prompts.prompt_id = prompt_costs.prompt_id
            and stages.stage = prompt_costs.stage
    {#- the day rows are computed for the days this run only (lara_rollup,
        whose period totals read costed_stage_units): the other days'
        prompts are not crossed with the stages #}
    where {{ lara_in_days_this_run('prompts.prompt_date') }}

),

stage_units as (

    select
        prompt_date as activity_date,
        surface,
        stage,
        is_successful_task,
        is_instrumented,
        span_count,
        latency_ms,
        tokens,
        case when is_successful_task then latency_ms end as successful_task_latency_ms,
        case when is_successful_task then tokens end as successful_task_tokens
    from prompt_stage_units

),

{# The rows the period percentiles rank: a prompt's cost in each stage it
   has spans of, over the whole period. A prompt x stage without spans has
   no latency or tokens, which percentiles skip, so the period totals read
   these rows only, not every prompt of the history crossed with every
   stage (on the bench's logs, 7% of those rows). #}
costed_stage_units as (

    select
        prompts.surface,
        prompt_costs.stage,
        cast(prompt_costs.latency_ms as double) as latency_ms,
        cast(prompt_costs.tokens as double) as tokens,
        case when prompts.is_successful_task then cast(prompt_costs.latency_ms as double) end
            as successful_task_latency_ms,
        case when prompts.is_successful_task then cast(prompt_costs.tokens as double) end
            as successful_task_tokens
    from prompt_costs
    inner join prompts
        on prompt_costs.prompt_id = prompts.prompt_id

),

{{ lara_rollup(
    'counted',
    rows='stage_units',
    day='activity_date',
    fixed=['stage'],
    surface_groups=true,
    measures=[
        ['prompt_count', 'count(*)'],
        ['instrumented_prompt_count', 'count(case when is_instrumented then 1 end)'],
        ['costed_prompt_count', 'count(case when span_count > 0 then 1 end)'],
        ['span_count', 'cast(sum(span_count) as bigint)'],
        ['successful_task_count', 'count(case when is_successful_task then 1 end)'],
        ['instrumented_successful_task_count', 'count(case when is_successful_task and is_instrumented then 1 end)'],
        ['costed_successful_task_count', 'count(case when is_successful_task and span_count > 0 then 1 end)'],
        ['total_latency_ms', 'sum(latency_ms)', {'type': 'double', 'stored_as': 'mean_latency_ms_numerator'}],
        ['latency_ms_sum_of_squares', 'sum(latency_ms * latency_ms)',
            {'type': 'double', 'stored_as': 'mean_latency_ms_sum_of_squares'}],
        ['total_tokens', 'sum(tokens)', {'type': 'double', 'stored_as': 'mean_tokens_numerator'}],
        ['tokens_sum_of_squares', 'sum(tokens * tokens)',
            {'type': 'double', 'stored_as': 'mean_tokens_sum_of_squares'}],
        ['successful_task_total_latency_ms', 'sum(successful_task_latency_ms)',
            {'type': 'double', 'stored_as': 'successful_task_mean_latency_ms_numerator'}],
        ['successful_task_latency_ms_sum_of_squares', 'sum(successful_task_latency_ms * successful_task_latency_ms)',
            {'type': 'double', 'stored_as': 'successful_task_mean_latency_ms_sum_of_squares'}],
        ['successful_task_total_tokens', 'sum(successful_task_tokens)',
            {'type': 'double', 'stored_as': 'successful_task_mean_tokens_numerator'}],
        ['successful_task_tokens_sum_of_squares', 'sum(successful_task_tokens * successful_task_tokens)',
            {'type': 'double', 'stored_as': 'successful_task_mean_tokens_sum_of_squares'}],
    ],
    period_measures=[
        ['p50_latency_ms', lara_percentile_cont('latency_ms', 0.5)],
        ['p95_latency_ms', lara_percentile_cont('latency_ms', 0.95)],
        ['p50_tokens', lara_percentile_cont('tokens', 0.5)],
        ['p95_tokens', lara_percentile_cont('tokens', 0.95)],
        ['successful_task_p50_latency_ms', lara_percentile_cont('successful_task_latency_ms', 0.5)],
        ['successful_task_p95_latency_ms', lara_percentile_cont('successful_task_latency_ms', 0.95)],
        ['successful_task_p50_tokens', lara_percentile_cont('successful_task_tokens', 0.5)],
        ['successful_task_p95_tokens', lara_percentile_cont('successful_task_tokens', 0.95)],
    ],
    period_rows='costed_stage_units',
) }}

rated as (

    select
        stage,
        activity_date,
        surface,
        is_period_total,
        {{ lara_reporting_grouping_level('is_period_total', 'surface') }} as grouping_level,
        prompt_count,
        instrumented_prompt_count,
        costed_prompt_count,
        span_count,
        successful_task_count,
        instrumented_successful_task_count,
        costed_successful_task_count,
        {{ lara_mean_with_counts(
            'mean_latency_ms', 'total_latency_ms', 'latency_ms_sum_of_squares', 'costed_prompt_count'
        ) }},
        p50_latency_ms,
        p95_latency_ms,
        {{ lara_mean_with_counts('mean_tokens', 'total_tokens', 'tokens_sum_of_squares', 'costed_prompt_count') }},
        p50_tokens,
        p95_tokens,
        {{ lara_mean_with_counts(
            'successful_task_mean_latency_ms',
            'successful_task_total_latency_ms',
            'successful_task_latency_ms_sum_of_squares',
            'costed_successful_task_count'
        ) }},
        successful_task_p50_latency_ms,
        successful_task_p95_latency_ms,
        {{ lara_mean_with_counts(
            'successful_task_mean_tokens',
            'successful_task_total_tokens',
            'successful_task_tokens_sum_of_squares',
            'costed_successful_task_count'
        ) }},
        successful_task_p50_tokens,
        successful_task_p95_tokens,
        total_latency_ms as latency_ms_per_successful_task_numerator,
        instrumented_successful_task_count as latency_ms_per_successful_task_denominator,
        {{ lara_rate('total_latency_ms', 'instrumented_successful_task_count') }} as latency_ms_per_successful_task,
        total_tokens as tokens_per_successful_task_numerator,
        instrumented_successful_task_count as tokens_per_successful_task_denominator,
        {{ lara_rate('total_tokens', 'instrumented_successful_task_count') }} as tokens_per_successful_task,
        {{ lara_run_started_at() }} as _lara_loaded_at
    from counted

)

select * from rated
