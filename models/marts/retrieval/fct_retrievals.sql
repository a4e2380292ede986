{#- One row per retrieval of non-synthetic traffic: scope, Tier 1 quality,
    Tier 2 flags, Tier 3 counts and the Tier 1 x Tier 2 diagnosis. No free
    text and no user ids. 

    Incremental (strategy lara_replace_sessions, macros/incremental): a run
    recomputes the rows of lara_sessions_this_run only. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

retrievals as (

    {#- `is_synthetic = false`, not `not is_synthetic`: DuckDB estimates an
        equality from the column's distinct count (half the rows) but gives any
        other filter a fixed 20%. With 20% it made this CTE the build side of
        all four joins, nested, and ran out of memory at 20M events. #}
    select * from {{ ref('int_retrievals_scoped') }}
    where is_synthetic = false and {{ lara_in_session_rows_this_run('session_guid') }}

),

{# The retrievals' prompts and goal labels by prompt_id, in any session: a
   retrieval may name a prompt logged in another session, which the run
   need not recompute (a relevance label recomputes only the retrieval's). #}
prompts as (

    select prompt_id
    from {{ ref('int_prompts_scoped') }}
    where {{ lara_in_prompts_of('retrievals') }}

),

goal_labels as (

    select
        prompt_id,
        goal_achieved
    from {{ ref('int_goal_labels_resolved') }}
    where {{ lara_in_prompts_of('retrievals') }}

),

relevance as (

    select * from {{ ref('int_retrieval_relevance') }}
    {%- if is_incremental() %}
    where retrieval_id in (select retrieval_id from retrievals)
    {%- endif %}

),

signals as (

    select * from {{ ref('int_retrieval_signals') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

joined as (

    select
        retrievals.retrieval_id,
        retrievals.prompt_id,
        retrievals.session_guid,
        {{ lara_hash_user_id('retrievals.user_id') }} as user_key,
        retrievals.surface,
        retrievals.is_assistant_surface,
        retrievals.retrieval_role,
        retrievals.retrieved_at,
        retrievals.retrieval_date,
        retrievals.is_misrouted,
        retrievals.is_in_tier_scope,
        retrievals.returned_count,
        relevance.distinct_returned_count,
        retrievals.is_empty,
        coalesce({{ lara_list_length('retrievals.displayed_asset_ids') }}, 0) as displayed_count,
        coalesce(
            {{ lara_list_length('retrievals.displayed_asset_ids') }} > 0,
            retrievals.surface = 'template_search' and retrievals.returned_count > 0
        ) as is_displayed,
        relevance.is_labelled,
        relevance.judged_asset_count,
        relevance.precision_at_1,
        relevance.precision_at_k,
        relevance.dcg_at_k,
        relevance.ideal_dcg_at_k,
        relevance.ndcg_at_k,
        relevance.label_coverage_at_k,
        relevance.ndcg_at_k >= {{ var('tier1_good_ndcg') }} as is_tier1_good,
        signals.click_count,
        signals.has_genuine_positive,
        signals.first_genuine_positive_at,
        signals.has_agent_consumption,
        signals.has_confirmed_agent_consumption,
        signals.first_agent_consumption_at,
        signals.first_use_evidence_at,
        signals.has_observable_failure,
        signals.has_reject_failure,
        signals.has_research_failure,
        signals.has_substitution_failure,
        signals.is_unobserved,
        signals.has_downstream_correction,
        signals.retrieval_driven_outcome_count,
        signals.cross_session_outcome_count,
        signals.retrieval_driven_outcome_count > 0 as has_retrieval_driven_outcome,
        {#- Null when the retrieval's prompt is not logged (yet). -#}
        case when prompts.prompt_id is not null then goal_labels.prompt_id is not null end as is_goal_labelled,
        goal_labels.goal_achieved,
        {{ lara_tier_diagnosis(
            'relevance.ndcg_at_k',
            '(signals.has_genuine_positive or signals.has_agent_consumption)',
            'signals.has_observable_failure'
        ) }} as tier_diagnosis
    from retrievals
    inner join relevance
        on retrievals.retrieval_id = relevance.retrieval_id
    inner join signals
        on retrievals.retrieval_id = signals.retrieval_id
    left join prompts
        on retrievals.prompt_id = prompts.prompt_id
    left join goal_labels
        on retrievals.prompt_id = goal_labels.prompt_id

)

{{ lara_stamp_rows('joined') }}
