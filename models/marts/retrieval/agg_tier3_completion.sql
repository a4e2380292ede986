{#- Tier 3 (metrics.md): task completion per day x surface x role of the
    credited retrieval, with every roll-up ('all'), over in-scope retrievals
    (not synthetic, not misrouted); goal rate over their labelled prompts.
    Exclusions are counted. -#}
{%- set dimensions = [['retrieval_date', 'day'], ['surface', 'surface'], ['retrieval_role', 'role']] -%}

with

{# Every logged retrieval with its scope flags and its Tier facts. #}
scoped as (

    {{ lara_scoped_retrieval_facts(
        [
            'has_retrieval_driven_outcome', 'retrieval_driven_outcome_count', 'cross_session_outcome_count',
            ['is_goal_labelled', 'coalesce(retrieval_facts.is_goal_labelled, false)'], 'goal_achieved',
        ]
    ) }}

),

aggregated as (

    select
        {{ lara_grouping_level(dimensions) }} as grouping_level,
        retrieval_date,
        {{ lara_rolled_up('surface') }} as surface,
        {{ lara_rolled_up('retrieval_role') }} as retrieval_role,
        count(*) as logged_retrieval_count,
        {{ lara_count_if('is_synthetic') }} as synthetic_retrieval_count,
        {{ lara_count_if('is_excluded_misrouted') }} as misrouted_retrieval_count,
        {{ lara_count_if('is_in_scope') }} as in_scope_retrieval_count,
        {{ lara_count_if('is_in_scope and has_retrieval_driven_outcome') }} as completed_retrieval_count,
        {{ lara_count_if('is_in_scope and cross_session_outcome_count > 0') }}
            as cross_session_completed_retrieval_count,
        cast(coalesce(sum(case when is_in_scope then retrieval_driven_outcome_count end), 0) as bigint)
            as retrieval_driven_outcome_count,
        cast(coalesce(sum(case when is_in_scope then cross_session_outcome_count end), 0) as bigint)
            as cross_session_outcome_count,
        count(distinct case when is_in_scope then prompt_id end) as in_scope_prompt_count,
        count(distinct case when is_in_scope and is_goal_labelled then prompt_id end) as goal_labelled_prompt_count,
        count(distinct case when is_in_scope and is_goal_labelled and goal_achieved then prompt_id end)
            as goal_achieved_prompt_count
    from scoped
    group by {{ lara_cube(dimensions | map('first') | list) }}

),

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
        {{ lara_rate_columns('goal_rate', 'goal_achieved_prompt_count', 'goal_labelled_prompt_count') }}
    from aggregated

)

select * from final
