{#- One row per retrieval (synthetic included, flagged): the Tier 2 flags and
    Tier 3 counts of metrics.md, from the attributions of non-synthetic
    actions. A table, not a view: fct_retrievals, the aggregates and the
    behaviour marts read it.

    Incremental (strategy lara_replace_sessions, macros/incremental): a run
    recomputes the retrievals of the affected sessions, with every
    attribution that credits them (int_action_attributions is complete by
    then) and every attribution of their sessions' actions. -#}
{{ config(
    materialized='incremental',
    incremental_strategy='lara_replace_sessions',
    partition_by=lara_spark_partition_by('_lara_session_date'),
    on_schema_change='fail'
) }}

with

{{ lara_sessions_this_run_cte() }}

retrievals as (

    select
        retrieval_id,
        prompt_id,
        session_guid,
        retrieval_role,
        query_text,
        retrieved_at,
        is_synthetic,
        is_in_tier_scope
    from {{ ref('int_retrievals_scoped') }}
    where {{ lara_in_sessions_this_run('session_guid') }}

),

attributions as (

    select * from {{ ref('int_action_attributions') }}
    where
        not is_action_synthetic
        and (
            {{ lara_in_sessions_this_run('retrieval_session_guid') }}
            or {{ lara_in_sessions_this_run('action_session_guid') }}
        )

),

actions as (

    select
        action_id,
        prompt_id,
        actor,
        action_type,
        consumed_asset_id,
        acted_at
    from {{ ref('int_actions_scoped') }}
    where not is_synthetic and {{ lara_in_sessions_this_run('session_guid') }}

),

retrieval_assets as (

    select
        retrieval_id,
        asset_id
    from {{ ref('int_retrieval_assets') }}
    {%- if is_incremental() %}
    where retrieval_id in (select retrieval_id from retrievals)
    {%- endif %}

),

prompt_sequences as (

    select
        prompt_id,
        session_guid,
        prompt_kind,
        prompted_at,
        next_prompt_id,
        is_rewritten
    from {{ ref('int_prompt_sequences') }}
    where {{ lara_in_sessions_this_run('session_guid') }}

),

{# A prompt is a rewrite when its kind says so or, where its kind is null,
    when the rewrite rule of int_prompt_sequences marks its predecessor as
    rewritten (the same rule the behaviour marts use). #}
rewrite_prompts as (

    select next_prompt_id as prompt_id
    from prompt_sequences
    where is_rewritten
    union
    select prompt_id
    from prompt_sequences
    where prompt_kind = 'rewrite'

),

session_prompts as (

    select
        prompt_sequences.prompt_id,
        prompt_sequences.session_guid,
        prompt_sequences.prompted_at,
        rewrite_prompts.prompt_id is not null as is_rewrite
    from prompt_sequences
    left join rewrite_prompts
        on prompt_sequences.prompt_id = rewrite_prompts.prompt_id

),

{# GPR, ACR, attributed rejects, user edits of returned assets, clicks and outcomes. #}
attributed_evidence as (

    select
        retrieval_id,
        min(
            case
                when
                    actor = 'user'
                    and action_type in ('select', 'place', 'edit', 'follow_up', 'export', 'share', 'download')
                    then acted_at
            end
        ) as first_genuine_positive_at,
        min(
            case
                when
                    actor = 'agent'
                    and action_type <> 'reject_result'
                    and action_prompt_id = retrieval_prompt_id
                    and consumed_rank is not null
                    then acted_at
            end
        ) as first_agent_consumption_at,
        max(case when actor = 'user' and action_type = 'reject_result' then 1 else 0 end) = 1
            as has_attributed_reject,
        max(case when actor = 'user' and action_type = 'edit' and consumed_rank is not null then 1 else 0 end) = 1
            as has_user_asset_edit,
        cast(sum(case when actor = 'user' and action_type = 'click' then 1 else 0 end) as bigint) as click_count,
        cast(sum(case when is_retrieval_driven_outcome then 1 else 0 end) as bigint)
            as retrieval_driven_outcome_count,
        cast(sum(case when is_retrieval_driven_outcome and is_cross_session then 1 else 0 end) as bigint)
            as cross_session_outcome_count
    from attributions
    group by retrieval_id

),

{# ORF (a), second part: a user reject with no attribution but a prompt
    counts for the latest retrieval of that prompt at or before it. #}
attributed_action_ids as (

    select distinct action_id
    from attributions

),

unattributed_rejects as (

    select
        actions.action_id,
        actions.prompt_id,
        actions.acted_at
    from actions
    left join attributed_action_ids
        on actions.action_id = attributed_action_ids.action_id
    where
        actions.actor = 'user'
        and actions.action_type = 'reject_result'
        and actions.prompt_id is not null
        and attributed_action_ids.action_id is null

),

prompt_reject_candidates as (

    select
        unattributed_rejects.action_id,
        retrievals.retrieval_id,
        row_number() over (
            partition by unattributed_rejects.action_id
            order by retrievals.retrieved_at desc, retrievals.retrieval_id desc
        ) as candidate_rank
    from unattributed_rejects
    inner join retrievals
        on
            unattributed_rejects.prompt_id = retrievals.prompt_id
            and unattributed_rejects.acted_at >= retrievals.retrieved_at

),

prompt_rejects as (

    select distinct retrieval_id
    from prompt_reject_candidates
    where candidate_rank = 1

),

{# ORF (c): for the configured roles, an agent place or edit in the same
    prompt, at or after the retrieval, of an asset not in its returned list. #}
agent_asset_uses as (

    select
        action_id,
        prompt_id,
        consumed_asset_id,
        acted_at
    from actions
    where
        actor = 'agent'
        and action_type in ('place', 'edit')
        and consumed_asset_id is not null
        and prompt_id is not null

),

substitution_uses as (

    select
        retrievals.retrieval_id,
        agent_asset_uses.action_id
    from retrievals
    inner join agent_asset_uses
        on
            retrievals.prompt_id = agent_asset_uses.prompt_id
            and retrievals.retrieved_at <= agent_asset_uses.acted_at
    left join retrieval_assets
        on
            retrievals.retrieval_id = retrieval_assets.retrieval_id
            and agent_asset_uses.consumed_asset_id = retrieval_assets.asset_id
    where
        retrievals.retrieval_role in {{ lara_quoted_list(var('orf_substitution_roles')) }}
        and retrieval_assets.asset_id is null

),

substitutions as (

    select distinct retrieval_id
    from substitution_uses

),

evidence as (

    select
        retrievals.retrieval_id,
        retrievals.prompt_id,
        retrievals.session_guid,
        retrievals.query_text,
        retrievals.retrieved_at,
        attributed_evidence.first_genuine_positive_at,
        attributed_evidence.first_agent_consumption_at,
        case
            when attributed_evidence.first_agent_consumption_at is null
                then attributed_evidence.first_genuine_positive_at
            when attributed_evidence.first_genuine_positive_at is null
                then attributed_evidence.first_agent_consumption_at
            when attributed_evidence.first_genuine_positive_at <= attributed_evidence.first_agent_consumption_at
                then attributed_evidence.first_genuine_positive_at
            else attributed_evidence.first_agent_consumption_at
        end as first_use_evidence_at
    from retrievals
    left join attributed_evidence
        on retrievals.retrieval_id = attributed_evidence.retrieval_id

),

later_retrievals as (

    select
        retrievals.retrieval_id,
        retrievals.prompt_id,
        retrievals.session_guid,
        retrievals.query_text,
        retrievals.retrieved_at,
        coalesce(session_prompts.is_rewrite, false) as is_rewrite_prompt
    from retrievals
    left join session_prompts
        on retrievals.prompt_id = session_prompts.prompt_id

),

{# ORF (b): a later retrieval of the session within the window whose prompt
    is a rewrite (of another prompt) or whose query is similar, while this
    retrieval had no GPR/ACR evidence before it. #}
research_pairs as (

    select
        evidence.retrieval_id,
        later_retrievals.retrieval_id as later_retrieval_id,
        later_retrievals.retrieved_at as later_retrieved_at
    from evidence
    inner join later_retrievals
        on
            evidence.session_guid = later_retrievals.session_guid
            and evidence.retrieved_at < later_retrievals.retrieved_at
            and {{ lara_seconds_between('evidence.retrieved_at', 'later_retrievals.retrieved_at') }}
            <= {{ var('research_window_s') }}
    where
        (
            (later_retrievals.is_rewrite_prompt and later_retrievals.prompt_id <> evidence.prompt_id)
            or coalesce(
                {{ lara_token_jaccard('evidence.query_text', 'later_retrievals.query_text') }}
                >= {{ var('research_similarity_min') }},
                false
            )
        )
        and (
            evidence.first_use_evidence_at is null
            or evidence.first_use_evidence_at >= later_retrievals.retrieved_at
        )

),

researches as (

    select
        retrieval_id,
        min(later_retrieved_at) as first_research_at
    from research_pairs
    group by retrieval_id

),

{# Downstream correction: the session's first prompt after the first use
    evidence is a rewrite. #}
prompts_after_evidence as (

    select
        evidence.retrieval_id,
        session_prompts.is_rewrite,
        row_number() over (
            partition by evidence.retrieval_id
            order by session_prompts.prompted_at, session_prompts.prompt_id
        ) as prompt_order
    from evidence
    inner join session_prompts
        on
            evidence.session_guid = session_prompts.session_guid
            and evidence.first_use_evidence_at < session_prompts.prompted_at

),

rewrites_after_evidence as (

    select retrieval_id
    from prompts_after_evidence
    where prompt_order = 1 and is_rewrite

),

flagged as (

    select
        retrievals.retrieval_id,
        retrievals.session_guid,
        retrievals.is_synthetic,
        retrievals.is_in_tier_scope,
        evidence.first_genuine_positive_at is not null as has_genuine_positive,
        evidence.first_genuine_positive_at,
        evidence.first_agent_consumption_at is not null as has_agent_consumption,
        evidence.first_agent_consumption_at,
        evidence.first_use_evidence_at,
        coalesce(attributed_evidence.has_attributed_reject, false) as has_attributed_reject,
        prompt_rejects.retrieval_id is not null as has_prompt_reject,
        coalesce(attributed_evidence.has_attributed_reject, false)
        or prompt_rejects.retrieval_id is not null as has_reject_failure,
        researches.retrieval_id is not null as has_research_failure,
        researches.first_research_at,
        substitutions.retrieval_id is not null as has_substitution_failure,
        rewrites_after_evidence.retrieval_id is not null as has_rewrite_after_evidence,
        coalesce(attributed_evidence.has_user_asset_edit, false) as has_user_asset_edit,
        coalesce(attributed_evidence.click_count, 0) as click_count,
        coalesce(attributed_evidence.retrieval_driven_outcome_count, 0) as retrieval_driven_outcome_count,
        coalesce(attributed_evidence.cross_session_outcome_count, 0) as cross_session_outcome_count
    from retrievals
    inner join evidence
        on retrievals.retrieval_id = evidence.retrieval_id
    left join attributed_evidence
        on retrievals.retrieval_id = attributed_evidence.retrieval_id
    left join prompt_rejects
        on retrievals.retrieval_id = prompt_rejects.retrieval_id
    left join researches
        on retrievals.retrieval_id = researches.retrieval_id
    left join substitutions
        on retrievals.retrieval_id = substitutions.retrieval_id
    left join rewrites_after_evidence
        on retrievals.retrieval_id = rewrites_after_evidence.retrieval_id

),

final as (

    select
        retrieval_id,
        has_genuine_positive,
        first_genuine_positive_at,
        has_agent_consumption,
        first_agent_consumption_at,
        first_use_evidence_at,
        has_reject_failure or has_research_failure or has_substitution_failure as has_observable_failure,
        has_reject_failure,
        has_attributed_reject,
        has_prompt_reject,
        has_research_failure,
        first_research_at,
        has_substitution_failure,
        not has_genuine_positive
        and not has_agent_consumption
        and not has_reject_failure
        and not has_research_failure
        and not has_substitution_failure as is_unobserved,
        has_rewrite_after_evidence or has_user_asset_edit as has_downstream_correction,
        has_rewrite_after_evidence,
        has_user_asset_edit,
        click_count,
        retrieval_driven_outcome_count,
        cross_session_outcome_count,
        is_synthetic,
        is_in_tier_scope,
        session_guid
    from flagged

)

{{ lara_stamp_rows('final') }}
