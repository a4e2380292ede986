{#- Attribution rule 3 (`document`, metrics.md): one row per (outcome action,
    credited retrieval): an `export`/`share`/`download` with a document_id,
    no asset and no lineage source of its own (rules 1-2) credits "every
    retrieval that placed an asset into that document at or before the
    event" (a placement in the same instant counts), by the lineage source
    (direct or inherited) of those places, in any session
    (macros/attribution/document_credits.sql).

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the outcome actions of lara_sessions_this_run, reading the
    places of their documents (any session) from the rule 1 and 2 models. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

direct_sources as (

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
    {%- if is_incremental() %}
        and document_id in (
            select document_id from {{ ref('int_attribution_direct_sources') }}
            where
                {{ lara_in_session_rows_this_run('session_guid') }}
                and action_type in ('export', 'share', 'download')
        )
    {%- endif %}

),

placement_sources as (

    select
        action_id,
        placement_retrieval_id
    from {{ ref('int_attribution_placement_sources') }}
    -- Rule 3 credits lineage-backed places only: a place whose inherited
    -- source rests on rule 4 (chain_root_method temporal) credits nothing.
    where
        chain_root_method = 'direct'
    {%- if is_incremental() %}
        and action_id in (select action_id from direct_sources)
    {%- endif %}

),

lineage_sources as (

    select
        direct_sources.*,
        coalesce(
            direct_sources.direct_retrieval_id,
            placement_sources.placement_retrieval_id
        ) as lineage_retrieval_id
    from direct_sources
    left join placement_sources
        on direct_sources.action_id = placement_sources.action_id

),

document_placements as (

    {{ lara_document_placements('lineage_sources') }}

),

outcome_actions as (

    select * from lineage_sources
    where {{ lara_in_sessions_this_run('session_guid') }}

),

credits as (

    {{ lara_credit_document_outcomes('outcome_actions', 'document_placements') }}

),

final as (

    select
        credits.action_id,
        outcome_actions.session_guid,
        credits.retrieval_id
    from credits
    inner join outcome_actions
        on credits.action_id = outcome_actions.action_id

)

{{ lara_stamp_rows('final') }}
