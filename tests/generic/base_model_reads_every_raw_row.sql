{#- A base model is 1:1 with its raw view: fails when their row counts differ,
    so a row lost between the raw files and staging is caught, and the
    reconciliation starts from an honest raw count. -#}
{% test base_model_reads_every_raw_row(model, source_table) %}

with

counts as (

    select
        (select count(*) from {{ source('lara_raw', source_table) }}) as raw_view_rows,
        (select count(*) from {{ model }}) as base_rows

)

select * from counts
where raw_view_rows <> base_rows

{% endtest %}
