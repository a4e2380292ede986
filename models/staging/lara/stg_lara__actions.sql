with

base as (

    select * from {{ ref('base_lara__actions') }}
    where _row_status = 'clean'

),

renamed as (

    select
        -- ids
        action_id,
        session_guid,
        prompt_id,
        consumed_asset_id,
        source_retrieval_id,
        document_id,
        -- strings
        actor,
        action_type,
        -- timestamps
        ts as acted_at,
        _partition_date as partition_date,
        -- bookkeeping
        _lara_loaded_at
    from base

)

select * from renamed
