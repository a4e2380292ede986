{#- One row per non-synthetic prompt: Tier 0 routing against its label, the
    rewrite rule and the rewrite split, and whether a retrieval of it drove
    an outcome. No free text and no user ids. 

    Incremental (strategy lara_replace_sessions, macros/incremental): a run
    recomputes the rows of lara_sessions_this_run only. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

{# Read several times (the joins and the filters below): inlined, not held
   in memory with every column (lara_inline_cte); `is_synthetic = false` is a filter
   DuckDB can estimate (see fct_retrievals). #}
prompts as {{ lara_inline_cte() }} (

    select * from {{ ref('int_prompts_scoped') }}
    where is_synthetic = false and {{ lara_in_session_rows_this_run('session_guid') }}

),

prompt_sequences as (

    select * from {{ ref('int_prompt_sequences') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

{# The retrievals of these prompts, in any session: a retrieval may name a
   prompt logged in another session, and a run may recompute the prompt's
   session without that retrieval's (an outcome credited to another
   retrieval of the prompt brings the prompt's session only:
   lara_lineage_closure_select). So the prompt-level evidence, signals and
   outcome events below are read by prompt, not by session. #}
retrievals as (

    select
        prompt_id,
        retrieval_id
    from {{ ref('int_retrievals_scoped') }}
    where {{ lara_in_prompts_of('prompts') }}

),

goal_labels as (

    select
        prompt_id,
        goal_achieved
    from {{ ref('int_goal_labels_resolved') }}
    where {{ lara_in_sessions_this_run('session_guid') }}

),

retrieval_signals as (

    select
        retrieval_id,
        first_use_evidence_at,
        retrieval_driven_outcome_count
    from {{ ref('int_retrieval_signals') }}
    {%- if is_incremental() %}
    where retrieval_id in (select retrievals.retrieval_id from retrievals)
    {%- endif %}

),

prompt_evidence as (

    select
        retrievals.prompt_id,
        min(retrieval_signals.first_use_evidence_at) as first_use_evidence_at,
        cast(coalesce(sum(retrieval_signals.retrieval_driven_outcome_count), 0) as bigint)
            as retrieval_driven_outcome_count
    from retrievals
    left join retrieval_signals
        on retrievals.retrieval_id = retrieval_signals.retrieval_id
    group by retrievals.prompt_id

),

{# Distinct outcome events credited to the prompt's retrievals (metrics.md
   v2: one export credited to two of its retrievals is one event, two
   credits). #}
prompt_outcome_events as (

    select
        retrieval_prompt_id as prompt_id,
        count(distinct action_id) as retrieval_driven_outcome_event_count
    from {{ ref('int_action_attributions') }}
    where
        is_retrieval_driven_outcome
        and not is_action_synthetic
        and {{ lara_in_prompts_of('prompts', 'retrieval_prompt_id') }}
    group by retrieval_prompt_id

),

{# The Tier 0 labelling design (metrics.md v2, missed-retrieval estimate):
   the prompt's latest design row with a positive inclusion probability
   (`lara label-sample --unit prompts`); a zero probability cannot weight. #}
ranked_designs as (

    select
        prompt_id,
        stratum,
        inclusion_probability,
        row_number() over (partition by prompt_id order by sampled_at desc) as design_rank
    from {{ ref('stg_lara__prompt_label_sample_design') }}
    where
        inclusion_probability > 0
        and prompt_id in (select prompts.prompt_id from prompts)

),

prompt_designs as (

    select
        prompt_id,
        stratum,
        inclusion_probability
    from ranked_designs
    where design_rank = 1

),

joined as (

    select
        prompts.prompt_id,
        prompts.session_guid,
        {{ lara_hash_user_id('prompts.user_id') }} as user_key,
        prompts.surface,
        prompts.is_assistant_surface,
        prompts.prompt_kind,
        prompts.prompted_at,
        prompts.prompt_date,
        prompt_sequences.prompt_sequence,
        prompts.is_retrieval_turn,
        prompts.retrieval_count,
        prompts.retrieval_coverage_count,
        prompts.is_tier0_labelled,
        prompts.has_retrieval_intent,
        prompts.retrieval_intent_count,
        prompts.is_misrouted,
        prompt_designs.stratum as tier0_design_stratum,
        prompt_designs.inclusion_probability as tier0_inclusion_probability,
        prompt_sequences.is_rewritten,
        prompt_sequences.rewrite_detection_method,
        prompt_sequences.next_prompt_id,
        prompt_sequences.next_prompted_at,
        prompt_evidence.first_use_evidence_at,
        coalesce(prompt_evidence.retrieval_driven_outcome_count, 0) as retrieval_driven_outcome_count,
        cast(
            coalesce(prompt_outcome_events.retrieval_driven_outcome_event_count, 0) as bigint
        ) as retrieval_driven_outcome_event_count,
        goal_labels.prompt_id is not null as is_goal_labelled,
        goal_labels.goal_achieved
    from prompts
    inner join prompt_sequences
        on prompts.prompt_id = prompt_sequences.prompt_id
    left join prompt_evidence
        on prompts.prompt_id = prompt_evidence.prompt_id
    left join prompt_outcome_events
        on prompts.prompt_id = prompt_outcome_events.prompt_id
    left join prompt_designs
        on prompts.prompt_id = prompt_designs.prompt_id
    left join goal_labels
        on prompts.prompt_id = goal_labels.prompt_id

),

classified as (

    select
        prompt_id,
        session_guid,
        user_key,
        surface,
        is_assistant_surface,
        prompt_kind,
        prompted_at,
        prompt_date,
        prompt_sequence,
        is_retrieval_turn,
        retrieval_count,
        retrieval_coverage_count,
        is_tier0_labelled,
        has_retrieval_intent,
        retrieval_intent_count,
        is_misrouted,
        case
            when is_tier0_labelled then has_retrieval_intent and not is_retrieval_turn
        end as is_missed_retrieval,
        case
            when is_tier0_labelled then retrieval_intent_count >= 2
        end as is_multi_intent,
        {#- Intent coverage (metrics.md v2, Tier 0): on labelled multi-intent
            prompts, the retrievals cover at least the labelled intent count. #}
        case
            when is_tier0_labelled and retrieval_intent_count >= 2
                then retrieval_coverage_count >= retrieval_intent_count
        end as is_intent_covered,
        tier0_design_stratum,
        tier0_inclusion_probability,
        is_rewritten,
        rewrite_detection_method,
        next_prompt_id,
        next_prompted_at,
        first_use_evidence_at,
        coalesce(first_use_evidence_at < next_prompted_at, false) as has_use_evidence_before_next_prompt,
        case
            when not is_rewritten then null
            when
                is_retrieval_turn
                and not coalesce(first_use_evidence_at < next_prompted_at, false)
                then 'search_reformulation'
            else 'downstream_correction'
        end as rewrite_class,
        retrieval_driven_outcome_count,
        retrieval_driven_outcome_event_count,
        retrieval_driven_outcome_count > 0 as is_successful_task,
        is_goal_labelled,
        goal_achieved
    from joined

)

{{ lara_stamp_rows('classified') }}
