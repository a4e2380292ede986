{#- A base model is 1:1 with its raw view: fails when their row counts differ,
    so a row lost between the raw files and staging is caught, and the
    reconciliation starts from an honest raw count. On an incremental run it
    compares the partitions the run read (lara_pending_partitions), so it
    costs the day's files; a full refresh or the full test run compares
    every partition. Tombstones (status `removed`: rows a rewritten file no
    longer holds, kept one run) are not raw rows. -#}
{% test base_model_reads_every_raw_row(model, source_table) %}
{{ config(lara_test_scope='table') }}
{%- set pending = none if lara_is_full_test() else lara_pending_partitions(source_table) -%}
{%- set in_pending -%}
    {%- if pending is none -%}true
    {%- elif pending -%}_partition_value in ({% for partition in pending %}{{ lara_sql_string(partition) }}{{ ', ' if not loop.last }}{% endfor %})
    {%- else -%}false
    {%- endif -%}
{%- endset %}

with

counts as (

    select
        (select count(*) from {{ source('lara_raw', source_table) }} where {{ in_pending }}) as raw_view_rows,
        (select count(*) from {{ model }} where {{ in_pending }} and _row_status != 'removed') as base_rows

)

select * from counts
where raw_view_rows <> base_rows

{% endtest %}
