with

base as (

    select * from {{ ref('base_lara__stage_spans') }}
    where _row_status = 'clean'

),

renamed as (

    select
        -- ids
        prompt_id,
        -- strings
        stage,
        -- numerics
        latency_ms,
        tokens,
        -- timestamps
        _partition_date as partition_date,
        -- bookkeeping
        _lara_loaded_at
    from base

)

select * from renamed
