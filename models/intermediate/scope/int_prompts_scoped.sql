{#- Every prompt (synthetic included) with the scope facts every mart needs:
    synthetic traffic (the prompt's own flag; metrics.md v2: the unit is the
    prompt, so a real prompt in a session that also holds a synthetic one
    stays in), whether its session is synthetic (every prompt of it is),
    surface group,
    retrieval counts, and the resolved Tier 0 label. Goal labels are joined
    where they are used (fct_prompts, fct_retrievals), not here: every
    session-grained model reads this one, and a goal label loaded for a
    session would otherwise make all of them recompute it.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the prompts of lara_sessions_this_run. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

prompts as (

    select * from {{ ref('stg_lara__prompts') }}
    where {{ lara_in_session_events_this_run('session_guid', 'prompted_at') }}

),

retrievals as (

    select
        prompt_id,
        retrieval_role
    from {{ ref('stg_lara__retrievals') }}
    where {{ lara_in_prompts_of('prompts') }}

),

prompt_labels as (

    select * from {{ ref('int_prompt_labels_resolved') }}
    where {{ lara_in_prompts_of('prompts') }}

),

retrieval_counts as (

    select
        prompt_id,
        count(*) as retrieval_count,
        {#- Intent coverage (metrics.md v2, Tier 0): distinct logged roles,
            plus one per retrieval whose role is null. #}
        count(distinct retrieval_role)
        + count(case when retrieval_role is null then 1 end) as retrieval_coverage_count
    from retrievals
    group by prompt_id

),

synthetic_sessions as (

    {{ lara_synthetic_sessions('prompts') }}

),

joined as (

    select
        prompts.prompt_id,
        prompts.session_guid,
        prompts.user_id,
        prompts.surface,
        prompts.surface in ('chat', 'editor_assistant') as is_assistant_surface,
        prompts.prompt_kind,
        prompts.prompt_text,
        prompts.prompted_at,
        cast(prompts.prompted_at as date) as prompt_date,
        prompts.is_synthetic,
        synthetic_sessions.is_synthetic_session,
        coalesce(retrieval_counts.retrieval_count, 0) as retrieval_count,
        coalesce(retrieval_counts.retrieval_count, 0) > 0 as is_retrieval_turn,
        coalesce(retrieval_counts.retrieval_coverage_count, 0) as retrieval_coverage_count,
        prompt_labels.prompt_id is not null as is_tier0_labelled,
        prompt_labels.has_retrieval_intent,
        prompt_labels.retrieval_intent_count,
        prompt_labels.judge as tier0_judge
    from prompts
    left join synthetic_sessions
        on prompts.session_guid = synthetic_sessions.session_guid
    left join retrieval_counts
        on prompts.prompt_id = retrieval_counts.prompt_id
    left join prompt_labels
        on prompts.prompt_id = prompt_labels.prompt_id

),

final as (

    select
        *,
        {#- Tier 0: a retrieval triggered on a prompt labelled without retrieval intent. -#}
        coalesce(is_retrieval_turn and has_retrieval_intent = false, false) as is_misrouted
    from joined

)

{{ lara_stamp_rows('final') }}
