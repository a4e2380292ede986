{#- lara_percentile_cont(expression, fraction): the exact continuous
    percentile of a group (linear interpolation between the two nearest
    observations, as SQL percentile_cont), as an aggregate expression; nulls
    are ignored, so `case when ... then x end` filters a population.
    DuckDB: quantile_cont; Spark (default): percentile (exact, also
    interpolating). -#}
{% macro lara_percentile_cont(expression, fraction) %}
    {{ return(adapter.dispatch('lara_percentile_cont', 'lara')(expression, fraction)) }}
{% endmacro %}

{% macro duckdb__lara_percentile_cont(expression, fraction) -%}
    quantile_cont({{ expression }}, {{ fraction }})
{%- endmacro %}

{% macro default__lara_percentile_cont(expression, fraction) -%}
    percentile({{ expression }}, {{ fraction }})
{%- endmacro %}
