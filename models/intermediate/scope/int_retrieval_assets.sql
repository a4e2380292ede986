{#- One row per distinct asset of a retrieval's returned list, ranked as
    trec_eval would see it: a repeated id keeps its first occurrence and ranks
    are positions in the de-duplicated list.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the rows of lara_sessions_this_run. -#}
{{ lara_session_grained_config() }}

with

{{ lara_sessions_this_run_cte() }}

retrievals as (

    select
        retrieval_id,
        session_guid,
        retrieved_at,
        returned_asset_ids
    from {{ ref('stg_lara__retrievals') }}
    where {{ lara_in_session_rows_since_first(ref('stg_lara__retrievals'), 'retrieved_at') }}

),

ranked as (

    {{ lara_explode_distinct_list(
        'retrievals', ['retrieval_id', 'session_guid', 'retrieved_at'],
        'returned_asset_ids', 'asset_id', 'asset_rank', 'returned_position'
    ) }}

)

{{ lara_stamp_rows('ranked') }}
