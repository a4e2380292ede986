{#- lara_last_non_null(expression, partition_by, order_by, frame): the last
    non-null value of `expression` in the window (a window expression, no
    alias). Set-based "carry forward": used for chained placement inheritance.
    `partition_by` and `order_by` are lists of SQL expressions. -#}
{% macro lara_last_non_null(expression, partition_by, order_by, frame='rows between unbounded preceding and current row') %}
    {{ return(adapter.dispatch('lara_last_non_null', 'lara')(expression, partition_by, order_by, frame)) }}
{% endmacro %}

{% macro duckdb__lara_last_non_null(expression, partition_by, order_by, frame) -%}
    last_value({{ expression }} ignore nulls) over (
        partition by {{ partition_by | join(', ') }}
        order by {{ order_by | join(', ') }}
        {{ frame }}
    )
{%- endmacro %}

{#- Spark: last_value(expr, isIgnoreNull). -#}
{% macro default__lara_last_non_null(expression, partition_by, order_by, frame) -%}
    last_value({{ expression }}, true) over (
        partition by {{ partition_by | join(', ') }}
        order by {{ order_by | join(', ') }}
        {{ frame }}
    )
{%- endmacro %}

{#- lara_first_non_null(expression, partition_by, order_by, frame): the first
    non-null value of `expression` in the window (a window expression, no
    alias). Used for the root of a placement chain resolved by rule 4. -#}
{% macro lara_first_non_null(expression, partition_by, order_by, frame='rows between unbounded preceding and current row') %}
    {{ return(adapter.dispatch('lara_first_non_null', 'lara')(expression, partition_by, order_by, frame)) }}
{% endmacro %}

{% macro duckdb__lara_first_non_null(expression, partition_by, order_by, frame) -%}
    first_value({{ expression }} ignore nulls) over (
        partition by {{ partition_by | join(', ') }}
        order by {{ order_by | join(', ') }}
        {{ frame }}
    )
{%- endmacro %}

{#- Spark: first_value(expr, isIgnoreNull). -#}
{% macro default__lara_first_non_null(expression, partition_by, order_by, frame) -%}
    first_value({{ expression }}, true) over (
        partition by {{ partition_by | join(', ') }}
        order by {{ order_by | join(', ') }}
        {{ frame }}
    )
{%- endmacro %}
