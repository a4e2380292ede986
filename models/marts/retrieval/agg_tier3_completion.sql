{#- Tier 3 (metrics.md): task completion per day x surface x role of the
    credited retrieval, with every roll-up ('all'), over in-scope retrievals
    (not synthetic, not misrouted); goal rate over their labelled prompts.
    Exclusions are counted.

    Outcome events vs credits (metrics.md v2, Tier 3 counts): one export
    credited to three retrievals is one event and three credits. Credits
    add up over retrievals and days; events are counted distinct on every
    row (a period total counts an event credited on two days once), from
    the credit rows (one per in-scope retrieval x retrieval-driven outcome
    event), in a second roll-up (`outcome_credits`) joined on the row keys.

    Incremental by day (strategy lara_replace_days): a run recomputes the
    days of lara_days_this_run and the period totals (macros/metrics/rollup.sql
    lara_rollup). The period totals read every day, so they read only what
    they count: the in-scope rows of fct_retrievals (`in_scope_retrievals`,
    one table, no join), not every logged retrieval. -#}
{%- set dimensions = [['surface', 'surface'], ['retrieval_role', 'role']] -%}
{{ lara_daily_config('retrieval_date') }}


with

{{ lara_days_this_run_cte() }}

{# Every logged retrieval with its scope flags and its Tier facts: the
   day rows' units. Inlined, not held in memory (lara_inline_cte). #}
scoped as {{ lara_inline_cte() }} (

    {{ lara_scoped_retrieval_facts(
        [
            'has_retrieval_driven_outcome', 'retrieval_driven_outcome_count', 'cross_session_outcome_count',
            ['is_goal_labelled', 'coalesce(retrieval_facts.is_goal_labelled, false)'], 'goal_achieved',
        ]
    ) }}

),

{# The in-scope retrievals (fct_retrievals holds every non-synthetic
   retrieval with its day, surface, role and prompt as int_retrievals_scoped
   has them): the rows the credits and the period totals of the prompt counts
   read. is_in_scope is true on every row, so the measures' expressions read
   the same here as over `scoped`. Read twice: inlined. #}
in_scope_retrievals as {{ lara_inline_cte() }} (

    select
        retrieval_id,
        prompt_id,
        retrieval_date,
        surface,
        retrieval_role,
        true as is_in_scope,
        coalesce(is_goal_labelled, false) as is_goal_labelled,
        goal_achieved
    from {{ ref('fct_retrievals') }}
    where is_in_tier_scope

),

{# One row per credit: an in-scope retrieval x a retrieval-driven outcome
   event credited to it (the rows retrieval_driven_outcome_count counts). #}
credits as (

    select
        in_scope_retrievals.retrieval_date,
        in_scope_retrievals.surface,
        in_scope_retrievals.retrieval_role,
        attributions.action_id,
        attributions.is_cross_session
    from in_scope_retrievals
    inner join {{ ref('int_action_attributions') }} as attributions
        on in_scope_retrievals.retrieval_id = attributions.retrieval_id
    where
        attributions.is_retrieval_driven_outcome
        and not attributions.is_action_synthetic

),

{{ lara_rollup(
    'outcome_credits',
    rows='credits',
    day='retrieval_date',
    dimensions=dimensions,
    measures=[
        ['retrieval_driven_outcome_credit_count', 'count(*)'],
        ['cross_session_outcome_credit_count', lara_count_if('is_cross_session')],
    ],
    period_measures=[
        ['retrieval_driven_outcome_event_count', 'count(distinct action_id)'],
        ['cross_session_outcome_event_count', 'count(distinct case when is_cross_session then action_id end)'],
    ],
) }}

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
        ['in_scope_prompt_count', 'count(distinct case when is_in_scope then prompt_id end)', {'empty': 0}],
        ['goal_labelled_prompt_count',
            'count(distinct case when is_in_scope and is_goal_labelled then prompt_id end)', {'empty': 0}],
        ['goal_achieved_prompt_count',
            'count(distinct case when is_in_scope and is_goal_labelled and goal_achieved then prompt_id end)',
            {'empty': 0}],
    ],
    period_rows='in_scope_retrievals',
) }}

with_outcome_events as (

    select
        aggregated.*,
        coalesce(outcome_credits.retrieval_driven_outcome_event_count, 0) as retrieval_driven_outcome_event_count,
        coalesce(outcome_credits.retrieval_driven_outcome_credit_count, 0) as retrieval_driven_outcome_credit_count,
        coalesce(outcome_credits.cross_session_outcome_event_count, 0) as cross_session_outcome_event_count,
        coalesce(outcome_credits.cross_session_outcome_credit_count, 0) as cross_session_outcome_credit_count
    from aggregated
    left join outcome_credits
        on
            aggregated.grouping_level = outcome_credits.grouping_level
            and coalesce(aggregated.retrieval_date, cast('1900-01-01' as date))
            = coalesce(outcome_credits.retrieval_date, cast('1900-01-01' as date))
            and aggregated.surface = outcome_credits.surface
            and aggregated.retrieval_role = outcome_credits.retrieval_role

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
        retrieval_driven_outcome_event_count,
        retrieval_driven_outcome_credit_count,
        cross_session_outcome_event_count,
        cross_session_outcome_credit_count,
        in_scope_prompt_count,
        goal_labelled_prompt_count,
        goal_achieved_prompt_count,
        {{ lara_rate_columns('goal_rate', 'goal_achieved_prompt_count', 'goal_labelled_prompt_count') }},
        {{ lara_run_started_at() }} as _lara_loaded_at
    from with_outcome_events

)

select * from final
