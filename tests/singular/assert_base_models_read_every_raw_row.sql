{#- The base models are 1:1 with the raw views: a row lost between the raw
    files and staging fails this test (reconciliation then starts from an
    honest raw count). -#}
with

{% for table_name in lara_contract_table_names() %}
{{ table_name }} as (

    select
        '{{ table_name }}' as table_name,
        (select count(*) from {{ source('lara_raw', table_name) }}) as raw_view_rows,
        (select count(*) from {{ ref('base_lara__' ~ table_name) }}) as base_rows

),

{% endfor %}
unioned as (

    {% for table_name in lara_contract_table_names() -%}
    select * from {{ table_name }}
    {% if not loop.last %}union all
    {% endif %}
    {%- endfor %}

)

select * from unioned
where raw_view_rows <> base_rows
