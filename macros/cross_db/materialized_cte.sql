{#- lara_materialized_cte(): between `name as` and the CTE's parenthesis,
    for a CTE to compute once even where the planner would inline it
    (DuckDB `materialized`; nothing elsewhere). The opposite of
    lara_inline_cte (ctes.sql). -#}
{% macro lara_materialized_cte() -%}
    {{ return(adapter.dispatch('lara_materialized_cte', 'lara')()) }}
{%- endmacro %}

{% macro duckdb__lara_materialized_cte() -%}
    materialized
{%- endmacro %}

{% macro default__lara_materialized_cte() -%}
{%- endmacro %}
