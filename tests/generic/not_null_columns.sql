{#- Fails with one row per column of `column_names` that holds a null:
    (column_name, null_rows). One scan of the model checks every listed
    column, where a `not_null` test per column costs a query (and a dbt node)
    each. A single-column primary key keeps its own `not_null` next to
    `unique`; a composite key's columns are listed here. -#}
{% test not_null_columns(model, column_names) %}

with

null_counts as (

    select
        {%- for column_name in column_names %}
        count(case when {{ column_name }} is null then 1 end) as null_rows_{{ loop.index }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ model }}

)

{% for column_name in column_names -%}
select
    {{ lara_sql_string(column_name) }} as column_name,
    null_rows_{{ loop.index }} as null_rows
from null_counts
where null_rows_{{ loop.index }} > 0
{% if not loop.last %}union all
{% endif -%}
{%- endfor %}

{% endtest %}
