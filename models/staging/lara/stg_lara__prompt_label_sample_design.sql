with

base as (

    select * from {{ ref('base_lara__prompt_label_sample_design') }}
    where _row_status = 'clean'

),

renamed as (

    select
        -- ids
        prompt_id,
        -- strings
        stratum,
        -- numerics
        inclusion_probability,
        stratum_population_size,
        stratum_sample_size,
        -- timestamps
        sampled_at,
        _partition_date as partition_date,
        -- bookkeeping
        _lara_loaded_at
    from base

)

select * from renamed
