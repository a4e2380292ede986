{#- One row per retrieval (synthetic ones included): ORF cause (c) of
    ../shared/spec/metrics.md, Tier 2: "for roles in var
    `orf_substitution_roles` (default `find`, `operate`): an agent `place` or
    `edit` in the same prompt, at or after the retrieval, whose asset is not
    in `returned_asset_ids`".

    Reading: "at or after" includes an action at the retrieval's instant;
    only non-synthetic agent actions with a consumed asset and a prompt_id
    count; "not in returned_asset_ids" is read literally against this
    retrieval's own de-duplicated list (int_retrieval_assets), so in a
    prompt with several retrievals an asset taken from a sibling retrieval
    also counts. Other roles (browse, unknown) never get the flag.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the retrievals of lara_sessions_this_run with the agent
    actions of their prompts, in any session (an action or retrieval may
    name a prompt of another session; the lineage closure brings the
    sessions of the retrievals of a prompt a new action names). -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

retrievals as (

    select
        retrieval_id,
        prompt_id,
        session_guid,
        retrieval_role,
        retrieved_at
    from {{ ref('int_retrievals_scoped') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

agent_asset_uses as (

    select
        action_id,
        prompt_id,
        consumed_asset_id,
        acted_at
    from {{ ref('int_actions_scoped') }}
    where
        not is_synthetic
        and actor = 'agent'
        and action_type in ('place', 'edit')
        and consumed_asset_id is not null
        and prompt_id is not null
        and {{ lara_in_prompts_of('retrievals') }}

),

retrieval_assets as (

    select
        retrieval_id,
        asset_id
    from {{ ref('int_retrieval_assets') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

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

final as (

    select
        retrievals.retrieval_id,
        retrievals.session_guid,
        substitutions.retrieval_id is not null as has_substitution_failure
    from retrievals
    left join substitutions
        on retrievals.retrieval_id = substitutions.retrieval_id

)

{{ lara_stamp_rows('final') }}
