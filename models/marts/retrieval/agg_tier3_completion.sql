{#- Tier 3 (metrics.md): task completion per day x surface x role of the
    credited retrieval, with every roll-up ('all'), over in-scope retrievals
    (not synthetic, not misrouted); goal rate over their labelled prompts.
    Exclusions are counted.

    Incremental by day (strategy lara_replace_days): a run recomputes the
    days of lara_days_this_run and the period totals (macros/metrics/rollup.sql
    lara_rollup). -#}
{%- set dimensions = [['surface', 'surface'], ['retrieval_role', 'role']] -%}
{{ config(
    materialized='incremental',
    incremental_strategy='lara_replace_days',
    lara_day_column='retrieval_date',
    partition_by=lara_spark_partition_by('retrieval_date'),
    on_schema_change='fail'
) }}


with

{{ lara_days_this_run_cte() }}

{# Every logged retrieval with its scope flags and its Tier facts. #}
scoped as (

    {{ lara_scoped_retrieval_facts(
        [
            'has_retrieval_driven_outcome', 'retrieval_driven_outcome_count', 'cross_session_outcome_count',
            ['is_goal_labelled', 'coalesce(retrieval_facts.is_goal_labelled, false)'], 'goal_achieved',
        ]
    ) }}

),

{{ lara_rollup(
    'aggregated',
    rows='scoped',
    day='retrieval_date',
    dimensions=dimensions,
    measures=[
        ['logged_retrieval_count', 'count(*)'],
        ['synthetic_retrieval_count', lara_count_if('is_synthetic')],
        ['misrouted_retrieval_count', lara_count_if('is_excluded_misrouted')],
        ['in_scope_retrieval_count', lara_count_if('is_in_scope')],
        ['completed_retrieval_count', lara_count_if('is_in_scope and has_retrieval_driven_outcome')],
        ['cross_session_completed_retrieval_count', lara_count_if('is_in_scope and cross_session_outcome_count > 0')],
        ['retrieval_driven_outcome_count',
            'cast(coalesce(sum(case when is_in_scope then retrieval_driven_outcome_count end), 0) as bigint)'],
        ['cross_session_outcome_count',
            'cast(coalesce(sum(case when is_in_scope then cross_session_outcome_count end), 0) as bigint)'],
    ],
    period_measures=[
        ['in_scope_prompt_count', 'count(distinct case when is_in_scope then prompt_id end)'],
        ['goal_labelled_prompt_count', 'count(distinct case when is_in_scope and is_goal_labelled then prompt_id end)'],
        ['goal_achieved_prompt_count',
            'count(distinct case when is_in_scope and is_goal_labelled and goal_achieved then prompt_id end)'],
    ],
) }}

final as (

    select
        grouping_level,
        retrieval_date,
        surface,
        retrieval_role,
        logged_retrieval_count,
        synthetic_retrieval_count,
        misrouted_retrieval_count,
        in_scope_retrieval_count,
        completed_retrieval_count,
        {{ lara_rate_columns('completion_rate', 'completed_retrieval_count', 'in_scope_retrieval_count') }},
        cross_session_completed_retrieval_count,
        {{ lara_rate_columns(
            'cross_session_completion_rate', 'cross_session_completed_retrieval_count', 'in_scope_retrieval_count'
        ) }},
        retrieval_driven_outcome_count,
        cross_session_outcome_count,
        {{ lara_rate_columns(
            'cross_session_outcome_share', 'cross_session_outcome_count', 'retrieval_driven_outcome_count'
        ) }},
        in_scope_prompt_count,
        goal_labelled_prompt_count,
        goal_achieved_prompt_count,
        {{ lara_rate_columns('goal_rate', 'goal_achieved_prompt_count', 'goal_labelled_prompt_count') }},
        {{ lara_run_started_at() }} as _lara_loaded_at
    from aggregated

)

select * from final
