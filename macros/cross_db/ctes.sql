{#- lara_inline_cte(): between `name as` and the CTE's parenthesis, for a
    row-level CTE that a query reads more than once. DuckDB (since 1.4)
    materializes such a CTE with every column, in memory that does not spill:
    at 20M events `agg_tier3_completion` ran out of memory on it, and builds
    with it inlined (each reference recomputes it, and reads only the columns
    it needs). Spark inlines CTEs and has no such keyword. -#}
{% macro lara_inline_cte() %}
    {{- return(adapter.dispatch('lara_inline_cte', 'lara')()) -}}
{% endmacro %}

{% macro default__lara_inline_cte() -%}
{%- endmacro %}

{% macro duckdb__lara_inline_cte() -%}
    not materialized
{%- endmacro %}
