with

base as (

    select * from {{ ref('base_lara__replay_queries') }}
    where _row_status = 'clean'

),

renamed as (

    select
        -- ids
        trajectory_id,
        -- strings
        query_text,
        -- numerics
        step_index,
        -- timestamps
        _partition_date as partition_date,
        -- bookkeeping
        _lara_loaded_at
    from base

)

select * from renamed
