with

base as (

    select * from {{ ref('base_lara__relevance_labels') }}
    where _row_status = 'clean'

),

renamed as (

    select
        -- ids
        retrieval_id,
        asset_id,
        -- strings
        judge,
        -- numerics
        grade,
        -- timestamps
        judged_at,
        _partition_date as partition_date,
        -- bookkeeping
        _lara_loaded_at
    from base

)

select * from renamed
