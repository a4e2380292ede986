{#- One row per distinct asset of a retrieval's displayed list with its
    1-based display position (first occurrence kept, positions in the
    de-duplicated list, like int_retrieval_assets). Retrievals with a null or
    empty displayed list have no row.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the rows of lara_sessions_this_run. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

retrievals as (

    select
        retrieval_id,
        session_guid,
        displayed_asset_ids
    from {{ ref('int_retrievals_scoped') }}
    where {{ lara_in_session_rows_this_run('session_guid') }}

),

positioned as (

    {{ lara_explode_distinct_list(
        'retrievals', ['retrieval_id', 'session_guid'],
        'displayed_asset_ids', 'asset_id', 'display_position', 'displayed_position'
    ) }}

),

ranked as (

    select
        retrieval_id,
        session_guid,
        asset_id,
        display_position
    from positioned

)

{{ lara_stamp_rows('ranked') }}
