{#- One row per distinct asset of a retrieval's displayed list with its
    1-based display position (first occurrence kept, positions in the
    de-duplicated list, like int_retrieval_assets). Retrievals with a null or
    empty displayed list have no row.

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
        displayed_asset_ids
    from {{ ref('int_retrievals_scoped') }}
    where {{ lara_in_sessions_this_run('session_guid') }}

),

exploded as (

    {{ lara_explode_list(
        'retrievals', ['retrieval_id', 'session_guid'], 'displayed_asset_ids', 'asset_id', 'displayed_position'
    ) }}

),

first_occurrences as (

    select
        retrieval_id,
        session_guid,
        asset_id,
        min(displayed_position) as displayed_position
    from exploded
    group by retrieval_id, session_guid, asset_id

),

ranked as (

    select
        retrieval_id,
        session_guid,
        asset_id,
        cast(row_number() over (
            partition by retrieval_id
            order by displayed_position
        ) as bigint) as display_position
    from first_occurrences

)

{{ lara_stamp_rows('ranked') }}
