{#- One row per distinct asset of a retrieval's returned list, ranked as
    trec_eval would see it: a repeated id keeps its first occurrence and ranks
    are positions in the de-duplicated list.

    Session-grained and incremental (strategy lara_replace_sessions): a run
    recomputes the rows of lara_sessions_this_run. -#}
{{ config(
    materialized='incremental',
    incremental_strategy='lara_replace_sessions',
    partition_by=lara_spark_partition_by('_lara_session_date'),
    on_schema_change='fail'
) }}

with

{{ lara_sessions_this_run_cte() }}

retrievals as (

    select
        retrieval_id,
        session_guid,
        returned_asset_ids
    from {{ ref('stg_lara__retrievals') }}
    where {{ lara_in_sessions_this_run('session_guid') }}

),

exploded as (

    {{ lara_explode_list(
        'retrievals', ['retrieval_id', 'session_guid'], 'returned_asset_ids', 'asset_id', 'returned_position'
    ) }}

),

first_occurrences as (

    select
        retrieval_id,
        session_guid,
        asset_id,
        min(returned_position) as returned_position
    from exploded
    group by retrieval_id, session_guid, asset_id

),

ranked as (

    select
        retrieval_id,
        session_guid,
        asset_id,
        returned_position,
        cast(row_number() over (
            partition by retrieval_id
            order by returned_position
        ) as bigint) as asset_rank
    from first_occurrences

)

{{ lara_stamp_rows('ranked') }}
