{#- One row: the limits of this run. `lower_limit` is the watermark of the
    last completed run (the newest base load it reflected, from
    lara_incremental_manifest as that run left it); base rows loaded after it
    are new to the session-grained models. `upper_limit` is the newest base
    load now. A full build (`--full-refresh`, or no completed run yet) has no
    lower limit and recomputes every session. -#}
{{ config(materialized='table') }}

{%- set manifest = lara_run_state_relation('lara_incremental_manifest') -%}
{%- set is_full_build = flags.FULL_REFRESH or manifest is none %}

with

previous_run as (

    {% if is_full_build -%}
    select cast(null as timestamp) as reflected_through
    {%- else -%}
    select max(reflected_through) as reflected_through
    from {{ manifest }}
    {%- endif %}

),

loads as (

    {% for table_name in lara_contract_table_names() -%}
    select max(_lara_loaded_at) as loaded_at from {{ ref('base_lara__' ~ table_name) }}
    {% if not loop.last %}union all
    {% endif %}
    {%- endfor %}

),

final as (

    select
        {{ lara_run_started_at() }} as run_started_at,
        previous_run.reflected_through as lower_limit,
        (select max(loads.loaded_at) from loads) as upper_limit,
        previous_run.reflected_through is null as is_full_build
    from previous_run

)

select * from final
