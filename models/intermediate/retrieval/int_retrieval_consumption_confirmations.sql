{#- One row per retrieval (synthetic ones included): agent consumption
    confirmed by a later user action (metrics.md v2, "Agent consumption
    confirmed": the paper's independent confirmation of ACR).

    A retrieval's agent consumption is confirmed when, strictly after an
    agent action that counts for its ACR (int_retrieval_attributed_evidence:
    an attributed agent action other than reject_result, in the retrieval's
    prompt, on a returned asset), a user action of a GPR type (select,
    place, edit, follow_up, export, share, download)
    - acts on the same asset, in the retrieval's session (however it is
      attributed), or in another session when a lineage method (direct,
      placement, document) attributes it to this retrieval; or
    - is a document-level outcome (export / share / download) credited to
      this retrieval by rule 3 (`document`): the document holds what the
      agent placed.
    Non-synthetic actions only (lineage included).

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the retrievals of lara_sessions_this_run; a user action in
    another session that lineage attributes to one of them puts the
    retrieval's session in the run (the lineage closure). -#}
{{ lara_session_grained_config() }}

{%- set gpr_types = "('select', 'place', 'edit', 'follow_up', 'export', 'share', 'download')" %}

with

{{ lara_sessions_this_run_cte() }}

retrievals as (

    select
        retrieval_id,
        session_guid
    from {{ ref('int_retrievals_scoped') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

attributions as (

    select
        action_id,
        retrieval_id,
        actor,
        action_type,
        attribution_method,
        consumed_asset_id,
        acted_at,
        action_prompt_id,
        retrieval_prompt_id,
        consumed_rank,
        is_lineage_method
    from {{ ref('int_action_attributions') }}
    where
        not is_action_synthetic
        and {{ lara_in_sessions_this_run('retrieval_session_guid') }}

),

-- The ACR evidence, per (retrieval, asset): its first agent consumption.
agent_consumptions as (

    select
        attributions.retrieval_id,
        retrievals.session_guid,
        attributions.consumed_asset_id,
        min(attributions.acted_at) as first_consumed_at
    from attributions
    inner join retrievals
        on attributions.retrieval_id = retrievals.retrieval_id
    where
        attributions.actor = 'agent'
        and attributions.action_type <> 'reject_result'
        and attributions.action_prompt_id = attributions.retrieval_prompt_id
        and attributions.consumed_rank is not null
    group by attributions.retrieval_id, retrievals.session_guid, attributions.consumed_asset_id

),

lineage_synthetic_actions as (

    {{ lara_lineage_synthetic_actions(lara_in_sessions_this_run('action_session_guid')) }}

),

session_user_actions as (

    select
        actions.session_guid,
        actions.consumed_asset_id,
        actions.acted_at
    from {{ ref('int_actions_scoped') }} as actions
    left join lineage_synthetic_actions
        on actions.action_id = lineage_synthetic_actions.action_id
    where
        actions.actor = 'user'
        and actions.action_type in {{ gpr_types }}
        and actions.consumed_asset_id is not null
        and not actions.is_synthetic
        and lineage_synthetic_actions.action_id is null
        and {{ lara_in_session_rows_this_run('actions.session_guid') }}

),

confirmations as (

    -- the same asset, later, in the retrieval's session
    select
        agent_consumptions.retrieval_id,
        session_user_actions.acted_at
    from agent_consumptions
    inner join session_user_actions
        on
            agent_consumptions.session_guid = session_user_actions.session_guid
            and agent_consumptions.consumed_asset_id = session_user_actions.consumed_asset_id
            and agent_consumptions.first_consumed_at < session_user_actions.acted_at

    union all

    -- the same asset, later, attributed to the retrieval by lineage (any session)
    select
        agent_consumptions.retrieval_id,
        attributions.acted_at
    from agent_consumptions
    inner join attributions
        on
            agent_consumptions.retrieval_id = attributions.retrieval_id
            and agent_consumptions.consumed_asset_id = attributions.consumed_asset_id
            and agent_consumptions.first_consumed_at < attributions.acted_at
    where
        attributions.actor = 'user'
        and attributions.action_type in {{ gpr_types }}
        and attributions.is_lineage_method

    union all

    -- a document-level outcome credited to the retrieval by rule 3, later
    select
        agent_consumptions.retrieval_id,
        attributions.acted_at
    from agent_consumptions
    inner join attributions
        on
            agent_consumptions.retrieval_id = attributions.retrieval_id
            and agent_consumptions.first_consumed_at < attributions.acted_at
    where
        attributions.actor = 'user'
        and attributions.attribution_method = 'document'

),

first_confirmations as (

    select
        retrieval_id,
        min(acted_at) as first_confirmed_at
    from confirmations
    group by retrieval_id

),

final as (

    select
        retrievals.retrieval_id,
        retrievals.session_guid,
        first_confirmations.retrieval_id is not null as has_confirmed_agent_consumption,
        first_confirmations.first_confirmed_at
    from retrievals
    left join first_confirmations
        on retrievals.retrieval_id = first_confirmations.retrieval_id

)

{{ lara_stamp_rows('final') }}
