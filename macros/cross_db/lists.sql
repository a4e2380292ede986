{#- List operations (DuckDB lists, Spark arrays). -#}

{#- lara_explode_list(relation_sql, id_columns, list_column, element_alias, position_alias):
    one row per list element with its 1-based position; empty and null lists
    give no rows. `relation_sql` is a CTE or relation name. -#}
{% macro lara_explode_list(relation_sql, id_columns, list_column, element_alias, position_alias) %}
    {{ return(adapter.dispatch('lara_explode_list', 'lara')(relation_sql, id_columns, list_column, element_alias, position_alias)) }}
{% endmacro %}

{% macro duckdb__lara_explode_list(relation_sql, id_columns, list_column, element_alias, position_alias) -%}
    select
        {% for column in id_columns -%}
        {{ column }},
        {% endfor -%}
        unnest({{ list_column }}) as {{ element_alias }},
        generate_subscripts({{ list_column }}, 1) as {{ position_alias }}
    from {{ relation_sql }}
{%- endmacro %}

{% macro default__lara_explode_list(relation_sql, id_columns, list_column, element_alias, position_alias) -%}
    select
        {% for column in id_columns -%}
        {{ column }},
        {% endfor -%}
        exploded.{{ element_alias }},
        exploded.lara_pos + 1 as {{ position_alias }}
    from {{ relation_sql }}
    lateral view posexplode({{ list_column }}) exploded as lara_pos, {{ element_alias }}
{%- endmacro %}


{#- lara_list_contains(list_expression, value_expression): null-safe membership. -#}
{% macro lara_list_contains(list_expression, value_expression) %}
    {{ return(adapter.dispatch('lara_list_contains', 'lara')(list_expression, value_expression)) }}
{% endmacro %}

{% macro duckdb__lara_list_contains(list_expression, value_expression) -%}
    coalesce(list_contains({{ list_expression }}, {{ value_expression }}), false)
{%- endmacro %}

{% macro default__lara_list_contains(list_expression, value_expression) -%}
    coalesce(array_contains({{ list_expression }}, {{ value_expression }}), false)
{%- endmacro %}


{#- Spark: posexplode; positions as bigint, as DuckDB's generate_subscripts. -#}
{% macro spark__lara_explode_list(relation_sql, id_columns, list_column, element_alias, position_alias) -%}
    select
        {% for column in id_columns -%}
        {{ column }},
        {% endfor -%}
        exploded.{{ element_alias }},
        cast(exploded.lara_pos + 1 as bigint) as {{ position_alias }}
    from {{ relation_sql }}
    lateral view posexplode({{ list_column }}) exploded as lara_pos, {{ element_alias }}
{%- endmacro %}
