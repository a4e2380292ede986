{#- lara_string_agg_sorted(expression, delimiter): the distinct non-null
    values of a group, sorted and joined by `delimiter` (an aggregate
    expression). Publishes small lists such as the action types of an
    effective-action definition. -#}
{% macro lara_string_agg_sorted(expression, delimiter=', ') %}
    {{ return(adapter.dispatch('lara_string_agg_sorted', 'lara')(expression, delimiter)) }}
{% endmacro %}

{% macro duckdb__lara_string_agg_sorted(expression, delimiter) -%}
    array_to_string(list_sort(list_distinct(list({{ expression }}))), '{{ delimiter }}')
{%- endmacro %}

{% macro default__lara_string_agg_sorted(expression, delimiter) -%}
    array_join(array_sort(collect_set({{ expression }})), '{{ delimiter }}')
{%- endmacro %}
