{#- Aggregates are reported per combination of dimensions and rolled up
    (metrics.md: overall, per role, per surface, per day).

    lara_cube(rolled, fixed=[]): the GROUP BY list `fixed..., cube(rolled...)`:
    every subset of the `rolled` columns (2^n grouping sets), each holding
    every `fixed` column. Portable to DuckDB and Spark (>= 3.1 for mixed
    fixed + cube lists). -#}
{% macro lara_cube(rolled, fixed=[]) -%}
    {%- for column in fixed -%}{{ column }}, {% endfor -%}
    cube({{ rolled | join(', ') }})
{%- endmacro %}

{#- lara_rolled_up(column, label='all'): the column's value, or `label` on
    rows where it is rolled up (text dimensions). -#}
{% macro lara_rolled_up(column, label='all') -%}
    case when grouping({{ column }}) = 1 then '{{ label }}' else {{ column }} end
{%- endmacro %}

{#- lara_grouping_level(columns): which dimensions a row keeps, e.g.
    'day x surface x role', or 'overall' when all are rolled up. `columns` is
    a list of [column, label] pairs in display order. -#}
{% macro lara_grouping_level(columns) -%}
    coalesce(nullif(concat_ws(' x '
        {%- for pair in columns -%}
        , case when grouping({{ pair[0] }}) = 0 then '{{ pair[1] }}' end
        {%- endfor -%}
    ), ''), 'overall')
{%- endmacro %}
