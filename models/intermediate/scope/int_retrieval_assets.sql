{#- One row per distinct asset of a retrieval's returned list, ranked as
    trec_eval would see it: a repeated id keeps its first occurrence and ranks
    are positions in the de-duplicated list. -#}
with

retrievals as (

    select
        retrieval_id,
        returned_asset_ids
    from {{ ref('stg_lara__retrievals') }}

),

exploded as (

    {{ lara_explode_list('retrievals', ['retrieval_id'], 'returned_asset_ids', 'asset_id', 'returned_position') }}

),

first_occurrences as (

    select
        retrieval_id,
        asset_id,
        min(returned_position) as returned_position
    from exploded
    group by retrieval_id, asset_id

),

ranked as (

    select
        retrieval_id,
        asset_id,
        returned_position,
        cast(row_number() over (
            partition by retrieval_id
            order by returned_position
        ) as bigint) as asset_rank
    from first_occurrences

)

select * from ranked
