{#- One row per distinct asset of a retrieval's displayed list with its
    1-based display position (first occurrence kept, positions in the
    de-duplicated list, like int_retrieval_assets). Retrievals with a null or
    empty displayed list have no row. -#}
with

retrievals as (

    select
        retrieval_id,
        displayed_asset_ids
    from {{ ref('int_retrievals_scoped') }}

),

exploded as (

    {{ lara_explode_list('retrievals', ['retrieval_id'], 'displayed_asset_ids', 'asset_id', 'displayed_position') }}

),

first_occurrences as (

    select
        retrieval_id,
        asset_id,
        min(displayed_position) as displayed_position
    from exploded
    group by retrieval_id, asset_id

),

ranked as (

    select
        retrieval_id,
        asset_id,
        cast(row_number() over (
            partition by retrieval_id
            order by displayed_position
        ) as bigint) as display_position
    from first_occurrences

)

select * from ranked
