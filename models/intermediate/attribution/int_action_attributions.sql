{#- One row per (action, credited retrieval), by the attribution rules of
    metrics.md tried in order: direct, placement (chained), document,
    temporal. Unattributed actions have no row. Synthetic traffic is kept
    and flagged (public marts drop it). A table, not a view: every Tier 2-3
    model and the behaviour marts read it, and its window sorts over all
    actions should run once per build.

    Incremental (strategy lara_replace_sessions, macros/incremental): a run
    recomputes the actions of the affected sessions, reading as context
    every action of the documents they touched and every retrieval of
    their sessions or named by a context action. -#}
{{ config(
    materialized='incremental',
    incremental_strategy='lara_replace_sessions',
    lara_session_column='action_session_guid',
    partition_by=lara_spark_partition_by('_lara_session_date'),
    on_schema_change='fail'
) }}

with

{{ lara_sessions_this_run_cte() }}

scoped_actions as (

    select * from {{ ref('int_actions_scoped') }}

),

context_actions as (

    select * from scoped_actions
    {%- if is_incremental() %}
    where
        {{ lara_in_sessions_this_run('session_guid') }}
        or document_id in (
            select document_id from scoped_actions
            where {{ lara_in_sessions_this_run('session_guid') }}
        )
    {%- endif %}

),

actions as (

    select
        action_id,
        session_guid,
        prompt_id,
        actor,
        action_type,
        consumed_asset_id,
        source_retrieval_id,
        document_id,
        acted_at,
        action_date,
        is_outcome_type,
        is_synthetic
    from context_actions

),

retrievals as (

    select
        retrieval_id,
        prompt_id,
        session_guid,
        retrieved_at,
        is_synthetic
    from {{ ref('int_retrievals_scoped') }}
    {%- if is_incremental() %}
    where
        {{ lara_in_sessions_this_run('session_guid') }}
        or retrieval_id in (select source_retrieval_id from context_actions)
    {%- endif %}

),

retrieval_assets as (

    select
        retrieval_id,
        asset_id,
        asset_rank
    from {{ ref('int_retrieval_assets') }}
    {%- if is_incremental() %}
    where retrieval_id in (select retrieval_id from retrievals)
    {%- endif %}

),

{# Rule 1: a source id naming a known retrieval. #}
direct_sources as (

    {{ lara_resolve_direct_source('actions', 'retrievals') }}

),

{# Rule 2: the lineage source of the latest earlier place of the asset in the document. #}
placement_sources as (

    {{ lara_inherit_placement_source('direct_sources') }}

),

lineage_sources as (

    select
        direct_sources.*,
        placement_sources.placement_retrieval_id,
        coalesce(
            direct_sources.direct_retrieval_id,
            placement_sources.placement_retrieval_id
        ) as lineage_retrieval_id
    from direct_sources
    left join placement_sources
        on direct_sources.action_id = placement_sources.action_id

),

{# Rule 3: document-level outcomes credit every retrieval placed into the document before them. #}
document_placements as (

    {{ lara_document_placements('lineage_sources') }}

),

document_credits as (

    {{ lara_credit_document_outcomes('lineage_sources', 'document_placements') }}

),

document_credited_actions as (

    select
        action_id,
        count(*) as document_credit_count
    from document_credits
    group by action_id

),

{# Rule 4: the latest retrieval of the session, at or before the action, that returned the asset. #}
session_assets as (

    select
        retrievals.retrieval_id,
        retrievals.session_guid,
        retrievals.retrieved_at,
        retrieval_assets.asset_id
    from retrievals
    inner join retrieval_assets
        on retrievals.retrieval_id = retrieval_assets.retrieval_id

),

actions_with_assets as (

    select
        action_id,
        session_guid,
        consumed_asset_id,
        acted_at
    from actions
    where consumed_asset_id is not null

),

temporal_sources as (

    {{ lara_temporal_source('actions_with_assets', 'session_assets') }}

),

resolved as (

    select
        lineage_sources.*,
        temporal_sources.temporal_retrieval_id,
        {{ lara_attribution_method(
            'lineage_sources.direct_retrieval_id',
            'lineage_sources.placement_retrieval_id',
            'document_credited_actions.action_id is not null',
            'temporal_sources.temporal_retrieval_id'
        ) }} as attribution_method
    from lineage_sources
    left join temporal_sources
        on lineage_sources.action_id = temporal_sources.action_id
    left join document_credited_actions
        on lineage_sources.action_id = document_credited_actions.action_id

),

single_credits as (

    select
        action_id,
        attribution_method,
        coalesce(direct_retrieval_id, placement_retrieval_id, temporal_retrieval_id) as retrieval_id
    from resolved
    where attribution_method in ('direct', 'placement', 'temporal')

),

document_method_credits as (

    select
        resolved.action_id,
        resolved.attribution_method,
        document_credits.retrieval_id
    from resolved
    inner join document_credits
        on resolved.action_id = document_credits.action_id
    where resolved.attribution_method = 'document'

),

credits as (

    select * from single_credits
    union all
    select * from document_method_credits

),

credited_actions as (

    select
        credits.action_id,
        credits.retrieval_id,
        credits.attribution_method,
        resolved.session_guid,
        resolved.prompt_id,
        resolved.actor,
        resolved.action_type,
        resolved.consumed_asset_id,
        resolved.document_id,
        resolved.acted_at,
        resolved.action_date,
        resolved.is_outcome_type,
        resolved.has_unknown_source_id,
        resolved.temporal_retrieval_id,
        resolved.is_synthetic
    from credits
    inner join resolved
        on credits.action_id = resolved.action_id

),

ranked as (

    {{ lara_consumed_rank('credited_actions', 'retrieval_assets') }}

),

final as (

    select
        ranked.action_id,
        ranked.retrieval_id,
        ranked.attribution_method,
        ranked.consumed_rank,
        ranked.session_guid <> retrievals.session_guid as is_cross_session,
        ranked.actor,
        ranked.action_type,
        ranked.acted_at,
        ranked.action_date,
        ranked.session_guid as action_session_guid,
        retrievals.session_guid as retrieval_session_guid,
        ranked.prompt_id as action_prompt_id,
        retrievals.prompt_id as retrieval_prompt_id,
        retrievals.retrieved_at,
        ranked.consumed_asset_id,
        ranked.document_id,
        ranked.is_outcome_type,
        {{ lara_is_lineage_method('ranked.attribution_method') }} as is_lineage_method,
        ranked.actor = 'user'
        and ranked.is_outcome_type
        and {{ lara_is_lineage_method('ranked.attribution_method') }} as is_retrieval_driven_outcome,
        ranked.has_unknown_source_id,
        ranked.temporal_retrieval_id,
        case
            when ranked.attribution_method in ('direct', 'placement') and ranked.consumed_asset_id is not null
                then coalesce(ranked.temporal_retrieval_id = ranked.retrieval_id, false)
        end as is_temporal_agreement,
        ranked.is_synthetic as is_action_synthetic,
        retrievals.is_synthetic as is_retrieval_synthetic,
        ranked.is_synthetic or retrievals.is_synthetic as is_synthetic
    from ranked
    inner join retrievals
        on ranked.retrieval_id = retrievals.retrieval_id
    where {{ lara_in_sessions_this_run('ranked.session_guid') }}

)

{{ lara_stamp_rows('final', 'action_session_guid') }}
