with

base as (

    select * from {{ ref('base_lara__prompts') }}
    where _row_status = 'clean'

),

renamed as (

    select
        -- ids
        prompt_id,
        session_guid,
        user_id,
        -- strings
        surface,
        prompt_text,
        prompt_kind,
        -- booleans
        coalesce(is_synthetic, false) as is_synthetic,
        -- timestamps
        ts as prompted_at,
        _partition_date as partition_date,
        -- bookkeeping
        _lara_loaded_at
    from base

)

select * from renamed
