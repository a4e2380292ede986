{#- One row per retrieval (synthetic ones included): ORF cause (a) of
    ../shared/spec/metrics.md, Tier 2: "a user `reject_result` attributed to
    it; a reject that no rule 1-4 attributes but that has a `prompt_id`
    counts for the latest retrieval of that prompt at or before it (a Tier 2
    rule only, not an attribution method)".

    Reading: attributed = by any method (temporal included), from the
    attributions of non-synthetic actions. The prompt fallback takes only
    non-synthetic user rejects with no attribution row at all (an attributed
    reject never also falls back to its prompt) and credits the one latest
    retrieval of the prompt with retrieved_at "at or before" the reject
    (the same instant counts; ties at one instant go to the greatest
    retrieval_id). A reject with neither lineage nor prompt counts for
    nothing.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the retrievals of lara_sessions_this_run, with the
    attributions crediting them, and for the prompt fallback the rejects
    naming their prompts and every retrieval of those prompts, in any
    session (a reject or retrieval may name a prompt of another session;
    the lineage closure brings the sessions of the retrievals of a prompt
    a new action names). -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

retrievals as (

    select
        retrieval_id,
        prompt_id,
        session_guid,
        retrieved_at
    from {{ ref('int_retrievals_scoped') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

attributions as (

    select
        action_id,
        retrieval_id,
        actor,
        action_type
    from {{ ref('int_action_attributions') }}
    where
        not is_action_synthetic
        and (
            {{ lara_in_sessions_this_run('retrieval_session_guid') }}
            or {{ lara_in_sessions_this_run('action_session_guid') }}
        )

),

user_rejects as (

    select
        action_id,
        prompt_id,
        acted_at
    from {{ ref('int_actions_scoped') }}
    where
        not is_synthetic
        and actor = 'user'
        and action_type = 'reject_result'
        and prompt_id is not null
        and {{ lara_in_prompts_of('retrievals') }}

),

{# Every retrieval of those prompts: the fallback credits the latest. #}
prompt_retrievals as (

    select
        retrieval_id,
        prompt_id,
        retrieved_at
    from {{ ref('int_retrievals_scoped') }}
    where {{ lara_in_prompts_of('retrievals') }}

),

attributed_rejects as (

    select distinct retrieval_id
    from attributions
    where actor = 'user' and action_type = 'reject_result'

),

{# Whether those rejects have an attribution row (any retrieval). #}
attributed_action_ids as (

    select distinct action_id
    from {{ ref('int_action_attributions') }}
    where
        not is_action_synthetic
    {% if is_incremental() %}
        and action_id in (select user_rejects.action_id from user_rejects)
    {% endif %}

),

unattributed_rejects as (

    select
        user_rejects.action_id,
        user_rejects.prompt_id,
        user_rejects.acted_at
    from user_rejects
    left join attributed_action_ids
        on user_rejects.action_id = attributed_action_ids.action_id
    where attributed_action_ids.action_id is null

),

prompt_reject_candidates as (

    select
        unattributed_rejects.action_id,
        prompt_retrievals.retrieval_id,
        row_number() over (
            partition by unattributed_rejects.action_id
            order by prompt_retrievals.retrieved_at desc, prompt_retrievals.retrieval_id desc
        ) as candidate_rank
    from unattributed_rejects
    inner join prompt_retrievals
        on
            unattributed_rejects.prompt_id = prompt_retrievals.prompt_id
            and unattributed_rejects.acted_at >= prompt_retrievals.retrieved_at

),

prompt_rejects as (

    select distinct retrieval_id
    from prompt_reject_candidates
    where candidate_rank = 1

),

final as (

    select
        retrievals.retrieval_id,
        retrievals.session_guid,
        attributed_rejects.retrieval_id is not null as has_attributed_reject,
        prompt_rejects.retrieval_id is not null as has_prompt_reject,
        attributed_rejects.retrieval_id is not null
        or prompt_rejects.retrieval_id is not null as has_reject_failure
    from retrievals
    left join attributed_rejects
        on retrievals.retrieval_id = attributed_rejects.retrieval_id
    left join prompt_rejects
        on retrievals.retrieval_id = prompt_rejects.retrieval_id

)

{{ lara_stamp_rows('final') }}
