{#- Attribution rule 2 (`placement`, metrics.md v2): one row per action with
    both a document_id and a consumed_asset_id, with the source it inherits
    from "the latest earlier `place` of that asset in that document (any
    session), whatever rule resolved that place" (null when there is none),
    and chain_root_method: `direct` when the chain starts at a place with a
    source id, `temporal` when it starts at a place rule 4 resolved
    (macros/attribution/placement_source.sql). "A place at the same instant
    as the action counts as earlier": within (document, asset) actions are
    ordered by time, places first, then action_id.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the actions of lara_sessions_this_run, reading as context
    every action of the documents they act on (rule 1 of other sessions is
    already in int_attribution_direct_sources, rule 4 in
    int_attribution_temporal_sources, both unchanged: a session whose actions
    share a document with a touched one is in the closure). -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

document_actions as (

    select
        action_id,
        session_guid,
        action_type,
        document_id,
        consumed_asset_id,
        acted_at,
        direct_retrieval_id
    from {{ ref('int_attribution_direct_sources') }}
    where
        document_id is not null
        and consumed_asset_id is not null
    {%- if is_incremental() %}
        and document_id in (
            select document_id from {{ ref('int_attribution_direct_sources') }}
            where {{ lara_in_session_rows_this_run('session_guid') }}
        )
    {%- endif %}

),

temporal_sources as (

    select
        action_id,
        temporal_retrieval_id
    from {{ ref('int_attribution_temporal_sources') }}
    {%- if is_incremental() %}
    where action_id in (select action_id from document_actions)
    {%- endif %}

),

direct_sources as (

    select
        document_actions.*,
        temporal_sources.temporal_retrieval_id
    from document_actions
    left join temporal_sources
        on document_actions.action_id = temporal_sources.action_id

),

inherited as (

    {{ lara_inherit_placement_source('direct_sources') }}

),

final as (

    select
        inherited.action_id,
        direct_sources.session_guid,
        inherited.placement_retrieval_id,
        inherited.chain_root_method
    from inherited
    inner join direct_sources
        on inherited.action_id = direct_sources.action_id
    where {{ lara_in_sessions_this_run('direct_sources.session_guid') }}

)

{{ lara_stamp_rows('final') }}
