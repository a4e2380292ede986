{#- One row per contract table: the newest load of its base model
    (`_lara_loaded_at`, any status) and whether a row was loaded after the
    last completed run (lara_incremental_manifest's watermark as that run
    left it). On a full build (`--full-refresh`, or no completed run yet)
    every table counts as loaded. lara_run_limits takes its limits from
    here; the models recomputed whole when one of their tables was loaded
    (strategy lara_replace_table, the replay marts) read it. -#}
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
    select
        '{{ table_name }}' as table_name,
        max(_lara_loaded_at) as newest_loaded_at
    from {{ ref('base_lara__' ~ table_name) }}
    {% if not loop.last %}union all
    {% endif %}
    {%- endfor %}

),

final as (

    select
        loads.table_name,
        loads.newest_loaded_at,
        previous_run.reflected_through,
        coalesce(
            previous_run.reflected_through is null
            or loads.newest_loaded_at > previous_run.reflected_through,
            false
        ) as is_loaded_this_run
    from loads
    cross join previous_run

)

select * from final
