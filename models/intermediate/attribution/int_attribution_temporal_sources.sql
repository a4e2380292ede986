{#- Attribution rule 4 (`temporal`, metrics.md, the fallback for logs without
    lineage): one row per action with a consumed_asset_id that the rule can
    answer, with "the most recent retrieval in the same session at or before
    the action whose returned_asset_ids contains consumed_asset_id"
    (same-instant retrievals: the greatest retrieval_id). Computed for every
    action with an asset, whatever its lineage: the agreement rate compares
    this answer with the lineage one (macros/attribution/temporal_source.sql).

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the actions of lara_sessions_this_run from the retrievals of
    the same sessions. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

actions_with_assets as (

    select
        action_id,
        session_guid,
        consumed_asset_id,
        acted_at
    from {{ ref('int_actions_scoped') }}
    where consumed_asset_id is not null and {{ lara_in_session_rows_this_run('session_guid') }}

),

-- The returned assets of the same sessions, only those some action of
-- the session consumed (the rule never looks at another asset): a
-- semi-join on (session, asset) before the as-of join.
consumed_assets as (

    select distinct
        session_guid,
        consumed_asset_id
    from actions_with_assets

),

session_assets as (

    select
        retrieval_assets.retrieval_id,
        retrieval_assets.session_guid,
        retrieval_assets.retrieved_at,
        retrieval_assets.asset_id
    from {{ ref('int_retrieval_assets') }} as retrieval_assets
    inner join consumed_assets
        on
            retrieval_assets.session_guid = consumed_assets.session_guid
            and retrieval_assets.asset_id = consumed_assets.consumed_asset_id
    where {{ lara_in_session_rows_this_run('retrieval_assets.session_guid') }}

),

final as (

    {{ lara_temporal_source('actions_with_assets', 'session_assets') }}

)

{{ lara_stamp_rows('final') }}
