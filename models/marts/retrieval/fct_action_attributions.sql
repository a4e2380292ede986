{#- One row per (action, credited retrieval) of non-synthetic traffic: the
    public face of int_action_attributions with the credited retrieval's
    day, surface and role and the consumed asset's display position (its
    rank in the retrieval's de-duplicated displayed list, found in the list
    itself: lara_distinct_list_rank).

    Incremental (strategy lara_replace_sessions, macros/incremental): a run
    recomputes the rows of lara_sessions_this_run only. -#}
{{ lara_session_grained_config('action_session_guid') }}

with

{{ lara_sessions_this_run_cte() }}

attributions as (

    select * from {{ ref('int_action_attributions') }}
    where not is_synthetic and {{ lara_in_session_rows_this_run('action_session_guid') }}

),

{# The credited retrievals; on an incremental run also within their times
   (each attribution carries its retrieval's time), so the engine skips the
   other days' row groups. #}
retrievals as (

    select
        retrieval_id,
        user_id,
        retrieval_date,
        surface,
        retrieval_role,
        is_misrouted,
        displayed_asset_ids
    from {{ ref('int_retrievals_scoped') }}
    {%- if is_incremental() %}
    where
        retrieval_id in (select retrieval_id from attributions)
        and {{ lara_within_times_of('attributions') }}
    {%- endif %}

),

joined as (

    select
        attributions.action_id,
        attributions.retrieval_id,
        attributions.attribution_method,
        attributions.consumed_rank,
        {{ lara_distinct_list_rank('retrievals.displayed_asset_ids', 'attributions.consumed_asset_id') }}
            as display_position,
        attributions.is_cross_session,
        attributions.actor,
        attributions.action_type,
        attributions.acted_at,
        attributions.action_date,
        attributions.retrieved_at,
        retrievals.retrieval_date,
        retrievals.surface,
        retrievals.retrieval_role,
        retrievals.is_misrouted,
        attributions.action_session_guid,
        attributions.retrieval_session_guid,
        {{ lara_hash_user_id('retrievals.user_id') }} as user_key,
        attributions.action_prompt_id,
        attributions.retrieval_prompt_id,
        attributions.consumed_asset_id,
        attributions.document_id,
        attributions.is_outcome_type,
        attributions.is_lineage_method,
        attributions.chain_root_method,
        attributions.is_lineage_backed,
        attributions.is_retrieval_driven_outcome,
        attributions.temporal_retrieval_id,
        attributions.is_temporal_agreement,
        attributions.has_unknown_source_id,
        retrievals.displayed_asset_ids is not null as has_display_log
    from attributions
    inner join retrievals
        on attributions.retrieval_id = retrievals.retrieval_id

)

{{ lara_stamp_rows('joined', 'action_session_guid') }}
