with

base as (

    select * from {{ ref('base_lara__document_entities') }}
    where _row_status = 'clean'

),

renamed as (

    select
        -- ids
        doc_id,
        -- strings
        entity,
        -- timestamps
        _partition_date as partition_date,
        -- bookkeeping
        _lara_loaded_at
    from base

)

select * from renamed
