{#- One row: the limits of this run. `lower_limit` is the watermark of the
    last completed run (the newest base load it reflected, from
    lara_incremental_manifest as that run left it); base rows loaded after it
    are new to the session-grained models. `upper_limit` is the newest base
    load now. A full build (`--full-refresh`, or no completed run yet) has no
    lower limit and recomputes every session. Both limits come from
    lara_tables_this_run (the newest load of each table). -#}
{{ config(materialized='table') }}

with

tables_this_run as (

    select * from {{ ref('lara_tables_this_run') }}

),

final as (

    select
        {{ lara_run_started_at() }} as run_started_at,
        max(reflected_through) as lower_limit,
        max(newest_loaded_at) as upper_limit,
        max(reflected_through) is null as is_full_build
    from tables_this_run

)

select * from final
