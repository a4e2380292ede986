{#- lara_last_non_null(expression, partition_by, order_by, frame): the last
    non-null value of `expression` in the window (a window expression, no
    alias). Set-based "carry forward": used for chained placement inheritance.
    `partition_by` and `order_by` are lists of SQL expressions. -#}
{% macro lara_last_non_null(expression, partition_by, order_by, frame='rows between unbounded preceding and current row') %}
    {{ return(lara_non_null_value('last_value', expression, partition_by, order_by, frame)) }}
{% endmacro %}

{#- lara_first_non_null(expression, partition_by, order_by, frame): the first
    non-null value of `expression` in the window (a window expression, no
    alias). Used for the root of a placement chain resolved by rule 4. -#}
{% macro lara_first_non_null(expression, partition_by, order_by, frame='rows between unbounded preceding and current row') %}
    {{ return(lara_non_null_value('first_value', expression, partition_by, order_by, frame)) }}
{% endmacro %}

{#- lara_non_null_value(function, expression, partition_by, order_by, frame):
    the window function `function` (last_value or first_value) of
    `expression`, skipping nulls, over the window. The one place the engines'
    ignore-nulls syntax differs. -#}
{% macro lara_non_null_value(function, expression, partition_by, order_by, frame) %}
    {{ return(adapter.dispatch('lara_non_null_value', 'lara')(function, expression, partition_by, order_by, frame)) }}
{% endmacro %}

{% macro duckdb__lara_non_null_value(function, expression, partition_by, order_by, frame) -%}
    {{ function }}({{ expression }} ignore nulls) over (
        partition by {{ partition_by | join(', ') }}
        order by {{ order_by | join(', ') }}
        {{ frame }}
    )
{%- endmacro %}

{#- Spark: last_value(expr, isIgnoreNull), first_value(expr, isIgnoreNull). -#}
{% macro default__lara_non_null_value(function, expression, partition_by, order_by, frame) -%}
    {{ function }}({{ expression }}, true) over (
        partition by {{ partition_by | join(', ') }}
        order by {{ order_by | join(', ') }}
        {{ frame }}
    )
{%- endmacro %}
