with

base as (

    select * from {{ ref('base_lara__prompt_labels') }}
    where _row_status = 'clean'

),

renamed as (

    select
        -- ids
        prompt_id,
        -- strings
        judge,
        -- numerics
        retrieval_intent_count,
        -- booleans
        has_retrieval_intent,
        -- timestamps
        judged_at,
        _partition_date as partition_date,
        -- bookkeeping
        _lara_loaded_at
    from base

)

select * from renamed
