with

base as (

    select * from {{ ref('base_lara__retrievals') }}
    where _row_status = 'clean'

),

renamed as (

    select
        -- ids
        retrieval_id,
        prompt_id,
        session_guid,
        -- strings
        query_text,
        retrieval_role,
        -- lists
        returned_asset_ids,
        displayed_asset_ids,
        -- numerics
        {{ lara_list_length('returned_asset_ids') }} as returned_count,
        -- timestamps
        ts as retrieved_at,
        _partition_date as partition_date,
        -- bookkeeping
        _lara_loaded_at
    from base

)

select * from renamed
